package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/internal/atomicfile"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/simfit"
)

// newSimCmd returns sim and its fit subcommands.
func newSimCmd() *cobra.Command {
	simCmd := &cobra.Command{Use: "sim", Short: "Work with the embedded simulated persuadee (fit its parameters to data)"}
	fitCmd := &cobra.Command{Use: "fit", Short: "Fit the simulator's parameters to real data"}
	fitCmd.AddCommand(fitCommand("p4g [--from DIR] [--seed N] [--out FILE]",
		"Fit the simulator's free parameters to PersuasionForGood (train users only)",
		`Fits simulator parameters (--bounds) to the P4G paper's train split by seeded
open-loop replay and writes a config for --persuadee sim:FILE. See docs/simulator/fit.md.`, false))
	fitCmd.AddCommand(fitCommand("people --trace DIR [--from DIR] [--seed N] [--out FILE]",
		"Fit the simulator to PersuasionTrace per-report beliefs and P4G outcomes and reactions (train people only)",
		`Fits simulator parameters (--bounds, default people) to one objective: the P4G
train split's outcomes and reactions plus the per-report beliefs of the
PersuasionTrace train people (--trace), by seeded open-loop replay, under the
closed-loop limits; the validation people of both are scored, the held-out
people never read. Writes a config for --persuadee sim:FILE. See
docs/simulator/fit.md ("Fitting to people").`, true))
	simCmd.AddCommand(fitCmd)
	return simCmd
}

// fitCommand is one `sim fit` subcommand; trace adds the required
// --trace flag (the PersuasionTrace directory) and makes people the
// default parameter set.
func fitCommand(use, short, long string, trace bool) *cobra.Command {
	var (
		spec simfit.P4GSpec
		out  string
	)
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if trace && spec.Trace == "" {
				return fmt.Errorf("--trace DIR is required (a directory of PersuasionTrace exporter files)")
			}
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
	f := cmd.Flags()
	bounds, folds, evals := simfit.DefaultBounds, 3, simfit.DefaultEvals
	if trace {
		f.StringVar(&spec.Trace, "trace", "", "PersuasionTrace directory (its train people are fitted, its validation people scored)")
		bounds, folds, evals = simfit.PeopleBounds, 0, simfit.PeopleEvals
	}
	f.StringVar(&spec.From, "from", "", "re-import from the PersuasionForGood CSV directory instead of the embedded scenarios")
	f.StringVar(&out, "out", "", "write the fitted config file here (default: standard output)")
	f.StringVar(&spec.Base, "base", sim.HandName, "configuration the fit starts from: "+sim.HandName+" (the hand-set parameters), "+strings.Join(sim.Names, ", "))
	f.StringVar(&spec.Bounds, "bounds", bounds, "fitted parameters and bounds: people (argument gain and the three strategy reactions), narrow (each dynamics parameter within half and twice its hand-set value), wide, traits (trait multipliers and strategy reactions only), core (seven) or strategy (three strategy reactions)")
	flagbound.Uint64(f, &spec.Seed, "seed", 1, 0, math.MaxUint64, "replay seed (same seed, same fit)")
	flagbound.Int(f, &spec.Folds, "folds", folds, 0, 100, "user-grouped cross-validation folds within the P4G train users (0: none)")
	flagbound.Int(f, &spec.MaxEvals, "max-evals", evals, 1, 1_000_000, "objective evaluations per Nelder-Mead fit")
	flagbound.Int(f, &spec.ClosedN, "closed-n", simfit.DefaultClosedN, 0, 100_000, "train scenarios per set (arena, p4g) of the closed-loop eval that constrains the fit (0: open-loop objective only)")
	workersFlag(f, &spec.Workers)
	return cmd
}
