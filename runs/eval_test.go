package runs

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/store"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// The outcome table (accumulated as a fresh run stores its episodes,
// streamed from the store on resume) equals the one computed from whole
// episodes, and the run is done with every episode stored.
func TestSummarizeStoredMatchesEpisodes(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	spec := EvalSpec{Grid: runplan.Grid{Persuaders: []string{"script", "pushy"}, Persuadees: []string{"sim"}, Scenarios: []string{"p4g", "arena"}, Split: "heldout", Tmax: 10, Rollouts: 1, Seed: 5}, Basis: probe.Default, Workers: 2}
	plan, err := PrepareEval(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	svc := New(db)
	res, err := svc.Eval(ctx, plan, EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := db.GetRun(ctx, res.RunID); err != nil || run.Status != store.StatusDone || run.Kind != "eval" || res.Missing != 480 {
		t.Fatalf("run %s %s %v, planned %d", run.Kind, run.Status, err, res.Missing)
	}
	eps, err := db.Episodes(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	want := summarize(eps, plan)
	var a, b bytes.Buffer
	if err := eval.WriteCSV(&a, want); err != nil {
		t.Fatal(err)
	}
	if err := eval.WriteCSV(&b, res.Summaries); err != nil {
		t.Fatal(err)
	}
	if len(want) != 4 || want[0].N != 120 || a.String() != b.String() {
		t.Fatalf("streamed table differs:\n%s\nvs\n%s", b.String(), a.String())
	}
	// The fresh run's table was accumulated as episodes were stored; it
	// is, to the last bit, the one streamed back from the store.
	stored, err := svc.summarizeStored(ctx, res.RunID, plan)
	if err != nil {
		t.Fatal(err)
	}
	a.Reset()
	b.Reset()
	if err := eval.WriteJSON(&a, stored); err != nil {
		t.Fatal(err)
	}
	if err := eval.WriteJSON(&b, res.Summaries); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("accumulated table differs from the stored one:\n%s\nvs\n%s", b.String(), a.String())
	}
	// A resume plays nothing more, and its table (streamed) is the same.
	res2, err := svc.Eval(ctx, plan, EvalOptions{RunID: res.RunID})
	if err != nil || res2.Missing != 0 || res2.Stored != 480 {
		t.Fatalf("resume: %+v %v", res2, err)
	}
	b.Reset()
	if err := eval.WriteJSON(&b, res2.Summaries); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("resumed table differs:\n%s\nvs\n%s", b.String(), a.String())
	}
}

// Validate rejects the numeric flags a user can get wrong, before any run
// exists.
func TestValidate(t *testing.T) {
	ok := EvalSpec{Grid: runplan.Grid{Tmax: 10, Rollouts: 1}, Workers: 1}
	for _, tc := range []struct {
		mut  func(*EvalSpec)
		want string
	}{
		{func(s *EvalSpec) { s.Tmax = -3 }, "--tmax must be in 1..1000, got -3"},
		{func(s *EvalSpec) { s.Tmax = 0 }, "--tmax must be in 1..1000, got 0"},
		{func(s *EvalSpec) { s.Tmax = 1 << 62 }, "--tmax must be in 1..1000, got 4611686018427387904"},
		{func(s *EvalSpec) { s.Workers = 0 }, "--workers must be in 1..1024, got 0"},
		{func(s *EvalSpec) { s.Workers = 1 << 40 }, "--workers must be in 1..1024"},
		{func(s *EvalSpec) { s.Retries = -1 }, "--retries must be in 0..100"},
		{func(s *EvalSpec) { s.MASPT = 9223372036854775807 }, "--masp-t must be in 0..1000"},
		{func(s *EvalSpec) { s.JudgeSamples = -1 }, "--judge-samples must be in 0..100"},
		{func(s *EvalSpec) { s.Metrics = "x" }, `unknown --metrics "x"`},
	} {
		s := ok
		tc.mut(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", s, err, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Error(err)
	}
}

// Finish maps a job's error to the run status; Resume reads the config back.
func TestStatusAndFinish(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	svc := New(db)
	id, err := svc.Create(ctx, "masp", 3, map[string]int{"t": 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, store.StatusDone}, {context.Canceled, store.StatusInterrupted}, {ErrAllFailed, store.StatusFailed},
	} {
		if got := svc.Finish(ctx, id, tc.err); !errors.Is(got, tc.err) && tc.err != nil {
			t.Errorf("Finish(%v) = %v", tc.err, got)
		}
		if run, _ := db.GetRun(ctx, id); run.Status != tc.want {
			t.Errorf("after %v: status %s, want %s", tc.err, run.Status, tc.want)
		}
	}
	var cfg map[string]int
	if run, err := svc.Resume(ctx, id, &cfg); err != nil || cfg["t"] != 8 || run.Kind != "masp" {
		t.Errorf("resume: %+v %v %v", run, cfg, err)
	}
}

// slowSaver holds every batched write until release is closed.
type slowSaver struct {
	store.Store
	release chan struct{}
}

func (s slowSaver) SaveEpisodes(ctx context.Context, runID string, eps []*episode.Episode) error {
	<-s.release
	return s.Store.SaveEpisodes(ctx, runID, eps)
}

// Eval's progress counts episodes as they finish, not as the store's
// batches are written: with every write held back, it still reaches the
// total (before, it stayed at 0 until a batch was written), and every
// episode is stored once the writes go through.
func TestProgressCountsFinishedEpisodes(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	spec := EvalSpec{Grid: runplan.Grid{Persuaders: []string{"script"}, Persuadees: []string{"sim"}, Scenarios: []string{"arena"}, Split: "heldout", Tmax: 4, Rollouts: 1, Seed: 5}, Basis: probe.Default, Workers: 2}
	plan, err := PrepareEval(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	st := slowSaver{db, make(chan struct{})}
	var total, n atomic.Int64
	reached := make(chan struct{})
	o := EvalOptions{Progress: func(all int) func(int) {
		total.Store(int64(all))
		return func(k int) {
			if n.Add(int64(k)) == total.Load() {
				close(reached)
			}
		}
	}}
	done := make(chan error, 1)
	var res *EvalResult
	go func() {
		var err error
		res, err = New(st).Eval(ctx, plan, o)
		done <- err
	}()
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatalf("progress %d of %d with the writes held back", n.Load(), total.Load())
	}
	close(st.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	eps, err := db.Episodes(ctx, res.RunID)
	if err != nil || len(eps) != 120 || n.Load() != 120 {
		t.Fatalf("%d stored, %v; progress %d (want 120)", len(eps), err, n.Load())
	}
}
