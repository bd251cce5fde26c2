package episode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

type echoPersuader struct{ seen []scenario.Public }

func (e *echoPersuader) Name() string { return "echo" }
func (e *echoPersuader) Start(_ context.Context, pub scenario.Public, _ uint64) (PersuaderSession, error) {
	e.seen = append(e.seen, pub)
	return echoSession{}, nil
}

type echoSession struct{}

func (echoSession) Say(_ context.Context, tr []Message) (Utterance, error) {
	return Utterance{Text: fmt.Sprintf("utterance %d", len(tr)/2+1)}, nil
}

// scripted replies with fixed decisions and probe p-values (one per call,
// t = 0 first); a NaN p makes every probe unreadable at that read-out.
type scripted struct {
	decisions []decision.Decision
	ps        []float64
	err       error // returned by Reply at the last decision
}

func (s *scripted) Name() string { return "scripted" }
func (s *scripted) Start(context.Context, *scenario.Scenario, uint64) (PersuadeeSession, error) {
	return &scriptedSession{s: s}, nil
}

type scriptedSession struct {
	s        *scripted
	turn, pi int
}

func (ss *scriptedSession) Reply(_ context.Context, tr []Message) (Reply, error) {
	d := ss.s.decisions[ss.turn]
	ss.turn++
	if ss.s.err != nil && ss.turn == len(ss.s.decisions) {
		return Reply{}, ss.s.err
	}
	return Reply{Text: "ok " + strings.Repeat("!", ss.turn), Decision: d}, nil
}

func (ss *scriptedSession) Probe(_ context.Context, _ []Message, b probe.Basis) ([]probe.Answer, error) {
	p := ss.s.ps[ss.pi]
	ss.pi++
	out := make([]probe.Answer, len(b))
	for i := range out {
		if math.IsNaN(p) {
			out[i] = probe.Answer{Top: []probe.TokenLogprob{{Token: "<think>", ID: -1, Logprob: -0.1}}}
		} else {
			out[i] = probe.FromProbability(p)
		}
	}
	return out, nil
}

var sc = &scenario.Scenario{ID: "s1", Domain: "d", Hidden: scenario.HiddenProfile{Persona: "SECRET-PERSONA", Resistance: scenario.AutonomyResistance}}

