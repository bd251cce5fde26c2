package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/selfplay"
	"github.com/persuarena/persuarena/store"
)

func runSelfplayCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	c := newSelfplayCmd()
	c.SetOut(&out)
	c.SetErr(&out)
	c.SetArgs(args)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.ExecuteContext(context.Background())
	return out.String(), err
}

// TestSelfplayCommand: warmstart against sim-soft, a one-cycle self-play
// run from it, a resume that extends it to two cycles (metrics of both in
// the run database), and a masp eval of the resulting planner.
func TestSelfplayCommand(t *testing.T) {
	dir := t.TempDir()
	ss, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	ss = scenario.Filter(ss, scenario.Train)[:8]
	var buf bytes.Buffer
	for _, s := range ss {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	scs := filepath.Join(dir, "tiny.jsonl")
	if err := os.WriteFile(scs, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	soft := filepath.Join(dir, "soft.json")
	out, err := runSelfplayCmd(t, "warmstart", "--scenarios", scs, "--out", soft, "--steps", "2", "--scenarios-per-step", "4", "--workers", "2")
	if err != nil || !strings.Contains(out, "planner trained against sim-soft for 2 steps") {
		t.Fatalf("warmstart: %v\n%s", err, out)
	}
	ck, db := filepath.Join(dir, "sp"), filepath.Join(dir, "runs.db")
	common := []string{"--scenarios", scs, "--g", "2", "--scenarios-per-step", "3", "--system-steps", "1", "--user-steps", "1",
		"--updates", "1", "--user-warm-steps", "5", "--user-hidden", "4", "--checkpoint-dir", ck, "--db", db, "--workers", "2"}
	out, err = runSelfplayCmd(t, append([]string{"--init-planner", "planner:" + soft, "--cycles", "1"}, common...)...)
	if err != nil {
		t.Fatalf("selfplay: %v\n%s", err, out)
	}
	for _, want := range []string{"user warm start:", "cycle 1/1 system", "cycle 1/1 user", "cycle 1/1 student", "1 cycles done",
		"--persuader planner:" + soft + ",planner:" + ck + "/planner.json"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = runSelfplayCmd(t, "--resume", "--checkpoint-dir", ck, "--db", db, "--cycles", "2")
	if err != nil || !strings.Contains(out, "cycles 2..2") || !strings.Contains(out, "cycle 2/2 user") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	info, err := selfplay.ReadInfo(ck)
	if err != nil || info.Cycle != 2 || info.RunID == "" {
		t.Fatalf("checkpoint info %+v, %v", info, err)
	}
	sdb, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := sdb.Metrics(context.Background(), info.RunID)
	sdb.Close()
	if err != nil || len(ms) != 2 || ms[1].Metrics["sys_dialogues"] != 6 {
		t.Fatalf("stored metrics %+v, %v", ms, err)
	}
	out, err = runMASP(t, "masp", "eval", "--persuader", "planner:"+filepath.Join(ck, selfplay.PlannerFile), "--users", "sim-hard",
		"--resamples", "50", "--workers", "2", "--no-bdi")
	if err != nil || !strings.Contains(out, "WorstSR@8") {
		t.Fatalf("masp eval of the self-play planner: %v\n%s", err, out)
	}
	if _, err := runSelfplayCmd(t, common...); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("a fresh run over an existing checkpoint: %v", err)
	}
	common[len(common)-5] = filepath.Join(dir, "sp2")
	if _, err := runSelfplayCmd(t, append([]string{"--init-planner", soft}, common...)...); err == nil || !strings.Contains(err.Error(), "planner:PATH") {
		t.Errorf("--init-planner without prefix: %v", err)
	}
	if _, err := runSelfplayCmd(t, "warmstart", "--scenarios", scs, "--out", soft, "--persuadee", "llm:x"); err == nil {
		t.Error("warmstart against an LLM persuadee accepted")
	}
}
