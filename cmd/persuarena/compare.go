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
	"github.com/persuarena/persuarena/store"
)

// compareOptions are compare's flags.
type compareOptions struct {
	intersection bool
	seed         uint64
	resamples    int
	format       string
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
shared ones. See docs/analysis.md.`,
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
	f.StringVar(&dbPath, "db", "persuarena.db", "run database (SQLite)")
	rootCmd.AddCommand(cmd)
}

// loadSide resolves "RUN[:PERSUADER[:PERSUADEE]]" to that arm's episodes.
func loadSide(ctx context.Context, db *store.DB, ref string) ([]*episode.Episode, error) {
	parts := strings.SplitN(ref, ":", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	if parts[0] == "" {
		return nil, fmt.Errorf("side %q: missing run id (want RUN[:PERSUADER[:PERSUADEE]])", ref)
	}
	eps, err := loadRunEpisodes(ctx, db, parts[0])
	if err != nil {
		return nil, err
	}
	return analysis.Pick(parts[0], eps, parts[1], parts[2])
}

func runCompare(ctx context.Context, dbPath, refA, refB string, o compareOptions, out io.Writer) error {
	if o.format != "text" && o.format != "json" {
		return fmt.Errorf("unknown --format %q (want text or json)", o.format)
	}
	if o.resamples < 1 {
		return fmt.Errorf("--resamples must be >= 1, got %d", o.resamples)
	}
	db, err := openExistingDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	a, err := loadSide(ctx, db, refA)
	if err != nil {
		return err
	}
	b, err := loadSide(ctx, db, refB)
	if err != nil {
		return err
	}
	c, err := analysis.Compare(a, b, analysis.CompareOptions{Intersection: o.intersection, Seed: o.seed, Resamples: o.resamples})
	if err != nil {
		return err
	}
	if o.format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	return c.Table().WriteText(out)
}
