package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/store"
)

// analysisStore saves analysis/testdata/handbuilt.jsonl (the hand-built
// run of the analysis tests: alpha and beta against sim on s1..s4, plus a
// failed beta episode on s5) as eval run "r1", persuaders configured in the
// order beta, alpha; and the same again as run "r2" for the several-runs
// test.
func analysisStore(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := `{"persuaders":["beta","alpha"],"persuadees":["sim"]}`
	for _, id := range []string{"r1", "r2"} {
		if err := db.CreateRun(ctx, store.Run{ID: id, Kind: "eval", Config: json.RawMessage(cfg)}); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join("..", "..", "analysis", "testdata", "handbuilt.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var ep episode.Episode
			if err := json.Unmarshal(sc.Bytes(), &ep); err != nil {
				t.Fatal(err)
			}
			if err := db.SaveEpisode(ctx, id, &ep); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	return path
}

func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l) {
			t.Errorf("output lacks %q:\n%s", l, out)
		}
	}
}

// alpha vs beta on the shared s1..s4 (s5 is beta's only, and failed):
// alpha accepts s1, s3 (50%), beta s2 (25%): Δ +25 pp; wins s1, s3, loss
// s2: McNemar p = 2 (1 + 3)/2^3 = 1; R_goal alpha (3-3+3-1)/4 = +0.5, beta
// (1+3-3-1)/4 = 0, d = 2, -6, 6, 0: Wilcoxon on 3 tied-rank differences
// uses the normal approximation.
func TestCompareCLI(t *testing.T) {
	ctx := context.Background()
	db := analysisStore(t)
	o := analysis.CompareStoredOptions{Seed: 1, Resamples: 1000, Format: "text"}
	var out bytes.Buffer
	err := runCompare(ctx, db, "r1", "r1:beta", o, &out)
	if err == nil || !strings.Contains(err.Error(), "run r1 holds several persuaders (alpha, beta)") {
		t.Errorf("side without persuader: %v", err)
	}
	err = runCompare(ctx, db, "r1:alpha", "r1:beta", o, &out)
	if err == nil || !strings.Contains(err.Error(), "4 (scenario, rollout) keys in both, 0 only in A, 1 only in B (e.g. s5#0)") {
		t.Fatalf("different sets: %v", err)
	}
	o.Intersection = true
	if err := runCompare(ctx, db, "r1:alpha", "r1:beta:sim", o, &out); err != nil {
		t.Fatal(err)
	}
	wantLines(t, out.String(),
		"run r1, alpha vs sim (4 episodes)", "run r1, beta vs sim (5 episodes)",
		"4 paired on (scenario, rollout); intersection: 0 only in A and 1 only in B left out",
		"full acceptance A       50.0%", "full acceptance B       25.0%", "Δ full acceptance       +25.0 pp, 95% CI [",
		"win / loss              2 / 1", "McNemar exact p         1\n", "mean R_goal A           +0.50", "mean R_goal B           +0.00",
		"mean R_goal difference  +0.50, 95% CI [", "normal approximation with continuity correction",
		"1000 resamples, seed 1")

	// Through cobra, JSON output.
	js, _, err := execRoot(t, "compare", "r1:alpha", "r1:beta", "--db", db, "--intersection", "--format", "json", "--resamples", "200", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, js)
	}
	if got["pairs"] != 4.0 || got["wins"] != 2.0 || got["losses"] != 1.0 || got["delta_pp"] != 25.0 || got["seed"] != 3.0 {
		t.Errorf("json %s", js)
	}
}

