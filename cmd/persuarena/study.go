package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/persuarena/persuarena/internal/atomicfile"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/study"
	"github.com/persuarena/persuarena/train"
)

func init() {
	var (
		seeds             []uint
		arms              []string
		sets              []string
		persuadee, dir    string
		out, doc, section string
		rollouts, workers int
		resamples         int
		evalSeed          uint64
		maxSteps          int
	)
	cmd := &cobra.Command{Use: "study", Short: "Reusable experiments (the λ study of Probe-RPO)"}
	lcmd := &cobra.Command{
		Use:   "lambda",
		Short: "Train a planner per arm (λ, dense mode, controls) and seed; compare on held-out full acceptance",
		Long: `Runs the λ study of the Probe-RPO paper (Table 9, Figure 7) with controls: for every arm and
seed it trains a planner with persuarena train's defaults (the paper's Table 3 schedule) on
the train splits of --scenarios against --persuadee, evaluates the checkpoint on their
held-out splits (--rollouts per scenario, the same episodes for every checkpoint), and
prints Markdown tables: outcomes per arm, full acceptance per seed, paired comparisons with
per-seed exact McNemar tests and a pigeonhole bootstrap over seeds and scenarios, the
dead-group figures of training, and the verdict under a rule fixed in advance (see
docs/results.md).

Arms (--arms): ` + armList() + `

Finished runs are kept in --dir (cell JSON and planner checkpoint): rerunning the same
command resumes. --doc FILE --section NAME writes the tables into FILE between
"<!-- BEGIN study NAME -->" and "<!-- END study NAME -->" markers (appended when missing).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rollouts < 1 || workers < 1 || maxSteps < 0 || len(seeds) == 0 {
				return fmt.Errorf("study lambda: want --rollouts >= 1, --workers >= 1, --max-steps >= 0 and at least one --seeds")
			}
			if (doc == "") != (section == "") {
				return fmt.Errorf("study lambda: --doc and --section go together")
			}
			o := study.Options{Rollouts: rollouts, EvalSeed: evalSeed, Workers: workers, Dir: dir, Log: cmd.ErrOrStderr(), Resamples: resamples}
			for _, s := range seeds {
				o.Seeds = append(o.Seeds, uint64(s))
			}
			all := study.LambdaArms()
			for _, id := range arms {
				i := slices.IndexFunc(all, func(a study.Arm) bool { return a.ID == id })
				if i < 0 {
					return fmt.Errorf("study lambda: unknown arm %q (known: %s)", id, armList())
				}
				o.Arms = append(o.Arms, all[i])
			}
			o.Train = train.DefaultConfig()
			o.Train.MaxSteps = maxSteps
			reg, _ := roles.New("")
			pee, err := reg.Persuadee(persuadee)
			if err != nil {
				return err
			}
			o.Persuadee = pee
			trainSets, err := loadSets(sets, string(scenario.Train))
			if err != nil {
				return err
			}
			for _, s := range trainSets {
				o.TrainScenarios = append(o.TrainScenarios, s.Scenarios...)
			}
			if o.Heldout, err = loadSets(sets, string(scenario.Heldout)); err != nil {
				return err
			}
			res, err := study.Lambda(cmd.Context(), o)
			if err != nil {
				return err
			}
			var b strings.Builder
			line := []string{"persuarena study lambda"}
			cmd.Flags().Visit(func(fl *pflag.Flag) {
				if fl.Name != "workers" && fl.Name != "out" { // neither changes the result
					line = append(line, fmt.Sprintf("--%s %s", fl.Name, strings.Trim(fl.Value.String(), "[]")))
				}
			})
			if err := res.Markdown(&b, strings.Join(line, " ")); err != nil {
				return err
			}
			if doc != "" {
				if err := study.UpdateDoc(doc, section, b.String()); err != nil {
					return err
				}
			}
			if out != "" {
				return atomicfile.Write(out, []byte(b.String()))
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
			return err
		},
	}
	f := lcmd.Flags()
	f.UintSliceVar(&seeds, "seeds", []uint{1, 2, 3, 4, 5}, "training seeds, one run per arm and seed")
	f.StringSliceVar(&arms, "arms", nil, "arms to run (default: all)")
	scenariosFlag(f, &sets, "scenario sets (their train splits train, their held-out splits evaluate)")
	f.StringVar(&persuadee, "persuadee", "sim", "persuadee to train and evaluate against (sim, sim-soft, sim-hard, sim:FILE)")
	f.IntVar(&maxSteps, "max-steps", 0, "cap each run's training steps (0: the full 2-epoch schedule)")
	f.IntVar(&rollouts, "rollouts", 3, "held-out rollouts per scenario")
	f.Uint64Var(&evalSeed, "eval-seed", 1, "seed of the held-out episodes (the same for every checkpoint)")
	workersFlag(f, &workers)
	f.IntVar(&resamples, "resamples", 10000, "bootstrap replicates")
	f.StringVar(&dir, "dir", "out/lambda-study", "directory for finished runs (resume) and checkpoints")
	f.StringVar(&out, "out", "", "write the Markdown tables to this file (default: standard output)")
	f.StringVar(&doc, "doc", "", "also write the tables into this Markdown file's --section")
	f.StringVar(&section, "section", "", "name of the marked section of --doc")
	cmd.AddCommand(lcmd)
	rootCmd.AddCommand(cmd)
}

// armList names the λ study's arms with what each is for.
func armList() string {
	var parts []string
	for _, a := range study.LambdaArms() {
		parts = append(parts, fmt.Sprintf("%s (%s)", a.ID, a.Note))
	}
	return strings.Join(parts, "; ")
}
