package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/persuarena/persuarena/p4g"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/simfit"
	"github.com/spf13/cobra"
)

// simCmd groups commands about the embedded simulator.
var simCmd = &cobra.Command{
	Use:   "sim",
	Short: "Work with the embedded simulated persuadee (fit its parameters to data)",
}

var simFitFlags struct {
	from, out, base       string
	seed                  uint64
	folds, evals, workers int
	closedN               int
	bounds                string
}

var simFitP4GCmd = &cobra.Command{
	Use:   "p4g [--from DIR] [--seed N] [--out FILE]",
	Short: "Fit the simulator's free parameters to PersuasionForGood (train users only)",
	Long: `Fit a named subset of the simulator's parameters (simfit.DefaultParams) to the
PersuasionForGood train split by open-loop replay: the objective is the mean
Bernoulli negative log-likelihood of each dialogue's real outcome (donated > $0)
given the replayed final belief through a fitted logistic link, plus the mean
negative log-likelihood of each annotated turn's real reaction polarity given
the simulated one; it is minimised with gonum/optimize's Nelder-Mead, with fixed
replay seeds, so the same seed gives the same fit. Unless --closed-n is 0, every
evaluation also plays a fixed, seeded closed-loop eval (script, random, informer
and pushy on --closed-n train scenarios each of the arena and P4G sets, plus a
content-free battery) and adds a penalty for each violated closed-loop limit
(simfit.Limits: ask calibration, script's moved share, content-free turns never
raising the belief, the sanity ordering of the built-in persuaders), so that the
fitted simulator stays usable for closed-loop training. --folds K reports a
user-grouped K-fold cross-validation within the train users; the validation
split (user-disjoint) is scored with the links fitted on train. The held-out
split is never read. Writes a sim config file (schema persuarena.sim-config/v1,
with provenance) that --persuadee sim:FILE loads. Method: docs/simulator.md.

By default the scenarios embedded in the binary are used; --from DIR re-imports
them from the raw CSV files first.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		fl := simFitFlags
		if err := atLeast(1, "workers", fl.workers); err != nil {
			return err
		}
		var all []scenario.Scenario
		var err error
		if fl.from != "" {
			all, _, err = p4g.Import(fl.from)
		} else {
			all, err = scenario.Resolve("p4g")
		}
		if err != nil {
			return err
		}
		base, err := sim.ByName(fl.base)
		if err != nil {
			return fmt.Errorf("--base: %w", err)
		}
		if sim.IsFileRef(fl.base) {
			return fmt.Errorf("--base: want %s, sim, sim-soft or sim-hard", sim.HandName)
		}
		var fit, val []*scenario.Scenario
		for i := range all {
			switch all[i].Split {
			case scenario.Train:
				fit = append(fit, &all[i])
			case scenario.Val:
				val = append(val, &all[i])
			}
		}
		data, err := simfit.DataHash(all)
		if err != nil {
			return err
		}
		errw := cmd.ErrOrStderr()
		ps, ok := simfit.ParamSets[fl.bounds]
		if !ok {
			return fmt.Errorf("--bounds %q: want narrow, wide, traits, core or strategy", fl.bounds)
		}
		opt := simfit.Options{Base: &base, Params: ps, Seed: fl.seed, MaxEvals: fl.evals, Folds: fl.folds, Workers: fl.workers,
			Progress: func(msg string) { fmt.Fprintln(errw, msg) }}
		if fl.closedN > 0 {
			arena, err := scenario.Resolve("arena")
			if err != nil {
				return err
			}
			opt.Closed = simfit.DefaultClosedLoop(ptrs(arena), fit, fl.closedN)
			opt.Closed.Workers = fl.workers
		}
		res, err := simfit.Fit(cmd.Context(), fit, val, opt)
		if err != nil {
			return err
		}
		command := fmt.Sprintf("persuarena sim fit p4g --seed %d --folds %d --max-evals %d --closed-n %d --bounds %s --base %s", fl.seed, fl.folds, fl.evals, fl.closedN, fl.bounds, fl.base)
		file := res.File(fl.base, command, data, opt)
		fmt.Fprint(errw, simfit.Summary(res, opt))
		var w io.Writer = cmd.OutOrStdout()
		if fl.out != "" {
			tmp, err := os.CreateTemp(filepath.Dir(fl.out), ".simfit-*")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			if err := file.Encode(tmp); err != nil {
				tmp.Close()
				return err
			}
			if err := tmp.Close(); err != nil {
				return err
			}
			if err := os.Rename(tmp.Name(), fl.out); err != nil {
				return err
			}
			fmt.Fprintf(errw, "wrote %s (use --persuadee sim:%s)\n", fl.out, fl.out)
			return nil
		}
		return file.Encode(w)
	},
}

func init() {
	f := simFitP4GCmd.Flags()
	f.StringVar(&simFitFlags.from, "from", "", "re-import from the PersuasionForGood CSV directory instead of the embedded scenarios")
	f.StringVar(&simFitFlags.out, "out", "", "write the fitted config file here (default: standard output)")
	f.StringVar(&simFitFlags.base, "base", sim.HandName, "configuration the fit starts from: "+sim.HandName+" (the hand-set parameters), "+strings.Join(sim.Names, ", "))
	f.StringVar(&simFitFlags.bounds, "bounds", simfit.DefaultBounds, "fitted parameters and bounds: narrow (each dynamics parameter within half and twice its hand-set value), wide, traits (trait multipliers and strategy reactions only), core (seven) or strategy (three strategy reactions); simfit.NarrowParams, WideParams, TraitParams, CoreParams, StrategyOnlyParams")
	f.Uint64Var(&simFitFlags.seed, "seed", 1, "replay seed (same seed, same fit)")
	f.IntVar(&simFitFlags.folds, "folds", 3, "user-grouped cross-validation folds within the train users (0: none)")
	f.IntVar(&simFitFlags.evals, "max-evals", simfit.DefaultEvals, "objective evaluations per Nelder-Mead fit")
	f.IntVar(&simFitFlags.closedN, "closed-n", simfit.DefaultClosedN, "train scenarios per set (arena, p4g) of the closed-loop eval that constrains the fit (0: open-loop objective only)")
	workersFlag(f, &simFitFlags.workers)
	fitCmd := &cobra.Command{Use: "fit", Short: "Fit the simulator's parameters to real data"}
	fitCmd.AddCommand(simFitP4GCmd)
	simCmd.AddCommand(fitCmd)
	rootCmd.AddCommand(simCmd)
}

// ptrs returns pointers to the elements of ss.
func ptrs(ss []scenario.Scenario) []*scenario.Scenario {
	out := make([]*scenario.Scenario, len(ss))
	for i := range ss {
		out[i] = &ss[i]
	}
	return out
}
