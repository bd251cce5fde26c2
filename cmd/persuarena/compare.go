package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// compareOptions are compare's flags.
type compareOptions struct {
	intersection bool
	seed         uint64
	resamples    int
	format       string
	// metrics "masp" adds MASP's paired SR@T, AT and RCSR@T differences;
	// maspT is T (0: min(8, run A's tmax)).
	metrics string
	maspT   int
}

func init() {
	var (
		o      compareOptions
		dbPath string
	)
	cmd := &cobra.Command{
		Use:   "compare RUN_A[:PERSUADER[:PERSUADEE]] RUN_B[:PERSUADER[:PERSUADEE]]",
		Short: "Paired comparison of two persuaders on the same scenarios (seed 000 Table 5 tests)",
		Long: `Pairs the episodes of side A and side B on (scenario id, rollout) and reports:
the number of pairs, each side's full acceptance and the margin A - B in
percentage points, win/loss (pairs where only A / only B reach full
acceptance), McNemar's exact p on them, the Wilcoxon signed-rank p on the R_goal
differences (two-sided, zeros dropped; exact when there are no ties and at most
50 differences, else the normal approximation with continuity correction; the
output says which), and paired bootstrap 95% intervals of the margin and of the
mean R_goal difference.

A side names a run and, when the run holds several, the persuader and
persuadee: e.g. "persuarena compare RUN:script RUN:pushy" compares two
persuaders of one eval run. A pair with a failed episode on either side is
dropped and counted. When the two sides hold different (scenario, rollout)
sets the command refuses, listing the counts; --intersection compares on the
shared ones. See docs/analysis.md.

With --metrics masp it also reports MASP's metrics on the same pairs (seed 003;
docs/masp.md): each side's SR@T, AT and RCSR@T (T = min(8, the run's tmax)
unless --masp-t) and paired bootstrap intervals of the differences A - B.
Success is a full acceptance by turn T; q per turn comes from rules over the
stored transcript, reading the scenarios' concerns from the run's scenario
sets when they can be resolved.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd.Context(), dbPath, args[0], args[1], o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.intersection, "intersection", false, "compare on the (scenario, rollout) keys both sides hold when their sets differ")
	f.Uint64Var(&o.seed, "seed", 1, "bootstrap seed (same seed, same intervals)")
	f.IntVar(&o.resamples, "resamples", analysis.DefaultResamples, "paired bootstrap resamples")
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	dbFlag(f, &dbPath)
	f.StringVar(&o.metrics, "metrics", "", "extra metrics: masp (paired SR@T, AT, RCSR@T differences; docs/masp.md)")
	f.IntVar(&o.maspT, "masp-t", 0, "turn budget T of --metrics masp (0: min(8, run A's tmax))")
	rootCmd.AddCommand(cmd)
}

// loadSideOutcomes resolves "RUN[:PERSUADER[:PERSUADEE]]" to that arm's
// outcomes: the arm is chosen among the run's arms (store.DB.Arms, from an
// index), then only its rows are read (store.DB.EachOutcome with a
// Filter): no turn is read, and names are shared between outcomes, so a
// 177k-episode run costs tens of bytes per episode of the two arms instead
// of every transcript.
func loadSideOutcomes(ctx context.Context, db *store.DB, ref string) (string, []episode.Outcome, error) {
	runID, arm, _ := strings.Cut(ref, ":")
	if runID == "" {
		return "", nil, fmt.Errorf("side %q: missing run id (want RUN[:PERSUADER[:PERSUADEE]])", ref)
	}
	if _, err := db.GetRun(ctx, runID); err != nil {
		return "", nil, fmt.Errorf("run %s: %w", runID, err)
	}
	arms, err := db.Arms(ctx, runID)
	if err != nil {
		return "", nil, err
	}
	// One outcome per arm stands in for the run in SplitArm and Pick,
	// which then give the same choices and errors as over every episode.
	names := make([]episode.Outcome, len(arms))
	for i, a := range arms {
		names[i] = episode.Outcome{Persuader: a.Persuader, Persuadee: a.Persuadee}
	}
	persuader, persuadee := analysis.SplitArmOutcomes(arm, names)
	picked, err := analysis.PickOutcomes(runID, names, persuader, persuadee)
	if err != nil {
		return "", nil, err
	}
	if len(picked) != 1 {
		return "", nil, fmt.Errorf("run %s: side %q matches %d arms", runID, ref, len(picked))
	}
	f := store.Filter{Persuader: picked[0].Persuader, Persuadee: picked[0].Persuadee}
	scenarios := map[string]string{}
	var os []episode.Outcome
	err = db.EachOutcome(ctx, runID, func(o episode.Outcome) error {
		id, ok := scenarios[o.ScenarioID]
		if !ok {
			id = o.ScenarioID
			scenarios[id] = id
		}
		o.Persuader, o.Persuadee, o.ScenarioID, o.JudgeError = f.Persuader, f.Persuadee, id, ""
		os = append(os, o)
		return nil
	}, f)
	return runID, os, err
}

// loadSide resolves "RUN[:PERSUADER[:PERSUADEE]]" to that arm's episodes
// (turns included, for --metrics masp).
func loadSide(ctx context.Context, db *store.DB, ref string) ([]*episode.Episode, error) {
	runID, arm, _ := strings.Cut(ref, ":")
	if runID == "" {
		return nil, fmt.Errorf("side %q: missing run id (want RUN[:PERSUADER[:PERSUADEE]])", ref)
	}
	eps, err := loadRunEpisodes(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	persuader, persuadee := analysis.SplitArm(arm, eps)
	return analysis.Pick(runID, eps, persuader, persuadee)
}

func runCompare(ctx context.Context, dbPath, refA, refB string, o compareOptions, out io.Writer) error {
	if o.format != "text" && o.format != "json" {
		return fmt.Errorf("unknown --format %q (want text or json)", o.format)
	}
	if o.resamples < 1 {
		return fmt.Errorf("--resamples must be >= 1, got %d", o.resamples)
	}
	if o.metrics != "" && o.metrics != "masp" {
		return fmt.Errorf("unknown --metrics %q (want masp)", o.metrics)
	}
	if o.maspT < 0 {
		return fmt.Errorf("--masp-t must be >= 0, got %d", o.maspT)
	}
	db, err := openExistingDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	runA, a, err := loadSideOutcomes(ctx, db, refA)
	if err != nil {
		return err
	}
	runB, b, err := loadSideOutcomes(ctx, db, refB)
	if err != nil {
		return err
	}
	c, err := analysis.CompareOutcomes(runA, a, runB, b, analysis.CompareOptions{Intersection: o.intersection, Seed: o.seed, Resamples: o.resamples})
	if err != nil {
		return err
	}
	if o.metrics == "masp" {
		// MASP's metrics read the transcripts: only here are the two
		// arms' turns loaded.
		a, err := loadSide(ctx, db, refA)
		if err != nil {
			return err
		}
		b, err := loadSide(ctx, db, refB)
		if err != nil {
			return err
		}
		mo, note := maspCompareOptions(ctx, db, refA, refB, o)
		m, err := analysis.CompareMASP(ctx, a, b, c, mo)
		if err != nil {
			return err
		}
		if o.format == "json" {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{"comparison": c, "masp": m})
		}
		if err := c.Table().WriteText(out); err != nil {
			return err
		}
		fmt.Fprintln(out)
		t := m.Table()
		if note != "" {
			t.Notes = append(t.Notes, note)
		}
		return t.WriteText(out)
	}
	if o.format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	return c.Table().WriteText(out)
}

// maspCompareOptions resolves --metrics masp's T and the scenarios of the
// two runs' stored configs (eval runs name their scenario sets), for the
// transcript rules. A set that cannot be resolved is skipped; note then
// says the rules ran without those scenarios' concerns.
func maspCompareOptions(ctx context.Context, db *store.DB, refA, refB string, o compareOptions) (analysis.MASPCompareOptions, string) {
	mo := analysis.MASPCompareOptions{T: o.maspT, Seed: o.seed, Resamples: o.resamples,
		Episode: masp.EpisodeOptions{Scenarios: map[string]*scenario.Scenario{}}}
	var missing []string
	for i, ref := range []string{refA, refB} {
		run, err := db.GetRun(ctx, strings.SplitN(ref, ":", 2)[0])
		if err != nil {
			continue
		}
		var cfg struct {
			Scenarios []string `json:"scenarios"`
			Tmax      int      `json:"tmax"`
		}
		if json.Unmarshal(run.Config, &cfg) != nil {
			continue
		}
		if i == 0 && mo.T == 0 && cfg.Tmax > 0 {
			mo.T = min(masp.DefaultT, cfg.Tmax)
		}
		for _, s := range cfg.Scenarios {
			ss, err := scenario.Resolve(s)
			if err != nil {
				missing = append(missing, s)
				continue
			}
			for k := range ss {
				mo.Episode.Scenarios[ss[k].ID] = &ss[k]
			}
		}
	}
	if len(missing) > 0 {
		return mo, "scenario sets not found (" + strings.Join(missing, ", ") + "): q rules ran without their concerns"
	}
	return mo, ""
}
