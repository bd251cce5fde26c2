package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/reporeward"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/store"
)

// EvalSpec is what an eval run stores, so a resume can rebuild it. It
// never holds secrets: roles are named (package roles), not configured,
// here. Fields tagged json:"-" are per invocation and not stored.
type EvalSpec struct {
	// Grid fixes the run's episodes (roles, sets, split, Tmax, rollouts,
	// seed); its fields come first in the stored JSON.
	runplan.Grid
	Basis probe.Basis `json:"basis"`
	// NoProbes plays outcome-only episodes, with no belief read-out
	// (--probes none; episode.Config.NoProbes); Basis is then nil.
	NoProbes bool `json:"no_probes,omitempty"`
	// Config is the --config path (persuarena.yaml) resolving llm:ROLE
	// roles, and LLM describes those roles (backend, engine, model; never
	// keys).
	Config string          `json:"config,omitempty"`
	LLM    []roles.LLMInfo `json:"llm,omitempty"`
	// Judge is the llm:ROLE judge rating every scored episode's strategy
	// (R_strategy; Probe-RPO paper), JudgeSamples its samples per
	// question, and JudgeActs replaces the rule tagger's acts by the
	// judge's.
	Judge        string `json:"judge,omitempty"`
	JudgeSamples int    `json:"judge_samples,omitempty"`
	JudgeActs    bool   `json:"judge_acts,omitempty"`
	// Reward is a reward spec "repo:SPEC" scoring every scored episode
	// (episode.Config.Rewarder; REPO paper); its rubrics ask Judge.
	Reward string `json:"reward,omitempty"`
	// SequentialProbes turns off the overlap of a turn's probe read-out
	// with the persuader's next utterance (episode.Config.SequentialProbes).
	SequentialProbes bool `json:"sequential_probes,omitempty"`
	// Metrics ("masp" or "") and MASPT (0 means min(8, Tmax)) choose the
	// MASP paper's metrics on the stored episodes.
	Metrics string `json:"-"`
	MASPT   int    `json:"-"`
	// Retries replays an episode that failed with a transient engine
	// fault (eval.Options.Retries); Workers is the number of concurrent
	// episodes (>= 1).
	Retries int `json:"-"`
	Workers int `json:"-"`
}

// Validate checks the numeric fields and the metrics name: Tmax,
// Rollouts and Workers >= 1, Retries and MASPT >= 0, Metrics "" or
// "masp", JudgeActs only with Judge. Errors name the flag.
func (s EvalSpec) Validate() error {
	switch {
	case s.Rollouts < 1:
		return fmt.Errorf("--rollouts must be >= 1, got %d", s.Rollouts)
	case s.Rollouts > MaxPlannedEpisodes:
		return fmt.Errorf("--rollouts must be <= %d (MaxPlannedEpisodes), got %d", MaxPlannedEpisodes, s.Rollouts)
	case s.Tmax < 1 || s.Tmax > episode.MaxTmax:
		return fmt.Errorf("--tmax must be in 1..%d, got %d", episode.MaxTmax, s.Tmax)
	case s.Workers < 1 || s.Workers > MaxWorkers:
		return fmt.Errorf("--workers must be in 1..%d, got %d", MaxWorkers, s.Workers)
	case s.Retries < 0 || s.Retries > MaxRetries:
		return fmt.Errorf("--retries must be in 0..%d, got %d", MaxRetries, s.Retries)
	case s.Metrics != "" && s.Metrics != "masp":
		return fmt.Errorf("unknown --metrics %q (want masp)", s.Metrics)
	case s.MASPT < 0 || s.MASPT > episode.MaxTmax:
		return fmt.Errorf("--masp-t must be in 0..%d, got %d", episode.MaxTmax, s.MASPT)
	case s.JudgeActs && s.Judge == "":
		return errors.New("--judge-acts needs --judge llm:ROLE")
	case s.JudgeSamples < 0 || s.JudgeSamples > MaxJudgeSamples:
		return fmt.Errorf("--judge-samples must be in 0..%d, got %d", MaxJudgeSamples, s.JudgeSamples)
	}
	return nil
}

// EvalPlan is a validated, resolved EvalSpec: its roles, scenario sets
// and episode configuration, its LLM backends preflighted. Nothing is
// stored yet.
type EvalPlan struct {
	Spec       EvalSpec
	Registry   *roles.Registry
	Persuaders []episode.Persuader
	Persuadees []episode.Persuadee
	// Plan holds the grid's scenario sets (Sets) and its episode count
	// (Total).
	runplan.Plan
	Episode episode.Config
}

