package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/store"
)

// evalConfig is what an eval run stores (runs.EvalSpec).
type evalConfig = runs.EvalSpec

// Shared with the other commands: the run service's helpers.
var (
	loadSets = runs.LoadSets
	version  = runs.Version
	setName  = runs.SetName
)

func init() {
	var (
		cfg         evalConfig
		probes      string
		workers     int
		dbPath      string
		format      string
		resume      string
		retryFailed bool
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate persuaders against persuadees on scenario sets (the main job)",
		Long: `Plays every persuader against every persuadee on every scenario of the chosen
sets and split, stores each finished episode in the run database, and prints
seed 000's Table 5/9 columns per persuader, persuadee and set.

With no flags: the four built-in persuaders (pushy, informer, script, random)
against the simulated persuadee "sim" (a seeded psychological simulator, not an
LLM) on the held-out splits of the built-in p4g and arena sets, Tmax 10, one
rollout per scenario, stored in ./persuarena.db.

With --judge llm:NAME (a role of --config) an LLM judge rates how each scored
episode's persuader went about it, R_strategy in [-1, 1] (1 honest and
respectful, -1 deceptive or pressuring); the table then adds the mean
R_strategy and R_out = R_goal + R_strategy (SPEC §1), and the cost table a
judge row. A judge failure is stored with the episode and never changes its
outcome. --judge-acts also replaces the rule tagger's persuasion acts by the
judge's (seed 000 Figure 5).

With --metrics masp, eval also reports MASP's metrics (seed 003; docs/masp.md)
on the stored episodes, per scenario set: SR@T, AT and RCSR@T (T = min(8,
--tmax) unless --masp-t) per persuader and persuadee, WorstSR and WorstRCSR
over the run's persuadees, and paired differences against the first
persuader, each with a 95% percentile bootstrap interval (10,000 resamples).
Success is a full acceptance (P4G's success judge reading the decision); q
per turn comes from rule-based reading of the transcript, or from the
--judge role asked the rationality question once per turn.

Ctrl-C stops cleanly: finished episodes stay stored; "eval --resume RUN_ID"
plays the rest. An episode that fails on a transient engine fault is replayed
(--retries) before its failure is stored; "eval --resume RUN_ID --retry-failed"
plays the stored failures again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var db *store.DB
			defer func() {
				if db != nil {
					db.Close()
				}
			}()
			// The database is opened only once the run's input is valid, so
			// a rejected command leaves no file behind.
			open := func() (*store.DB, error) {
				if db != nil {
					return db, nil
				}
				d, err := store.Open(ctx, dbPath)
				db = d
				return d, err
			}
			if resume != "" {
				d, err := openExistingDB(ctx, dbPath)
				if err != nil {
					return fmt.Errorf("resume %s: %w", resume, err)
				}
				db = d
				stored, err := runs.New(d).LoadEval(ctx, resume, cfg.Config)
				if err != nil {
					return err
				}
				stored.Metrics, stored.MASPT, stored.Retries = cfg.Metrics, cfg.MASPT, cfg.Retries
				cfg = stored
			} else if probes != "" {
				b, err := probe.LoadBasis(probes)
				if err != nil {
					return err
				}
				cfg.Basis = b
			} else {
				cfg.Basis = probe.Default
			}
			return runEvalOpts(ctx, open, resume, retryFailed, cfg, workers, format, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&cfg.Persuaders, "persuader", []string{"pushy", "informer", "script", "random"}, "persuaders to evaluate: "+roles.PersuaderKinds)
	f.StringSliceVar(&cfg.Persuadees, "persuadee", []string{"sim"}, "persuadees: "+roles.PersuadeeKinds+"; several give the Table 7 grid")
	scenariosFlag(f, &cfg.Scenarios, "scenario sets")
	f.StringVar(&cfg.Split, "split", "heldout", "split to use: train, val, heldout or all")
	tmaxFlag(f, &cfg.Tmax, episode.DefaultTmax, "Probe-RPO paper: 10")
	f.IntVar(&cfg.Rollouts, "rollouts", 1, "rollouts per scenario")
	f.BoolVar(&cfg.SequentialProbes, "sequential-probes", false, "read each turn's probes before asking the persuader for its next utterance (slower; for engines whose concurrent requests change each other's numerics)")
	seedFlag(f, &cfg.Seed, "each episode's seed derives from (seed, scenario id, rollout)")
	f.StringVar(&probes, "probes", "", "probe basis JSON file (default: the CA/PE/AC basis of seed 000 Table 1)")
	workersFlag(f, &workers)
	dbFlag(f, &dbPath)
	f.StringVar(&format, "format", "table", "output format: table, json or csv")
	f.StringVar(&resume, "resume", "", "resume the run RUN_ID (its stored configuration is used)")
	f.BoolVar(&retryFailed, "retry-failed", false, "with --resume: remove the run's failed episodes first, so they are played again")
	f.IntVar(&cfg.Retries, "retries", 2, "replays of an episode that failed with a transient engine fault (5xx, timeout, refused connection, open circuit breaker) before its failure is stored")
	f.StringVar(&cfg.Judge, "judge", "", "llm:NAME: LLM judge (a role of --config) rating each episode's strategy, R_strategy in [-1, 1]")
	f.IntVar(&cfg.JudgeSamples, "judge-samples", 1, "judge samples per question, averaged (with --judge)")
	f.BoolVar(&cfg.JudgeActs, "judge-acts", false, "store the judge's persuasion-act tags instead of the rule tagger's (with --judge; one judge request per persuader turn)")
	f.StringVar(&cfg.Metrics, "metrics", "", "extra metrics after the outcome table: masp (SR@T, AT, RCSR@T, worst case over persuadees; docs/masp.md)")
	f.IntVar(&cfg.MASPT, "masp-t", 0, "turn budget T of --metrics masp (0: min(8, --tmax))")
	cmd.PersistentFlags().StringVar(&cfg.Config, "config", "", "persuarena.yaml naming the backends and roles of llm:NAME persuaders/persuadees (docs/llm-roles.md)")
	rootCmd.AddCommand(cmd)
}

// runEval runs "persuarena eval" without --retry-failed.
func runEval(ctx context.Context, open func() (*store.DB, error), runID string, cfg evalConfig, workers int, format string, out, errOut io.Writer) error {
	return runEvalOpts(ctx, open, runID, false, cfg, workers, format, out, errOut)
}

// runEvalOpts plays (or resumes, runID != "") an eval run through the run
// service and prints its tables in format.
func runEvalOpts(ctx context.Context, open func() (*store.DB, error), runID string, retryFailed bool, cfg evalConfig, workers int, format string, out, errOut io.Writer) error {
	switch format {
	case "table", "json", "csv":
	default:
		return fmt.Errorf("unknown --format %q (want table, json or csv)", format)
	}
	if retryFailed && runID == "" {
		return errors.New("--retry-failed needs --resume RUN_ID")
	}
	cfg.Workers = workers
	plan, err := runs.PrepareEval(ctx, cfg)
	if err != nil {
		return err
	}
	db, err := open()
	if err != nil {
		return err
	}
	var bar *progress
	res, err := runs.New(db).Eval(ctx, plan, runs.EvalOptions{RunID: runID, RetryFailed: retryFailed, Log: errOut,
		Progress: func(total int) func(int) { bar = newProgress(errOut, total, "eval"); return bar.Add }})
	if bar != nil {
		bar.Wait()
	}
	if errors.Is(err, context.Canceled) && res != nil {
		fmt.Fprintf(errOut, "interrupted: finished episodes are stored; continue with: persuarena eval --resume %s --db %s\n", res.RunID, db.Path())
	}
	if res == nil || res.Summaries == nil {
		return err
	}
	if perr := writeEval(out, format, res, plan); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// writeEval prints an eval run's outcome rows (with the run id), its MASP
// metrics, and for tables the grid, cost and judge tables.
func writeEval(out io.Writer, format string, res *runs.EvalResult, plan *runs.EvalPlan) error {
	sums, mreps := res.Summaries, res.MASP
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(evalJSON{RunID: res.RunID, Outcomes: sums, MASP: mreps})
	case "csv":
		if err := eval.WriteRunCSV(out, res.RunID, sums); err != nil || mreps == nil {
			return err
		}
		return writeMASPCSV(out, mreps)
	}
	names := plan.Spec.Persuadees
	if slices.Contains(names, "sim") {
		fmt.Fprintf(out, "run %s  (persuadee \"sim\" is a seeded simulator, not an LLM)\n", res.RunID)
	} else if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "sim-") }) {
		fmt.Fprintf(out, "run %s  (persuadees \"sim-*\" are seeded simulators, not LLMs)\n", res.RunID)
	} else {
		fmt.Fprintf(out, "run %s\n", res.RunID)
	}
	if err := eval.WriteTable(out, sums); err != nil {
		return err
	}
	if mreps != nil {
		if err := writeMASPText(out, mreps); err != nil {
			return err
		}
	}
	return writeLLMTables(out, res.Episodes, plan.Persuaders, plan.Persuadees, plan.Registry)
}

// evalJSON is eval's JSON output: the run id, the outcome rows and, with
// --metrics masp, the MASP reports per set.
type evalJSON struct {
	RunID    string         `json:"run_id"`
	Outcomes []eval.Summary `json:"outcomes"`
	MASP     []runs.SetMASP `json:"masp,omitempty"`
}

// writeLLMTables prints, after the outcome table, the Table 7 grid when
// there are several persuadees, and the engine cost table and decision
// protocol counts when any role is an LLM.
func writeLLMTables(out io.Writer, eps []*episode.Episode, pers []episode.Persuader, pees []episode.Persuadee, reg *roles.Registry) error {
	if len(pees) > 1 {
		names := func(n int, f func(int) string) []string {
			s := make([]string, n)
			for i := range s {
				s[i] = f(i)
			}
			return s
		}
		g := eval.CrossGrid(eps, names(len(pers), func(i int) string { return pers[i].Name() }),
			names(len(pees), func(i int) string { return pees[i].Name() }))
		fmt.Fprintln(out)
		if err := eval.WriteGrid(out, g); err != nil {
			return err
		}
	}
	if rows := eval.CostTable(eps); rows != nil {
		fmt.Fprintln(out)
		if err := eval.WriteCostTable(out, rows); err != nil {
			return err
		}
	}
	reg.WriteProtocol(out)
	writeJudgeCounts(out, eps)
	return nil
}

// writeJudgeCounts prints how many scored episodes the judge rated and how
// many of its calls failed (each failure is stored with its episode).
func writeJudgeCounts(out io.Writer, eps []*episode.Episode) {
	var rated, failed, acts, scored int
	for _, ep := range eps {
		if ep.Terminal == decision.TermFailed {
			continue
		}
		scored++
		if ep.RStrategy != nil {
			rated++
		}
		if ep.JudgeError != "" {
			failed++
		}
		if ep.ActsBy == episode.ActsByJudge {
			acts++
		}
	}
	if rated+failed+acts == 0 {
		return
	}
	fmt.Fprintf(out, "judge: %d of %d scored episodes rated, %d with judge errors (R_out = R_goal there)", rated, scored, failed)
	if acts > 0 {
		fmt.Fprintf(out, "; acts tagged by the judge in %d", acts)
	}
	fmt.Fprintln(out)
}
