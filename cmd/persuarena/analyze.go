package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/store"
)

// newAnalyzeCmd returns analyze: the Probe-RPO paper's analyses of stored runs.
func newAnalyzeCmd() *cobra.Command {
	var (
		o      = analysis.AnalyzeOptions{GRPO: grpo.DefaultConfig()}
		dbPath string
	)
	cmd := &cobra.Command{
		Use:   "analyze RUN_ID...",
		Short: "The Probe-RPO paper's analyses of stored runs: Tables 6-9 and the data of Figures 5-7",
		Long: `Computes the Probe-RPO paper's Tables 6-9 and Figures 5-7 (--what) from the
episodes of stored runs, concatenated. See docs/analysis.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("rollout") {
				o.Rollout = -1
			}
			db, err := store.OpenReadOnly(cmd.Context(), dbPath)
			if err != nil {
				return err
			}
			defer db.Close()
			return analysis.Analyze(cmd.Context(), db, args, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.What, "what", "all", "analysis: "+strings.Join(analysis.Analyses, ", ")+" or all")
	f.StringVar(&o.Persuader, "persuader", "", "keep only this persuader (for table8: the trace's persuader)")
	f.StringVar(&o.Scenario, "scenario", "", "table8: scenario id of the episode to trace")
	flagbound.Int(f, &o.Rollout, "rollout", 0, 0, runs.MaxPlannedEpisodes, "table8: rollout of the episode to trace (default 0 with --scenario)")
	f.StringVar(&o.Format, "format", "text", "output format: text, csv or markdown")
	f.Var(&o.GRPO.DenseMode, "dense-mode", "deadgroups: dense advantage (scaled, pooled, turn, rtg-per-turn, length-only)")
	flagbound.Float(f, &o.GRPO.Lambda, "lambda", o.GRPO.Lambda, 0, 1e6, "deadgroups: λ weighting the dense term in the separation test")
	flagbound.Float(f, &o.GRPO.SeparateThreshold, "separate-threshold", o.GRPO.SeparateThreshold, 0, 1e6, "deadgroups: separated when λ·A_dense at turn 1 differs by more than this")
	dbFlag(f, &dbPath)
	return cmd
}
