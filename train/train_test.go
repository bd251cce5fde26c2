package train

import (
	"bytes"
	"context"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/stats"
	"github.com/persuarena/persuarena/store"
)

func arena(t testing.TB, split scenario.Split) []scenario.Scenario {
	t.Helper()
	all, err := scenario.Resolve("arena")
	if err != nil {
		t.Fatalf("built-in arena set: %v", err)
	}
	return scenario.Filter(all, split)
}

func smallConfig() Config {
	cfg := DefaultConfig()
	cfg.GRPO.ScenariosPerStep = 4
	cfg.GRPO.Seed = 7
	cfg.MaxSteps = 4
	cfg.CheckpointEvery = 2
	return cfg
}

func equalPolicies(a, b *planner.Policy) bool {
	return slices.Equal(a.W1, b.W1) && slices.Equal(a.B1, b.B1) && slices.Equal(a.W2, b.W2) && slices.Equal(a.B2, b.B2)
}

// TestDeterministicAcrossWorkers trains twice from the same seed with 1
// and 3 workers: the weights and every metric are bit-identical, and the
// policy did change.
func TestDeterministicAcrossWorkers(t *testing.T) {
	scs := arena(t, scenario.Train)
	var pols []*planner.Policy
	var mets [][]Metrics
	for _, w := range []int{1, 3} {
		tr, err := New(smallConfig(), Options{Scenarios: scs, Persuadee: sim.New(sim.DefaultConfig()), Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		m, err := tr.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pols = append(pols, tr.Policy())
		mets = append(mets, m)
		if equalPolicies(tr.Policy(), tr.Reference()) {
			t.Fatal("training did not change the policy")
		}
	}
	if !equalPolicies(pols[0], pols[1]) {
		t.Error("1 and 3 workers give different weights")
	}
	if !sameMetrics(mets[0], mets[1]) {
		t.Errorf("metrics differ:\n%v\n%v", mets[0], mets[1])
	}
	if len(mets[0]) != 4 || mets[0][0].Episodes != 16 || mets[0][0].KL != 0 || math.Abs(mets[0][0].Entropy-math.Log(31)) > 1e-12 {
		t.Errorf("first step: %+v; want 16 episodes, KL 0 and entropy ln 31 at the uniform initial policy", mets[0][0])
	}
}

// TestResumeEqualsUninterrupted stops a run after 2 of 4 steps (its
// checkpoint), resumes it from the file and compares with a run that was
// never stopped: weights, metrics, stored episodes and stored metrics are
// identical.
func TestResumeEqualsUninterrupted(t *testing.T) {
	scs := arena(t, scenario.Train)
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range []string{"full", "split"} {
		if err := db.CreateRun(ctx, store.Run{ID: id, Kind: "train", Seed: 7}); err != nil {
			t.Fatal(err)
		}
	}
	pee := sim.New(sim.DefaultConfig())
	full, _ := New(smallConfig(), Options{Scenarios: scs, Persuadee: pee, Workers: 2, Store: db, RunID: "full",
		Checkpoint: filepath.Join(dir, "full.json")})
	fm, err := full.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}

	ck := filepath.Join(dir, "split.json")
	var log bytes.Buffer
	first, _ := New(smallConfig(), Options{Scenarios: scs, Persuadee: pee, Workers: 2, Store: db, RunID: "split", Checkpoint: ck, Log: &log})
	var sm []Metrics
	for range 3 { // the third step runs after the checkpoint and is "lost"
		m, err := first.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sm = append(sm, m)
	}
	sm = sm[:2]
	res, err := Resume(ck, Options{Scenarios: scs, Persuadee: pee, Workers: 1, Store: db, Checkpoint: ck, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if res.StepsDone() != 2 {
		t.Fatalf("resumed at step %d, want 2", res.StepsDone())
	}
	rest, err := res.Run(ctx) // replays step 3 (its episodes are already stored)
	if err != nil {
		t.Fatal(err)
	}
	sm = append(sm, rest...)
	if !equalPolicies(full.Policy(), res.Policy()) {
		t.Error("resumed run's weights differ from the uninterrupted run's")
	}
	if !sameMetrics(fm, sm) {
		t.Errorf("metrics differ:\n%v\n%v", fm, sm)
	}
	if n := strings.Count(log.String(), "\n"); n != 5 || !strings.Contains(log.String(), "step 4/4") {
		t.Errorf("log has %d lines:\n%s", n, log.String())
	}
	// The end-of-run checkpoints agree too.
	a, _ := planner.Load(filepath.Join(dir, "full.json"))
	b, _ := planner.Load(ck)
	if !equalPolicies(a.Policy, b.Policy) {
		t.Error("final checkpoints differ")
	}
	for _, id := range []string{"full", "split"} {
		eps, err := db.Episodes(ctx, id)
		if err != nil || len(eps) != 4*4*4 {
			t.Fatalf("run %s: %d episodes stored (%v), want 64", id, len(eps), err)
		}
		ms, err := db.Metrics(ctx, id)
		if err != nil || len(ms) != 4 || ms[3].Step != 3 || ms[3].Metrics["accept"] != fm[3].Accept || ms[0].Metrics["entropy"] != fm[0].Entropy {
			t.Fatalf("run %s: metrics %v (%v)", id, ms, err)
		}
	}
	// Resuming on other scenarios is refused.
	if _, err := Resume(ck, Options{Scenarios: scs[1:], Persuadee: pee}); err == nil || !strings.Contains(err.Error(), "scenarios differ") {
		t.Errorf("resume on other scenarios: %v", err)
	}
}

func TestScheduleAndValidation(t *testing.T) {
	scs := arena(t, scenario.Train)
	cfg := DefaultConfig()
	tr, err := New(cfg, Options{Scenarios: scs[:70], Persuadee: sim.New(sim.DefaultConfig())})
	if err != nil {
		t.Fatal(err)
	}
	// 70 scenarios, 16 a step: 4 steps an epoch (the partial fifth batch is
	// dropped, as 182 = 2 x floor(1468/16) in the Probe-RPO paper's Table 3),
	// 2 epochs.
	if tr.StepsPerEpoch() != 4 || tr.TotalSteps() != 8 {
		t.Errorf("steps per epoch %d, total %d; want 4, 8", tr.StepsPerEpoch(), tr.TotalSteps())
	}
	seen := map[int]bool{}
	for s := range 4 {
		for _, i := range tr.batch(s) {
			if seen[i] {
				t.Errorf("scenario %d twice in epoch 0", i)
			}
			seen[i] = true
		}
	}
	if len(seen) != 64 || slices.Equal(tr.batch(0), tr.batch(4)) {
		t.Errorf("epoch 0 covers %d scenarios; epoch 1 repeats epoch 0's order: %v", len(seen), slices.Equal(tr.batch(0), tr.batch(4)))
	}
	bad := DefaultConfig()
	bad.Updates = 0
	if _, err := New(bad, Options{Scenarios: scs, Persuadee: sim.New(sim.DefaultConfig())}); err == nil {
		t.Error("updates 0 accepted")
	}
	bad = DefaultConfig()
	bad.GRPO.G = 1
	if _, err := New(bad, Options{Scenarios: scs, Persuadee: sim.New(sim.DefaultConfig())}); err == nil {
		t.Error("G 1 accepted")
	}
	if _, err := New(DefaultConfig(), Options{Persuadee: sim.New(sim.DefaultConfig())}); err == nil {
		t.Error("no scenarios accepted")
	}
}

// acceptances plays a planner once on each scenario with fixed episode
// seeds and reports which episodes end in full acceptance.
func acceptances(t *testing.T, p *planner.Policy, scs []scenario.Scenario, rollouts int) []bool {
	t.Helper()
	pl, err := planner.New(p)
	if err != nil {
		t.Fatal(err)
	}
	pee := sim.New(sim.DefaultConfig())
	var out []bool
	for i := range scs {
		for r := range rollouts {
			ep, err := episode.Run(context.Background(), episode.Config{}, &scs[i], pl, pee, episode.Seed(99, scs[i].ID, r))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ep.Terminal == decision.TermAccept)
		}
	}
	return out
}

// TestLearningRaisesHeldOutAccept is the learning test: a CI-sized run
// (80 steps of 8 arena training scenarios x G = 4, 2,560 episodes,
// Probe-RPO advantages at λ = 0.5, the default) against the simulator must raise the
// planner's full-acceptance rate on the 120 held-out arena scenarios (2
// rollouts each, the same episode seeds before and after) over its
// initial, uniform policy, by an exact McNemar p < 0.01 with more wins
// than losses. No figure is asserted beyond that. Choice: λ = 0.5, not
// outcome-only advantages: on simulator version 6 (an avoider may need
// one plan turn more or one fewer than its type's Plans) outcome-only runs
// of 160 steps moved 13 -> 16, 16 and 30 of 240 over training seeds 1-3
// (240 steps: 24, 26, 36; 320: 23, 20), too slow and noisy for a CI
// check, while λ = 0.5 at 80 steps gave 13 -> 55 and 70 (seeds 1 and 2,
// p <= 1.3e-10). The outcome-only arm is the λ study's (docs/results.md).
func TestLearningRaisesHeldOutAccept(t *testing.T) {
	cidata.Slow(t, "trains a planner")
	train, held := arena(t, scenario.Train), arena(t, scenario.Heldout)
	cfg := DefaultConfig()
	cfg.GRPO.Lambda = 0.5
	cfg.GRPO.ScenariosPerStep = 8
	cfg.GRPO.Seed = 1
	cfg.MaxSteps = 80
	tr, err := New(cfg, Options{Scenarios: train, Persuadee: sim.New(sim.DefaultConfig()), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	before := acceptances(t, tr.Policy(), held, 2)
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := acceptances(t, tr.Policy(), held, 2)
	wins, losses, nb, na := 0, 0, 0, 0
	for i := range before {
		switch {
		case after[i] && !before[i]:
			wins++
		case before[i] && !after[i]:
			losses++
		}
		if before[i] {
			nb++
		}
		if after[i] {
			na++
		}
	}
	p := stats.McNemarExact(wins, losses)
	t.Logf("held-out accept %d/%d -> %d/%d (wins %d, losses %d, McNemar p = %.2g)", nb, len(before), na, len(after), wins, losses, p)
	if wins <= losses || p >= 0.01 {
		t.Errorf("no clear improvement: accept %d -> %d of %d, wins %d, losses %d, p = %.3g", nb, na, len(before), wins, losses, p)
	}
}

// constJudge rates every episode 0.5.
type constJudge struct{}

func (constJudge) Strategy(context.Context, scenario.Public, []episode.Message) (float64, episode.Usage, error) {
	return 0.5, episode.Usage{}, nil
}

// TestJudgeEntersROut: with a judge rating every rollout 0.5 and w = 1,
// the first step plays the same rollouts and its mean R_out is 0.5 higher.
func TestJudgeEntersROut(t *testing.T) {
	scs := arena(t, scenario.Train)
	var first []Metrics
	for _, j := range []episode.Judge{nil, constJudge{}} {
		tr, err := New(smallConfig(), Options{Scenarios: scs, Persuadee: sim.New(sim.DefaultConfig()), Judge: j})
		if err != nil {
			t.Fatal(err)
		}
		m, err := tr.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, m)
	}
	if first[0].Accept != first[1].Accept || math.Abs(first[1].MeanROut-first[0].MeanROut-0.5) > 1e-12 {
		t.Errorf("no judge: %+v\njudge 0.5: %+v", first[0], first[1])
	}
}

// sameMetrics compares step metrics exactly, field by field through Map
// (which drops undefined NaN metrics, so NaN equals NaN here).
func sameMetrics(a, b []Metrics) bool {
	return slices.EqualFunc(a, b, func(x, y Metrics) bool {
		return x.Step == y.Step && maps.Equal(x.Map(), y.Map())
	})
}
