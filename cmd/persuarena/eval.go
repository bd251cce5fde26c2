package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// evalConfig is what an eval run stores, so --resume can rebuild it. It
// never holds secrets: roles are named, not configured, here.
type evalConfig struct {
	Persuaders []string    `json:"persuaders"`
	Persuadees []string    `json:"persuadees"`
	Scenarios  []string    `json:"scenarios"`
	Split      string      `json:"split"`
	Tmax       int         `json:"tmax"`
	Rollouts   int         `json:"rollouts"`
	Seed       uint64      `json:"seed"`
	Basis      probe.Basis `json:"basis"`
	// Config is the --config path (persuarena.yaml) resolving llm:NAME
	// roles, and LLM describes those roles (backend, engine, model; never
	// keys).
	Config string          `json:"config,omitempty"`
	LLM    []roles.LLMInfo `json:"llm,omitempty"`
	// Judge is the --judge role (llm:NAME) rating every scored episode's
	// strategy (R_strategy), JudgeSamples its samples per question, and
	// JudgeActs replaces the rule tagger's acts by the judge's.
	Judge        string `json:"judge,omitempty"`
	JudgeSamples int    `json:"judge_samples,omitempty"`
	JudgeActs    bool   `json:"judge_acts,omitempty"`
	// SequentialProbes turns off the overlap of a turn's probe read-out
	// with the persuader's next utterance (episode.Config.SequentialProbes).
	SequentialProbes bool `json:"sequential_probes,omitempty"`
	// Metrics ("masp" or "") and MASPT (--masp-t; 0 means min(8, Tmax))
	// choose extra report tables; they are not stored, so a resumed run
	// may ask for other tables.
	Metrics string `json:"-"`
	MASPT   int    `json:"-"`
	// Retries replays an episode that failed with a transient engine
	// fault (eval.Options.Retries); not stored.
	Retries int `json:"-"`
}

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
			// The database is opened only once the run's input is valid, so
			// a rejected command leaves no file behind.
			var db *store.DB
			defer func() {
				if db != nil {
					db.Close()
				}
			}()
			open := func() (*store.DB, error) {
				if db != nil {
					return db, nil
				}
				d, err := store.Open(ctx, dbPath)
				db = d
				return d, err
			}
			var runID string
			var err error
			if resume != "" {
				if _, err := os.Stat(dbPath); err != nil {
					return fmt.Errorf("resume %s: no run database: %w", resume, err)
				}
				d, err := open()
				if err != nil {
					return err
				}
				run, err := d.GetRun(ctx, resume)
				if err != nil {
					return fmt.Errorf("resume %s: %w", resume, err)
				}
				flagConfig := cfg.Config
				if err := json.Unmarshal(run.Config, &cfg); err != nil {
					return fmt.Errorf("resume %s: stored config: %w", resume, err)
				}
				if flagConfig != "" {
					cfg.Config = flagConfig
				}
				runID = run.ID
				if retryFailed {
					n, err := d.DeleteFailed(ctx, runID)
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "run %s: %d failed episodes removed, to be played again\n", runID, n)
				}
			} else {
				if retryFailed {
					return errors.New("--retry-failed needs --resume RUN_ID")
				}
				if probes != "" {
					if cfg.Basis, err = probe.LoadBasis(probes); err != nil {
						return err
					}
				} else {
					cfg.Basis = probe.Default
				}
			}
			return runEval(ctx, open, runID, cfg, workers, format, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&cfg.Persuaders, "persuader", []string{"pushy", "informer", "script", "random"}, "persuaders to evaluate: built-in names (pushy, informer, script, random), planner:CHECKPOINT, or llm:NAME (a role of --config)")
	f.StringSliceVar(&cfg.Persuadees, "persuadee", []string{"sim"}, "persuadees: sim (the seeded simulator, its shipped P4G fit; also sim-soft, sim-hard, sim-hand its hand-set parameters, sim:FILE a simulator config file) or llm:NAME (a role of --config); several give the Table 7 grid")
	f.StringSliceVar(&cfg.Scenarios, "scenarios", []string{"p4g", "arena"}, "scenario sets: built-in names (p4g, arena) or JSONL files")
	f.StringVar(&cfg.Split, "split", "heldout", "split to use: train, val, heldout or all")
	f.IntVar(&cfg.Tmax, "tmax", episode.DefaultTmax, "maximum persuader turns per episode (seed 000: 10)")
	f.IntVar(&cfg.Rollouts, "rollouts", 1, "rollouts per scenario")
	f.BoolVar(&cfg.SequentialProbes, "sequential-probes", false, "read each turn's probes before asking the persuader for its next utterance (slower; for engines whose concurrent requests change each other's numerics)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "run seed; each episode's seed derives from (seed, scenario id, rollout)")
	f.StringVar(&probes, "probes", "", "probe basis JSON file (default: the CA/PE/AC basis of seed 000 Table 1)")
	f.IntVar(&workers, "workers", runtime.NumCPU(), "concurrent episodes")
	f.StringVar(&dbPath, "db", "persuarena.db", "run database (SQLite)")
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

// loadSets resolves scenario set references and filters them by split.
func loadSets(refs []string, split string) ([]eval.Set, error) {
	var sets []eval.Set
	if split != "all" && !isSplit(split) {
		return nil, fmt.Errorf("unknown split %q (want train, val, heldout or all)", split)
	}
	sp := scenario.Split(split)
	if split == "all" {
		sp = ""
	}
	for _, ref := range refs {
		// only the split's lines of a built-in set are decoded
		ss, err := scenario.ResolveSplit(sp, ref)
		if err != nil {
			return nil, err
		}
		if len(ss) == 0 {
			return nil, fmt.Errorf("scenario set %s has no %s scenarios", ref, split)
		}
		sets = append(sets, eval.Set{Name: setName(ref), Scenarios: ss})
	}
	return sets, nil
}

// setName names a scenario set by its reference: a built-in name as is, a
// file by its base name without ".jsonl".
func setName(ref string) string {
	return strings.TrimSuffix(ref[strings.LastIndex(ref, "/")+1:], ".jsonl")
}

func isSplit(s string) bool {
	for _, sp := range scenario.Splits {
		if string(sp) == s {
			return true
		}
	}
	return false
}

func runEval(ctx context.Context, open func() (*store.DB, error), runID string, cfg evalConfig, workers int, format string, out, errOut io.Writer) error {
	switch format {
	case "table", "json", "csv":
	default:
		return fmt.Errorf("unknown --format %q (want table, json or csv)", format)
	}
	if cfg.Rollouts < 1 {
		return fmt.Errorf("--rollouts must be >= 1, got %d", cfg.Rollouts)
	}
	if cfg.Tmax < 1 {
		return fmt.Errorf("--tmax must be >= 1, got %d", cfg.Tmax)
	}
	if workers < 1 {
		return fmt.Errorf("--workers must be >= 1, got %d", workers)
	}
	if cfg.Retries < 0 {
		return fmt.Errorf("--retries must be >= 0, got %d", cfg.Retries)
	}
	if cfg.Metrics != "" && cfg.Metrics != "masp" {
		return fmt.Errorf("unknown --metrics %q (want masp)", cfg.Metrics)
	}
	if cfg.MASPT < 0 {
		return fmt.Errorf("--masp-t must be >= 0, got %d", cfg.MASPT)
	}
	reg, err := roles.New(cfg.Config)
	if err != nil {
		return err
	}
	pers, err := reg.Persuaders(cfg.Persuaders)
	if err != nil {
		return err
	}
	pees, err := reg.Persuadees(cfg.Persuadees)
	if err != nil {
		return err
	}
	sets, err := loadSets(cfg.Scenarios, cfg.Split)
	if err != nil {
		return err
	}
	epCfg := episode.Config{Tmax: cfg.Tmax, Basis: cfg.Basis, SequentialProbes: cfg.SequentialProbes}
	if cfg.Judge != "" {
		j, err := reg.Judge(cfg.Judge, cfg.JudgeSamples)
		if err != nil {
			return err
		}
		epCfg.Judge = j.ForEpisodes()
		if cfg.JudgeActs {
			epCfg.ActJudge = j.ForEpisodes()
		}
	} else if cfg.JudgeActs {
		return errors.New("--judge-acts needs --judge llm:NAME")
	}
	if err := reg.Preflight(ctx); err != nil {
		return err
	}
	db, err := open()
	if err != nil {
		return err
	}
	if runID == "" {
		cfg.LLM = reg.LLM()
		raw, err := json.Marshal(cfg)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		runID = store.NewRunID(now, cfg.Seed)
		if err := db.CreateRun(ctx, store.Run{ID: runID, CreatedAt: now, Kind: "eval", Seed: cfg.Seed,
			Version: version(), Config: raw, Status: store.StatusRunning}); err != nil {
			return err
		}
	}
	done, err := db.DoneKeys(ctx, runID)
	if err != nil {
		return err
	}
	doneKeys := make(map[eval.Key]bool, len(done))
	for k := range done {
		doneKeys[eval.Key{Persuader: k.Persuader, Persuadee: k.Persuadee, ScenarioID: k.ScenarioID, Rollout: k.Rollout}] = true
	}
	jobs := eval.Plan(pers, pees, sets, cfg.Rollouts, doneKeys)
	fmt.Fprintf(errOut, "run %s: %d episodes to play (%d already stored)\n", runID, len(jobs), len(done))
	// Saving uses a context that Ctrl-C does not cancel, so an episode that
	// finished is never dropped at the interrupt.
	bg := context.WithoutCancel(ctx)
	if err := db.SetRunStatus(bg, runID, store.StatusRunning); err != nil {
		return err
	}
	bar := newProgress(errOut, len(jobs), "eval")
	// Episodes are written in batches; the bar counts stored ones only.
	w := db.NewEpisodeWriter(runID, 0, 0, bar.Add)
	execErr := eval.Execute(ctx, jobs, eval.Options{
		RunID: runID, Seed: cfg.Seed, Workers: workers, Retries: cfg.Retries,
		Episode: epCfg,
		Sink:    func(ep *episode.Episode) error { return w.Add(bg, ep) },
	})
	if err := w.Close(bg); err != nil {
		execErr = errors.Join(execErr, err)
	}
	bar.Wait()
	if execErr != nil {
		status := store.StatusFailed
		if errors.Is(execErr, context.Canceled) {
			status = store.StatusInterrupted
		}
		if err := db.SetRunStatus(bg, runID, status); err != nil {
			return errors.Join(execErr, err)
		}
		if status == store.StatusInterrupted {
			fmt.Fprintf(errOut, "interrupted: finished episodes are stored; continue with: persuarena eval --resume %s --db %s\n", runID, db.Path())
		}
		return execErr
	}
	if err := db.SetRunStatus(bg, runID, store.StatusDone); err != nil {
		return err
	}
	// A run of built-in roles needs only the outcome table: it is computed
	// from streamed outcomes in constant memory. LLM roles, a judge, MASP
	// metrics and the persuadee grid read whole episodes.
	var eps []*episode.Episode
	var sums []eval.Summary
	if !reg.UsesLLM() && cfg.Judge == "" && cfg.Metrics == "" && len(pees) == 1 {
		if sums, err = summarizeStored(bg, db, runID, pers, pees, sets); err != nil {
			return err
		}
	} else {
		if eps, err = db.Episodes(bg, runID); err != nil {
			return err
		}
		sums = summarize(eps, pers, pees, sets)
	}
	var mreps []setMASP
	if cfg.Metrics == "masp" {
		if mreps, err = maspOfEpisodes(bg, eps, pers, pees, sets, cfg, reg, workers); err != nil {
			return err
		}
	}
	switch format {
	case "json":
		if mreps != nil {
			return writeMASPJSON(out, sums, mreps)
		}
		return eval.WriteJSON(out, sums)
	case "csv":
		if err := eval.WriteCSV(out, sums); err != nil || mreps == nil {
			return err
		}
		return writeMASPCSV(out, mreps)
	}
	if slices.Contains(cfg.Persuadees, "sim") {
		fmt.Fprintf(out, "run %s  (persuadee \"sim\" is a seeded simulator, not an LLM)\n", runID)
	} else if slices.ContainsFunc(cfg.Persuadees, func(n string) bool { return strings.HasPrefix(n, "sim-") }) {
		fmt.Fprintf(out, "run %s  (persuadees \"sim-*\" are seeded simulators, not LLMs)\n", runID)
	} else {
		fmt.Fprintf(out, "run %s\n", runID)
	}
	if err := eval.WriteTable(out, sums); err != nil {
		return err
	}
	if mreps != nil {
		if err := writeMASPText(out, mreps); err != nil {
			return err
		}
	}
	return writeLLMTables(out, eps, pers, pees, reg)
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

// summarizeStored is summarize over the run's stored outcomes, streamed.
func summarizeStored(ctx context.Context, db *store.DB, runID string, pers []episode.Persuader, pees []episode.Persuadee, sets []eval.Set) ([]eval.Summary, error) {
	setOf := setIndex(sets)
	acc := map[eval.GroupKey]*eval.Accumulator{}
	err := db.EachOutcome(ctx, runID, func(o episode.Outcome) error {
		k := eval.GroupKey{Persuader: o.Persuader, Persuadee: o.Persuadee, Set: setOf[o.ScenarioID]}
		a := acc[k]
		if a == nil {
			a = &eval.Accumulator{}
			acc[k] = a
		}
		a.Add(o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []eval.Summary
	for _, pee := range pees {
		for _, per := range pers {
			for _, s := range sets {
				g := eval.GroupKey{Persuader: per.Name(), Persuadee: pee.Name(), Set: s.Name}
				a := acc[g]
				if a == nil {
					a = &eval.Accumulator{}
				}
				out = append(out, a.Summary(g.Persuader, g.Persuadee, g.Set))
			}
		}
	}
	return out, nil
}

// setIndex maps scenario ids to their set names.
func setIndex(sets []eval.Set) map[string]string {
	setOf := map[string]string{}
	for _, s := range sets {
		for _, sc := range s.Scenarios {
			setOf[sc.ID] = s.Name
		}
	}
	return setOf
}

// summarize groups a run's episodes in the planned order.
func summarize(eps []*episode.Episode, pers []episode.Persuader, pees []episode.Persuadee, sets []eval.Set) []eval.Summary {
	setOf := setIndex(sets)
	groups := eval.Group(eps, func(id string) string { return setOf[id] })
	var out []eval.Summary
	for _, pee := range pees {
		for _, per := range pers {
			for _, s := range sets {
				g := eval.GroupKey{Persuader: per.Name(), Persuadee: pee.Name(), Set: s.Name}
				out = append(out, eval.Summarize(g.Persuader, g.Persuadee, g.Set, groups[g]))
			}
		}
	}
	return out
}

// version identifies the binary in stored runs: the module version and VCS
// revision when the build recorded them.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += "+" + s.Value
		}
	}
	return v
}
