package episode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

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
