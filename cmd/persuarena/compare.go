package main

import (
	"math"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/store"
)

// newCompareCmd returns compare: a paired comparison of two persuaders.
func newCompareCmd() *cobra.Command {
	var (
		o      analysis.CompareStoredOptions
		dbPath string
	)
	cmd := &cobra.Command{
		Use:   "compare RUN_A[:PERSUADER[:PERSUADEE]] RUN_B[:PERSUADER[:PERSUADEE]]",
		Short: "Paired comparison of two persuaders on the same scenarios (the Probe-RPO paper's Table 5 tests)",
		Long: `Pairs the episodes of A and B on (scenario id, rollout) and reports acceptance,
margin, McNemar, Wilcoxon and bootstrap intervals. See docs/analysis.md.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := store.OpenReadOnly(cmd.Context(), dbPath)
			if err != nil {
				return err
			}
			defer db.Close()
			return analysis.CompareStored(cmd.Context(), db, args[0], args[1], o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Intersection, "intersection", false, "compare on the (scenario, rollout) keys both sides hold when their sets differ")
	flagbound.Uint64(f, &o.Seed, "seed", 1, 0, math.MaxUint64, "bootstrap seed (same seed, same intervals)")
	flagbound.Int(f, &o.Resamples, "resamples", analysis.DefaultResamples, 1, analysis.MaxResamples, "paired bootstrap resamples")
	f.StringVar(&o.Format, "format", "text", "output format: text or json")
	dbFlag(f, &dbPath)
	f.StringVar(&o.Metrics, "metrics", "", "extra metrics: masp (paired SR@T, AT, RCSR@T differences; docs/masp.md)")
	flagbound.Int(f, &o.MASPT, "masp-t", 0, 0, episode.MaxTmax, "turn budget T of --metrics masp (0: min(8, run A's tmax))")
	return cmd
}
