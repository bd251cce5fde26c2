// Package queue distributes an eval run's episodes over worker processes
// on any number of machines through River (github.com/riverqueue/river),
// a job queue kept in the run database itself when that is PostgreSQL
// (store.OpenURL). `persuarena eval --enqueue` creates the run as eval
// does and inserts one unique job per episode key still missing (Enqueue,
// EnqueueEval); `persuarena worker` processes (Work) play the jobs of any
// run, each from the run's stored spec with the seed a single-process
// eval gives it, and save the episode and complete its job in one
// transaction, so an episode is stored exactly once however often River
// delivers its job (a worker killed mid-episode, a rescued stuck job). The
// worker storing a run's last episode finishes the run as eval would
// (runs.Service.FinishEval), or, when it dies first, the run's finish job
// (FinishArgs) does. docs/scale.md describes the architecture.
//
// River's own tables live beside the run store's, created and upgraded by
// River's migrator (rivermigrate) when the queue is opened; the run
// store's schema history is not involved.
package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/store"
)

// Name is the River queue the episode jobs go to, so that other River
// users of the same database keep their queues.
const Name = "persuarena_episodes"

// EpisodeArgs is one episode job: the episode key (run, persuader,
// persuadee, scenario id, rollout from 0) of an eval run. Jobs are unique
// by these arguments while queued or running, so enqueueing a key twice
// inserts one job.
type EpisodeArgs struct {
	Run        string `json:"run"`
	Persuader  string `json:"persuader"`
	Persuadee  string `json:"persuadee"`
	ScenarioID string `json:"scenario_id"`
	Rollout    int    `json:"rollout"`
}

// Kind names the job kind in River's tables.
func (EpisodeArgs) Kind() string { return "persuarena_episode" }

// InsertOpts puts the job on queue Name, unique by its arguments among
// jobs not yet finished.
// Choice: a completed job does not block a new one for the same key, so
// `eval --resume RUN --retry-failed --enqueue` can replay a failed
// episode whose first job completed; a completed job's episode is always
// stored (they commit together), so a resume never enqueues it again.
func (EpisodeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Name, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
		rivertype.JobStateRunning, rivertype.JobStateScheduled}}}
}

// FinishArgs is a run's finish job: it finishes eval run Run
// (runs.Service.FinishEval) once every episode of it is stored, waiting
// until then. Enqueue queues one with a run's episode jobs, unique by run
// among jobs not yet finished. The worker that stores the last episode
// finishes the run itself; this job is what finishes it when that worker
// dies between the two, or fails to finish it.
type FinishArgs struct {
	Run string `json:"run"`
}

// Kind names the job kind in River's tables.
func (FinishArgs) Kind() string { return "persuarena_finish" }

// InsertOpts puts the job on queue Name, unique by run among jobs not
// yet finished (a waiting finish job is "scheduled").
func (FinishArgs) InsertOpts() river.InsertOpts { return EpisodeArgs{}.InsertOpts() }

// key returns the args' episode key.
func (a EpisodeArgs) key() episode.Key {
	return episode.Key{Persuader: a.Persuader, Persuadee: a.Persuadee, ScenarioID: a.ScenarioID, Rollout: a.Rollout}
}

// Conn is an open queue: a pgx pool on the run database, River's tables
// migrated to the newest version this binary knows.
type Conn struct {
	pool *pgxpool.Pool
	// schema is the connection's current schema (its search_path), where
	// River's tables are; River's notifications are scoped to it.
	schema string
	log    *slog.Logger
	// inserter is an insert-only River client.
	inserter *river.Client[pgx.Tx]
}

// Open connects to the PostgreSQL database at url (a postgres:// URL, as
// --db takes it) with at most maxConns connections (< 1: pgx's default)
// and migrates River's tables there (rivermigrate; concurrent openers
// migrate one at a time). log receives River's warnings (nil: none).
// Errors: store.ErrInvalid for a URL that is not postgres:// or does not
// parse; otherwise the wrapped connection or migration error, naming the
// URL without its password.
func Open(ctx context.Context, url string, maxConns int, log io.Writer) (*Conn, error) {
	shown := store.Shown(url)
	if !store.IsURL(url) {
		return nil, fmt.Errorf("queue: %w: the job queue needs a PostgreSQL run database (--db postgres://...), not %q", store.ErrInvalid, url)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("queue: open %s: %w: %v", shown, store.ErrInvalid, err)
	}
	if maxConns > 0 {
		cfg.MaxConns = int32(max(maxConns, 2)) // the migration lock holds one
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("queue: open %s: %w", shown, err)
	}
	c := &Conn{pool: pool, log: logger(log)}
	if err := c.setup(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue: open %s: %w", shown, err)
	}
	return c, nil
}

