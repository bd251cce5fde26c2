package episode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

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
	if len(tr) != 6 || tr[0].Speaker != PersuaderSpeaker || !tr[0].Tagged || tr[1].Text != "reply 1" || tr[5].Text != "reply 3" {
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
