package store

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
)

func TestEpisodeWriterBatchesAndFlushes(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	var saved atomic.Int64
	var ahead atomic.Bool
	w := db.NewEpisodeWriter("r1", 3, time.Hour, func(n int) {
		// What is reported saved is committed already.
		if k, err := db.DoneKeys(ctx, "r1"); err != nil || int64(len(k)) < saved.Load()+int64(n) {
			ahead.Store(true)
		}
		saved.Add(int64(n))
	})
	for i := range 7 {
		if err := w.Add(ctx, sampleEpisode("r1", "s", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Two full batches are handed to the writer goroutine and stored;
	// the seventh waits for the hour.
	waitStored(t, db, 6)
	if k, _ := db.DoneKeys(ctx, "r1"); len(k) != 6 || saved.Load() != 6 {
		t.Fatalf("stored %d, reported %d; want 6", len(k), saved.Load())
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if k, _ := db.DoneKeys(ctx, "r1"); len(k) != 7 || saved.Load() != 7 {
		t.Fatalf("after Close: stored %d, reported %d; want 7", len(k), saved.Load())
	}
	if ahead.Load() {
		t.Error("onSaved reported episodes not yet committed")
	}
}

// waitStored waits (up to 10 s) until run r1 holds n episodes.
func waitStored(t *testing.T, db *DB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if k, _ := db.DoneKeys(context.Background(), "r1"); len(k) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d episodes never stored", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Add does not wait for a write: while the store is blocked, Add returns
// until MaxQueued batches wait, then waits; episodes reported saved are
// stored once the store moves again, the queued batches in one
// transaction.
func TestEpisodeWriterOverlapsAndBounds(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	st := &gatedStore{Store: db, gate: make(chan struct{}), entered: make(chan int, 10)}
	var saved atomic.Int64
	w := NewWriter(st, "r1", 2, time.Hour, func(n int) { saved.Add(int64(n)) })
	add := func(i int) {
		if err := w.Add(ctx, sampleEpisode("r1", "s", i)); err != nil {
			t.Error(err)
		}
	}
	add(0)
	add(1)
	if n := <-st.entered; n != 2 { // the writer holds episodes 0 and 1
		t.Fatalf("first write of %d episodes, want 2", n)
	}
	for i := 2; i < 5; i++ { // 3 wait: below MaxQueued batches
		add(i)
	}
	done := make(chan struct{})
	go func() { add(5); close(done) }() // 4 wait: Add blocks
	select {
	case <-done:
		close(st.gate)
		t.Fatal("Add returned while MaxQueued batches waited for a blocked store")
	case <-time.After(50 * time.Millisecond):
	}
	if saved.Load() != 0 {
		t.Errorf("%d reported saved before any write finished", saved.Load())
	}
	close(st.gate)
	<-done
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := <-st.entered; n != 4 {
		t.Errorf("second write of %d episodes, want the 4 queued ones", n)
	}
	eps, err := db.Episodes(ctx, "r1")
	if err != nil || len(eps) != 6 || saved.Load() != 6 {
		t.Fatalf("stored %d (%v), reported %d; want 6", len(eps), err, saved.Load())
	}
}

// gatedStore blocks SaveEpisodes until gate is closed, after sending the
// batch's size on entered.
type gatedStore struct {
	Store   // the *DB, through the interface (so Add does not encode)
	gate    chan struct{}
	entered chan int
}

func (g *gatedStore) SaveEpisodes(ctx context.Context, runID string, eps []*episode.Episode) error {
	g.entered <- len(eps)
	<-g.gate
	return g.Store.SaveEpisodes(ctx, runID, eps)
}

// A failing batch writes nothing, its error reaches the caller's next
// call, and the batch is kept for a retry.
func TestEpisodeWriterErrorKeepsBatch(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	if err := db.SaveEpisode(ctx, "r1", sampleEpisode("r1", "s", 1)); err != nil {
		t.Fatal(err)
	}
	var saved atomic.Int64
	w := db.NewEpisodeWriter("r1", 2, time.Hour, func(n int) { saved.Add(int64(n)) })
	for i := range 2 {
		if err := w.Add(ctx, sampleEpisode("r1", "s", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(ctx); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("want ErrDuplicate, got %v", err)
	}
	if k, _ := db.DoneKeys(ctx, "r1"); len(k) != 1 || saved.Load() != 0 {
		t.Fatalf("a failed batch wrote %d episodes, reported %d", len(k)-1, saved.Load())
	}
	if err := w.Flush(ctx); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("retry of the kept batch: %v", err)
	}
	// An error of a write in the background reaches the next Add.
	w2 := db.NewEpisodeWriter("r1", 1, time.Hour, nil)
	if err := w2.Add(ctx, sampleEpisode("r1", "s", 1)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := w2.Add(ctx, sampleEpisode("r1", "s", 9))
		if errors.Is(err, ErrDuplicate) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("background error never reached Add: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// SaveEpisodes stores a batch atomically and names the offending episode.
func TestSaveEpisodesAtomic(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	bad := sampleEpisode("r1", "s", 2)
	bad.Turns[0].T = 0
	err := db.SaveEpisodes(ctx, "r1", []*episode.Episode{sampleEpisode("r1", "s", 0), sampleEpisode("r1", "s", 1), bad})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("want ErrInvalid, got %v", err)
	}
	if k, _ := db.DoneKeys(ctx, "r1"); len(k) != 0 {
		t.Fatalf("%d episodes of a rejected batch stored", len(k))
	}
	if err := db.SaveEpisodes(ctx, "r1", []*episode.Episode{sampleEpisode("r1", "s", 0), sampleEpisode("r1", "s", 1)}); err != nil {
		t.Fatal(err)
	}
	if k, _ := db.DoneKeys(ctx, "r1"); len(k) != 2 {
		t.Fatalf("stored %d, want 2", len(k))
	}
}

// Over a *DB, Add checks and encodes the episode itself: an invalid one is
// refused at once and buffers nothing, the others are stored.
func TestEpisodeWriterRefusesInvalidAtAdd(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	w := db.NewEpisodeWriter("r1", 10, time.Hour, nil)
	bad := sampleEpisode("r1", "s", 1)
	bad.Turns[1].T = 1
	if err := w.Add(ctx, bad); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "duplicate turn index t=1") {
		t.Fatalf("duplicate turn index: %v, want ErrInvalid naming it", err)
	}
	if err := w.Add(ctx, sampleEpisode("r1", "s", 0)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if k, _ := db.DoneKeys(ctx, "r1"); len(k) != 1 || !k[episode.Key{Persuader: "script", Persuadee: "sim", ScenarioID: "s", Rollout: 0}] {
		t.Fatalf("stored %v, want only s#0", k)
	}
}

// failFirst fails its first SaveEpisodes once release is closed and
// counts the episodes of later ones.
type failFirst struct {
	Store
	release chan struct{}
	calls   atomic.Int64
	stored  atomic.Int64
}

func (f *failFirst) SaveEpisodes(_ context.Context, _ string, eps []*episode.Episode) error {
	if f.calls.Add(1) == 1 {
		<-f.release
		return errors.New("disk gone")
	}
	f.stored.Add(int64(len(eps)))
	return nil
}

// A Close that returns a write's error writes nothing afterwards: the
// delay timer of an episode buffered after the failed batch is stopped
// (it once fired after Close and stored and reported the episodes).
func TestEpisodeWriterNothingAfterClose(t *testing.T) {
	ctx := context.Background()
	f := &failFirst{release: make(chan struct{})}
	var saved atomic.Int64
	const delay = 200 * time.Millisecond
	w := NewWriter(f, "r1", 2, delay, func(n int) { saved.Add(int64(n)) })
	for _, id := range []string{"a", "b", "c"} { // a, b: the blocked write; c: buffered
		if err := w.Add(ctx, &episode.Episode{ScenarioID: id}); err != nil {
			t.Fatal(err)
		}
	}
	close(f.release)
	time.Sleep(20 * time.Millisecond) // the write fails
	if err := w.Close(ctx); err == nil || err.Error() != "disk gone" {
		t.Fatalf("Close: %v, want the write's error", err)
	}
	time.Sleep(2 * delay)
	if n, s := f.stored.Load(), saved.Load(); n != 0 || s != 0 {
		t.Fatalf("%d episodes written and %d reported after Close", n, s)
	}
}
