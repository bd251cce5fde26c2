package store_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/store/storetest"
)

func TestConformanceSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db, err := store.Open(context.Background(), t.TempDir()+"/runs.db")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

func TestConformanceSQLiteMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db, err := store.OpenURL(context.Background(), ":memory:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

func openPG(t *testing.T, u string) *store.DB {
	t.Helper()
	db, err := store.OpenURL(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformancePostgres(t *testing.T) {
	storetest.RequirePostgres(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openPG(t, storetest.PostgresURL(t)) })
}

func TestOpenURLRouting(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/plain.db"
	db, err := store.OpenURL(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if m, err := db.JournalMode(ctx); err != nil || m != "wal" || db.Path() != path {
		t.Fatalf("a plain path opened %q journal %q, %v; want SQLite in WAL mode", db.Path(), m, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no SQLite file: %v", err)
	}
	for _, s := range []string{"postgres://u@h/db", "postgresql://h/db"} {
		if !store.IsURL(s) {
			t.Errorf("IsURL(%q) = false", s)
		}
	}
	for _, s := range []string{"runs.db", "postgres.db", "./postgres://x", ":memory:"} {
		if store.IsURL(s) {
			t.Errorf("IsURL(%q) = true", s)
		}
	}
	_, err = store.OpenURL(ctx, "postgres://u:p@h:notaport/db")
	if !errors.Is(err, store.ErrInvalid) || strings.Contains(err.Error(), ":p@") {
		t.Fatalf("bad URL: %v, want ErrInvalid without the password", err)
	}
	if got := store.Shown("postgres://me:s3cret@h/db"); got != "postgres://me:xxxxx@h/db" {
		t.Errorf("Shown = %q", got)
	}
	if got := store.Shown("dir/runs.db"); got != "dir/runs.db" {
		t.Errorf("Shown(path) = %q", got)
	}
	if len(store.PostgresMigrations()) != store.SchemaLatest {
		t.Fatalf("%d PostgreSQL migrations, SchemaLatest %d", len(store.PostgresMigrations()), store.SchemaLatest)
	}
}

func TestPostgresOpen(t *testing.T) {
	ctx := context.Background()
	u := storetest.PostgresURL(t)
	// Concurrent openers of an empty database migrate it once.
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() {
			db, err := store.OpenURL(ctx, u)
			if err == nil {
				err = db.Close()
			}
			errs <- err
		}()
	}
	for i := 0; i < 4; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	db := openPG(t, u)
	if v, err := db.SchemaVersion(ctx); err != nil || v != store.SchemaLatest {
		t.Fatalf("SchemaVersion = %d, %v, want %d", v, err, store.SchemaLatest)
	}
	if pu, err := url.Parse(u); err == nil && pu.User != nil {
		if pw, ok := pu.User.Password(); ok && strings.Contains(db.Path(), ":"+pw+"@") {
			t.Fatalf("Path %q shows the password", db.Path())
		}
	}
	if _, err := db.JournalMode(ctx); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("JournalMode on PostgreSQL: %v, want ErrInvalid", err)
	}
	// OpenExisting routes a URL too.
	ex, err := store.OpenExisting(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	ex.Close()
	// A database migrated by a newer binary is refused.
	admin, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES ($1, 'x')`, store.SchemaLatest+1); err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenURL(ctx, u); !errors.Is(err, store.ErrSchemaNewer) {
		t.Fatalf("newer schema: %v, want ErrSchemaNewer", err)
	}
}
