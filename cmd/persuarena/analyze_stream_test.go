package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/store"
)

// TestAnalyzeStreamedEqualsInMemory: analyze, which streams episodes into
// analysis.Stream, prints exactly what the in-memory analyze printed
// (runAnalyzeInMemory, the code before streaming, kept as the reference)
// on a real eval run of four persuaders against two persuadees with two
// rollouts (dead groups present), on the hand-built runs, and on two runs
// combined (renamed persuaders), for every analysis, format and selection.
func TestAnalyzeStreamedEqualsInMemory(t *testing.T) {
	cidata.Slow(t, "analyses a large run twice")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := evalConfig{Grid: runplan.Grid{Persuaders: []string{"script", "random", "pushy", "informer"}, Persuadees: []string{"sim-hard", "sim"}, Scenarios: []string{"p4g"}, Split: "heldout", Tmax: 10, Rollouts: 2, Seed: 3}, Basis: probe.Default}
	if err := runEval(ctx, have(db), "", cfg, 2, "csv", io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	rs, _ := db.ListRuns(ctx)
	db.Close()
	hand := analysisStore(t)
	cases := []struct {
		db   string
		runs []string
		o    analysis.AnalyzeOptions
	}{
		{path, []string{rs[0].ID}, analysis.AnalyzeOptions{What: "all", Format: "csv"}},
		{path, []string{rs[0].ID}, analysis.AnalyzeOptions{What: "all", Format: "text", Persuader: "random"}},
		{path, []string{rs[0].ID}, analysis.AnalyzeOptions{What: "all", Format: "markdown"}},
		{path, []string{rs[0].ID}, analysis.AnalyzeOptions{What: "table8", Format: "csv", Persuader: "script", Scenario: "p4g-heldout-0003", Rollout: 1}},
		{hand, []string{"r1"}, analysis.AnalyzeOptions{What: "all", Format: "csv"}},
		{hand, []string{"r1", "r2"}, analysis.AnalyzeOptions{What: "all", Format: "text", Persuader: "r2:beta"}},
		{hand, []string{"r1"}, analysis.AnalyzeOptions{What: "table8", Format: "text", Scenario: "s1", Rollout: 0, Persuader: "beta"}},
		{hand, []string{"r1"}, analysis.AnalyzeOptions{What: "table8", Format: "text", Scenario: "s4", Rollout: 0}},
		{hand, []string{"r1"}, analysis.AnalyzeOptions{What: "all", Format: "text", Persuader: "gamma"}},
	}
	for _, c := range cases {
		if c.o.Scenario == "" {
			c.o.Rollout = -1
		}
		var got, gotErr, want, wantErr bytes.Buffer
		gerr := runAnalyze(ctx, c.db, c.runs, c.o, &got, &gotErr)
		werr := runAnalyzeInMemory(ctx, c.db, c.runs, c.o, &want, &wantErr)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || got.String() != want.String() || gotErr.String() != wantErr.String() {
			t.Errorf("%v %+v:\nstreamed (err %v, stderr %q):\n%s\nin memory (err %v, stderr %q):\n%s",
				c.runs, c.o, gerr, gotErr.String(), got.String(), werr, wantErr.String(), want.String())
		}
		if c.db == path && c.o.What == "all" && (gerr != nil || !strings.Contains(got.String(), "dead%") || got.Len() < 5000) {
			t.Errorf("%+v: expected a full analysis, got err %v, %d bytes", c.o, gerr, got.Len())
		}
	}

	// The deadgroups flags reach Figure 7 (the in-memory code ignored
	// them): a separation threshold no dense advantage exceeds separates
	// no group, where the default threshold separates some.
	separated := func(threshold float64) (n int) {
		t.Helper()
		o := analysis.AnalyzeOptions{What: "deadgroups", Format: "csv", Rollout: -1, GRPO: grpo.DefaultConfig()}
		if threshold > 0 {
			o.GRPO.SeparateThreshold = threshold
		}
		var out bytes.Buffer
		if err := runAnalyze(ctx, path, []string{rs[0].ID}, o, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
			var k int
			fmt.Sscan(strings.Split(line, ",")[5], &k)
			n += k
		}
		return n
	}
	if def, none := separated(0), separated(1e9); def == 0 || none != 0 {
		t.Errorf("separated groups: %d at the default threshold, %d at 1e9; want > 0 and 0", def, none)
	}
}

// runAnalyzeInMemory is runAnalyze as it was before streaming: it loads every
// episode (loadRunEpisodes, analysis.Concat) and runs the slice functions.
func runAnalyzeInMemory(ctx context.Context, dbPath string, runIDs []string, o analysis.AnalyzeOptions, out, errOut io.Writer) error {
	whats := []string{o.What}
	if o.What == "all" {
		whats = analyses
	} else if !contains(analyses, o.What) {
		return fmt.Errorf("unknown --what %q (want %s or all)", o.What, strings.Join(analyses, ", "))
	}
	switch o.Format {
	case "text", "csv", "markdown":
	default:
		return fmt.Errorf("unknown --format %q (want text, csv or markdown)", o.Format)
	}
	if o.Rollout >= 0 && o.Scenario == "" {
		return errors.New("--rollout needs --scenario")
	}
	if o.GRPO.DenseMode == "" { // callers that build analyzeOptions by hand
		o.GRPO = grpo.DefaultConfig()
	}
	if err := o.GRPO.Validate(); err != nil {
		return err
	}
	db, err := openExistingDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	var runs []analysis.RunEpisodes
	for i, id := range runIDs {
		if contains(runIDs[:i], id) {
			return fmt.Errorf("run %s given twice", id)
		}
		eps, err := loadRunEpisodes(ctx, db, id)
		if err != nil {
			return err
		}
		runs = append(runs, analysis.RunEpisodes{RunID: id, Episodes: eps})
	}
	all := analysis.Concat(runs)
	eps := analysis.Filter(all, o.Persuader)
	if len(eps) == 0 {
		if o.Persuader != "" {
			arms, _ := analysis.Arms(all)
			var names []string
			for _, a := range arms {
				if !contains(names, a.Persuader) {
					names = append(names, a.Persuader)
				}
			}
			return fmt.Errorf("no episodes of persuader %q (the runs hold %s)", o.Persuader, strings.Join(names, ", "))
		}
		return fmt.Errorf("run(s) %s hold no episodes", strings.Join(runIDs, ", "))
	}
	for i, w := range whats {
		var t analysis.Table
		switch w {
		case "table6":
			t = analysis.AcceptanceByProfile(eps).Table()
		case "table7":
			t = analysis.AcceptanceGrid(eps).Table()
		case "table8":
			var ep *episode.Episode
			if o.Scenario != "" {
				ep, err = analysis.FindEpisode(eps, "", o.Scenario, max(o.Rollout, 0))
			} else {
				ep, err = analysis.LargestDenseAccepted(eps, "")
			}
			if err != nil {
				if o.What == "all" {
					fmt.Fprintln(errOut, "table8 skipped:", err)
					continue
				}
				return err
			}
			t = analysis.TraceOf(ep).Table()
		case "table9":
			t = analysis.ConversionOf(eps).Table()
		case "acts":
			t = analysis.ActsByTurn(eps).Table()
		case "beliefs":
			t = analysis.BeliefTrajectories(eps).Table()
		case "deadgroups":
			t = analysis.DeadGroups(eps, analysis.GroupOptions{}).Table()
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := t.Write(out, o.Format); err != nil {
			return err
		}
	}
	return nil
}
