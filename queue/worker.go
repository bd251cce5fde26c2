package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/store"
)

// WorkerOptions configure Work.
type WorkerOptions struct {
	// Workers is how many episodes the process plays at a time (>= 1).
	Workers int
	// Config, when set, replaces the stored --config path of every run
	// (runs.Service.LoadEval): the file may sit elsewhere on this machine.
	Config string
	// Retries replays an episode that failed with a transient engine
	// fault, as eval's --retries does (eval.Options.Retries, >= 0).
	Retries int
	// JobTimeout cancels an episode running longer (its job is retried);
	// RescueAfter hands a job whose worker vanished (killed, its machine
	// lost) to another worker once it has run that long, and must exceed
	// JobTimeout. Zero: DefaultJobTimeout, and for RescueAfter the job
	// timeout plus a tenth of it, at least 30 s (see rescueAfter).
	JobTimeout, RescueAfter time.Duration
	// PollInterval is how often an idle worker looks for jobs besides
	// River's insert notifications; 0: DefaultPollInterval.
	PollInterval time.Duration
	// FinishPoll is how long a run's finish job waits before it checks
	// again whether every episode is stored; 0: DefaultFinishPoll.
	FinishPoll time.Duration
	// Log receives one line per stored episode and River's warnings (nil:
	// none).
	Log io.Writer
	// Ready, when set, is called once the worker is fetching jobs.
	Ready func()
}

// Defaults of WorkerOptions.
// Choice: an LLM episode of ten turns takes minutes on a loaded engine;
// 30 minutes is a stuck one, and a vanished worker's job waits 33 minutes
// (the derived rescue time) before another worker replays it.
const (
	DefaultJobTimeout   = 30 * time.Minute
	DefaultPollInterval = time.Second
	// DefaultFinishPoll: the finish job is the fallback for a worker lost
	// between storing a run's last episode and finishing the run (the
	// worker that stores it finishes the run at once); a check costs a
	// few small queries (the run's status and its stored count).
	DefaultFinishPoll = 10 * time.Second
)

// check validates o. Errors name the flag.
func (o WorkerOptions) check() error {
	switch {
	case o.Workers < 1:
		return fmt.Errorf("--workers must be >= 1, got %d", o.Workers)
	case o.Retries < 0:
		return fmt.Errorf("--retries must be >= 0, got %d", o.Retries)
	case o.JobTimeout < 0 || o.RescueAfter < 0 || o.PollInterval < 0 || o.FinishPoll < 0:
		return errors.New("--job-timeout, --rescue-after and the poll intervals must be >= 0")
	case o.rescueAfter() <= o.jobTimeout():
		return fmt.Errorf("--rescue-after (%s) must exceed --job-timeout (%s)", o.rescueAfter(), o.jobTimeout())
	}
	return nil
}

// Applied describes o as Work applies it, for worker's start-up line:
// the defaults filled in and the rescue time derived when not given (see
// rescueAfter), e.g. "workers 4, retries 2, job timeout 30m0s, rescue
// after 33m0s (derived: the job timeout plus max(30s, a tenth)), job poll
// 1s, finish poll 10s".
func (o WorkerOptions) Applied() string {
	rescue := "derived: the job timeout plus max(30s, a tenth)"
	if o.RescueAfter > 0 {
		rescue = "--rescue-after"
	}
	return fmt.Sprintf("workers %d, retries %d, job timeout %v, rescue after %v (%s), job poll %v, finish poll %v",
		o.Workers, o.Retries, o.jobTimeout(), o.rescueAfter(), rescue,
		cmp.Or(o.PollInterval, DefaultPollInterval), cmp.Or(o.FinishPoll, DefaultFinishPoll))
}

