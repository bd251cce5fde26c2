package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/store/storetest"
)

// SaveEpisodesTx writes inside the caller's pgx transaction: nothing is
// visible before its commit, a rollback keeps nothing, the committed
// episode loads exactly as one SaveEpisode stored, and a duplicate key
// is ErrDuplicate while the transaction stays usable.
func TestSaveEpisodesTx(t *testing.T) {
	ctx := context.Background()
	u := storetest.PostgresURL(t)
	db := openPG(t, u)
	for _, id := range []string{"tx", "plain"} {
		if err := db.CreateRun(ctx, store.Run{ID: id, Kind: "eval", Seed: 7, Version: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	stored := func(run string) []*episode.Episode {
		t.Helper()
		eps, err := db.Episodes(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}

	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveEpisodesTx(ctx, tx, "tx", []*episode.Episode{store.SampleEpisode("", "s1", 0)}); err != nil {
		t.Fatal(err)
	}
	if n := len(stored("tx")); n != 0 {
		t.Fatalf("%d episodes visible before the commit, want 0", n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(stored("tx")); n != 0 {
		t.Fatalf("%d episodes after a rollback, want 0", n)
	}

	tx, err = conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := db.SaveEpisodesTx(ctx, tx, "tx", []*episode.Episode{store.SampleEpisode("", "s1", 0), store.SampleEpisode("", "s2", 1)}); err != nil {
		t.Fatal(err)
	}
	err = db.SaveEpisodesTx(ctx, tx, "tx", []*episode.Episode{store.SampleEpisode("", "s3", 0), store.SampleEpisode("", "s1", 0)})
	if !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("duplicate key: %v, want ErrDuplicate", err)
	}
	if err := db.SaveEpisodesTx(ctx, tx, "nosuchrun", []*episode.Episode{store.SampleEpisode("", "s1", 0)}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown run: %v, want ErrNotFound", err)
	}
	var one int
	if err := tx.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("transaction unusable after the rejected saves: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []string{"s1", "s2"} {
		r := 0
		if sc == "s2" {
			r = 1
		}
		if err := db.SaveEpisode(ctx, "plain", store.SampleEpisode("", sc, r)); err != nil {
			t.Fatal(err)
		}
	}
	a, b := stored("tx"), stored("plain")
	for _, ep := range append(a, b...) {
		ep.RunID = ""
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if len(a) != 2 || string(ja) != string(jb) {
		t.Fatalf("episodes saved in a transaction:\n%s\nsaved by SaveEpisode:\n%s", ja, jb)
	}
}

// A SQLite store refuses a pgx transaction.
func TestSaveEpisodesTxSQLite(t *testing.T) {
	db, err := store.Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SaveEpisodesTx(context.Background(), nil, "r", nil); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("SQLite: %v, want ErrInvalid", err)
	}
}