func TestRunRecordsBeliefsAndDense(t *testing.T) {
	pee := &scripted{
		decisions: []decision.Decision{decision.Continue, decision.Continue, decision.Continue, decision.Accept},
		ps:        []float64{0.2, 0.3, math.NaN(), 0.6, 0.9},
	}
	per := &echoPersuader{}
	ep, err := Run(context.Background(), Config{}, sc, per, pee, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Terminal != decision.TermAccept || ep.RGoal != 3 || len(ep.Turns) != 4 {
		t.Fatalf("terminal %s, R_goal %v, %d turns; want accept, 3, 4", ep.Terminal, ep.RGoal, len(ep.Turns))
	}
	if ep.B0 == nil || math.Abs(*ep.B0-0.2) > 1e-9 {
		t.Fatalf("B0 = %v, want 0.2", ep.B0)
	}
	// r_1 = 0.3 - 0.2; turn 2 unreadable: belief and dense missing; turn 3
	// has no previous belief, so dense missing; r_4 = 0.9 - 0.6.
	wantDense := []float64{0.1, math.NaN(), math.NaN(), 0.3}
	for i, tr := range ep.Turns {
		w := wantDense[i]
		if math.IsNaN(w) {
			if tr.Dense != nil {
				t.Errorf("turn %d: dense = %v, want missing", tr.T, *tr.Dense)
			}
			continue
		}
		if tr.Dense == nil || math.Abs(*tr.Dense-w) > 1e-9 {
			t.Errorf("turn %d: dense = %v, want %v", tr.T, tr.Dense, w)
		}
	}
	if ep.Turns[1].Belief != nil || ep.Turns[1].Probes[0].OK {
		t.Error("unreadable probes must be recorded as missing")
	}
	if b, ok := ep.FinalBelief(); !ok || math.Abs(b-0.9) > 1e-9 {
		t.Errorf("FinalBelief = %v, %v", b, ok)
	}
	if len(per.seen) != 1 || per.seen[0].ID != "s1" {
		t.Fatalf("persuader saw %+v", per.seen)
	}
}

func TestRunPendingAtTmax(t *testing.T) {
	pee := &scripted{decisions: make([]decision.Decision, 3), ps: []float64{.5, .5, .5, .5}}
	for i := range pee.decisions {
		pee.decisions[i] = decision.Continue
	}
	ep, err := Run(context.Background(), Config{Tmax: 3}, sc, &echoPersuader{}, pee, 1)
	if err != nil || ep.Terminal != decision.TermPending || ep.RGoal != -1 || len(ep.Turns) != 3 {
		t.Fatalf("got %+v, %v; want pending after 3 turns", ep, err)
	}
}

func TestRunTruncatedAndFailed(t *testing.T) {
	trunc := &scripted{decisions: []decision.Decision{decision.Continue, decision.Continue},
		ps: []float64{.5, .5, .5}, err: fmt.Errorf("engine: HTTP 400: %w", ErrTruncated)}
	ep, err := Run(context.Background(), Config{}, sc, &echoPersuader{}, trunc, 1)
	if err != nil || ep.Terminal != decision.TermTruncated || ep.RGoal != -1 || len(ep.Turns) != 1 {
		t.Fatalf("truncation: %+v, %v; want truncated (never reject) after 1 turn", ep, err)
	}
	failing := &scripted{decisions: []decision.Decision{decision.Continue},
		ps: []float64{.5, .5}, err: errors.New("engine exploded")}
	ep, err = Run(context.Background(), Config{}, sc, &echoPersuader{}, failing, 1)
	if err != nil || ep.Terminal != decision.TermFailed || !strings.Contains(ep.Error, "engine exploded") {
		t.Fatalf("failure: %+v, %v; want a recorded failed episode", ep, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Config{}, sc, &echoPersuader{}, failing, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run returned %v, want context.Canceled", err)
	}
}

func TestSeedIndependentOfOrder(t *testing.T) {
	a, b := Seed(1, "s1", 0), Seed(1, "s1", 1)
	if a == b || Seed(1, "s1", 0) != a || Seed(2, "s1", 0) == a {
		t.Fatal("Seed must be a deterministic function of (run seed, scenario, rollout)")
	}
	// Golden value: guards against accidental changes of the derivation,
	// which would silently change every stored run's transcripts.
	if got := Seed(1, "s1", 0); got != seedGolden {
		t.Fatalf("Seed(1, s1, 0) = %d, want %d", got, seedGolden)
	}
}

// seedGolden was computed independently in Python (FNV-1a 64 of "1\x00s1\x000", then SplitMix64).
const seedGolden uint64 = 15225984602995781309

// fakeJudge rates every episode score (or fails with err) and tags every
// utterance with acts; it records the transcripts it saw.
type fakeJudge struct {
	score   float64
	err     error
	actsErr error
	mu      sync.Mutex
	seen    [][]Message
}

func (j *fakeJudge) Strategy(_ context.Context, pub scenario.Public, tr []Message) (float64, Usage, error) {
	j.mu.Lock()
	j.seen = append(j.seen, tr)
	j.mu.Unlock()
	return j.score, Usage{PromptTokens: 100, CompletionTokens: 7, Requests: 1}, j.err
}

func (j *fakeJudge) Acts(_ context.Context, u string) ([]string, Usage, error) {
	if j.actsErr != nil && strings.HasSuffix(u, " 2") {
		return nil, Usage{PromptTokens: 10, Requests: 1}, j.actsErr
	}
	return []string{"evidence", "autonomy"}, Usage{PromptTokens: 10, CompletionTokens: 3, Requests: 1}, nil
}

// usageSession is a scripted session that reports probe usage: read-out i
// (t = 0 first) costs i+1 requests.
type usageSession struct {
	scriptedSession
	reads int
}

func (u *usageSession) Probe(ctx context.Context, tr []Message, b probe.Basis) ([]probe.Answer, error) {
	u.reads++
	return u.scriptedSession.Probe(ctx, tr, b)
}

func (u *usageSession) TakeProbeUsage() Usage {
	return Usage{PromptTokens: 50 * u.reads, CachedTokens: 10, Requests: u.reads}
}

type usagePersuadee struct{ scripted }

func (p *usagePersuadee) Start(context.Context, *scenario.Scenario, uint64) (PersuadeeSession, error) {
	return &usageSession{scriptedSession: scriptedSession{s: &p.scripted}}, nil
}

func TestRunJudge(t *testing.T) {
	pee := &usagePersuadee{scripted{decisions: []decision.Decision{decision.Continue, decision.Conditional}, ps: []float64{.2, .4, .6}}}
	j := &fakeJudge{score: -0.5}
	ep, err := Run(context.Background(), Config{Judge: j, ActJudge: j}, sc, &echoPersuader{}, pee, 1)
	if err != nil {
		t.Fatal(err)
	}
	// R_out = R_goal(conditional) + w·R_strategy = 1 + 1·(-0.5).
	if ep.RStrategy == nil || *ep.RStrategy != -0.5 || ep.OutcomeReward(1) != 0.5 || ep.OutcomeReward(2) != 0 || ep.JudgeError != "" {
		t.Fatalf("R_strategy %v, R_out %v, judge error %q", ep.RStrategy, ep.OutcomeReward(1), ep.JudgeError)
	}
	// One strategy call (100 + 7 tokens) and two act calls (10 + 3 each).
	if want := (Usage{PromptTokens: 120, CompletionTokens: 13, Requests: 3}); ep.JudgeUsage != want {
		t.Errorf("judge usage %+v, want %+v", ep.JudgeUsage, want)
	}
	if ep.ActsBy != ActsByJudge || strings.Join(ep.Turns[0].Acts, ",") != "evidence,autonomy" {
		t.Errorf("acts by %q: %v", ep.ActsBy, ep.Turns[0].Acts)
	}
	// The judge saw the whole visible transcript: 2 utterances, 2 replies.
	if len(j.seen) != 1 || len(j.seen[0]) != 4 || j.seen[0][3].Text != "ok !!" {
		t.Errorf("judge saw %+v", j.seen)
	}
	// t = 0 read-out: the first TakeProbeUsage (1 request, 50 tokens);
	// turn 1's read-out is the second (2 requests).
	if want := (Usage{PromptTokens: 50, CachedTokens: 10, Requests: 1}); ep.InitialProbeUsage != want || ep.Turns[0].ProbeUsage.Requests != 2 {
		t.Errorf("initial probe usage %+v, turn 1 %+v", ep.InitialProbeUsage, ep.Turns[0].ProbeUsage)
	}
}

func TestRunJudgeFailure(t *testing.T) {
	pee := &scripted{decisions: []decision.Decision{decision.Continue, decision.Accept}, ps: []float64{.2, .4, .6}}
	j := &fakeJudge{err: errors.New("judge: HTTP 400"), actsErr: errors.New("acts unreadable")}
	ep, err := Run(context.Background(), Config{Judge: j, ActJudge: j}, sc, &echoPersuader{}, pee, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Terminal != decision.TermAccept || ep.RGoal != 3 || ep.RStrategy != nil || ep.OutcomeReward(1) != 3 {
		t.Fatalf("terminal %s, R_goal %v, R_strategy %v", ep.Terminal, ep.RGoal, ep.RStrategy)
	}
	if ep.JudgeError != "strategy: judge: HTTP 400; acts of turn 2: acts unreadable" {
		t.Errorf("judge error %q", ep.JudgeError)
	}
	// The failed calls' cost is recorded: 100+7, 10+3 and 10.
	if want := (Usage{PromptTokens: 120, CompletionTokens: 10, Requests: 3}); ep.JudgeUsage != want {
		t.Errorf("judge usage %+v, want %+v", ep.JudgeUsage, want)
	}
	// Acts stay the rule tagger's for every turn.
	if ep.ActsBy != "" || strings.Contains(strings.Join(ep.Turns[0].Acts, ","), "evidence") {
		t.Errorf("acts by %q: %v", ep.ActsBy, ep.Turns[0].Acts)
	}
	// An out-of-range rating is a judge error too.
	pee = &scripted{decisions: []decision.Decision{decision.Reject}, ps: []float64{.2, .4}}
	ep, _ = Run(context.Background(), Config{Judge: &fakeJudge{score: 1.5}}, sc, &echoPersuader{}, pee, 1)
	if ep.RStrategy != nil || !strings.Contains(ep.JudgeError, "outside [-1, 1]") {
		t.Errorf("rating 1.5: %v, %q", ep.RStrategy, ep.JudgeError)
	}
}

func TestRunJudgeSkipsFailed(t *testing.T) {
	failing := &scripted{decisions: []decision.Decision{decision.Continue},
		ps: []float64{.5, .5}, err: errors.New("engine exploded")}
	j := &fakeJudge{score: 1}
	ep, err := Run(context.Background(), Config{Judge: j}, sc, &echoPersuader{}, failing, 1)
	if err != nil || ep.Terminal != decision.TermFailed || ep.RStrategy != nil || len(j.seen) != 0 || ep.JudgeUsage != (Usage{}) {
		t.Fatalf("failed episode judged: %+v, %v", ep, err)
	}
	// A truncated episode is scored, so it is judged.
	trunc := &scripted{decisions: []decision.Decision{decision.Continue, decision.Continue},
		ps: []float64{.5, .5, .5}, err: fmt.Errorf("engine: %w", ErrTruncated)}
	ep, err = Run(context.Background(), Config{Judge: j}, sc, &echoPersuader{}, trunc, 1)
	if err != nil || ep.Terminal != decision.TermTruncated || ep.RStrategy == nil || ep.OutcomeReward(1) != 0 {
		t.Fatalf("truncated: %+v, %v", ep, err)
	}
}

// overlapPersuader's Say of turn t >= 2 waits until the read-out after
// reply t-1 has started, and lets it finish; overlapProber's read-out after
// reply t (t < Tmax) waits for that Say: both only finish when they run
// at the same time. The persuadee records any Reply that starts while a
// read-out runs.
type overlapRoles struct {
	started, sayDone chan int
	probing          atomic.Bool
	replyDuringProbe atomic.Bool
	tmax             int
}

func (o *overlapRoles) Name() string { return "overlap" }
func (o *overlapRoles) Start(context.Context, scenario.Public, uint64) (PersuaderSession, error) {
	return overlapSay{o}, nil
}

type overlapSay struct{ o *overlapRoles }

func (s overlapSay) Say(_ context.Context, tr []Message) (Utterance, error) {
	t := len(tr)/2 + 1
	if t >= 2 {
		select {
		case got := <-s.o.started:
			if got != t-1 {
				return Utterance{}, fmt.Errorf("turn %d: read-out of turn %d running", t, got)
			}
		case <-time.After(5 * time.Second):
			return Utterance{}, fmt.Errorf("turn %d: the read-out of turn %d never ran during the utterance", t, t-1)
		}
		s.o.sayDone <- t
	}
	return Utterance{Text: fmt.Sprintf("utterance %d", t)}, nil
}

type overlapPersuadee struct{ o *overlapRoles }

func (p overlapPersuadee) Name() string { return "overlap-pee" }
func (p overlapPersuadee) Start(context.Context, *scenario.Scenario, uint64) (PersuadeeSession, error) {
	return overlapSession{p.o}, nil
}

type overlapSession struct{ o *overlapRoles }

func (s overlapSession) Reply(_ context.Context, tr []Message) (Reply, error) {
	if s.o.probing.Load() {
		s.o.replyDuringProbe.Store(true)
	}
	return Reply{Text: fmt.Sprintf("reply %d", len(tr)/2+1), Decision: decision.Continue}, nil
}

func (s overlapSession) Probe(_ context.Context, tr []Message, b probe.Basis) ([]probe.Answer, error) {
	s.o.probing.Store(true)
	defer s.o.probing.Store(false)
	t := len(tr) / 2
	if t >= 1 && t < s.o.tmax {
		s.o.started <- t
		select {
		case <-s.o.sayDone:
		case <-time.After(5 * time.Second):
			return nil, fmt.Errorf("read-out %d: the next utterance never ran", t)
		}
	}
	out := make([]probe.Answer, len(b))
	for i := range out {
		out[i] = probe.FromProbability(0.1 * float64(t+1))
	}
	return out, nil
}

// The read-out after reply t runs while the persuader writes utterance
// t+1, never while the persuadee replies, and each turn still gets its own
// read-out: B_t = 0.1 (t+1).
func TestProbesOverlapNextUtterance(t *testing.T) {
	o := &overlapRoles{started: make(chan int, 1), sayDone: make(chan int, 1), tmax: 4}
	ep, err := Run(context.Background(), Config{Tmax: o.tmax}, sc, o, overlapPersuadee{o}, 1)
	if err != nil || ep.Error != "" {
		t.Fatalf("Run: %v, %q", err, ep.Error)
	}
	if o.replyDuringProbe.Load() {
		t.Fatal("a Reply ran during a read-out")
	}
	if len(ep.Turns) != 4 || ep.B0 == nil || math.Abs(*ep.B0-0.1) > 1e-12 {
		t.Fatalf("turns %d, B0 %v", len(ep.Turns), ep.B0)
	}
	for i, tr := range ep.Turns {
		if want := 0.1 * float64(i+2); tr.Belief == nil || math.Abs(*tr.Belief-want) > 1e-12 || tr.Persuader != fmt.Sprintf("utterance %d", i+1) {
			t.Fatalf("turn %d: belief %v (want %v), persuader %q", tr.T, tr.Belief, want, tr.Persuader)
		}
	}
}

// A read-out error is reported before the persuader's next turn, even
// though that turn already ran: the episode fails at the turn whose
// read-out failed, with that turn left out, as when read in sequence.
func TestOverlappedProbeErrorFirst(t *testing.T) {
	pee := &failingProber{failAt: 2}
	per := &failingPersuader{failAt: 3}
	ep, err := Run(context.Background(), Config{}, sc, per, pee, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Terminal != decision.TermFailed || !strings.HasPrefix(ep.Error, "turn 2: probe: boom") || len(ep.Turns) != 1 {
		t.Fatalf("terminal %s, error %q, %d turns; want failed at turn 2's read-out with 1 turn", ep.Terminal, ep.Error, len(ep.Turns))
	}
}

type failingPersuader struct{ failAt int }

func (f *failingPersuader) Name() string { return "failing" }
func (f *failingPersuader) Start(context.Context, scenario.Public, uint64) (PersuaderSession, error) {
	return failingSay{f}, nil
}

type failingSay struct{ f *failingPersuader }

func (s failingSay) Say(_ context.Context, tr []Message) (Utterance, error) {
	if len(tr)/2+1 == s.f.failAt {
		return Utterance{}, errors.New("persuader down")
	}
	return Utterance{Text: "hello"}, nil
}

type failingProber struct{ failAt int }

func (f *failingProber) Name() string { return "failing-pee" }
func (f *failingProber) Start(context.Context, *scenario.Scenario, uint64) (PersuadeeSession, error) {
	return failingProbeSession{f}, nil
}

type failingProbeSession struct{ f *failingProber }

func (s failingProbeSession) Reply(context.Context, []Message) (Reply, error) {
	return Reply{Text: "hm", Decision: decision.Continue}, nil
}

func (s failingProbeSession) Probe(_ context.Context, tr []Message, b probe.Basis) ([]probe.Answer, error) {
	if len(tr)/2 == s.f.failAt {
		return nil, errors.New("boom")
	}
	out := make([]probe.Answer, len(b))
	for i := range out {
		out[i] = probe.FromProbability(0.5)
	}
	return out, nil
}

// seqRoles counts persuader utterances and records whether one was asked
// for while a probe read-out was still running.
type seqRoles struct {
	said    atomic.Int64
	overlap atomic.Bool
	// wait is how long a read-out waits for the next utterance.
	wait time.Duration
}

func (o *seqRoles) Name() string { return "seq" }
func (o *seqRoles) Start(context.Context, scenario.Public, uint64) (PersuaderSession, error) {
	return seqSay{o}, nil
}

type seqSay struct{ o *seqRoles }

func (s seqSay) Say(_ context.Context, tr []Message) (Utterance, error) {
	s.o.said.Add(1)
	return Utterance{Text: fmt.Sprintf("utterance %d", len(tr)/2+1)}, nil
}

type seqPersuadee struct{ o *seqRoles }

func (p seqPersuadee) Name() string { return "seq-pee" }
func (p seqPersuadee) Start(context.Context, *scenario.Scenario, uint64) (PersuadeeSession, error) {
	return seqSession{p.o}, nil
}

type seqSession struct{ o *seqRoles }

func (s seqSession) Reply(context.Context, []Message) (Reply, error) {
	return Reply{Text: "reply", Decision: decision.Continue}, nil
}

// Probe of turn t (a slow engine) waits up to s.o.wait for utterance t+1
// to be asked for before it returns; the last read-out has none to wait
// for.
func (s seqSession) Probe(_ context.Context, tr []Message, b probe.Basis) ([]probe.Answer, error) {
	t := int64(len(tr) / 2)
	if t < 2 {
		for end := time.Now().Add(s.o.wait); time.Now().Before(end); time.Sleep(time.Millisecond) {
			if s.o.said.Load() > t {
				s.o.overlap.Store(true)
				break
			}
		}
	}
	out := make([]probe.Answer, len(b))
	for i := range out {
		out[i] = probe.FromProbability(0.5)
	}
	return out, nil
}

// With SequentialProbes no utterance is asked for while a read-out runs;
// without it the next utterance runs during the read-out.
func TestSequentialProbes(t *testing.T) {
	for _, seq := range []bool{true, false} {
		// Without SequentialProbes the overlap comes as soon as the driver
		// goroutine runs: a long deadline, so a loaded machine cannot fail
		// the test; with it no overlap can happen, so a short wait suffices.
		o := &seqRoles{wait: 10 * time.Second}
		if seq {
			o.wait = 100 * time.Millisecond
		}
		ep, err := Run(context.Background(), Config{Tmax: 2, SequentialProbes: seq}, sc, o, seqPersuadee{o}, 1)
		if err != nil || ep.Error != "" || len(ep.Turns) != 2 {
			t.Fatalf("seq %v: Run: %v, %q, %d turns", seq, err, ep.Error, len(ep.Turns))
		}
		if got := o.overlap.Load(); got == seq {
			t.Errorf("SequentialProbes %v: an utterance ran during a read-out: %v", seq, got)
		}
	}
}

// gated is an engine-backed persuadee (a Prober, not a
// ProbabilityProber) whose read-outs after a reply wait for a token on
// gate; it logs replies and read-outs in order. Read-out i gives P(Yes) =
// 0.2 + 0.1 i for every probe; every reply continues.
type gated struct {
	gate    chan struct{}
	mu      sync.Mutex
	log     []string
	replies [][]Message // the transcript each Reply got
}

func (g *gated) Name() string { return "gated" }
func (g *gated) Start(context.Context, *scenario.Scenario, uint64) (PersuadeeSession, error) {
	return &gatedSession{g: g}, nil
}

func (g *gated) event(s string) {
	g.mu.Lock()
	g.log = append(g.log, s)
	g.mu.Unlock()
}

type gatedSession struct {
	g             *gated
	turns, probes int
}

func (s *gatedSession) Reply(_ context.Context, tr []Message) (Reply, error) {
	s.turns++
	s.g.event(fmt.Sprintf("reply %d", s.turns))
	s.g.replies = append(s.g.replies, tr)
	return Reply{Text: fmt.Sprintf("reply %d", s.turns), Decision: decision.Continue}, nil
}

func (s *gatedSession) Probe(_ context.Context, _ []Message, b probe.Basis) ([]probe.Answer, error) {
	i := s.probes
	s.probes++
	if i > 0 {
		<-s.g.gate
	}
	s.g.event(fmt.Sprintf("probe %d", i))
	out := make([]probe.Answer, len(b))
	for k := range out {
		out[k] = probe.FromProbability(0.2 + 0.1*float64(i))
	}
	return out, nil
}

func near(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 1e-9 }

// The order of Reset, Step and Settle on an engine-backed prober: the
// read-out after a reply is in flight when Step returns, Settle completes
// the turn, and the next reply starts only after it; the read-out at Tmax
// is settled inside Step.
func TestEnvResetStepSettleOrder(t *testing.T) {
	ctx := context.Background()
	g := &gated{gate: make(chan struct{}, 3)}
	env := NewEnv(Config{Tmax: 3}, sc, g, 1, EnvOptions{Persuader: "driver"})
	if _, err := env.Step(ctx, Utterance{Text: "too early"}); !errors.Is(err, ErrNotReset) {
		t.Fatalf("Step before Reset: %v, want ErrNotReset", err)
	}
	if err := env.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	r0, err := env.Settle(ctx)
	if err != nil || r0.Turn.T != 0 || !near(r0.Turn.Belief, 0.2) || !near(env.Episode().B0, 0.2) || len(env.Episode().Initial) != 3 {
		t.Fatalf("t = 0: %+v, %v; B0 %v", r0, err, env.Episode().B0)
	}
	r1, err := env.Step(ctx, Utterance{Text: "Would you donate? Studies show it helps."})
	if err != nil || r1.Done || r1.Turn.T != 1 || r1.Turn.Persuadee != "reply 1" || r1.Turn.Belief != nil || r1.Turn.Probes != nil {
		t.Fatalf("turn 1 with its read-out in flight: %+v, %v", r1, err)
	}
	if len(env.Episode().Turns) != 0 || strings.Join(r1.Turn.Acts, ",") != strings.Join(r1.Tags.Acts.Strings(), ",") || r1.Tags.Acts == 0 {
		t.Fatalf("an unsettled turn is recorded: %d turns, acts %v", len(env.Episode().Turns), r1.Turn.Acts)
	}
	g.gate <- struct{}{}
	r1, err = env.Settle(ctx)
	// B_1 = 0.3, r_1 = 0.3 - 0.2.
	if err != nil || r1.Turn.T != 1 || !near(r1.Turn.Belief, 0.3) || !near(r1.Turn.Dense, 0.1) || len(env.Episode().Turns) != 1 {
		t.Fatalf("turn 1 settled: %+v, %v", r1.Turn, err)
	}
	if again, _ := env.Settle(ctx); again.Turn.T != 1 || !near(again.Turn.Belief, 0.3) {
		t.Fatalf("a second Settle changed the result: %+v", again.Turn)
	}
	g.gate <- struct{}{}
	g.gate <- struct{}{}
	if r, err := env.Step(ctx, Utterance{Text: "two"}); err != nil || r.Done {
		t.Fatalf("turn 2: %+v, %v", r, err)
	}
	r3, err := env.Step(ctx, Utterance{Text: "three"}) // settles turn 2 first
	// Tmax: done, pending (R_goal -1), B_3 = 0.5 settled, r_3 = 0.5 - 0.4.
	if err != nil || !r3.Done || !near(r3.Turn.Belief, 0.5) || !near(r3.Turn.Dense, 0.1) {
		t.Fatalf("turn 3: %+v, %v", r3, err)
	}
	ep := env.Episode()
	if !env.Done() || ep.Terminal != decision.TermPending || ep.RGoal != -1 || len(ep.Turns) != 3 || ep.Persuader != "driver" || ep.Persuadee != "gated" {
		t.Fatalf("episode %+v", ep)
	}
	if !near(ep.Turns[1].Dense, 0.1) || !near(ep.Turns[1].Belief, 0.4) {
		t.Fatalf("turn 2 recorded %+v", ep.Turns[1])
	}
	if _, err := env.Step(ctx, Utterance{Text: "four"}); !errors.Is(err, ErrDone) {
		t.Fatalf("Step after the end: %v, want ErrDone", err)
	}
	want := "probe 0,reply 1,probe 1,reply 2,probe 2,reply 3,probe 3"
	if got := strings.Join(g.log, ","); got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	tr := env.Transcript()
	if len(tr) != 6 || tr[0].Speaker != PersuaderSpeaker || tr[1].Text != "reply 1" || tr[5].Text != "reply 3" {
		t.Fatalf("transcript %+v", tr)
	}
}

// retryErr is a transient engine fault that knows how long it lasts.
type retryErr struct{}

func (retryErr) Error() string             { return "circuit breaker open" }
func (retryErr) Unwrap() error             { return ErrTransient }
func (retryErr) RetryAfter() time.Duration { return 3 * time.Second }

func TestEnvTruncation(t *testing.T) {
	ctx := context.Background()
	pee := &scripted{decisions: []decision.Decision{decision.Continue, decision.Continue},
		ps: []float64{.5, .6, .7}, err: fmt.Errorf("engine: HTTP 400: %w", ErrTruncated)}
	env := NewEnv(Config{}, sc, pee, 1, EnvOptions{})
	if err := env.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Step(ctx, Utterance{Text: "one"}); err != nil {
		t.Fatal(err)
	}
	r, err := env.Step(ctx, Utterance{Text: "two"})
	var re *RoleError
	if !errors.As(err, &re) || re.T != 2 || re.Role != RolePersuadee || !errors.Is(err, ErrTruncated) || !r.Done || r.Turn.T != 2 {
		t.Fatalf("truncation: %+v, %v", r, err)
	}
	// Truncated is scored as pending (R_goal -1); the turn that overflowed
	// is not recorded.
	ep := env.Episode()
	if ep.Terminal != decision.TermTruncated || ep.RGoal != -1 || len(ep.Turns) != 1 ||
		ep.Error != "turn 2 persuadee: engine: HTTP 400: conversation exceeds the context window" {
		t.Fatalf("episode: %s, %v, %d turns, %q", ep.Terminal, ep.RGoal, len(ep.Turns), ep.Error)
	}
}

func TestEnvFailure(t *testing.T) {
	ctx := context.Background()
	pee := &scripted{decisions: []decision.Decision{decision.Continue}, ps: []float64{.5, .5}, err: retryErr{}}
	env := NewEnv(Config{}, sc, pee, 1, EnvOptions{})
	if err := env.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := env.Step(ctx, Utterance{Text: "one"})
	ep := env.Episode()
	if err == nil || !r.Done || ep.Terminal != decision.TermFailed || !ep.Transient || ep.RetryAfter != 3*time.Second ||
		ep.Error != "turn 1 persuadee: circuit breaker open" || ep.RGoal != 0 || len(ep.Turns) != 0 {
		t.Fatalf("failure: %v; %+v", err, ep)
	}
	if _, err := env.Step(ctx, Utterance{Text: "two"}); !errors.Is(err, ErrDone) {
		t.Fatalf("Step after a failure: %v", err)
	}
	// An invalid decision fails the episode too.
	bad := &scripted{decisions: []decision.Decision{"maybe"}, ps: []float64{.5, .5}}
	env = NewEnv(Config{}, sc, bad, 1, EnvOptions{})
	if err := env.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = env.Step(ctx, Utterance{Text: "one"})
	if !errors.Is(err, ErrInvalidDecision) || env.Episode().Error != `turn 1 persuadee: invalid decision "maybe"` || env.Episode().Terminal != decision.TermFailed {
		t.Fatalf("invalid decision: %v, %q", err, env.Episode().Error)
	}
	// A cancelled context abandons the episode.
	env = NewEnv(Config{}, sc, &gated{gate: make(chan struct{})}, 1, EnvOptions{})
	if err := env.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := env.Step(cctx, Utterance{Text: "one"}); !errors.Is(err, context.Canceled) || env.Episode() != nil || !env.Done() {
		t.Fatalf("cancelled: %v, episode %v", err, env.Episode())
	}
}

// PastTerminal plays on after an accept, to Tmax, and records the first
// terminal decision; without it the accept ends the episode.
func TestEnvPastTerminal(t *testing.T) {
	ctx := context.Background()
	decs := []decision.Decision{decision.Continue, decision.Accept, decision.Reject, decision.Continue}
	play := func(opt EnvOptions) (*Env, error) {
		env := NewEnv(Config{Tmax: 4}, sc, &scripted{decisions: decs, ps: []float64{.1, .2, .3, .4, .5}}, 1, opt)
		if err := env.Reset(ctx); err != nil {
			return nil, err
		}
		for t := 1; !env.Done(); t++ {
			if _, err := env.Step(ctx, Utterance{Text: fmt.Sprint("u", t)}); err != nil {
				return env, err
			}
		}
		return env, nil
	}
	env, err := play(EnvOptions{})
	if err != nil || len(env.Episode().Turns) != 2 || env.Episode().Terminal != decision.TermAccept || env.Episode().RGoal != 3 {
		t.Fatalf("closed loop: %v, %+v", err, env.Episode())
	}
	env, err = play(EnvOptions{PastTerminal: true})
	ep := env.Episode()
	if err != nil || len(ep.Turns) != 4 || ep.Terminal != decision.TermAccept || ep.RGoal != 3 || ep.Turns[2].Decision != decision.Reject || !near(ep.Turns[3].Belief, 0.5) {
		t.Fatalf("past terminal: %v, %s, %d turns", err, ep.Terminal, len(ep.Turns))
	}
	// A persuadee that refuses to go on after deciding: a role error, as
	// fidelity replay reads it (Closed).
	refuse := &scripted{decisions: []decision.Decision{decision.Accept, decision.Continue}, ps: []float64{.1, .2, .3}, err: errors.New("decided")}
	env = NewEnv(Config{Tmax: 4}, sc, refuse, 1, EnvOptions{PastTerminal: true})
	if err := env.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := env.Step(ctx, Utterance{Text: "u1"}); err != nil || r.Done || r.Turn.Decision != decision.Accept {
		t.Fatalf("turn 1: %+v, %v", r, err)
	}
	if _, err := env.Step(ctx, Utterance{Text: "u2"}); err == nil || env.Episode().Error != "turn 2 persuadee: decided" {
		t.Fatalf("turn 2: %v", err)
	}
}

// The opening context heads the transcript and every role sees it; turns
// do not count it. NoProbes reads nothing; Start replaces pee.Start and
// gets Mix(seed^2).
func TestEnvOpeningNoProbesStart(t *testing.T) {
	ctx := context.Background()
	g := &gated{gate: make(chan struct{})}
	opening := []Message{{Speaker: PersuaderSpeaker, Text: "Hi, I am selling a bike."}, {Speaker: PersuadeeSpeaker, Text: "How much?"}}
	var seed uint64
	env := NewEnv(Config{Tmax: 2}, sc, g, 7, EnvOptions{Opening: opening, NoProbes: true,
		Start: func(ctx context.Context, s *scenario.Scenario, sd uint64) (PersuadeeSession, error) {
			seed = sd
			return g.Start(ctx, s, sd)
		}})
	if tr := env.Transcript(); len(tr) != 2 || tr[1].Text != "How much?" {
		t.Fatalf("transcript before Reset %+v", tr)
	}
	if err := env.Reset(ctx); err != nil || seed != Mix(7^2) {
		t.Fatalf("Reset: %v, seed %d, want %d", err, seed, Mix(7^2))
	}
	r, err := env.Step(ctx, Utterance{Text: "US$120."})
	if err != nil || r.Turn.T != 1 || r.Turn.Belief != nil || r.Turn.Probes != nil || len(env.Episode().Turns) != 1 {
		t.Fatalf("turn 1: %+v, %v", r, err)
	}
	if _, err := env.Step(ctx, Utterance{Text: "US$110, final."}); err != nil || !env.Done() {
		t.Fatalf("turn 2: %v", err)
	}
	// Reply 1 got opening + utterance (3 messages), reply 2 five; no
	// probe ran.
	if len(g.replies) != 2 || len(g.replies[0]) != 3 || g.replies[0][0].Text != "Hi, I am selling a bike." || len(g.replies[1]) != 5 ||
		strings.Join(g.log, ",") != "reply 1,reply 2" {
		t.Fatalf("replies %v, log %v", g.replies, g.log)
	}
	ep := env.Episode()
	if ep.B0 != nil || ep.Initial != nil || len(ep.Turns) != 2 || ep.Turns[1].T != 2 || len(env.Transcript()) != 6 {
		t.Fatalf("episode %+v", ep)
	}
}

// judgeGate's judges close asked when first called; lastProbe's read-out
// after the final reply waits for that (or gives up after 5 s), so the
// episode only scores when the judges run while its last read-out is in
// flight.
type judgeGate struct {
	fakeJudge
	once  sync.Once
	asked chan struct{}
}

func (g *judgeGate) open() { g.once.Do(func() { close(g.asked) }) }

func (g *judgeGate) Strategy(ctx context.Context, pub scenario.Public, tr []Message) (float64, Usage, error) {
	g.open()
	return g.fakeJudge.Strategy(ctx, pub, tr)
}

func (g *judgeGate) Acts(ctx context.Context, u string) ([]string, Usage, error) {
	g.open()
	return g.fakeJudge.Acts(ctx, u)
}

type lastProbe struct {
	gate *judgeGate
	tmax int
	fail bool // the last read-out fails once the judges were asked
}

func (p *lastProbe) Name() string { return "last-probe" }
func (p *lastProbe) Start(context.Context, *scenario.Scenario, uint64) (PersuadeeSession, error) {
	return p, nil
}
func (p *lastProbe) Reply(_ context.Context, tr []Message) (Reply, error) {
	return Reply{Text: fmt.Sprintf("reply %d", len(tr)/2+1), Decision: decision.Continue}, nil
}
func (p *lastProbe) Probe(_ context.Context, tr []Message, b probe.Basis) ([]probe.Answer, error) {
	t := len(tr) / 2
	if t == p.tmax {
		select {
		case <-p.gate.asked:
		case <-time.After(5 * time.Second):
			return nil, fmt.Errorf("read-out %d: the judges were not asked meanwhile", t)
		}
		if p.fail {
			return nil, errors.New("engine gone")
		}
	}
	out := make([]probe.Answer, len(b))
	for i := range out {
		out[i] = probe.FromProbability(0.1 * float64(t+1))
	}
	return out, nil
}

// The judges of an episode that ends with an engine read-out in flight
// run during that read-out, and their verdict is recorded as in sequence:
// R_strategy, one act tagging per turn (all three turns), usage 100+7 and
// 3 × (10+3). When that read-out fails, the episode is failed and the
// early verdict is not recorded.
func TestJudgesOverlapLastReadOut(t *testing.T) {
	g := &judgeGate{fakeJudge: fakeJudge{score: 0.25}, asked: make(chan struct{})}
	ep, err := Run(context.Background(), Config{Tmax: 3, Judge: g, ActJudge: g}, sc, &echoPersuader{}, &lastProbe{gate: g, tmax: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Terminal != decision.TermPending || ep.Error != "" || ep.JudgeError != "" || ep.RStrategy == nil || *ep.RStrategy != 0.25 {
		t.Fatalf("terminal %s, error %q, judge error %q, R_strategy %v", ep.Terminal, ep.Error, ep.JudgeError, ep.RStrategy)
	}
	if len(ep.Turns) != 3 || ep.ActsBy != ActsByJudge || strings.Join(ep.Turns[2].Acts, ",") != "evidence,autonomy" {
		t.Fatalf("%d turns, acts by %q, turn 3 acts %v", len(ep.Turns), ep.ActsBy, ep.Turns)
	}
	if want := (Usage{PromptTokens: 130, CompletionTokens: 16, Requests: 4}); ep.JudgeUsage != want {
		t.Errorf("judge usage %+v, want %+v", ep.JudgeUsage, want)
	}
	if b := ep.Turns[2].Belief; b == nil || math.Abs(*b-0.4) > 1e-12 {
		t.Errorf("B_3 = %v, want 0.4", b)
	}
	if len(g.seen) != 1 || len(g.seen[0]) != 6 {
		t.Errorf("strategy judge saw %d transcripts, the first of %d messages", len(g.seen), len(g.seen[0]))
	}

	g = &judgeGate{fakeJudge: fakeJudge{score: 0.25}, asked: make(chan struct{})}
	ep, err = Run(context.Background(), Config{Tmax: 3, Judge: g, ActJudge: g}, sc, &echoPersuader{}, &lastProbe{gate: g, tmax: 3, fail: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Terminal != decision.TermFailed || !strings.Contains(ep.Error, "engine gone") || ep.RStrategy != nil || ep.JudgeUsage != (Usage{}) || ep.ActsBy == ActsByJudge {
		t.Fatalf("failed read-out: terminal %s, error %q, R_strategy %v, judge usage %+v, acts by %q", ep.Terminal, ep.Error, ep.RStrategy, ep.JudgeUsage, ep.ActsBy)
	}
}

// silentLast says "utterance t" but nothing at its last turn.
type silentLast struct{ tmax int }

func (s silentLast) Name() string { return "silent-last" }
func (s silentLast) Start(context.Context, scenario.Public, uint64) (PersuaderSession, error) {
	return s, nil
}
func (s silentLast) Say(_ context.Context, tr []Message) (Utterance, error) {
	if t := len(tr)/2 + 1; t < s.tmax {
		return Utterance{Text: fmt.Sprintf("utterance %d", t)}, nil
	}
	return Utterance{}, nil
}

// An empty last utterance is a turn the act judge tags, with the judges
// overlapping the last read-out as for any other (it once dropped that
// utterance and indexed past the tags: a panic in the worker).
func TestJudgesOverlapEmptyLastUtterance(t *testing.T) {
	g := &judgeGate{fakeJudge: fakeJudge{score: 0.25}, asked: make(chan struct{})}
	ep, err := Run(context.Background(), Config{Tmax: 3, Judge: g, ActJudge: g}, sc, silentLast{tmax: 3}, &lastProbe{gate: g, tmax: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Turns) != 3 || ep.Turns[2].Persuader != "" || ep.JudgeError != "" || ep.ActsBy != ActsByJudge ||
		strings.Join(ep.Turns[2].Acts, ",") != "evidence,autonomy" {
		t.Fatalf("%d turns, judge error %q, acts by %q, turns %+v", len(ep.Turns), ep.JudgeError, ep.ActsBy, ep.Turns)
	}
	if want := (Usage{PromptTokens: 130, CompletionTokens: 16, Requests: 4}); ep.JudgeUsage != want {
		t.Errorf("judge usage %+v, want %+v", ep.JudgeUsage, want)
	}
}
