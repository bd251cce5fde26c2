package queue

import (
	"context"
	"testing"
	"time"

	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/store/storetest"
)

// jobState is the state of run id's job of kind (the newest one).
func jobState(t testing.TB, q *Conn, kind, id string) string {
	t.Helper()
	var state string
	if err := q.pool.QueryRow(context.Background(), `SELECT state FROM river_job WHERE kind = $1 AND args->>'run' = $2
		ORDER BY id DESC LIMIT 1`, kind, id).Scan(&state); err != nil {
		t.Fatalf("%s job of run %s: %v", kind, id, err)
	}
	return state
}

// A run whose workers stored every episode but died before finishing it
// is finished by its finish job: while an episode is missing the job
// waits (snoozed: no attempt spent), once all are stored it
// finishes the run with a single-process eval's table.
func TestFinishJob(t *testing.T) {
	ctx := context.Background()
	db := storetest.PostgresURL(t)
	cfg, _ := fleet(t, 0)
	spec := llmSpec(cfg, scenarioFile(t, 2), 1)
	refEps, refTable, refList := reference(t, spec)
	svc, res, q := enqueued(t, db, spec, 2)
	id := res.RunID
	if s := jobState(t, q, FinishArgs{}.Kind(), id); s != "available" {
		t.Fatalf("finish job %q, want available", s)
	}
	// The episodes' jobs are gone (their workers completed them, then
	// died); one episode is stored.
	if _, err := q.pool.Exec(ctx, `DELETE FROM river_job WHERE kind = $1`, EpisodeArgs{}.Kind()); err != nil {
		t.Fatal(err)
	}
	save := func(i int) {
		ep := refList[i]
		ep.RunID = id
		if err := svc.Store.SaveEpisode(ctx, id, ep); err != nil {
			t.Fatal(err)
		}
	}
	save(0)
	// A finish that cannot summarise (here: its worker stopping) leaves
	// the run running for the finish job to retry.
	cctx, cancelNow := context.WithCancel(ctx)
	cancelNow()
	if _, err := svc.FinishEval(cctx, res.Plan, id); err == nil {
		t.Fatal("FinishEval on a cancelled context: no error")
	}
	if run, err := svc.Store.GetRun(ctx, id); err != nil || run.Status != store.StatusRunning {
		t.Fatalf("after a failed finish: %s, %v; want running", run.Status, err)
	}

	log := &syncBuffer{}
	stop := workIn(db, WorkerOptions{Workers: 2, PollInterval: 20 * time.Millisecond, FinishPoll: 100 * time.Millisecond, Log: log})
	defer stop()
	snoozes := func() (n, attempt int) {
		t.Helper()
		if err := q.pool.QueryRow(ctx, `SELECT coalesce((metadata->>'snoozes')::int, 0), attempt FROM river_job
			WHERE kind = $1 AND args->>'run' = $2`, FinishArgs{}.Kind(), id).Scan(&n, &attempt); err != nil {
			t.Fatal(err)
		}
		return n, attempt
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if n, _ := snoozes(); n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("finish job not snoozed 3 times\n%s", log.String())
		}
	}
	if run, err := svc.Store.GetRun(ctx, id); err != nil || run.Status != store.StatusRunning {
		t.Fatalf("run with an episode missing: %s, %v; want running", run.Status, err)
	}
	save(1)
	wctx, cancel := context.WithTimeout(ctx, time.Minute) // a broken finish job fails, not hangs
	defer cancel()
	run, err := Wait(wctx, svc.Store, id, nil)
	if werr := stop(); werr != nil || err != nil || run.Status != store.StatusDone {
		t.Fatalf("run %s; worker: %v; wait: %v\n%s", run.Status, werr, err, log.String())
	}
	if s := jobState(t, q, FinishArgs{}.Kind(), id); s != "completed" {
		t.Errorf("finish job %q, want completed", s)
	} else if n, attempt := snoozes(); n < 3 || attempt != 1 {
		t.Errorf("finish job: %d snoozes, attempt %d; want >= 3 and 1 (waiting spends no attempt)", n, attempt)
	}
	matchesReference(t, q, svc, res.Plan, id, refEps, refTable)
}

// The jobs of a run deleted while a worker plays it are cancelled, not
// retried, and store nothing.
func TestDeletedRunCancelsJobs(t *testing.T) {
	ctx := context.Background()
	db := storetest.PostgresURL(t)
	cfg, _ := fleet(t, 30*time.Millisecond)
	spec := llmSpec(cfg, scenarioFile(t, 4), 2)
	svc, res, q := enqueued(t, db, spec, 8)
	id := res.RunID
	log := &syncBuffer{}
	stop := workIn(db, WorkerOptions{Workers: 1, PollInterval: 20 * time.Millisecond, Log: log})
	defer stop()
	for deadline := time.Now().Add(30 * time.Second); stored(t, svc.Store, id) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no episode stored\n%s", log.String())
		}
	}
	if err := svc.Store.DeleteRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	count := func(states string) int {
		var n int
		if err := q.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE args->>'run' = $1 AND state::text = ANY(string_to_array($2, ','))`,
			id, states).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for deadline := time.Now().Add(time.Minute); count("available,running,retryable,scheduled,pending") > 0; time.Sleep(20 * time.Millisecond) {
		if n := count("retryable"); n > 0 || time.Now().After(deadline) {
			t.Fatalf("%d jobs retryable, %d unfinished\n%s", n, count("available,running,retryable,scheduled,pending"), log.String())
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := count("cancelled"); n < 1 {
		t.Errorf("%d jobs cancelled, want the deleted run's remaining ones", n)
	}
	if _, err := svc.Store.GetRun(ctx, id); err == nil {
		t.Errorf("the deleted run is back")
	}
}