// PrepareEval validates spec, resolves its roles (package roles) and sets
// (LoadSets), and preflights every LLM backend in use, so a bad input or
// an unreachable backend fails before any run is created. Errors name the
// flag or the backend and wrap the underlying error.
func PrepareEval(ctx context.Context, spec EvalSpec) (*EvalPlan, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := checkRoleLists("persuader", spec.Persuaders, "persuadee", spec.Persuadees, "scenarios", spec.Scenarios); err != nil {
		return nil, err
	}
	reg, err := roles.New(spec.Config)
	if err != nil {
		return nil, err
	}
	p := &EvalPlan{Spec: spec, Registry: reg}
	if p.Persuaders, err = reg.Persuaders(spec.Persuaders); err != nil {
		return nil, err
	}
	if p.Persuadees, err = reg.Persuadees(spec.Persuadees); err != nil {
		return nil, err
	}
	if p.Plan, err = runplan.Of(ctx, spec.Grid); err != nil {
		return nil, err
	}
	if _, err := planSize(len(p.Persuaders), len(p.Persuadees), p.Sets, spec.Rollouts); err != nil {
		return nil, err
	}
	p.Episode = episode.Config{Tmax: spec.Tmax, Basis: spec.Basis, NoProbes: spec.NoProbes, SequentialProbes: spec.SequentialProbes}
	if spec.Judge != "" {
		j, err := reg.Judge(spec.Judge, spec.JudgeSamples)
		if err != nil {
			return nil, err
		}
		p.Episode.Judge = j.ForEpisodes()
		if spec.JudgeActs {
			p.Episode.ActJudge = j.ForEpisodes()
		}
	}
	if p.Episode.Rewarder, err = rewarder(reg, spec.Reward, spec.Judge, spec.JudgeSamples); err != nil {
		return nil, err
	}
	if err := reg.Preflight(ctx); err != nil {
		return nil, err
	}
	if !spec.NoProbes {
		if err := reg.CheckProbes(ctx); err != nil {
			return nil, err
		}
	}
	p.Spec.LLM = reg.LLM()
	return p, nil
}

// LoadEval reads the stored spec of eval run id; a non-empty config
// replaces the stored --config path (the file may have moved). The
// per-invocation fields stay zero. Errors: store.ErrNotFound, or a stored
// configuration that does not decode.
func (s *Service) LoadEval(ctx context.Context, id, config string) (EvalSpec, error) {
	var spec EvalSpec
	if err := s.ensure(ctx, true); err != nil {
		return spec, fmt.Errorf("resume %s: %w", id, err)
	}
	run, err := s.Store.GetRun(ctx, id)
	if err != nil {
		return spec, fmt.Errorf("resume %s: %w", id, err)
	}
	if err := json.Unmarshal(run.Config, &spec); err != nil {
		return spec, fmt.Errorf("resume %s: stored config: %w", id, err)
	}
	if config != "" {
		spec.Config = config
	}
	return spec, nil
}

// EvalOptions are an eval invocation's options.
type EvalOptions struct {
	// RunID resumes that run (its finished episodes are kept); "" creates
	// a new one.
	RunID string
	// RetryFailed first removes the resumed run's failed episodes, so they
	// are played again.
	RetryFailed bool
	// Log receives one line per phase (may be nil).
	Log io.Writer
	// Progress, when set, is called once with the number of episodes to
	// play and returns the function counting finished ones, called as each
	// is handed to the store's batched writer (so the count moves with the
	// play, not in jumps of a written batch; an interrupt still stores
	// every finished episode, see Eval).
	Progress func(total int) func(n int)
	// Enqueue, when set, hands the episodes still to play to a job queue
	// (package queue) instead of playing them: Eval creates or resumes the
	// run, lists its missing episodes and returns after Enqueue, the run
	// left running for the queue's workers to finish; Enqueue's error is
	// Eval's, returned with the result (the run exists and stays running,
	// so a resume enqueues the rest). A run with nothing left to play is
	// summarised and finished as without Enqueue.
	Enqueue func(ctx context.Context, runID string, jobs []eval.Job) error
	// Probes names the probe basis of a new run (probe.Resolve: "" or
	// "default" for probe.Default, "agreement", or a JSON file; probe.None
	// for outcome-only episodes); a resumed run keeps its stored basis. Format is the output format Write will be asked for
	// (table, json or csv; "" is table), checked before anything runs.
	Probes, Format string
	// Given names the EvalPlanFlags given on the command line; with RunID,
	// one asking for another value than the stored plan's is refused.
	Given []string
}

