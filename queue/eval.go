package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/store"
)

// EnqueueEval is `persuarena eval --enqueue`: it creates (or, with
// o.RunID, resumes) the eval run of spec in the PostgreSQL run database
// db exactly as runs.Service.RunEval does (the same validation, the same
// backend preflight, o.RetryFailed removing failed episodes first) and
// inserts one job per episode key not yet stored (Conn.Enqueue), leaving
// the run running for Work's workers. It returns RunEval's result
// (RunID; Missing, the missing episodes; Stored, those already stored)
// and how many jobs it inserted (keys already queued are not inserted
// twice). A run with nothing missing is summarised and finished as eval
// does, its result carrying the summaries.
//
// Errors: "--enqueue needs --db postgres://..." for a SQLite database;
// RunEval's; Open's and Enqueue's (the run then exists, and a resume
// enqueues the rest).
func EnqueueEval(ctx context.Context, svc *runs.Service, db string, spec runs.EvalSpec, o runs.EvalOptions) (*runs.EvalResult, int, error) {
	if !store.IsURL(db) {
		return nil, 0, fmt.Errorf("--enqueue needs --db postgres://... (the job queue lives in a PostgreSQL run database), got %q", db)
	}
	n := 0
	o.Enqueue = func(ctx context.Context, runID string, jobs []eval.Job) error {
		q, err := Open(ctx, db, 4, o.Log)
		if err != nil {
			return err
		}
		defer q.Close()
		n, err = q.Enqueue(ctx, runID, jobs)
		return err
	}
	res, err := svc.RunEval(ctx, spec, o)
	return res, n, err
}

// WaitPoll is how often Wait reads a run's progress.
// Choice: one second, a cheap aggregate query (store TerminalCounts).
const WaitPoll = time.Second

// Wait follows eval run id in st until it is no longer running (its last
// episode stored and the run finished by a worker, or its status set
// otherwise), calling progress (may be nil) with the number of stored
// episodes whenever it changes, and returns the run. Errors: the
// store's; ctx.Err() when cancelled (the run goes on).
func Wait(ctx context.Context, st store.Reader, id string, progress func(stored int)) (store.Run, error) {
	last := -1
	for {
		// The status first: a run found finished has its final count.
		run, err := st.GetRun(ctx, id)
		if err != nil {
			return run, err
		}
		pcs, err := st.TerminalCounts(ctx, id)
		if err != nil {
			return run, err
		}
		n := store.Stored(pcs)
		if n != last && progress != nil {
			progress(n)
		}
		last = n
		if run.Status != store.StatusRunning {
			return run, nil
		}
		t := time.NewTimer(WaitPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return run, ctx.Err()
		case <-t.C:
		}
	}
}
