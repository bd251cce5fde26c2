package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/export"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/store"
)

// newExportCmd returns export: a run as training data.
func newExportCmd() *cobra.Command {
	var (
		db, format, out, groupBy string
		opt                      = export.DefaultOptions()
	)
	cmd := &cobra.Command{
		Use:   "export RUN_ID --format jsonl|parquet [--out FILE]",
		Short: "Export a run as training data with Probe-RPO advantages (JSON Lines or Parquet)",
		Long: `Writes every episode of a stored run with per-turn messages, probes, rewards and
Probe-RPO advantages (never the hidden profile). See docs/export.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := export.ParseFormat(format)
			if err != nil {
				return err
			}
			if groupBy != "scenario" {
				return fmt.Errorf("--group-by %q: only \"scenario\" is supported (use --group-size to split a scenario's rollouts)", groupBy)
			}
			if err := opt.Validate(); err != nil {
				return err
			}
			if f == export.Parquet && out == "" {
				return errors.New("--format parquet writes binary: give --out FILE (or --out - for standard output)")
			}
			st, err := store.OpenReadOnly(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer st.Close()
			return export.ToPath(cmd.Context(), st, args[0], f, out, cmd.OutOrStdout(), opt)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "jsonl", "output format: jsonl, parquet or episodes")
	fl.StringVar(&out, "out", "", "output file, written atomically (default: standard output for jsonl)")
	dbFlag(fl, &db)
	flagbound.Float(fl, &opt.Config.Lambda, "lambda", grpo.DefaultConfig().Lambda, 0, 1e6, "λ in A = A_out + λ·A_dense (Probe-RPO paper, Table 9 best: 0.5; 0 = outcome GRPO)")
	fl.Var(&opt.Config.DenseMode, "dense-mode", "dense advantage: scaled (default), pooled, turn, rtg-per-turn or length-only (docs/grpo.md)")
	fl.StringVar(&groupBy, "group-by", "scenario", "GRPO group: scenario (one persuader/persuadee pair's rollouts of one scenario)")
	flagbound.Int(fl, &opt.GroupSize, "group-size", 0, 0, runs.MaxPlannedEpisodes, "split each scenario's rollouts into groups of N consecutive rollout indices (0 = one group)")
	return cmd
}