// EvalResult is a finished (or stopped) eval run.
type EvalResult struct {
	RunID string
	// Plan is the run's resolved plan (its roles name the table's rows).
	Plan *EvalPlan
	// Missing is the number of the plan's episodes not stored when this
	// invocation started, which it plays (or queues); Stored the number
	// already stored; Missing + Stored = Plan.Total().
	Missing, Stored int
	// Summaries are the outcome rows per persuadee, persuader and set, in
	// that nesting order.
	Summaries []eval.Summary
	// Episodes are the run's whole episodes, read only when a table needs
	// them (LLM roles, a judge, MASP metrics, several persuadees).
	Episodes []*episode.Episode
	// MASP holds the MASP paper's metrics per set (Spec.Metrics "masp").
	MASP []SetMASP
	// Reward summarises the episodes' reward vectors per arm (--reward).
	Reward []reporeward.Summary
	// FirstError is the failure of the first episode of this invocation
	// that failed ("" when none did).
	FirstError string
}

// Eval plays plan's episodes not yet stored in run o.RunID (or a new run),
// stores each as it finishes, sets the run's status and summarises it.
//
// Errors: the store's; eval.Execute's (context.Canceled on Ctrl-C: the run
// is interrupted and the finished episodes stay stored); ErrAllFailed
// (with the first failure) when every scored episode of the run failed,
// the run then marked failed. Once the run exists the result is returned
// with the error (its RunID set; its Summaries with ErrAllFailed only), so
// a caller can name the run and print the table.
func (s *Service) Eval(ctx context.Context, plan *EvalPlan, o EvalOptions) (*EvalResult, error) {
	spec := plan.Spec
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format, args...)
		}
	}
	if err := s.ensure(ctx, false); err != nil {
		return nil, err
	}
	res := &EvalResult{RunID: o.RunID, Plan: plan}
	if res.RunID == "" {
		if o.RetryFailed {
			return nil, errors.New("--retry-failed needs --resume RUN_ID")
		}
		id, err := s.Create(ctx, "eval", spec.Seed, spec)
		if err != nil {
			return nil, err
		}
		res.RunID = id
	} else if o.RetryFailed {
		n, err := s.Store.DeleteFailed(ctx, res.RunID)
		if err != nil {
			return nil, err
		}
		logf("run %s: %d failed episodes removed, to be played again\n", res.RunID, n)
	}
	done, err := s.Store.DoneKeys(ctx, res.RunID)
	if err != nil {
		return nil, err
	}
	jobs := eval.Plan(plan.Persuaders, plan.Persuadees, plan.Sets, spec.Rollouts, done)
	res.Missing, res.Stored = len(jobs), len(done)
	logf("run %s: %d episodes to play (%d already stored)\n", res.RunID, len(jobs), len(done))
	// Saving uses a context that Ctrl-C does not cancel, so an episode that
	// finished is never dropped at the interrupt.
	bg := context.WithoutCancel(ctx)
	if err := s.Running(bg, res.RunID); err != nil {
		return nil, err
	}
	if o.Enqueue != nil && len(jobs) > 0 {
		// The queue's workers play and finish the run (and stamp it).
		s.Release(res.RunID)
		return res, o.Enqueue(ctx, res.RunID, jobs)
	}
	var onFinished func(int)
	if o.Progress != nil {
		onFinished = o.Progress(len(jobs))
	}
	w := store.NewWriter(s.Store, res.RunID, 0, 0, nil)
	// A run played whole here is summarised from the outcomes as they are
	// stored, not read back (the table does not depend on their order:
	// eval.Accumulator sums exactly).
	var seen *outcomeTable
	if len(done) == 0 && outcomesOnly(plan) {
		seen = newOutcomeTable(plan)
	}
	execErr := eval.Execute(ctx, jobs, eval.Options{
		RunID: res.RunID, Seed: spec.Seed, Workers: spec.Workers, Retries: spec.Retries,
		Episode: plan.Episode,
		// Sink is called from one goroutine.
		Sink: func(ep *episode.Episode) error {
			if ep.Terminal == decision.TermFailed && res.FirstError == "" {
				res.FirstError = ep.Error
			}
			if err := w.Add(bg, ep); err != nil {
				return err
			}
			if onFinished != nil {
				onFinished(1)
			}
			if seen != nil {
				seen.add(ep.Outcome())
			}
			return nil
		},
	})
	execErr = errors.Join(execErr, w.Close(bg))
	if execErr != nil {
		return res, s.Finish(ctx, res.RunID, execErr)
	}
	return res, s.conclude(bg, plan, res, seen)
}

