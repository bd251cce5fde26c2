package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/runs"
)

// newStudyCmd returns study and its lambda and fixed subcommands.
func newStudyCmd() *cobra.Command {
	var (
		spec  runs.LambdaStudySpec
		seeds []uint64
	)
	cmd := &cobra.Command{Use: "study", Short: "Reusable experiments (the λ study of Probe-RPO)"}
	lcmd := &cobra.Command{
		Use:   "lambda",
		Short: "Train a planner per arm (λ, dense mode, controls) and seed; compare on held-out full acceptance",
		Long: `Runs the λ study of the Probe-RPO paper (Table 9, Figure 7) with controls: per arm
and seed it trains a planner with the train defaults on the train splits of
--scenarios, evaluates it on their held-out splits and prints Markdown tables
(outcomes, paired comparisons, dead groups, the verdict; docs/results.md).
Finished runs are kept in --dir (a rerun resumes); --doc FILE --section NAME
writes the tables between "<!-- BEGIN study NAME -->" and "<!-- END study
NAME -->" markers.

Arms (--arms): ` + runs.ArmList(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec.Seeds = slices.Clone(seeds)
			line := []string{"persuarena study lambda"}
			cmd.Flags().Visit(func(fl *pflag.Flag) {
				if fl.Name != "workers" && fl.Name != "out" { // neither changes the result
					line = append(line, fmt.Sprintf("--%s %s", fl.Name, strings.Trim(fl.Value.String(), "[]")))
				}
			})
			md, err := runs.LambdaStudy(cmd.Context(), spec, strings.Join(line, " "), cmd.ErrOrStderr())
			if err != nil || spec.Out != "" {
				return err
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), md)
			return err
		},
	}
	f := lcmd.Flags()
	flagbound.Uint64s(f, &seeds, "seeds", []uint64{1, 2, 3, 4, 5}, 0, math.MaxUint64, 1000, "training seeds, one run per arm and seed")
	f.StringSliceVar(&spec.Arms, "arms", nil, "arms to run (default: all)")
	scenariosFlag(f, &spec.Sets, "scenario sets (their train splits train, their held-out splits evaluate)")
	f.StringVar(&spec.Persuadee, "persuadee", "sim", "persuadee to train and evaluate against (sim, sim-soft, sim-hard, sim:FILE)")
	flagbound.Int(f, &spec.MaxSteps, "max-steps", 0, 0, grpo.MaxSteps, "cap each run's training steps (0: the full 2-epoch schedule)")
	flagbound.Int(f, &spec.Rollouts, "rollouts", 3, 1, 100_000, "held-out rollouts per scenario")
	flagbound.Uint64(f, &spec.EvalSeed, "eval-seed", 1, 0, math.MaxUint64, "seed of the held-out episodes (the same for every checkpoint)")
	workersFlag(f, &spec.Workers)
	flagbound.Int(f, &spec.Resamples, "resamples", 10000, 1, analysis.MaxResamples, "bootstrap replicates")
	f.StringVar(&spec.Dir, "dir", "out/lambda-study", "directory for finished runs (resume) and checkpoints")
	f.StringVar(&spec.Out, "out", "", "write the Markdown tables to this file (default: standard output)")
	f.StringVar(&spec.Doc, "doc", "", "also write the tables into this Markdown file's --section")
	f.StringVar(&spec.Section, "section", "", "name of the marked section of --doc")
	cmd.AddCommand(lcmd, newStudyFixedCmd())
	return cmd
}