// analyze on the hand-built run: Table 6 columns follow the configured
// order (beta first); numbers as computed in analysis/analysis_test.go.
func TestAnalyzeCLI(t *testing.T) {
	ctx := context.Background()
	db := analysisStore(t)
	run := func(o analysis.AnalyzeOptions, runs ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if o.Format == "" {
			o.Format = "text"
		}
		if err := runAnalyze(ctx, db, runs, o, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	wantLines(t, run(analysis.AnalyzeOptions{What: "table6", Rollout: -1}, "r1"),
		"dimension   value       beta acc%  beta n  alpha acc%  alpha n",
		"all         all              25.0       4        50.0        4",
		"family      healthcare        0.0       2       100.0        2")
	wantLines(t, run(analysis.AnalyzeOptions{What: "table9", Rollout: -1, Format: "csv"}, "r1"),
		"alpha,sim,4,50.0,0.0,25.0,25.0,1.8,+0.65,75.0,66.7,0\n")
	// Automatic trace for alpha: e3 (s3), B .4 -> .9.
	wantLines(t, run(analysis.AnalyzeOptions{What: "table8", Persuader: "alpha", Rollout: -1}, "r1"),
		"alpha vs sim, scenario s3 rollout 0, accept", "1  evidence,autonomy  +0.80  +0.80  +0.80  0.900   +0.500  accept")
	wantLines(t, run(analysis.AnalyzeOptions{What: "table8", Persuader: "beta", Scenario: "s1", Rollout: 0, Format: "markdown"}, "r1"),
		"| 2 | commitment,plan | +0.40 | +0.40 | +0.40 | 0.700 | +0.400 | conditional |")
	all := run(analysis.AnalyzeOptions{What: "all", Rollout: -1}, "r1")
	wantLines(t, all, "(Probe-RPO paper, Table 6)", "(Probe-RPO paper, Table 7)", "(Probe-RPO paper, Table 8)", "(Probe-RPO paper, Table 9)",
		"(Probe-RPO paper, Figure 5)", "(Probe-RPO paper, Figure 6)", "(Probe-RPO paper, Figure 7)",
		"alpha      1  4         50.0       25.0    0.0         25.0       25.0",
		"terminal=accept       0  3  -0.07  -0.07  -0.07  0.467",
		"8 scenario group(s) with fewer than 2 scored rollouts left out", "no group has 2 or more scored rollouts")
	// Two runs holding the same persuaders: names are prefixed.
	wantLines(t, run(analysis.AnalyzeOptions{What: "table7", Rollout: -1}, "r1", "r2"),
		"r1:beta        25.0      4", "r1:alpha       50.0      4", "r2:beta        25.0      4", "r2:alpha       50.0      4")
	wantLines(t, run(analysis.AnalyzeOptions{What: "table9", Persuader: "r2:alpha", Rollout: -1}, "r1", "r2"), "r2:alpha   sim        4  50.0")

	var out bytes.Buffer
	for _, c := range []struct {
		o    analysis.AnalyzeOptions
		want string
	}{
		{analysis.AnalyzeOptions{What: "table5", Format: "text", Rollout: -1}, `unknown --what "table5"`},
		{analysis.AnalyzeOptions{What: "all", Format: "html", Rollout: -1}, `unknown --format "html"`},
		{analysis.AnalyzeOptions{What: "all", Format: "text", Persuader: "gamma", Rollout: -1}, `no episodes of persuader "gamma" (the runs hold beta, alpha)`},
		{analysis.AnalyzeOptions{What: "table8", Format: "text", Scenario: "s4", Rollout: 0}, "choose one with --persuader"},
		{analysis.AnalyzeOptions{What: "table8", Format: "text", Rollout: 2}, "--rollout needs --scenario"},
	} {
		if err := runAnalyze(ctx, db, []string{"r1"}, c.o, &out, &out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.o, err, c.want)
		}
	}
	if err := runAnalyze(ctx, db, []string{"r1", "r1"}, analysis.AnalyzeOptions{What: "all", Format: "text", Rollout: -1}, &out, &out); err == nil || !strings.Contains(err.Error(), "run r1 given twice") {
		t.Errorf("same run twice: %v", err)
	}
	if err := runAnalyze(ctx, db, []string{"nope"}, analysis.AnalyzeOptions{What: "all", Format: "text", Rollout: -1}, &out, &out); err == nil || !strings.Contains(err.Error(), "run nope") {
		t.Errorf("unknown run: %v", err)
	}
	if err := runAnalyze(ctx, filepath.Join(t.TempDir(), "missing.db"), []string{"r1"}, analysis.AnalyzeOptions{What: "all", Format: "text", Rollout: -1}, &out, &out); err == nil || !strings.Contains(err.Error(), "no run database") {
		t.Errorf("missing db: %v", err)
	}
}
