package study

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/train"
)

// handResult is a two-seed, two-scenario, two-rollout study of arms "a"
// and "b" on one set, with hand-counted outcomes.
func handResult() *Result {
	acc, rej := decision.TermAccept, decision.TermReject
	oc := func(sc string, r int, t decision.Terminal) Outcome {
		return Outcome{Set: "s", Scenario: sc, Rollout: r, Terminal: t, Turns: 3}
	}
	return &Result{
		Arms: []Arm{{ID: "a"}, {ID: "b"}}, Seeds: []uint64{1, 2}, Sets: []string{"s"}, Resamples: 2000,
		Cells: []Cell{
			// Seed 1: a accepts 3 of 4, b 1 of 4 (x/0 both; a wins x/1, y/0).
			{Arm: "a", Seed: 1, Outcomes: []Outcome{oc("x", 0, acc), oc("x", 1, acc), oc("y", 0, acc), oc("y", 1, rej)}},
			{Arm: "b", Seed: 1, Outcomes: []Outcome{oc("x", 0, acc), oc("x", 1, rej), oc("y", 0, rej), oc("y", 1, rej)}},
			// Seed 2: a 1 of 4, b 2 of 4 (a wins y/1; b wins x/0 and x/1).
			{Arm: "a", Seed: 2, Outcomes: []Outcome{oc("x", 0, rej), oc("x", 1, rej), oc("y", 0, rej), oc("y", 1, acc)}},
			{Arm: "b", Seed: 2, Outcomes: []Outcome{oc("x", 0, acc), oc("x", 1, acc), oc("y", 0, rej), oc("y", 1, rej)}},
		},
	}
}

func TestCompareHand(t *testing.T) {
	r := handResult()
	c, err := r.Compare("a", "b", All)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := c.PerSeed[0], c.PerSeed[1]
	if s1.AccA != 0.75 || s1.AccB != 0.25 || s1.DeltaPP != 50 || s1.Wins != 2 || s1.Losses != 0 || s1.McNemarP != 0.5 {
		t.Errorf("seed 1: %+v", s1)
	}
	if s2.AccA != 0.25 || s2.AccB != 0.5 || s2.DeltaPP != -25 || s2.Wins != 1 || s2.Losses != 2 || s2.McNemarP != 1 {
		t.Errorf("seed 2: %+v", s2)
	}
	// Cells (seed × scenario, mean over rollouts, pp): seed 1: x +50,
	// y +50; seed 2: x -100, y +50. Grand mean 12.5.
	if c.Crossed.Estimate != 12.5 || c.SeedsAhead != 1 || !(c.Crossed.Lo < 0 && c.Crossed.Hi > 0) {
		t.Errorf("crossed %+v, ahead %d", c.Crossed, c.SeedsAhead)
	}
	f := r.Figures("a", "s")
	if f.N != 8 || f.Accept != 0.5 || f.Reject != 0.5 || f.Turns != 3 || !math.IsNaN(f.BT) {
		t.Errorf("figures %+v", f)
	}
	if f := r.Figures("b", All, 2); f.N != 4 || f.Accept != 0.5 {
		t.Errorf("seed 2 figures %+v", f)
	}
	// Outcomes that do not pair are an error.
	r.Cells[1].Outcomes[0].Scenario = "z"
	if _, err := r.Compare("a", "b", All); err == nil {
		t.Error("unpaired outcomes accepted")
	}
}

func TestVerdictRule(t *testing.T) {
	acc, rej := decision.TermAccept, decision.TermReject
	cell := func(arm string, seed uint64, accepts int) Cell {
		c := Cell{Arm: arm, Seed: seed}
		for i := range 6 {
			term := rej
			if i < accepts {
				term = acc
			}
			c.Outcomes = append(c.Outcomes, Outcome{Set: "s", Scenario: string(rune('a' + i)), Terminal: term})
		}
		return c
	}
	mk := func(shuffledSeed2 int) *Result {
		r := &Result{Seeds: []uint64{1, 2}, Sets: []string{"s"}, Resamples: 1000}
		for _, id := range append([]string{Treatment}, Comparators...) {
			r.Arms = append(r.Arms, Arm{ID: id})
		}
		for _, s := range r.Seeds {
			r.Cells = append(r.Cells, cell(Treatment, s, 6), cell("lambda0", s, 0), cell("length-only", s, 0))
		}
		r.Cells = append(r.Cells, cell("shuffled", 1, 0), cell("shuffled", 2, shuffledSeed2))
		return r
	}
	ok, reasons, err := mk(0).Verdict()
	if err != nil || !ok || len(reasons) != 3 {
		t.Fatalf("clear win: %v %v %v", ok, reasons, err)
	}
	// The shuffled control matches the treatment in seed 2: not reproduced.
	ok, reasons, err = mk(6).Verdict()
	if err != nil || ok || !strings.Contains(reasons[2], "does not beat shuffled") {
		t.Fatalf("control matched in one seed: %v %v %v", ok, reasons, err)
	}
}

