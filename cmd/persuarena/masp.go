package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/internal/progress"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/runs"
)

// newMASPCmd returns the "masp" command group (MASP paper); a fresh tree
// each call, so tests do not share flag state.
func newMASPCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "masp",
		Short: "MASP: BDI progress, rationality-constrained success and worst-case evaluation (MASP paper)",
	}
	c.AddCommand(maspEvalCmd(), maspImportCmd(), maspCacheCmd())
	return c
}

func maspEvalCmd() *cobra.Command {
	var (
		spec   runs.MASPSpec
		curves bool
		dbPath string
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Closed-loop MASP evaluation: SR@T, AT, RCSR@T and worst case over users, with bootstrap CIs",
		Long: `Plays each persuader against each user on every case of the task (MASP paper)
and prints SR@T, AT, RCSR@T and the worst case over users; stored in --db.
See docs/masp.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc := runs.Open(dbPath)
			defer svc.Close()
			var bar *progress.Bar
			res, err := svc.MASPEval(cmd.Context(), spec, cmd.ErrOrStderr(), func(total int) func(int) {
				bar = progress.New(cmd.ErrOrStderr(), total, "masp eval")
				return bar.Add
			})
			if bar != nil {
				bar.Wait()
			}
			if err != nil {
				return err
			}
			return res.Write(cmd.OutOrStdout(), curves)
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Task, "task", "p4g", "task: p4g, esconv or cb")
	f.StringVar(&spec.From, "from", "", "cases: p4g: scenario set name or JSONL file (default p4g); esconv, cb: PPDPP file (esc-*.txt, cb-*.txt)")
	f.Var(f.Lookup("from").Value, "scenarios", "task p4g: the scenario set, a built-in name or a JSONL file (another name of --from)")
	f.StringVar(&spec.Split, "split", "heldout", "p4g split: train, val, heldout or all (PPDPP files are one split each)")
	f.StringSliceVar(&spec.Users, "users", []string{"sim-soft", "sim-hard", "sim"}, "users (the ensemble): sim, sim-soft, sim-hard, llm:NAME roles of --config")
	f.StringSliceVar(&spec.Persuaders, "persuader", baseline.BaselineFirst(), "persuaders to evaluate (built-in names); the first is the baseline of the paired differences")
	tmaxFlag(f, &spec.T, masp.DefaultT, "MASP paper: 8")
	seedFlag(f, &spec.Seed, "episode seeds and bootstrap")
	flagbound.Int(f, &spec.Resamples, "resamples", 10000, 1, analysis.MaxResamples, "bootstrap resamples")
	flagbound.Float(f, &spec.TauQ, "tau-q", masp.DefaultTauQ, 0, 1, "rationality threshold tau_q of RCSR (MASP paper: 0.70)")
	f.BoolVar(&spec.StrictP4G, "strict-p4g", false, "P4G success needs mean > 0.6 (released code) instead of >= 0.6 (paper)")
	f.BoolVar(&curves, "curves", false, "also print RCSR@t for t = 1..T")
	f.BoolVar(&spec.NoBDI, "no-bdi", false, "skip teacher states and progress")
	workersFlag(f, &spec.Workers)
	f.StringVar(&spec.Out, "out", "", "also write every dialogue as JSON Lines to this file")
	f.StringVar(&spec.Student, "student", "", "fit the history-only student mentalizer on this BDI cache (persuarena masp cache) and report its error ||z-hat - z||_A^2")
	flagbound.Float(f, &spec.Ridge, "ridge", bdi.DefaultLambda, 0, 1e6, "ridge penalty of the student mentalizer's fit")
	dbFlag(f, &dbPath)
	f.StringVar(&spec.Config, "config", "", "persuarena.yaml with the LLM backends and roles named by llm:NAME")
	f.StringVar(&spec.Judge, "judge", "", "llm:ROLE: LLM rationality judge for every user (default: rule-based for sim users, none for LLM users)")
	f.StringVar(&spec.SuccessJudge, "success-judge", "", "llm:ROLE: LLM success judge for every user (default: read the user's decision)")
	flagbound.Int(f, &spec.JudgeSamples, "judge-samples", 3, 1, runs.MaxJudgeSamples, "samples per LLM success verdict (MASP paper: 3)")
	f.StringVar(&spec.Teacher, "teacher", "", "llm:ROLE: LLM teacher mentalizer for BDI states (default: the simulator's latent state, sim users only)")
	return cmd
}

func maspCacheCmd() *cobra.Command {
	var spec runs.MASPCacheSpec
	cmd := &cobra.Command{
		Use:   "cache --out FILE.jsonl",
		Short: "Build a BDI cache from simulated dialogues labelled by the teacher (for the student mentalizer)",
		Long: `Labels simulated dialogues with the teacher mentalizer into a BDI cache for
"masp eval --student FILE". See docs/masp.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := runs.MASPCache(cmd.Context(), spec)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %d session and %d turn records to %s\n", len(c.Sessions), len(c.Turns), spec.Out)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Task, "task", "p4g", "task: p4g, esconv or cb")
	f.StringVar(&spec.From, "from", "", "cases (as for masp eval)")
	f.Var(f.Lookup("from").Value, "scenarios", "task p4g: the scenario set (another name of --from)")
	f.StringVar(&spec.Split, "split", "train", "p4g split: train, val, heldout or all")
	f.StringSliceVar(&spec.Users, "users", []string{"sim"}, "simulator users: sim, sim-soft, sim-hard")
	f.StringSliceVar(&spec.Persuaders, "persuader", []string{"script", "random"}, "persuaders that generate the dialogues")
	tmaxFlag(f, &spec.T, masp.DefaultT, "MASP paper: 8")
	seedFlag(f, &spec.Seed, "episode seeds")
	workersFlag(f, &spec.Workers)
	f.StringVar(&spec.Out, "out", "", "BDI cache file to write (JSON Lines)")
	return cmd
}

func maspImportCmd() *cobra.Command {
	var from, out string
	cmd := &cobra.Command{
		Use:   "import esconv|cb --from PATH --out FILE.jsonl",
		Short: "Convert a PPDPP ESConv or CraigslistBargain file into PersuArena scenarios (JSONL)",
		Long: `Writes one validated PersuArena scenario per dialogue of a PPDPP file (esc-*.txt
or cb-*.txt; docs/masp.md). ESConv is CC BY-NC 4.0: keep the output out of
anything you redistribute commercially.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := runs.MASPImport(args[0], from, out)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %d scenarios to %s\n", n, out)
			return err
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "PPDPP file to read")
	cmd.Flags().StringVar(&out, "out", "", "scenario JSONL file to write")
	return cmd
}