// logger returns a slog logger of River's warnings and errors to w.
func logger(w io.Writer) *slog.Logger {
	if w == nil {
		w = io.Discard
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// migrateLock is the advisory lock key ("RIVR") under which River's
// migrations run, so concurrent openers migrate one at a time.
const migrateLock = 1380538962

func (c *Conn) setup(ctx context.Context) error {
	if err := c.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&c.schema); err != nil {
		return err
	}
	if err := checkStoreSchema(ctx, c.pool); err != nil {
		return err
	}
	driver := riverpgxv5.New(c.pool)
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: c.schema, Logger: c.log})
	if err != nil {
		return err
	}
	// River's migrations each run in their own transaction (some cannot
	// share one), so the lock is a session lock held on one connection
	// while they run on others.
	lock, err := c.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer lock.Release()
	if _, err := lock.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if _, uerr := lock.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock); err == nil {
		err = uerr
	}
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	c.inserter, err = river.NewClient(driver, &river.Config{Schema: c.schema, Logger: c.log})
	return err
}

// Close closes the pool.
func (c *Conn) Close() { c.pool.Close() }

// insertBatch is how many jobs one InsertMany call inserts.
// Choice: 1000 jobs, a few hundred kilobytes of arguments per statement.
const insertBatch = 1000

// Enqueue inserts one job per eval job of run runID (eval.Plan's order)
// and returns how many it inserted; keys whose job is already queued or
// running are skipped (EpisodeArgs.InsertOpts), so a repeated Enqueue of
// the same keys inserts nothing, and a key listed twice gets one job.
// Then it queues the run's finish job (FinishArgs), unless one is
// waiting already; it is not counted. Errors: River's, wrapped; jobs of
// batches inserted before the error stay queued.
func (c *Conn) Enqueue(ctx context.Context, runID string, jobs []eval.Job) (int, error) {
	n := 0
	seen := make(map[episode.Key]bool, len(jobs))
	for lo := 0; lo < len(jobs); lo += insertBatch {
		var params []river.InsertManyParams
		for _, j := range jobs[lo:min(lo+insertBatch, len(jobs))] {
			k := j.Key()
			if seen[k] { // a set listed twice: one job per key
				continue
			}
			seen[k] = true
			params = append(params, river.InsertManyParams{Args: EpisodeArgs{Run: runID, Persuader: k.Persuader,
				Persuadee: k.Persuadee, ScenarioID: k.ScenarioID, Rollout: k.Rollout}})
		}
		if len(params) == 0 {
			continue
		}
		res, err := c.inserter.InsertMany(ctx, params)
		if err != nil {
			return n, fmt.Errorf("queue: enqueue run %s: %w", runID, err)
		}
		for _, r := range res {
			if !r.UniqueSkippedAsDuplicate {
				n++
			}
		}
	}
	if _, err := c.inserter.Insert(ctx, FinishArgs{Run: runID}, nil); err != nil {
		return n, fmt.Errorf("queue: enqueue run %s: finish job: %w", runID, err)
	}
	return n, nil
}

// unfinishedJobs selects the episode jobs of a run ($2) not finished
// (queued, retrying or running: EpisodeArgs' unique states), other than
// job $3; the args containment uses River's GIN index on args.
const unfinishedJobs = `FROM %s WHERE kind = $1 AND args @> jsonb_build_object('run', $2::text) AND id <> $3
	AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')`

// Pending returns how many episode jobs of run runID are not finished
// (queued, retrying or running). Errors: the query's, wrapped.
func (c *Conn) Pending(ctx context.Context, runID string) (int, error) {
	var n int
	err := c.pool.QueryRow(ctx, `SELECT count(*) `+c.jobs(unfinishedJobs), EpisodeArgs{}.Kind(), runID, 0).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("queue: pending jobs of run %s: %w", runID, err)
	}
	return n, nil
}

// othersPending reports whether run runID has an unfinished episode job
// other than job: one indexed probe, however large the run, so a worker
// can ask after every episode whether it may have stored the last one.
func (c *Conn) othersPending(ctx context.Context, runID string, job int64) (bool, error) {
	var some bool
	err := c.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 `+c.jobs(unfinishedJobs)+`)`, EpisodeArgs{}.Kind(), runID, job).Scan(&some)
	if err != nil {
		return false, fmt.Errorf("queue: pending jobs of run %s: %w", runID, err)
	}
	return some, nil
}

// jobs fills River's job table, schema-qualified, into the query q.
func (c *Conn) jobs(q string) string {
	return fmt.Sprintf(q, pgx.Identifier{c.schema, "river_job"}.Sanitize())
}

// errNoPlan marks a job whose run or episode key its worker cannot
// resolve (the run was deleted, or is not an eval run): it is cancelled,
// not retried.
var errNoPlan = errors.New("no such episode")