// Work is `persuarena worker`: it plays the episode jobs of every run in
// the PostgreSQL run database at db, o.Workers at a time, until ctx is
// cancelled (then episodes in play are abandoned, their jobs retried by
// other workers or on the next start). Each job's episode is played from
// its run's stored spec (runs.Service.LoadEval, runs.PrepareEval, cached
// per run) by eval.Execute, so it has the seed a single-process eval gives
// it (and this worker's o.Retries: a run does not store its --retries);
// the episode is saved and its job completed in one transaction
// (store.DB.SaveEpisodesTx, river.JobCompleteTx); an episode already
// stored (a job delivered again) completes its job without a second row,
// and a job whose run was deleted is cancelled. The worker that stores a
// run's last episode finishes the run (runs.Service.FinishEval); should
// it die or fail before that, the run's finish job (FinishArgs, queued
// with its episodes) finishes it: that job waits, re-checking every
// o.FinishPoll, until every episode is stored. A failed episode is stored
// as eval stores it (terminal "failed").
//
// Errors: o's (naming the flag); Open's and store.OpenURL's; River's at
// start or stop. A job's errors are River's to retry (with backoff) and
// are logged, not returned.
func Work(ctx context.Context, db string, o WorkerOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	q, err := Open(ctx, db, o.Workers+4, o.Log)
	if err != nil {
		return err
	}
	defer q.Close()
	st, err := store.OpenURL(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	w := &episodeWorker{q: q, st: st, svc: runs.New(st), o: o, plans: map[string]*planEntry{}}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	river.AddWorker(workers, &finishWorker{w: w})
	poll := cmp.Or(o.PollInterval, DefaultPollInterval)
	client, err := river.NewClient(riverpgxv5.New(q.pool), &river.Config{
		Queues:               map[string]river.QueueConfig{Name: {MaxWorkers: o.Workers}},
		Workers:              workers,
		Schema:               q.schema,
		Logger:               q.log,
		JobTimeout:           o.jobTimeout(),
		RescueStuckJobsAfter: o.rescueAfter(),
		FetchPollInterval:    poll,
		FetchCooldown:        min(poll, river.FetchCooldownDefault),
		RetryPolicy:          retryPolicy{},
	})
	if err != nil {
		return fmt.Errorf("queue: worker: %w", err)
	}
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("queue: worker: %w", err)
	}
	if o.Ready != nil {
		o.Ready()
	}
	<-ctx.Done()
	if err := client.StopAndCancel(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("queue: worker stop: %w", err)
	}
	return nil
}

// Quick retries of a failed job (see retryPolicy): the first quickRetries
// retries wait 1 s, 2 s, then quickRetryMax each.
const (
	quickRetries  = 5
	quickRetryMax = 4 * time.Second
)

// retryPolicy schedules the next attempt of a job whose Work failed (a
// store or plan error, the job timeout, a rescued job of a killed
// worker): the first quickRetries retries after 1 s, 2 s, then
// quickRetryMax each; later ones on River's default schedule (errors^4
// seconds), counted from the quick ones on.
//
// Choice: River (v0.51.2, also github.com/riverqueue/river at fdf6cdf1)
// makes a job whose retry is due within its scheduler interval
// (internal/maintenance/job_scheduler.go: JobSchedulerIntervalDefault,
// 5 s) "available" at once (internal/jobexecutor/job_executor.go,
// reportError), and a worker's next fetch (FetchPollInterval) takes it
// when it is due. A later retry is left "retryable" until the scheduler,
// which only the elected leader runs, moves it; the default schedule puts
// the second retry 16 s out, the third 81 s, and after a PostgreSQL
// restart or a killed leader no leader exists until the old term's TTL
// (internal/leadership/elector.go: elect interval 5 s + 10 s padding)
// and the electors' backoff (1, 2, 4, ... 64 s after errors) have
// passed, so such retries are picked up up to a minute late. The quick
// retries cover the faults a worker meets (a store restart, a stuck
// episode) without any leader; the default schedule after them keeps a
// job that always fails from spending its 25 attempts in minutes.
type retryPolicy struct{}

// NextRetry implements river.ClientRetryPolicy.
func (retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	n := len(job.Errors) // the errors before this one
	if n < quickRetries {
		return time.Now().Add(min(time.Second<<n, quickRetryMax))
	}
	later := *job
	later.Errors = job.Errors[quickRetries:]
	return (&river.DefaultClientRetryPolicy{}).NextRetry(&later)
}

// runPlan is a run's resolved plan, as a worker caches it.
type runPlan struct {
	plan *runs.EvalPlan
	jobs map[episode.Key]eval.Job
}

// planEntry is a plan being built or built: done is closed once p or err
// is set.
type planEntry struct {
	done chan struct{}
	p    *runPlan
	err  error
}

