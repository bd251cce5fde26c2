package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/store"
)

func testConfig() evalConfig {
	return evalConfig{Grid: runplan.Grid{Persuaders: []string{"script", "pushy"}, Persuadees: []string{"sim"}, Scenarios: []string{"p4g"}, Split: "all", Tmax: 10, Rollouts: 1, Seed: 5}, Basis: probe.Default}
}

// Interrupt a run midway and resume it: every planned episode is stored
// exactly once, and the result equals an uninterrupted run's.
func TestEvalInterruptResume(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := testConfig()

	runCtx, cancel := context.WithCancel(ctx)
	var errOut bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- runEval(runCtx, have(db), "", cfg, 1, "table", &bytes.Buffer{}, &errOut) }()
	// Cancel (as Ctrl-C does) once some episodes are stored.
	var runID string
	for runID == "" || countEpisodes(t, db, runID) < 20 {
		time.Sleep(time.Millisecond)
		if rs, err := db.ListRuns(ctx); err == nil && len(rs) == 1 {
			runID = rs[0].ID
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted eval returned %v; want context.Canceled (run finished too fast?)", err)
	}
	if !strings.Contains(errOut.String(), "--resume "+runID) {
		t.Errorf("interrupt message does not say how to resume:\n%s", errOut.String())
	}
	run, _ := db.GetRun(ctx, runID)
	if run.Status != store.StatusInterrupted {
		t.Errorf("status %q, want interrupted", run.Status)
	}
	stored := countEpisodes(t, db, runID)
	planned := 2 * 982
	if stored >= planned {
		t.Fatalf("stored %d of %d before the interrupt: not midway", stored, planned)
	}

	var out bytes.Buffer
	if err := runEval(ctx, have(db), runID, cfg, 2, "csv", &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	eps, err := db.Episodes(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != planned {
		t.Fatalf("after resume %d episodes, want %d", len(eps), planned)
	}
	seen := map[episode.Key]bool{}
	for _, ep := range eps {
		k := episode.KeyOf(ep)
		if seen[k] {
			t.Fatalf("episode %v stored twice", k)
		}
		seen[k] = true
	}

	// The same configuration uninterrupted gives the same summary table.
	var fresh bytes.Buffer
	if err := runEval(ctx, have(db), "", cfg, 2, "csv", &fresh, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if dropRunColumn(out.String()) != dropRunColumn(fresh.String()) || !strings.HasPrefix(out.String(), "run,persuader,") ||
		!strings.Contains(out.String(), "\n"+runID+",script,") {
		t.Fatalf("resumed summary differs from an uninterrupted run:\n%s\nvs\n%s", out.String(), fresh.String())
	}
}

func countEpisodes(t *testing.T, db *store.DB, runID string) int {
	t.Helper()
	keys, err := db.DoneKeys(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

func TestEvalRejectsBadFlags(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		mut  func(*evalConfig)
		want string
	}{
		{func(c *evalConfig) { c.Persuaders = []string{"nosuch"} }, "nosuch"},
		{func(c *evalConfig) { c.Persuadees = []string{"gpt"} }, `unknown persuadee "gpt"`},
		{func(c *evalConfig) { c.Split = "test" }, `unknown split "test"`},
		{func(c *evalConfig) { c.Rollouts = 0 }, "--rollouts must be >= 1"},
		{func(c *evalConfig) { c.Scenarios = []string{"missing.jsonl"} }, "missing.jsonl"},
		{func(c *evalConfig) { c.Judge = "llm:j" }, "needs --config"},
		{func(c *evalConfig) { c.Judge = "gpt" }, `--judge: "gpt": want llm:ROLE`},
		{func(c *evalConfig) { c.JudgeActs = true }, "--judge-acts needs --judge"},
		// Empty role lists, oversized plans and unbounded inputs are
		// refused before anything runs.
		{func(c *evalConfig) { c.Persuaders = []string{""} }, `--persuader holds an empty name ("")`},
		{func(c *evalConfig) { c.Persuaders = nil }, "--persuader is empty"},
		{func(c *evalConfig) { c.Persuadees = []string{"sim", " "} }, "--persuadee holds an empty name"},
		{func(c *evalConfig) { c.Rollouts = 1_000_000_000 }, "--rollouts must be <= 10000000"},
		{func(c *evalConfig) { c.Rollouts = 9_000_000 }, "over the limit of 10000000 episodes per run"},
		{func(c *evalConfig) { c.Config = "/dev/zero" }, "/dev/zero: not a regular file (a character device)"},
		{func(c *evalConfig) { c.MASPT = 2_000_000_000 }, "--masp-t must be in 0..1000, got 2000000000"},
		{func(c *evalConfig) { c.Tmax = 1 << 40 }, "--tmax must be in 1..1000"},
	} {
		cfg := testConfig()
		tc.mut(&cfg)
		err := runEval(ctx, have(db), "", cfg, 1, "table", &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want it to mention %q", err, tc.want)
		}
	}
}

// TestEvalRejectedInputWritesNothing: bad flags or a bad scenario file are
// errors, and no run database is created (hardening issue).
func TestEvalRejectedInputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tmax", "-3"}, `invalid argument "-3" for "--tmax" flag: want an integer in 1..1000`},
		{[]string{"--tmax", "0"}, `invalid argument "0" for "--tmax" flag: want an integer in 1..1000`},
		{[]string{"--workers", "0"}, `invalid argument "0" for "--workers" flag: want an integer in 1..1024`},
		{[]string{"--masp-t", "2000000000", "--metrics", "masp"}, `invalid argument "2000000000" for "--masp-t" flag: want an integer in 0..1000`},
		{[]string{"--scenarios", empty, "--split", "all"}, "no scenarios"},
		{[]string{"--resume", "nope"}, "no run database"},
	} {
		db := filepath.Join(dir, "runs.db")
		args := append([]string{"eval", "--db", db, "--tmax", "4", "--workers", "1", "--split", "heldout"}, tc.args...)
		_, _, err := execRoot(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("%v: a rejected command left %s behind (%v)", tc.args, db, err)
		}
	}
}

// TestEvalRetryFailed: "eval --resume RUN --retry-failed" removes the run's
// stored failures and plays them again; a plain resume leaves them.
func TestEvalRetryFailed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := evalConfig{Grid: runplan.Grid{Persuaders: []string{"script"}, Persuadees: []string{"sim"}, Scenarios: []string{"p4g"}, Split: "heldout", Tmax: 10, Rollouts: 1, Seed: 5}, Basis: probe.Default}
	if err := runEval(ctx, have(db), "", cfg, 2, "csv", &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	rs, _ := db.ListRuns(ctx)
	runID := rs[0].ID
	eps, err := db.Episodes(ctx, runID)
	if err != nil || len(eps) != 120 {
		t.Fatalf("%d episodes, %v", len(eps), err)
	}
	db.Close()
	// Turn two stored episodes into failures, as an engine outage would
	// have left them.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `UPDATE episodes SET terminal = 'failed', error = 'circuit breaker open'
		WHERE id IN (SELECT id FROM episodes WHERE run_id = ? ORDER BY id LIMIT 2)`, runID); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	failed := func() int {
		db, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		eps, err := db.Episodes(ctx, runID)
		if err != nil || len(eps) != 120 {
			t.Fatalf("%d episodes, %v", len(eps), err)
		}
		n := 0
		for _, ep := range eps {
			if ep.Terminal == decision.TermFailed {
				n++
			}
		}
		return n
	}
	exec := func(args ...string) string {
		_, errOut, err := execRoot(t, append([]string{"eval", "--db", path, "--workers", "1", "--tmax", "10"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return errOut
	}
	if out := exec("--resume", runID); !strings.Contains(out, "0 episodes to play") || failed() != 2 ||
		!strings.Contains(out, "view: persuarena view --db "+path+", then open http://127.0.0.1:8080/runs/"+runID+"\n") {
		t.Fatalf("plain resume replayed failures:\n%s", out)
	}
	if out := exec("--resume", runID, "--retry-failed"); !strings.Contains(out, "2 failed episodes removed") || !strings.Contains(out, "2 episodes to play") || failed() != 0 {
		t.Fatalf("retry-failed:\n%s", out)
	}
}

// dropRunColumn removes eval CSV's first column (the run id).
func dropRunColumn(csv string) string {
	var b strings.Builder
	for _, line := range strings.Split(csv, "\n") {
		_, rest, _ := strings.Cut(line, ",")
		b.WriteString(rest + "\n")
	}
	return b.String()
}

// runs show --episode prints the transcript; runs rm deletes the run.
func TestRunsShowEpisodeAndRm(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "r.db")
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := evalConfig{Grid: runplan.Grid{Persuaders: []string{"script"}, Persuadees: []string{"sim"}, Scenarios: []string{writeScenarios(t, 1)}, Split: "all", Tmax: 3, Rollouts: 1, Seed: 2}, Basis: probe.Default}
	if err := runEval(ctx, have(db), "", cfg, 1, "csv", &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	rs, _ := db.ListRuns(ctx)
	eps, _ := db.Episodes(ctx, rs[0].ID)
	db.Close()
	run := func(args ...string) (string, error) {
		out, _, err := execRoot(t, args...)
		return out, err
	}
	key := episode.KeyOf(eps[0]).String()
	out, err := run("runs", "show", rs[0].ID, "--db", dbPath, "--episode", key)
	t1 := eps[0].Turns[0]
	if err != nil || !strings.Contains(out, "episode "+key) || !strings.Contains(out, "turn 1  acts: "+strings.Join(t1.Acts, ", ")) ||
		!strings.Contains(out, "  persuader: "+t1.Persuader) || !strings.Contains(out, fmt.Sprintf("dense r_t %+.3f", *t1.Dense)) ||
		!strings.Contains(out, "end: "+string(eps[0].Terminal)) {
		t.Fatalf("transcript (%v):\n%s", err, out)
	}
	if _, err := run("runs", "show", rs[0].ID, "--db", dbPath, "--episode", "script/sim/nosuch#0"); err == nil || !strings.Contains(err.Error(), "no episode") {
		t.Errorf("missing episode: %v", err)
	}
	if out, err := run("runs", "rm", rs[0].ID, "--db", dbPath); err != nil || out != "removed run "+rs[0].ID+"\n" {
		t.Fatalf("rm: %v %q", err, out)
	}
	if _, err := run("runs", "show", rs[0].ID, "--db", dbPath, "--episode", ""); err == nil {
		t.Error("show after rm found the run")
	}
}