func TestUpdateDoc(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.md")
	os.WriteFile(path, []byte("# Results\n\nintro\n"), 0o644)
	if err := UpdateDoc(path, "x", "first\n"); err != nil {
		t.Fatal(err)
	}
	if err := UpdateDoc(path, "y", "other"); err != nil {
		t.Fatal(err)
	}
	if err := UpdateDoc(path, "x", "second\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "# Results\n\nintro\n\n<!-- BEGIN study x -->\nsecond\n<!-- END study x -->\n\n<!-- BEGIN study y -->\nother\n<!-- END study y -->\n"
	if string(got) != want {
		t.Fatalf("doc:\n%s\nwant:\n%s", got, want)
	}
	os.WriteFile(path, []byte("<!-- BEGIN study x -->\nno end\n"), 0o644)
	if err := UpdateDoc(path, "x", "z"); err == nil {
		t.Fatal("a BEGIN without END accepted")
	}
}

// TestLambdaSmallResumes runs a tiny study twice on the same Dir: the
// second call reuses every cell, so its result and tables are identical.
func TestLambdaSmallResumes(t *testing.T) {
	all, err := scenario.ResolveAll("p4g")
	if err != nil {
		t.Fatal(err)
	}
	trainSc := scenario.Filter(all, scenario.Train)[:8]
	held := scenario.Filter(all, scenario.Heldout)[:4]
	cfg := train.DefaultConfig()
	cfg.MaxSteps, cfg.GRPO.ScenariosPerStep, cfg.Tmax = 2, 4, 4
	cfg.Features.Tmax = cfg.Tmax
	o := Options{
		Arms:  []Arm{LambdaArms()[0], LambdaArms()[1], LambdaArms()[4]},
		Seeds: []uint64{1, 2}, Train: cfg, TrainScenarios: trainSc,
		Heldout: []eval.Set{{Name: "p4g", Scenarios: held}}, Rollouts: 2, EvalSeed: 1,
		Persuadee: sim.New(sim.DefaultConfig()), Workers: 2, Dir: t.TempDir(), Resamples: 500,
	}
	r1, err := Lambda(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.Cells) != 6 || r1.Cells[0].Steps != 2 || len(r1.Cells[0].Outcomes) != 8 {
		t.Fatalf("cells: %d, steps %d, outcomes %d", len(r1.Cells), r1.Cells[0].Steps, len(r1.Cells[0].Outcomes))
	}
	o.Workers = 1
	r2, err := Lambda(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r1.Cells, r2.Cells) {
		t.Fatal("resumed study differs")
	}
	var b1, b2 bytes.Buffer
	r1.Markdown(&b1, "cmd")
	r2.Markdown(&b2, "cmd")
	if b1.String() != b2.String() || !strings.Contains(b1.String(), "| lambda0.5 | lambda0 | all |") {
		t.Fatalf("tables differ or lack the comparison:\n%s", b1.String())
	}
	// Without a Dir nothing is cached: a fresh run with other workers
	// gives the same cells (same seed, same result).
	o.Dir, o.Workers = "", 2
	r3, err := Lambda(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r3.Cells {
		r3.Cells[i].Seconds, r1.Cells[i].Seconds = 0, 0
	}
	if !reflect.DeepEqual(r1.Cells, r3.Cells) {
		t.Fatal("a fresh run with other workers differs")
	}
	if _, err := Lambda(context.Background(), Options{Seeds: []uint64{1, 1}, TrainScenarios: trainSc, Heldout: o.Heldout, Rollouts: 1, Persuadee: o.Persuadee}); err == nil {
		t.Fatal("repeated seed accepted")
	}
}

// TestFingerprintTracksContent: a cached cell is reused only for the same
// simulator behaviour and the same scenario text, not merely the same names.
func TestFingerprintTracksContent(t *testing.T) {
	all, err := scenario.ResolveAll("p4g")
	if err != nil {
		t.Fatal(err)
	}
	sc := append([]scenario.Scenario(nil), scenario.Filter(all, scenario.Train)[:2]...)
	o := Options{Train: train.DefaultConfig(), TrainScenarios: sc, Rollouts: 1,
		Persuadee: sim.New(sim.DefaultConfig())}
	fp := func() string {
		s, err := o.fingerprint()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := fp()
	if again := fp(); again != base {
		t.Fatalf("fingerprint not stable: %s vs %s", base, again)
	}
	hard, err := sim.Variant("hard")
	if err != nil {
		t.Fatal(err)
	}
	hard.Name = "sim" // same name, other behaviour
	o.Persuadee = sim.New(hard)
	if fp() == base {
		t.Fatal("a differently configured simulator with the same name reuses the cache")
	}
	o.Persuadee = sim.New(sim.DefaultConfig())
	o.TrainScenarios = append([]scenario.Scenario(nil), sc...)
	o.TrainScenarios[0].Hidden.Concerns = nil // same ID, other content
	if fp() == base {
		t.Fatal("an edited scenario with the same ID reuses the cache")
	}
}