// episodeWorker plays EpisodeArgs jobs.
type episodeWorker struct {
	river.WorkerDefaults[EpisodeArgs]
	q   *Conn
	st  *store.DB
	svc *runs.Service
	o   WorkerOptions

	mu    sync.Mutex // guards plans
	plans map[string]*planEntry
}

// planOf returns run id's plan, building it once: the jobs of that run
// wait for the build, other runs' jobs do not. A failed build is not
// kept (the next job tries again).
func (w *episodeWorker) planOf(ctx context.Context, id string) (*runPlan, error) {
	for {
		w.mu.Lock()
		e := w.plans[id]
		if e == nil {
			e = &planEntry{done: make(chan struct{})}
			w.plans[id] = e
			w.mu.Unlock()
			w.build(ctx, id, e)
			return e.p, e.err
		}
		w.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		// The building job's context ended (its timeout, a stop), not
		// this job's: build again.
		if ctx.Err() == nil && (errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) {
			continue
		}
		return e.p, e.err
	}
}

// build builds run id's plan into e and closes e.done, also when the
// build panics; a failed build leaves the cache.
func (w *episodeWorker) build(ctx context.Context, id string, e *planEntry) {
	defer func() {
		if e.p == nil {
			w.mu.Lock()
			if w.plans[id] == e {
				delete(w.plans, id)
			}
			w.mu.Unlock()
			if e.err == nil {
				e.err = fmt.Errorf("run %s: building its plan panicked", id)
			}
		}
		close(e.done)
	}()
	e.p, e.err = w.buildPlan(ctx, id)
}

// buildPlan resolves run id's stored spec into its plan.
func (w *episodeWorker) buildPlan(ctx context.Context, id string) (*runPlan, error) {
	spec, err := w.svc.LoadEval(ctx, id, w.o.Config)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %v", errNoPlan, err)
	}
	if err != nil {
		return nil, err
	}
	spec.Workers, spec.Retries = 1, w.o.Retries
	plan, err := runs.PrepareEval(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	p := &runPlan{plan: plan, jobs: map[episode.Key]eval.Job{}}
	for _, j := range eval.Plan(plan.Persuaders, plan.Persuadees, plan.Sets, spec.Rollouts, nil) {
		p.jobs[j.Key()] = j
	}
	return p, nil
}

// Work plays one job's episode, saves it and completes the job in one
// transaction, and finishes the run when its last episode is stored.
func (w *episodeWorker) Work(ctx context.Context, job *river.Job[EpisodeArgs]) error {
	a := job.Args
	p, err := w.planOf(ctx, a.Run)
	if errors.Is(err, errNoPlan) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	j, ok := p.jobs[a.key()]
	if !ok {
		return river.JobCancel(fmt.Errorf("%w: run %s has no episode %s", errNoPlan, a.Run, a.key()))
	}
	// While it plays, the run is stamped as live (runs.Service.Stale).
	defer w.svc.Stamp(a.Run)()
	if w.o.Log != nil {
		fmt.Fprintf(w.o.Log, "run %s: episode %s playing (attempt %d)\n", a.Run, a.key(), job.Attempt)
	}
	var ep *episode.Episode
	err = eval.Execute(ctx, []eval.Job{j}, eval.Options{
		RunID: a.Run, Seed: p.plan.Spec.Seed, Workers: 1, Retries: p.plan.Spec.Retries, Episode: p.plan.Episode,
		Sink: func(e *episode.Episode) error { ep = e; return nil },
	})
	if err != nil {
		return err
	}
	if ep == nil {
		return fmt.Errorf("run %s: episode %s not played", a.Run, a.key())
	}
	// A played episode is saved even when the worker is stopping.
	bg := context.WithoutCancel(ctx)
	dup := false
	err = pgx.BeginFunc(bg, w.q.pool, func(tx pgx.Tx) error {
		err := w.st.SaveEpisodesTx(bg, tx, a.Run, []*episode.Episode{ep})
		if dup = errors.Is(err, store.ErrDuplicate); err != nil && !dup {
			return err
		}
		_, err = river.JobCompleteTx[*riverpgxv5.Driver](bg, tx, job)
		return err
	})
	if errors.Is(err, store.ErrNotFound) { // the run was deleted meanwhile
		w.drop(a.Run)
		return river.JobCancel(fmt.Errorf("%w: run %s: %v", errNoPlan, a.Run, err))
	}
	if err != nil {
		return fmt.Errorf("run %s: save episode %s: %w", a.Run, a.key(), err)
	}
	if w.o.Log != nil {
		what := "stored"
		if dup {
			what = "already stored"
		}
		fmt.Fprintf(w.o.Log, "run %s: episode %s %s (%s)\n", a.Run, episode.KeyOf(ep), what, ep.Terminal)
	}
	// The job is complete whatever happens now: a failure to finish the
	// run is the run's finish job's to retry. Only a worker that sees no
	// other unfinished job of the run counts its stored episodes (its
	// completion committed with its episode, so of two last jobs the one
	// checking later sees the other completed).
	others, err := w.q.othersPending(bg, a.Run, job.ID)
	if err == nil && !others {
		_, err = w.finishIfDone(bg, a.Run, p)
	}
	if err != nil && w.o.Log != nil {
		fmt.Fprintf(w.o.Log, "run %s: %v (its finish job retries)\n", a.Run, err)
	}
	return nil
}

