package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

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

// pgURL returns PERSUARENA_PG_URL (a PostgreSQL database the tests may
// create schemas in); without it the test skips, or fails when CI is set.
func pgURL(t *testing.T) string {
	u := os.Getenv("PERSUARENA_PG_URL")
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("PERSUARENA_PG_URL is not set but CI is: the Postgres driver must be tested in CI (.ci/run starts PostgreSQL)")
		}
		t.Skip("PERSUARENA_PG_URL not set: set it to a postgres:// URL to run the store suite on PostgreSQL (docs/store.md)")
	}
	return u
}

var schemaSeq atomic.Int64

// freshSchema creates an empty schema in the database at base and returns
// base's URL with search_path set to it; the schema is dropped at cleanup.
func freshSchema(t *testing.T, base string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	name := fmt.Sprintf("storetest_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemaSeq.Add(1))
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.ExecContext(ctx, `DROP SCHEMA `+name+` CASCADE`) })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
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
	base := pgURL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openPG(t, freshSchema(t, base)) })
}
