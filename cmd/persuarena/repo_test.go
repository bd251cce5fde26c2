package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/train"
)

// persuarena eval --scenarios repo:negotiation --reward repo:negotiation-judged
// --judge llm:j against sim, the judge on the fake engine: every episode
// stores its reward vector with the rubric scores (4 on [1, 5]) and
// R = R_model·(1 + sign(R_model)·E/100); the table has the REPO section.
func TestEvalREPORewardFakeJudge(t *testing.T) {
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	startJudgeEngine(t, cfgPath)
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := evalConfig{Grid: runplan.Grid{Persuaders: []string{"script"}, Persuadees: []string{"sim"}, Scenarios: []string{"repo:negotiation"}, Split: "heldout", Tmax: 6, Rollouts: 1, Seed: 1}, Basis: probe.Default, Config: cfgPath, Judge: "llm:j", Reward: "repo:negotiation-judged"}
	var out, errOut bytes.Buffer
	if err := runEval(ctx, have(db), "", cfg, 2, "table", &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "REPO reward") || !strings.Contains(out.String(), "judge.emotional_value") {
		t.Fatalf("no REPO table:\n%s", out.String())
	}
	rs, _ := db.ListRuns(ctx)
	eps, err := db.Episodes(ctx, rs[0].ID)
	if err != nil || len(eps) != 4 {
		t.Fatalf("%d episodes, %v", len(eps), err)
	}
	for _, ep := range eps {
		v := ep.Reward
		if v == nil {
			t.Fatalf("%s: no reward vector (%s)", ep.ScenarioID, ep.JudgeError)
		}
		ev, _ := v.Get("judge.emotional_value")
		sop, _ := v.Get("judge.sop_compliance")
		ej, _ := v.Get("e_judge")
		e, _ := v.Get("e")
		rm, _ := v.Get("r_model")
		// 4 on [1, 5] is 0.5; two rubrics of weight 20: E_judge = 20
		if ev != 4 || sop != 4 || ej != 20 || rm != ep.RGoal {
			t.Errorf("%s: judge %v %v, e_judge %v, r_model %v (R_goal %v)", ep.ScenarioID, ev, sop, ej, rm, ep.RGoal)
		}
		sign := map[bool]float64{true: 1, false: -1}[rm > 0]
		if want := rm * (1 + sign*e/100); math.Abs(v.R-want) > 1e-12 {
			t.Errorf("%s: R %v, want %v", ep.ScenarioID, v.R, want)
		}
	}
}

// persuarena train --reward repo:negotiation on the pack's train split
// against sim: every stored rollout carries its reward vector, and the
// step's mean R_out is the mean of the rollouts' R.
func TestTrainREPOReward(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "t.db")
	rc := trainRunConfig{Train: train.DefaultConfig(), Scenarios: []string{"repo:negotiation"}, Split: "train", Persuadee: "sim",
		Checkpoint: filepath.Join(dir, "p.json"), Reward: "repo:negotiation"}
	rc.Train.Tmax, rc.Train.GRPO.G, rc.Train.GRPO.ScenariosPerStep, rc.Train.MaxSteps = 6, 4, 2, 2
	var out, errOut bytes.Buffer
	if err := runTrain(context.Background(), rc, "", 2, dbPath, false, -1, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	ctx := context.Background()
	db, err := store.OpenExisting(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rs, _ := db.ListRuns(ctx)
	eps, _ := db.Episodes(ctx, rs[0].ID)
	ms, _ := db.Metrics(ctx, rs[0].ID)
	if len(eps) != 16 || len(ms) != 2 {
		t.Fatalf("%d episodes, %d steps", len(eps), len(ms))
	}
	sum := map[int]float64{}
	for _, ep := range eps {
		if ep.Reward == nil {
			t.Fatalf("%s#%d: no reward vector", ep.ScenarioID, ep.Rollout)
		}
		sum[ep.Rollout/4] += ep.Reward.R
	}
	for _, m := range ms {
		if got, want := m.Metrics["mean_r_out"], sum[m.Step]/8; math.Abs(got-want) > 1e-9 {
			t.Errorf("step %d: mean_r_out %v, want mean R %v", m.Step, got, want)
		}
	}
}