// drop forgets run id's plan (a finished or deleted run; a resume builds
// it again).
func (w *episodeWorker) drop(id string) {
	w.mu.Lock()
	delete(w.plans, id)
	w.mu.Unlock()
}

// finishIfDone finishes run id once every one of its episodes is stored
// and it is still running, and reports whether every episode is stored.
// Several workers may see that at once; finishing is idempotent (the same
// summary, the same status).
func (w *episodeWorker) finishIfDone(ctx context.Context, id string, p *runPlan) (bool, error) {
	pcs, err := w.st.TerminalCounts(ctx, id)
	if err != nil {
		return false, fmt.Errorf("run %s: progress: %w", id, err)
	}
	n := store.Stored(pcs)
	if n < p.plan.Total() {
		return false, nil
	}
	run, err := w.st.GetRun(ctx, id)
	if err != nil {
		return true, err
	}
	if run.Status != store.StatusRunning {
		w.drop(id)
		return true, nil
	}
	_, err = w.svc.FinishEval(ctx, p.plan, id)
	if errors.Is(err, runs.ErrAllFailed) {
		err = nil // the run is marked failed; the job itself succeeded
	}
	if err != nil {
		return true, fmt.Errorf("run %s: finish: %w", id, err)
	}
	w.drop(id)
	if w.o.Log != nil {
		fmt.Fprintf(w.o.Log, "run %s: all %d episodes stored, run finished\n", id, n)
	}
	return true, nil
}

// finishWorker plays FinishArgs jobs: it finishes a run whose episodes
// are all stored, or snoozes (River's JobSnooze, which spends no
// attempt) until they are. A failed check or finish (a store error, the
// worker stopping) is logged and snoozed as well, so the job neither
// backs off for hours nor runs out of attempts while the run waits;
// only a run that no longer exists cancels it.
type finishWorker struct {
	river.WorkerDefaults[FinishArgs]
	w *episodeWorker
}

func (f *finishWorker) Work(ctx context.Context, job *river.Job[FinishArgs]) error {
	w, id := f.w, job.Args.Run
	snooze := river.JobSnooze(cmp.Or(w.o.FinishPoll, DefaultFinishPoll))
	run, err := w.st.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("%w: %v", errNoPlan, err))
	}
	if err == nil && run.Status != store.StatusRunning {
		return nil // finished by the worker that stored its last episode
	}
	var p *runPlan
	if err == nil {
		p, err = w.planOf(ctx, id)
	}
	if errors.Is(err, errNoPlan) {
		return river.JobCancel(err)
	}
	done := false
	if err == nil {
		done, err = w.finishIfDone(ctx, id, p)
	}
	if err != nil {
		if w.o.Log != nil {
			fmt.Fprintf(w.o.Log, "run %s: finish: %v (checked again in %s)\n", id, err, cmp.Or(w.o.FinishPoll, DefaultFinishPoll))
		}
		return snooze
	}
	if !done {
		return snooze
	}
	return nil
}
