package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/internal/progress"
	"github.com/persuarena/persuarena/queue"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/view"
)

// newEvalCmd returns eval: the main job.
func newEvalCmd() *cobra.Command {
	var (
		spec          runs.EvalSpec
		o             runs.EvalOptions
		dbPath        string
		enqueue, wait bool
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
			o.Given = givenPlanFlags(cmd.Flags())
			svc := runs.Open(dbPath)
			defer svc.Close()
			if enqueue {
				return evalEnqueue(cmd, svc, dbPath, spec, o, wait)
			}
			if wait {
				return errors.New("--wait needs --enqueue")
			}
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
	f.StringSliceVar(&spec.Persuaders, "persuader", baseline.Listed(), "persuaders to evaluate: "+roles.PersuaderKinds)
	f.StringSliceVar(&spec.Persuadees, "persuadee", []string{"sim"}, "persuadees: "+roles.PersuadeeKinds+"; several give the Table 7 grid")
	scenariosFlag(f, &spec.Scenarios, "scenario sets")
	f.StringVar(&spec.Split, "split", "heldout", "split to use: train, val, heldout or all")
	tmaxFlag(f, &spec.Tmax, episode.DefaultTmax, "Probe-RPO paper: 10")
	flagbound.Int(f, &spec.Rollouts, "rollouts", 1, 1, runs.MaxPlannedEpisodes, "rollouts per scenario")
	f.BoolVar(&spec.SequentialProbes, "sequential-probes", false, "read each turn's probes before asking the persuader for its next utterance (slower; for engines whose concurrent requests change each other's numerics)")
	seedFlag(f, &spec.Seed, "each episode's seed derives from (seed, scenario id, rollout)")
	probesFlag(f, &o.Probes, "default")
	workersFlag(f, &spec.Workers)
	dbFlag(f, &dbPath)
	f.StringVar(&o.Format, "format", "table", "output format: table, json or csv")
	f.StringVar(&o.RunID, "resume", "", "resume the run RUN_ID (its stored configuration is used)")
	f.BoolVar(&o.RetryFailed, "retry-failed", false, "with --resume: remove the run's failed episodes first, so they are played again")
	flagbound.Int(f, &spec.Retries, "retries", 2, 0, runs.MaxRetries, "replays of an episode that failed with a transient engine fault (5xx, timeout, refused connection, open circuit breaker) before its failure is stored")
	f.BoolVar(&enqueue, "enqueue", false, "with --db postgres://...: create the run and queue its missing episodes for persuarena worker processes instead of playing them (docs/scale.md)")
	f.BoolVar(&wait, "wait", false, "with --enqueue: follow the run's progress until the workers finish it")
	f.StringVar(&spec.Judge, "judge", "", "llm:NAME: LLM judge (a role of --config) rating each episode's strategy, R_strategy in [-1, 1]")
	flagbound.Int(f, &spec.JudgeSamples, "judge-samples", 1, 1, runs.MaxJudgeSamples, "judge samples per question, averaged (with --judge)")
	f.BoolVar(&spec.JudgeActs, "judge-acts", false, "store the judge's persuasion-act tags instead of the rule tagger's (with --judge; one judge request per persuader turn)")
	f.StringVar(&spec.Reward, "reward", "", "repo:SPEC: score every episode with a heterogeneous reward spec (REPO paper; built in: negotiation, negotiation-judged; docs/repo.md)")
	f.StringVar(&spec.Metrics, "metrics", "", "extra metrics after the outcome table: masp (SR@T, AT, RCSR@T, worst case over persuadees; docs/masp.md)")
	flagbound.Int(f, &spec.MASPT, "masp-t", 0, 0, episode.MaxTmax, "turn budget T of --metrics masp (0: min(8, --tmax))")
	cmd.PersistentFlags().StringVar(&spec.Config, "config", "", "persuarena.yaml naming the backends and roles of llm:NAME persuaders/persuadees (docs/llm-roles.md)")
	return cmd
}

// evalEnqueue is eval --enqueue: the run is created and its missing
// episodes queued (queue.EnqueueEval); --wait follows it to the end.
func evalEnqueue(cmd *cobra.Command, svc *runs.Service, dbPath string, spec runs.EvalSpec, o runs.EvalOptions, wait bool) error {
	o.Log = cmd.ErrOrStderr()
	res, n, err := queue.EnqueueEval(cmd.Context(), svc, dbPath, spec, o)
	if res == nil || res.RunID == "" {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "run %s: %d episodes queued (%d missing, %d already stored)\n", res.RunID, n, res.Missing, res.Stored)
	fmt.Fprintln(cmd.OutOrStdout(), res.RunID)
	if err != nil || res.Summaries != nil || !wait {
		if err == nil && res.Summaries != nil {
			err = res.Write(cmd.OutOrStdout(), o.Format)
		}
		return err
	}
	bar := progress.New(cmd.ErrOrStderr(), res.Missing, "eval")
	done := 0
	run, err := queue.Wait(cmd.Context(), svc.Store, res.RunID, func(stored int) {
		if d := stored - res.Stored; d > done {
			bar.Add(d - done)
			done = d
		}
	})
	bar.Wait()
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "run %s %s\n%s\n", run.ID, run.Status, view.Hint(svc.DBPath(), run.ID))
	return nil
}
