package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/internal/atomicfile"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/simfit"
)

func init() {
	var (
		spec simfit.P4GSpec
		out  string
	)
	p4gCmd := &cobra.Command{
		Use:   "p4g [--from DIR] [--seed N] [--out FILE]",
		Short: "Fit the simulator's free parameters to PersuasionForGood (train users only)",
		Long: `Fits simulator parameters (--bounds) to the P4G paper's train split by seeded
open-loop replay and writes a config for --persuadee sim:FILE. See docs/simulator.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			file, err := simfit.FitP4G(cmd.Context(), spec, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if out == "" {
				return file.Encode(cmd.OutOrStdout())
			}
			if err := atomicfile.WriteFunc(out, file.Encode); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (use --persuadee sim:%s)\n", out, out)
			return err
		},
	}
	f := p4gCmd.Flags()
	f.StringVar(&spec.From, "from", "", "re-import from the PersuasionForGood CSV directory instead of the embedded scenarios")
	f.StringVar(&out, "out", "", "write the fitted config file here (default: standard output)")
	f.StringVar(&spec.Base, "base", sim.HandName, "configuration the fit starts from: "+sim.HandName+" (the hand-set parameters), "+strings.Join(sim.Names, ", "))
	f.StringVar(&spec.Bounds, "bounds", simfit.DefaultBounds, "fitted parameters and bounds: narrow (each dynamics parameter within half and twice its hand-set value), wide, traits (trait multipliers and strategy reactions only), core (seven) or strategy (three strategy reactions)")
	f.Uint64Var(&spec.Seed, "seed", 1, "replay seed (same seed, same fit)")
	f.IntVar(&spec.Folds, "folds", 3, "user-grouped cross-validation folds within the train users (0: none)")
	f.IntVar(&spec.MaxEvals, "max-evals", simfit.DefaultEvals, "objective evaluations per Nelder-Mead fit")
	f.IntVar(&spec.ClosedN, "closed-n", simfit.DefaultClosedN, "train scenarios per set (arena, p4g) of the closed-loop eval that constrains the fit (0: open-loop objective only)")
	workersFlag(f, &spec.Workers)
	simCmd := &cobra.Command{Use: "sim", Short: "Work with the embedded simulated persuadee (fit its parameters to data)"}
	fitCmd := &cobra.Command{Use: "fit", Short: "Fit the simulator's parameters to real data"}
	fitCmd.AddCommand(p4gCmd)
	simCmd.AddCommand(fitCmd)
	rootCmd.AddCommand(simCmd)
}
