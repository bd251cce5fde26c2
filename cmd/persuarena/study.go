package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/persuarena/persuarena/runs"
)

func init() {
	var (
		spec  runs.LambdaStudySpec
		seeds []uint
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
			spec.Seeds = nil
			for _, s := range seeds {
				spec.Seeds = append(spec.Seeds, uint64(s))
			}
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
	f.UintSliceVar(&seeds, "seeds", []uint{1, 2, 3, 4, 5}, "training seeds, one run per arm and seed")
	f.StringSliceVar(&spec.Arms, "arms", nil, "arms to run (default: all)")
	scenariosFlag(f, &spec.Sets, "scenario sets (their train splits train, their held-out splits evaluate)")
	f.StringVar(&spec.Persuadee, "persuadee", "sim", "persuadee to train and evaluate against (sim, sim-soft, sim-hard, sim:FILE)")
	f.IntVar(&spec.MaxSteps, "max-steps", 0, "cap each run's training steps (0: the full 2-epoch schedule)")
	f.IntVar(&spec.Rollouts, "rollouts", 3, "held-out rollouts per scenario")
	f.Uint64Var(&spec.EvalSeed, "eval-seed", 1, "seed of the held-out episodes (the same for every checkpoint)")
	workersFlag(f, &spec.Workers)
	f.IntVar(&spec.Resamples, "resamples", 10000, "bootstrap replicates")
	f.StringVar(&spec.Dir, "dir", "out/lambda-study", "directory for finished runs (resume) and checkpoints")
	f.StringVar(&spec.Out, "out", "", "write the Markdown tables to this file (default: standard output)")
	f.StringVar(&spec.Doc, "doc", "", "also write the tables into this Markdown file's --section")
	f.StringVar(&spec.Section, "section", "", "name of the marked section of --doc")
	cmd.AddCommand(lcmd)
	rootCmd.AddCommand(cmd)
}
