package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/export"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/store"
)

func init() {
	var (
		db, format, out, groupBy string
		lambda                   float64
		groupSize                int
		denseMode                = grpo.DefaultConfig().DenseMode
	)
	cmd := &cobra.Command{
		Use:   "export RUN_ID --format jsonl|parquet [--out FILE]",
		Short: "Export a run as training data with Probe-RPO advantages (JSON Lines or Parquet)",
		Long: `Reads a stored run and writes, for every episode, its per-turn messages, tagged
persuasion acts, probe read-outs, belief B_t, dense reward r_t, terminal state,
R_goal, R_out and the Probe-RPO advantages A = A_out + lambda * A_dense of its group
(the rollouts of one scenario for one persuader/persuadee pair; SPEC §2).

  jsonl    one JSON object per episode per line, with a "turns" array
  parquet  one row per persuader turn, flat columns (see docs/export.md)

Groups with fewer than two scored rollouts (e.g. eval runs with one rollout per
scenario) get zero advantages. Failed episodes are exported with null rewards and
zero advantages and are left out of their group's statistics. The hidden profile,
the run configuration and engine error messages are never exported.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := export.ParseFormat(format)
			if err != nil {
				return err
			}
			if groupBy != "scenario" {
				return fmt.Errorf("--group-by %q: only \"scenario\" is supported (use --group-size to split a scenario's rollouts)", groupBy)
			}
			opt := export.DefaultOptions()
			opt.Config.Lambda = lambda
			opt.Config.DenseMode = denseMode
			opt.GroupSize = groupSize
			if err := opt.Validate(); err != nil {
				return err
			}
			if f == export.Parquet && out == "" {
				return errors.New("--format parquet writes binary: give --out FILE (or --out - for standard output)")
			}
			if db != ":memory:" {
				if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("no run database at %s (set --db)", db)
				}
			}
			st, err := store.Open(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer st.Close()
			if out == "" || out == "-" {
				return export.Run(cmd.Context(), st, args[0], f, cmd.OutOrStdout(), opt)
			}
			return export.RunFile(cmd.Context(), st, args[0], f, out, opt)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "jsonl", "output format: jsonl or parquet")
	fl.StringVar(&out, "out", "", "output file, written atomically (default: standard output for jsonl)")
	dbFlag(fl, &db)
	fl.Float64Var(&lambda, "lambda", 0.5, "λ in A = A_out + λ·A_dense (seed 000 Table 9 best: 0.5; 0 = outcome GRPO)")
	fl.Var(denseModeFlag{&denseMode}, "dense-mode", "dense advantage: scaled (default), pooled, turn, rtg-per-turn or length-only (docs/grpo.md)")
	fl.StringVar(&groupBy, "group-by", "scenario", "GRPO group: scenario (one persuader/persuadee pair's rollouts of one scenario)")
	fl.IntVar(&groupSize, "group-size", 0, "split each scenario's rollouts into groups of N consecutive rollout indices (0 = one group)")
	rootCmd.AddCommand(cmd)
}
