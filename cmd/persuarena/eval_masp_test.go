package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// eval --metrics masp against sim, sim-soft and sim-hard: the MASP table
// follows the outcome table; SR@8 and AT equal those of "masp eval" on the
// same scenarios and seed (both play episode.Seed(seed, id, 0) with the
// same role seeds, and a stored episode's first eight turns are the
// closed-loop dialogue's); JSON and CSV carry the report; without the flag
// the output is unchanged.
func TestEvalMASPMetrics(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "r.db")
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	few := writeScenarios(t, 30)
	cfg := evalConfig{Grid: runplan.Grid{Persuaders: []string{"script", "random"}, Persuadees: []string{"sim", "sim-soft", "sim-hard"}, Scenarios: []string{few}, Split: "all", Tmax: 10, Rollouts: 1, Seed: 5}, Basis: probe.Default, Metrics: "masp"}
	var out bytes.Buffer
	if err := runEval(ctx, have(db), "", cfg, 2, "table", &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, s := range []string{"MASP metrics, set few: T = 8, tau_q = 0.70; intervals: 95% percentile bootstrap, 10000 resamples",
		"WorstSR@8", "Paired differences against script", "q from transcript rules; users = the run's persuadees",
		`(persuadee "sim" is a seeded simulator, not an LLM)`} {
		if !strings.Contains(text, s) {
			t.Errorf("output lacks %q:\n%s", s, text)
		}
	}
	if i, j := strings.Index(text, "acc%"), strings.Index(text, "MASP metrics"); i < 0 || j < i {
		t.Errorf("MASP table not after the outcome table")
	}

	out.Reset()
	if err := runEval(ctx, have(db), "", cfg, 2, "json", &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Outcomes []map[string]any
		MASP     []struct {
			Set         string
			Rationality string
			Report      struct {
				T    int
				Rows []struct {
					Persuader, User string
					SR, AT          struct{ Estimate float64 }
				}
			}
		} `json:"masp"`
	}
	if err := json.Unmarshal(out.Bytes(), &js); err != nil {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	if len(js.Outcomes) != 6 || len(js.MASP) != 1 || js.MASP[0].Report.T != 8 || len(js.MASP[0].Report.Rows) != 6 {
		t.Fatalf("json shape: %d outcomes, %+v", len(js.Outcomes), js.MASP)
	}

	// The same figures from the closed-loop protocol.
	ss, err := scenario.LoadFile(few)
	if err != nil {
		t.Fatal(err)
	}
	pers, err := mustRegistry(t, "").Persuaders(cfg.Persuaders)
	if err != nil {
		t.Fatal(err)
	}
	us, err := mustRegistry(t, "").MASPUsers(cfg.Persuadees, masp.DefaultSuccessRule)
	if err != nil {
		t.Fatal(err)
	}
	res, err := masp.Evaluate(ctx, masp.EvalConfig{Seed: cfg.Seed}, masp.ScenarioCases(ss), pers, us, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for p := range res.Persuaders {
		for u := range res.Users {
			trs := res.Traces(p, u)
			r := js.MASP[0].Report.Rows[k]
			k++
			if r.Persuader != res.Persuaders[p] || r.User != res.Users[u] {
				t.Fatalf("row %d is %s/%s, want %s/%s", k, r.Persuader, r.User, res.Persuaders[p], res.Users[u])
			}
			if sr, at := masp.SR(trs, 8), masp.AT(trs, 8); r.SR.Estimate != sr || r.AT.Estimate != at {
				t.Errorf("%s/%s: eval SR %v AT %v, masp eval SR %v AT %v", r.Persuader, r.User, r.SR.Estimate, r.AT.Estimate, sr, at)
			}
		}
	}
	if js.MASP[0].Report.Rows[0].SR.Estimate == 0 {
		t.Error("script never succeeds on sim: the cross-check compares zeros only")
	}

	out.Reset()
	if err := runEval(ctx, have(db), "", cfg, 2, "csv", &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\n\n"+strings.Join(masp.CSVHeader, ",")+"\nrow,few,script,,sim,30,") {
		t.Errorf("csv:\n%s", out.String())
	}

	// Without --metrics: no MASP table; JSON holds the run id and the
	// outcome rows.
	cfg.Metrics = ""
	out.Reset()
	if err := runEval(ctx, have(db), "", cfg, 2, "json", &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var plain struct {
		RunID    string           `json:"run_id"`
		Outcomes []map[string]any `json:"outcomes"`
		MASP     any              `json:"masp"`
	}
	if err := json.Unmarshal(out.Bytes(), &plain); err != nil || len(plain.Outcomes) != 6 || len(plain.RunID) != len("20060102-150405-abcd") || plain.MASP != nil {
		t.Errorf("plain json: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := runEval(ctx, have(db), "", cfg, 2, "table", &out, &bytes.Buffer{}); err != nil || strings.Contains(out.String(), "MASP") {
		t.Errorf("plain table: %v\n%s", err, out.String())
	}

	// compare --metrics masp on two persuaders of the last run.
	runs, err := db.ListRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	run := runs[0].ID
	db.Close()
	out.Reset()
	o := analysis.CompareStoredOptions{Seed: 1, Resamples: 500, Format: "text", Metrics: "masp"}
	if err := runCompare(ctx, dbPath, run+":script:sim-hard", run+":random:sim-hard", o, &out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Paired comparison, A − B", "MASP metrics, A − B (MASP paper)", "ΔSR@8", "ΔRCSR@8", "on the 30 pairs above"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("compare lacks %q:\n%s", s, out.String())
		}
	}
	o.Metrics = "other"
	if err := runCompare(ctx, dbPath, run+":script", run+":random", o, &out); err == nil || !strings.Contains(err.Error(), `unknown --metrics "other"`) {
		t.Errorf("bad compare metrics: %v", err)
	}
}

func TestEvalMASPBadFlags(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := testConfig()
	cfg.Metrics = "rcsr"
	if err := runEval(ctx, have(db), "", cfg, 1, "table", &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `unknown --metrics "rcsr"`) {
		t.Errorf("bad metrics: %v", err)
	}
	cfg.Metrics, cfg.MASPT = "masp", -1
	if err := runEval(ctx, have(db), "", cfg, 1, "table", &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--masp-t") {
		t.Errorf("bad masp-t: %v", err)
	}
	if got := runs.MASPT(evalConfig{Grid: runplan.Grid{Tmax: 5}}); got != 5 {
		t.Errorf("T for tmax 5: %d", got)
	}
	if got := runs.MASPT(evalConfig{Grid: runplan.Grid{Tmax: 10}, MASPT: 3}); got != 3 {
		t.Errorf("--masp-t 3: %d", got)
	}
}
