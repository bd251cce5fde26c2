package view

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/store"
)

// benchEpisodes is the size of the benchmark run: the issue's
// "200k-episode run".
const benchEpisodes = 200_000

// benchDB opens the benchmark database: PERSUARENA_VIEW_BENCH_DB when
// set (an existing run database, e.g. from persuarena eval --split all
// --rollouts 18; its largest run is used), else a synthetic run of
// benchEpisodes two-turn episodes over 1,000 p4g held-out scenario slots,
// built once and kept in the temporary directory for later runs.
func benchDB(b *testing.B) (store.Store, string) {
	b.Helper()
	ctx := context.Background()
	if p := os.Getenv("PERSUARENA_VIEW_BENCH_DB"); p != "" {
		db, err := store.OpenExisting(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		rs, err := db.ListRuns(ctx)
		if err != nil || len(rs) == 0 {
			b.Fatalf("%s: %d runs, %v", p, len(rs), err)
		}
		best := rs[0]
		for _, r := range rs {
			if r.Episodes > best.Episodes {
				best = r
			}
		}
		b.Logf("%s: run %s, %d episodes", p, best.ID, best.Episodes)
		return db, best.ID
	}
	path := filepath.Join(os.TempDir(), "persuarena-view-bench-200k-v1.db")
	const id = "20260101-000000-benc"
	db, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	run, err := db.GetRun(ctx, id)
	switch {
	case err == nil && run.Status == store.StatusDone:
		return db, id
	case err == nil: // an interrupted build
		if err := db.DeleteRun(ctx, id); err != nil {
			b.Fatal(err)
		}
	case !errors.Is(err, store.ErrNotFound):
		b.Fatal(err)
	}
	b.Logf("building %s (%d episodes; kept for later runs)", path, benchEpisodes)
	cfg := []byte(`{"persuaders":["pushy","informer","script","random"],"persuadees":["sim"],"scenarios":["p4g"],"split":"heldout","rollouts":12500}`)
	if err := db.CreateRun(ctx, store.Run{ID: id, Kind: "eval", Seed: 1, Version: "bench", Config: cfg, Status: store.StatusRunning}); err != nil {
		b.Fatal(err)
	}
	ss := fixtureScenarios(b, 4)
	terms := []decision.Terminal{decision.TermAccept, decision.TermConditional, decision.TermPending, decision.TermReject, decision.TermTruncated}
	pers := []string{"pushy", "informer", "script", "random"}
	var batch []*episode.Episode
	for i := range benchEpisodes {
		// (persuader, scenario, rollout) = (i%4, i/4%4, i/16): distinct keys.
		batch = append(batch, fixtureEpisode(&ss[i/4%4], pers[i%4], i/16, terms[i%5]))
		if len(batch) == 2000 || i == benchEpisodes-1 {
			if err := db.SaveEpisodes(ctx, id, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := db.SetRunStatus(ctx, id, store.StatusDone); err != nil {
		b.Fatal(err)
	}
	return db, id
}

// BenchmarkRunPage measures a run page of the 200k-episode run, served
// end to end (outcome table, one page of the filtered episode list,
// rendering): the first page unfiltered, filtered on two columns, a
// filter that matches nothing (a scan of the run's index), and a deep
// page. The target for the first page is under 300 ms.
func BenchmarkRunPage(b *testing.B) {
	st, id := benchDB(b)
	s := New(st, "bench.db")
	for _, c := range []struct{ name, query string }{
		{"first", ""},
		{"filtered", "?persuader=script&terminal=accept"},
		{"nomatch", "?terminal=failed"},
		{"page1000", "?page=1000"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if code, body := get(b, s, "/runs/"+id+c.query); code != http.StatusOK {
					b.Fatalf("status %d: %.300s", code, body)
				}
			}
		})
	}
}

// BenchmarkRunsPage measures the runs page over the 200k-episode run
// (the store's per-run counts).
func BenchmarkRunsPage(b *testing.B) {
	st, _ := benchDB(b)
	s := New(st, "bench.db")
	for b.Loop() {
		if code, _ := get(b, s, "/"); code != http.StatusOK {
			b.Fatalf("status %d", code)
		}
	}
}
