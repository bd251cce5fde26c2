package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/progress"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/view"
)

func init() {
	var (
		spec   runs.EvalSpec
		o      runs.EvalOptions
		dbPath string
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate persuaders against persuadees on scenario sets (the main job)",
		Long: `Plays every persuader against every persuadee on every scenario of the sets
and split, stores each episode in --db and prints the Probe-RPO paper's Table
5/9 columns. Ctrl-C keeps finished episodes (--resume RUN_ID plays the rest).
See README.md, docs/llm-roles.md (--judge) and docs/masp.md (--metrics masp).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc := runs.Open(dbPath)
			defer svc.Close()
			var bar *progress.Bar
			o.Log = cmd.ErrOrStderr()
			o.Progress = func(total int) func(int) { bar = progress.New(cmd.ErrOrStderr(), total, "eval"); return bar.Add }
			res, err := svc.RunEval(cmd.Context(), spec, o)
			if bar != nil {
				bar.Wait()
			}
			if res != nil && res.RunID != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), view.Hint(svc.DBPath(), res.RunID))
			}
			if res == nil || res.Summaries == nil {
				return err
			}
			return errors.Join(err, res.Write(cmd.OutOrStdout(), o.Format))
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&spec.Persuaders, "persuader", []string{"pushy", "informer", "script", "random"}, "persuaders to evaluate: "+roles.PersuaderKinds)
	f.StringSliceVar(&spec.Persuadees, "persuadee", []string{"sim"}, "persuadees: "+roles.PersuadeeKinds+"; several give the Table 7 grid")
	scenariosFlag(f, &spec.Scenarios, "scenario sets")
	f.StringVar(&spec.Split, "split", "heldout", "split to use: train, val, heldout or all")
	tmaxFlag(f, &spec.Tmax, episode.DefaultTmax, "Probe-RPO paper: 10")
	f.IntVar(&spec.Rollouts, "rollouts", 1, "rollouts per scenario")
	f.BoolVar(&spec.SequentialProbes, "sequential-probes", false, "read each turn's probes before asking the persuader for its next utterance (slower; for engines whose concurrent requests change each other's numerics)")
	seedFlag(f, &spec.Seed, "each episode's seed derives from (seed, scenario id, rollout)")
	f.StringVar(&o.Probes, "probes", "", "probe basis JSON file (default: the CA/PE/AC basis of the Probe-RPO paper, Table 1)")
	workersFlag(f, &spec.Workers)
	dbFlag(f, &dbPath)
	f.StringVar(&o.Format, "format", "table", "output format: table, json or csv")
	f.StringVar(&o.RunID, "resume", "", "resume the run RUN_ID (its stored configuration is used)")
	f.BoolVar(&o.RetryFailed, "retry-failed", false, "with --resume: remove the run's failed episodes first, so they are played again")
	f.IntVar(&spec.Retries, "retries", 2, "replays of an episode that failed with a transient engine fault (5xx, timeout, refused connection, open circuit breaker) before its failure is stored")
	f.StringVar(&spec.Judge, "judge", "", "llm:NAME: LLM judge (a role of --config) rating each episode's strategy, R_strategy in [-1, 1]")
	f.IntVar(&spec.JudgeSamples, "judge-samples", 1, "judge samples per question, averaged (with --judge)")
	f.BoolVar(&spec.JudgeActs, "judge-acts", false, "store the judge's persuasion-act tags instead of the rule tagger's (with --judge; one judge request per persuader turn)")
	f.StringVar(&spec.Reward, "reward", "", "repo:SPEC: score every episode with a heterogeneous reward spec (REPO paper; built in: negotiation, negotiation-judged; docs/repo.md)")
	f.StringVar(&spec.Metrics, "metrics", "", "extra metrics after the outcome table: masp (SR@T, AT, RCSR@T, worst case over persuadees; docs/masp.md)")
	f.IntVar(&spec.MASPT, "masp-t", 0, "turn budget T of --metrics masp (0: min(8, --tmax))")
	cmd.PersistentFlags().StringVar(&spec.Config, "config", "", "persuarena.yaml naming the backends and roles of llm:NAME persuaders/persuadees (docs/llm-roles.md)")
	rootCmd.AddCommand(cmd)
}
