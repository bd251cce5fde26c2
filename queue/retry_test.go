package queue

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/store/storetest"
)

// The retry schedule: 1 s, 2 s, then 4 s for the first five retries
// (due within River's 5 s scheduler interval, so River makes them
// available at once), then River's default errors^4 s counted from the
// sixth (1 s, 16 s, ...).
func TestRetryPolicy(t *testing.T) {
	for _, tc := range []struct {
		errors   int
		min, max time.Duration
	}{
		{0, time.Second, time.Second}, {1, 2 * time.Second, 2 * time.Second}, {2, 4 * time.Second, 4 * time.Second},
		{4, 4 * time.Second, 4 * time.Second},
		{5, 900 * time.Millisecond, 1100 * time.Millisecond},    // River's first: 1 s ± 10 %
		{6, 14400 * time.Millisecond, 17600 * time.Millisecond}, // River's second: 16 s ± 10 %
	} {
		job := &rivertype.JobRow{Errors: make([]rivertype.AttemptError, tc.errors)}
		t0 := time.Now()
		d := retryPolicy{}.NextRetry(job).Sub(t0)
		if d < tc.min || d > tc.max+50*time.Millisecond {
			t.Errorf("after %d errors: next retry in %v, want [%v, %v]", tc.errors, d, tc.min, tc.max)
		}
	}
}

// A job whose first three attempts fail (its run's config file is not
// there yet) is retried promptly, each attempt picked up well within
// 15 s of the previous failure: River's default schedule waits 16 s
// before the second retry and 81 s before the third (and leaves them to
// the leader's scheduler). The bound is on River's stored timestamps.
func TestRetriedJobPickedUpPromptly(t *testing.T) {
	cidata.Slow(t, "waits for a retried job")
	ctx := context.Background()
	db := storetest.PostgresURL(t)
	cfg, _ := fleet(t, 0)
	spec := llmSpec(cfg, scenarioFile(t, 1), 1)
	svc, res, q := enqueued(t, db, spec, 1)
	id := res.RunID
	later := filepath.Join(t.TempDir(), "persuarena.yaml") // written after three failures
	stop := workIn(db, WorkerOptions{Workers: 1, Config: later})
	defer stop()

	nerr := func() int {
		var n int
		if err := q.pool.QueryRow(ctx, `SELECT coalesce(array_length(errors, 1), 0) FROM river_job WHERE kind = $1 AND args->>'run' = $2`,
			EpisodeArgs{}.Kind(), id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(time.Minute)
	for nerr() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the episode's job failed %d times in a minute, want 3", nerr())
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(later, b, 0o600); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if run, err := Wait(wctx, svc.Store, id, nil); err != nil || run.Status != store.StatusDone {
		t.Fatalf("run %s, %v", run.Status, err)
	}
	var (
		attempt   int
		attempted time.Time
		raw       [][]byte
	)
	if err := q.pool.QueryRow(ctx, `SELECT attempt, attempted_at, errors::text[] FROM river_job WHERE kind = $1 AND args->>'run' = $2`,
		EpisodeArgs{}.Kind(), id).Scan(&attempt, &attempted, &raw); err != nil {
		t.Fatal(err)
	}
	var at []time.Time // each failure's time, then the last attempt's start
	for _, r := range raw {
		var e struct{ At time.Time }
		if err := json.Unmarshal(r, &e); err != nil {
			t.Fatal(err)
		}
		at = append(at, e.At)
	}
	at = append(at, attempted)
	if attempt != len(raw)+1 || len(raw) < 3 {
		t.Fatalf("attempt %d after %d errors, want at least 3 errors and one more attempt", attempt, len(raw))
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap > 15*time.Second {
			t.Errorf("attempt %d started %v after attempt %d failed, want < 15 s (times %v)", i+1, gap, i, at)
		}
	}
	t.Logf("failures and last attempt at %v", at)
}