// FinishEval summarises eval run runID, whose episodes plan lists, and
// sets its status as Eval does when its last episode is stored: done, or
// failed with ErrAllFailed when every scored episode failed. The queue's
// workers (package queue) call it once every episode key of the run is
// stored. A run it cannot summarise (a store error, a cancelled ctx)
// keeps its status, running, so that a later call finishes it; unlike
// Eval, which marks such a run failed or interrupted. Errors: the
// store's, and ErrAllFailed as Eval documents; the result comes with
// them.
func (s *Service) FinishEval(ctx context.Context, plan *EvalPlan, runID string) (*EvalResult, error) {
	res := &EvalResult{RunID: runID, Plan: plan}
	if err := s.summarise(ctx, plan, res, nil); err != nil {
		return res, err
	}
	return res, s.finishSummarised(ctx, res)
}

// conclude summarises res's run and finishes it (finishSummarised); a
// run it cannot summarise is finished with that error.
func (s *Service) conclude(ctx context.Context, plan *EvalPlan, res *EvalResult, seen *outcomeTable) error {
	if err := s.summarise(ctx, plan, res, seen); err != nil {
		return s.Finish(ctx, res.RunID, err)
	}
	return s.finishSummarised(ctx, res)
}

// finishSummarised sets the status of res's summarised run: done, or
// failed with ErrAllFailed when no scored episode and some failed one.
func (s *Service) finishSummarised(ctx context.Context, res *EvalResult) error {
	var scored, failed int
	for _, sm := range res.Summaries {
		scored += sm.N
		failed += sm.Failed
	}
	var runErr error
	if scored == 0 && failed > 0 {
		why := res.FirstError
		if why == "" {
			why = "see the stored episodes' errors (persuarena runs show " + res.RunID + ")"
		}
		runErr = fmt.Errorf("run %s: %w (%d failed, none scored); first error: %s", res.RunID, ErrAllFailed, failed, why)
	}
	return s.Finish(ctx, res.RunID, runErr)
}

// RunEval is the eval job: it resumes run o.RunID (its stored spec, with
// spec's per-invocation fields and --config path; see LoadEval) or starts
// a new run of spec with o.Probes' basis, prepares it (PrepareEval: bad
// input and unreachable backends fail before the database is touched),
// plays it (Eval) and on Ctrl-C tells o.Log how to continue. Errors:
// an unknown o.Format, --retry-failed without a run, LoadEval's,
// probe.Resolve's, PrepareEval's and Eval's (the result comes with
// Eval's errors as Eval documents).
func (s *Service) RunEval(ctx context.Context, spec EvalSpec, o EvalOptions) (*EvalResult, error) {
	if err := checkFormat(o.Format); err != nil {
		return nil, err
	}
	if o.RetryFailed && o.RunID == "" {
		return nil, errors.New("--retry-failed needs --resume RUN_ID")
	}
	if o.RunID != "" {
		stored, err := s.LoadEval(ctx, o.RunID, spec.Config)
		if err == nil {
			err = refuseChangedPlan(o.Given, spec, stored)
		}
		if err != nil {
			return nil, err
		}
		stored.Metrics, stored.MASPT, stored.Retries, stored.Workers = spec.Metrics, spec.MASPT, spec.Retries, spec.Workers
		spec = stored
	} else if probe.IsNone(o.Probes) {
		spec.NoProbes = true
	} else {
		b, err := probe.Resolve(o.Probes)
		if err != nil {
			return nil, err
		}
		spec.Basis = b
	}
	plan, err := PrepareEval(ctx, spec)
	if err != nil {
		return nil, err
	}
	res, err := s.Eval(ctx, plan, o)
	if errors.Is(err, context.Canceled) && res != nil && o.Log != nil {
		fmt.Fprintf(o.Log, "interrupted: finished episodes are stored; continue with: persuarena eval --resume %s --db %s\n", res.RunID, s.DBPath())
	}
	return res, err
}

