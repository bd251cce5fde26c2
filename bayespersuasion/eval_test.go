package bayespersuasion

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

func TestTrainImprovesAndResumes(t *testing.T) {
	cs, err := Claims()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	full, err := Train(ctx, TrainConfig{Claims: cs, Steps: 40, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	first, last := mean(full.Curve[:10]), mean(full.Curve[30:])
	if !(last > first+0.02) {
		t.Errorf("mean reward first 10 steps %.3f, last 10 %.3f: no improvement", first, last)
	}
	path := filepath.Join(t.TempDir(), "planner.json")
	if _, err := Train(ctx, TrainConfig{Claims: cs, Steps: 25, Seed: 7, Checkpoint: path}); err != nil {
		t.Fatal(err)
	}
	resumed, err := Train(ctx, TrainConfig{Claims: cs, Steps: 40, Seed: 7, Checkpoint: path})
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Planner.Theta != full.Planner.Theta {
		t.Errorf("resumed θ %v, uninterrupted %v", resumed.Planner.Theta, full.Planner.Theta)
	}
	if _, err := Train(ctx, TrainConfig{Claims: cs, Steps: 41, Seed: 8, Checkpoint: path}); err == nil || !strings.Contains(err.Error(), "seed") {
		t.Errorf("checkpoint of another seed: err %v", err)
	}
	for _, c := range []TrainConfig{{Claims: cs[1:]}, {Claims: cs, Batch: 4}, {Claims: cs, LR: 0.1}} {
		c.Steps, c.Seed, c.Checkpoint = 41, 7, path
		if _, err := Train(ctx, c); err == nil || !strings.Contains(err.Error(), "other claims, group, batch or learning rate") {
			t.Errorf("checkpoint of other settings (%d claims, batch %d, lr %g): err %v", len(c.Claims), c.Batch, c.LR, err)
		}
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func TestEvalBuiltinSenders(t *testing.T) {
	cs, err := Claims()
	if err != nil {
		t.Fatal(err)
	}
	bench := map[string]Benchmarks{}
	for _, c := range cs {
		b, _ := Optimum(c)
		bench[c.ID] = b
	}
	rep, err := Eval(context.Background(), EvalConfig{Claims: cs[:20], Rollouts: 5, Seed: 3, Receiver: BayesRole{},
		Senders: []SenderRole{StrategySender(NoDisclosure), StrategySender(FullDisclosure), StrategySender(Greedy), StrategySender(OptimalSignal(bench))}})
	if err != nil {
		t.Fatal(err)
	}
	row := func(s string, st Setting) Summary {
		for _, r := range rep.Rows {
			if r.Sender == s && r.Setting == st {
				return r
			}
		}
		t.Fatalf("no row %s %s", s, st)
		return Summary{}
	}
	for _, st := range []Setting{Static, Dynamic} {
		if g := row("none", st).MeanGain; g != 0 {
			t.Errorf("%s: no disclosure gains %g, want 0", st, g)
		}
		// Greedy never discloses an item that lowers V: its gain is at
		// least 0 in every world, so on average too; full disclosure can
		// lose.
		if row("greedy", st).MeanGain < 0 {
			t.Errorf("%s: greedy mean gain %g < 0", st, row("greedy", st).MeanGain)
		}
	}
	// Against the Bayesian receiver the final posterior depends only on
	// what was disclosed, so static and dynamic agree for full disclosure.
	if a, b := row("full", Static).MeanGain, row("full", Dynamic).MeanGain; math.Abs(a-b) > 1e-12 {
		t.Errorf("full disclosure: static %g, dynamic %g", a, b)
	}
	var buf bytes.Buffer
	if err := rep.Write(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"share of optimum", "greedy", "Wilcoxon p", "dynamic"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, buf.String())
		}
	}
}

// Gains that differ only by floating-point rounding tie in the paired
// tests; real differences survive.
func TestTieGain(t *testing.T) {
	a, b := 0.1, 0.2 // variables: Go's constant arithmetic would be exact
	if tieGain(a+b) != tieGain(0.3) || a+b == 0.3 {
		t.Fatal("rounding noise is not a tie")
	}
	if tieGain(0.3) == tieGain(0.3+2e-9) {
		t.Fatal("a 2e-9 difference was rounded away")
	}
}

// failingSender's persuader fails to start on every claim in fail.
type failingSender struct {
	SenderRole
	fail map[string]bool
}

func (f failingSender) Bind(c *Claim, w World, s Setting) episode.Persuader {
	if f.fail[c.ID] {
		return brokenPersuader{}
	}
	return f.SenderRole.Bind(c, w, s)
}

type brokenPersuader struct{}

func (brokenPersuader) Name() string { return "broken" }
func (brokenPersuader) Start(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) {
	return nil, errors.New("engine down")
}

// A world where either sender's episode failed is left out of the pair:
// two claims × 3 worlds fail for one side, so 6 of 15 pairs drop.
func TestEvalPairsDropFailedWorlds(t *testing.T) {
	all, err := Claims()
	if err != nil {
		t.Fatal(err)
	}
	cs := all[:5]
	bad := failingSender{StrategySender(FullDisclosure), map[string]bool{cs[0].ID: true, cs[1].ID: true}}
	rep, err := Eval(context.Background(), EvalConfig{Claims: cs, Rollouts: 3, Seed: 3, Receiver: BayesRole{}, Settings: []Setting{Static},
		Senders: []SenderRole{StrategySender(Greedy), bad}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pairs) != 1 || rep.Pairs[0].N != 9 || rep.Pairs[0].Dropped != 6 {
		t.Fatalf("pairs %+v", rep.Pairs)
	}
	var out bytes.Buffer
	if err := rep.Write(&out); err != nil || !strings.Contains(out.String(), "(6 paired worlds left out: either side's episode failed)") {
		t.Fatalf("%v\n%s", err, out.String())
	}
}
