package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/export"
	"github.com/persuarena/persuarena/store"
)

// TestExportCommand runs `persuarena export` on a two-episode run in
// both formats and checks its flag errors.
func TestExportCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "runs.db")
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRun(ctx, store.Run{ID: "r1", Kind: "eval"}); err != nil {
		t.Fatal(err)
	}
	d1, d2 := 0.25, -0.25
	for i, tc := range []struct {
		term  decision.Terminal
		goal  float64
		dense *float64
	}{{decision.TermAccept, 3, &d1}, {decision.TermReject, -3, &d2}} {
		ep := &episode.Episode{ScenarioID: "s", Rollout: i, Persuader: "script", Persuadee: "sim",
			Terminal: tc.term, RGoal: tc.goal,
			Turns: []episode.Turn{{T: 1, Persuader: "hi", Persuadee: "no", Decision: decision.Decision(tc.term), Dense: tc.dense}}}
		if err := db.SaveEpisode(ctx, "r1", ep); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	run := func(args ...string) (string, error) {
		out, _, err := execRoot(t, args...)
		return out, err
	}
	base := []string{"export", "r1", "--db", dbPath, "--group-by", "scenario", "--group-size", "0"}
	out, err := run(append(base, "--format", "jsonl", "--out", "", "--lambda", "0")...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), out)
	}
	var e export.Episode
	if err := json.Unmarshal([]byte(lines[0]), &e); err != nil {
		t.Fatal(err)
	}
	// {3, -3}: sample std sqrt 18, A_out = 3/(sqrt 18 + 1e-6); λ = 0.
	if e.Lambda != 0 || e.Turns[0].Advantage != e.AOut || e.AOut < 0.70710661 || e.AOut > 0.70710662 {
		t.Errorf("episode 0: lambda %v a_out %v advantage %v", e.Lambda, e.AOut, e.Turns[0].Advantage)
	}

	pq := filepath.Join(dir, "r1.parquet")
	if _, err := run(append(base, "--format", "parquet", "--out", pq, "--lambda", "0.5")...); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.ReadFile[export.Row](pq)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Terminal != "reject" || rows[0].Lambda != 0.5 {
		t.Fatalf("rows: %+v", rows)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "r1", "--db", dbPath, "--format", "csv", "--out", ""}, `format "csv"`},
		{[]string{"export", "r1", "--db", dbPath, "--format", "parquet", "--out", ""}, "--out"},
		{[]string{"export", "r1", "--db", dbPath, "--format", "jsonl", "--group-by", "step"}, `--group-by "step"`},
		{[]string{"export", "r1", "--db", filepath.Join(dir, "none.db"), "--group-by", "scenario"}, "no run database"},
		{[]string{"export", "nosuch", "--db", dbPath, "--format", "jsonl", "--lambda", "-1"}, "lambda"},
		{[]string{"export", "nosuch", "--db", dbPath, "--format", "jsonl", "--lambda", "0.5"}, "not found"},
	} {
		_, err := run(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}