// summarise fills res's summaries (and episodes and MASP metrics when
// needed). A run of built-in roles with one persuadee needs only the
// outcome table: it is computed from streamed outcomes in constant
// memory.
//
// seen, when set, holds every one of the run's outcomes, in the order
// they were stored (a run played whole by this process): its table is
// the one streaming them back would give, without reading them.
func (s *Service) summarise(ctx context.Context, plan *EvalPlan, res *EvalResult, seen *outcomeTable) error {
	spec := plan.Spec
	var err error
	if outcomesOnly(plan) {
		if seen != nil {
			res.Summaries = seen.summaries(plan)
			return nil
		}
		res.Summaries, err = s.summarizeStored(ctx, res.RunID, plan)
		return err
	}
	if res.Episodes, err = s.Store.Episodes(ctx, res.RunID); err != nil {
		return err
	}
	res.Summaries = summarize(res.Episodes, plan)
	res.Reward = reporeward.Summarize(res.Episodes)
	if spec.Metrics == "masp" {
		res.MASP, err = maspOfEpisodes(ctx, res.Episodes, plan)
	}
	return err
}

// outcomeTable accumulates outcomes per persuader, persuadee and set:
// the outcome table in constant memory.
type outcomeTable struct {
	setOf map[string]string
	acc   map[eval.GroupKey]*eval.Accumulator
}

func newOutcomeTable(plan *EvalPlan) *outcomeTable {
	return &outcomeTable{setOf: setIndex(plan.Sets), acc: map[eval.GroupKey]*eval.Accumulator{}}
}

func (t *outcomeTable) add(o episode.Outcome) {
	k := eval.GroupKey{Persuader: o.Persuader, Persuadee: o.Persuadee, Set: t.setOf[o.ScenarioID]}
	a := t.acc[k]
	if a == nil {
		a = &eval.Accumulator{}
		t.acc[k] = a
	}
	a.Add(o)
}

// summaries lists the table's rows in the planned order.
func (t *outcomeTable) summaries(plan *EvalPlan) []eval.Summary {
	return plannedOrder(plan, func(g eval.GroupKey) eval.Summary {
		a := t.acc[g]
		if a == nil {
			a = &eval.Accumulator{}
		}
		return a.Summary(g.Persuader, g.Persuadee, g.Set)
	})
}

// outcomesOnly reports whether plan's table needs only the episodes'
// outcomes: built-in roles, one persuadee, no judge, metrics or reward.
func outcomesOnly(plan *EvalPlan) bool {
	spec := plan.Spec
	return !plan.Registry.UsesLLM() && spec.Judge == "" && spec.Metrics == "" && spec.Reward == "" && len(plan.Persuadees) == 1
}

// summarizeStored is summarize over the run's stored outcomes, streamed.
func (s *Service) summarizeStored(ctx context.Context, runID string, plan *EvalPlan) ([]eval.Summary, error) {
	t := newOutcomeTable(plan)
	err := s.Store.EachOutcome(ctx, runID, func(o episode.Outcome) error {
		t.add(o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t.summaries(plan), nil
}

// summarize groups a run's episodes in the planned order.
func summarize(eps []*episode.Episode, plan *EvalPlan) []eval.Summary {
	setOf := setIndex(plan.Sets)
	groups := eval.Group(eps, func(id string) string { return setOf[id] })
	return plannedOrder(plan, func(g eval.GroupKey) eval.Summary {
		return eval.Summarize(g.Persuader, g.Persuadee, g.Set, groups[g])
	})
}

// plannedOrder lists one summary per persuadee, persuader and set.
func plannedOrder(plan *EvalPlan, of func(eval.GroupKey) eval.Summary) []eval.Summary {
	var out []eval.Summary
	for _, pee := range plan.Persuadees {
		for _, per := range plan.Persuaders {
			for _, s := range plan.Sets {
				out = append(out, of(eval.GroupKey{Persuader: per.Name(), Persuadee: pee.Name(), Set: s.Name}))
			}
		}
	}
	return out
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

// rewarder resolves a --reward reference (reporeward.Resolve; "" is none); the
// spec's rubrics ask the --judge role's judge. Errors: reporeward.Resolve's,
// the registry's.
func rewarder(reg *roles.Registry, ref, judge string, samples int) (episode.Rewarder, error) {
	if ref == "" {
		return nil, nil
	}
	var rater reporeward.Rater
	if judge != "" {
		j, err := reg.Judge(judge, samples)
		if err != nil {
			return nil, err
		}
		rater = j
	}
	return reporeward.Resolve(ref, rater)
}
