package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	runs_ "github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/train"
)

// TestTrainResumeEval trains 3 steps, extends the run to 5 with --resume
// --max-steps, and evaluates the checkpoint as planner:PATH.
func TestTrainResumeEval(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath, ck := filepath.Join(dir, "r.db"), filepath.Join(dir, "p.json")
	cfg := train.DefaultConfig()
	cfg.GRPO.ScenariosPerStep = 4
	cfg.MaxSteps = 3
	rc := trainRunConfig{Train: cfg, Scenarios: []string{"arena"}, Split: "train", Persuadee: "sim", Checkpoint: ck}
	var out, errOut bytes.Buffer
	if err := runTrain(ctx, rc, "", 2, dbPath, false, -1, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "3 steps done") || strings.Count(errOut.String(), "\nstep ") != 3 {
		t.Errorf("stdout %q\nstderr %q", out.String(), errOut.String())
	}
	rc2 := trainRunConfig{Checkpoint: ck}
	if err := runTrain(ctx, rc2, "", 1, dbPath, true, 5, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, _ := db.ListRuns(ctx)
	if len(runs) != 1 || runs[0].Kind != "train" || runs[0].Status != store.StatusDone {
		t.Fatalf("runs %+v", runs)
	}
	ms, _ := db.Metrics(ctx, runs[0].ID)
	eps, _ := db.Episodes(ctx, runs[0].ID)
	if len(ms) != 5 || len(eps) != 5*4*4 {
		t.Errorf("%d metric steps and %d episodes, want 5 and 80", len(ms), len(eps))
	}

	var csvOut bytes.Buffer
	if err := runs_.New(db).WriteMetricsCSV(ctx, runs[0].ID, &csvOut); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csvOut.String()), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "step,accept,") || !strings.Contains(lines[0], ",dead_share,") || !strings.HasPrefix(lines[5], "5,") {
		t.Errorf("metrics CSV:\n%s", csvOut.String())
	}

	pers, err := mustRegistry(t, "").Persuaders([]string{"planner:" + ck})
	ckf, _ := planner.Load(ck)
	if err != nil || pers[0].Name() != ckf.ArmName(ck) || pers[0].Name() != "planner:p@"+ckf.Hash() {
		t.Fatalf("planner persuader: %v %v", pers, err)
	}
	ec := evalConfig{Grid: runplan.Grid{Persuaders: []string{"planner:" + ck, "script"}, Persuadees: []string{"sim"}, Scenarios: []string{"arena"}, Split: "heldout", Tmax: 10, Rollouts: 1, Seed: 1}, Basis: probe.Default}
	var table bytes.Buffer
	if err := runEval(ctx, have(db), "", ec, 2, "table", &table, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), pers[0].Name()) {
		t.Errorf("eval table lacks the planner:\n%s", table.String())
	}
	if _, err := mustRegistry(t, "").Persuaders([]string{"planner:" + filepath.Join(dir, "missing.json")}); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing checkpoint: %v", err)
	}
}

// TestTrainJudgeNeedsConfig: --judge llm:NAME without --config fails
// before a run is created.
func TestTrainJudgeNeedsConfig(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "r.db")
	rc := trainRunConfig{Train: train.DefaultConfig(), Scenarios: []string{"arena"}, Split: "train", Persuadee: "sim",
		Checkpoint: filepath.Join(dir, "p.json"), Judge: "llm:judge", JudgeSamples: 1}
	err := runTrain(ctx, rc, "", 1, dbPath, false, -1, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "needs --config") {
		t.Fatalf("err = %v, want a --config error", err)
	}
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if runs, _ := db.ListRuns(ctx); len(runs) != 0 {
		t.Errorf("a run was created: %+v", runs)
	}
}
