package queue

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/store/storetest"
)

// syncBuffer is a bytes.Buffer safe for the worker's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// eval --enqueue queues one job per episode, a repeated enqueue inserts
// none; after the queue is lost, a resume re-enqueues exactly the keys
// not stored; an episode stored while its job is queued (a duplicate
// delivery) completes the job without a second row; the worker finishes
// the run, whose episodes and table equal a single-process eval's.
func TestEnqueueResumeDuplicate(t *testing.T) {
	ctx := context.Background()
	db := storetest.PostgresURL(t)
	cfg, _ := fleet(t, 0)
	spec := llmSpec(cfg, scenarioFile(t, 6), 2)
	const n = 12
	refEps, refTable, refList := reference(t, spec)

	if _, _, err := EnqueueEval(ctx, runs.Open("runs.db"), "runs.db", spec, runs.EvalOptions{}); err == nil || !strings.Contains(err.Error(), "--enqueue needs --db postgres://") {
		t.Fatalf("SQLite --enqueue: %v", err)
	}
	svc := runs.Open(db)
	defer svc.Close()
	res, queued, err := EnqueueEval(ctx, svc, db, spec, runs.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := res.RunID
	if queued != n || res.Missing != n || res.Stored != 0 || res.Summaries != nil {
		t.Fatalf("enqueue: %d queued, %d planned, %d stored, want %d, %d, 0 and no table", queued, res.Missing, res.Stored, n, n)
	}
	q, err := Open(ctx, db, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	jobs := planJobs(t, spec)
	if again, err := q.Enqueue(ctx, id, jobs); err != nil || again != 0 {
		t.Fatalf("enqueue again: %d inserted, %v; want 0", again, err)
	}
	if p, err := q.Pending(ctx, id); err != nil || p != n {
		t.Fatalf("pending %d, %v; want %d", p, err, n)
	}

	// The queue is lost; three episodes are stored (as a worker would).
	if _, err := q.pool.Exec(ctx, `DELETE FROM river_job`); err != nil {
		t.Fatal(err)
	}
	for _, ep := range refList[:3] {
		ep.RunID = id
		if err := svc.Store.SaveEpisode(ctx, id, ep); err != nil {
			t.Fatal(err)
		}
	}
	res, queued, err = EnqueueEval(ctx, svc, db, spec, runs.EvalOptions{RunID: id})
	if err != nil || queued != n-3 || res.Missing != n-3 || res.Stored != 3 {
		t.Fatalf("resume: %d queued, %d planned, %d stored, %v; want %d, %d, 3", queued, res.Missing, res.Stored, err, n-3, n-3)
	}
	if _, queued, err = EnqueueEval(ctx, svc, db, spec, runs.EvalOptions{RunID: id}); err != nil || queued != 0 {
		t.Fatalf("second resume: %d queued, %v; want 0", queued, err)
	}
	// A duplicate delivery: the episode of a queued job is stored already.
	dup := refList[3]
	dup.RunID = id
	if err := svc.Store.SaveEpisode(ctx, id, dup); err != nil {
		t.Fatal(err)
	}
	var show bytes.Buffer
	if err := svc.Show(ctx, id, &show); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(show.String(), "running, 4/12 episodes stored") {
		t.Fatalf("runs show of the queued run:\n%s", show.String())
	}

	// A job of a run that does not exist is cancelled, not retried.
	if k, err := q.Enqueue(ctx, "no-such-run", jobs[:1]); err != nil || k != 1 {
		t.Fatalf("enqueue for a missing run: %d, %v", k, err)
	}
	log := &syncBuffer{}
	stop := workIn(db, WorkerOptions{Workers: 3, PollInterval: 20 * time.Millisecond, Log: log})
	defer stop()
	var seen []int // Wait's progress: stored counts, rising to n
	run, err := Wait(ctx, svc.Store, id, func(k int) { seen = append(seen, k) })
	var state string // the missing run's job, once the worker has taken it
	for deadline := time.Now().Add(time.Minute); err == nil && state != "cancelled" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if qerr := q.pool.QueryRow(ctx, `SELECT state FROM river_job WHERE args->>'run' = 'no-such-run'`).Scan(&state); qerr != nil {
			t.Fatal(qerr)
		}
	}
	if werr := stop(); werr != nil || err != nil {
		t.Fatalf("worker: %v; wait: %v\n%s", werr, err, log.String())
	}
	if run.Status != store.StatusDone {
		t.Fatalf("run %s, want done\n%s", run.Status, log.String())
	}
	if state != "cancelled" {
		t.Errorf("job of a missing run: %q, want cancelled", state)
	}
	if len(seen) == 0 || seen[0] < 4 || seen[len(seen)-1] != n || !slices.IsSorted(seen) {
		t.Errorf("Wait's progress %v, want rising from >= 4 to %d", seen, n)
	}
	if got := strings.Count(log.String(), " already stored "); got != 1 {
		t.Errorf("%d duplicate deliveries logged, want 1:\n%s", got, log.String())
	}
	matchesReference(t, q, svc, res.Plan, id, refEps, refTable)
}

// planJobs lists spec's jobs as eval plans them.
func planJobs(t testing.TB, spec runs.EvalSpec) []eval.Job {
	t.Helper()
	plan, err := runs.PrepareEval(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return eval.Plan(plan.Persuaders, plan.Persuadees, plan.Sets, spec.Rollouts, nil)
}

// Work refuses bad options, naming the flag.
func TestWorkerOptions(t *testing.T) {
	for _, c := range []struct {
		o    WorkerOptions
		want string
	}{
		{WorkerOptions{Workers: 0}, "--workers must be >= 1"},
		{WorkerOptions{Workers: 1, Retries: -1}, "--retries must be >= 0"},
		{WorkerOptions{Workers: 1, JobTimeout: time.Hour, RescueAfter: time.Minute}, "--rescue-after (1m0s) must exceed --job-timeout (1h0m0s)"},
		{WorkerOptions{Workers: 1, JobTimeout: 2 * time.Hour, RescueAfter: time.Hour}, "--rescue-after (1h0m0s) must exceed --job-timeout (2h0m0s)"},
	} {
		err := Work(context.Background(), "postgres://nowhere.invalid/db", c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	if err := Work(context.Background(), "runs.db", WorkerOptions{Workers: 1}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("SQLite worker: %v, want ErrInvalid", err)
	}
}
