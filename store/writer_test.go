package store

import (
	"context"
	"errors"
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
	w := db.NewEpisodeWriter("r1", 3, time.Hour, func(n int) { saved.Add(int64(n)) })
	for i := range 7 {
		if err := w.Add(ctx, sampleEpisode("r1", "s", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Two full batches are stored; the seventh waits for the hour.
	if k, _ := db.DoneKeys(ctx, "r1"); len(k) != 6 || saved.Load() != 6 {
		t.Fatalf("stored %d, reported %d; want 6", len(k), saved.Load())
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if k, _ := db.DoneKeys(ctx, "r1"); len(k) != 7 || saved.Load() != 7 {
		t.Fatalf("after Close: stored %d, reported %d; want 7", len(k), saved.Load())
	}
}

func TestEpisodeWriterDelay(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	w := db.NewEpisodeWriter("r1", 100, 5*time.Millisecond, nil)
	cctx, cancel := context.WithCancel(ctx)
	if err := w.Add(cctx, sampleEpisode("r1", "s", 0)); err != nil {
		t.Fatal(err)
	}
	cancel() // a cancelled caller (Ctrl-C) does not stop the delayed write
	deadline := time.Now().Add(10 * time.Second)
	for {
		if k, _ := db.DoneKeys(ctx, "r1"); len(k) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the delayed write never happened")
		}
		time.Sleep(time.Millisecond)
	}
}

// A failing batch writes nothing, its error reaches the caller, and the
// batch is kept for a retry.
func TestEpisodeWriterErrorKeepsBatch(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	if err := db.SaveEpisode(ctx, "r1", sampleEpisode("r1", "s", 1)); err != nil {
		t.Fatal(err)
	}
	w := db.NewEpisodeWriter("r1", 2, time.Hour, nil)
	if err := w.Add(ctx, sampleEpisode("r1", "s", 0)); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(ctx, sampleEpisode("r1", "s", 1)); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("want ErrDuplicate, got %v", err)
	}
	if k, _ := db.DoneKeys(ctx, "r1"); len(k) != 1 {
		t.Fatalf("a failed batch wrote %d episodes", len(k)-1)
	}
	if err := w.Flush(ctx); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("retry of the kept batch: %v", err)
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
