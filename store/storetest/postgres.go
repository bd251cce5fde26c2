package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// PostgresURL returns the URL of an empty schema, created for t in the
// PostgreSQL database that env PERSUARENA_PG_URL names and dropped at
// t's cleanup (the URL sets search_path to it). Without
// PERSUARENA_PG_URL, t skips, or fails when env CI is set: CI must test
// the PostgreSQL driver (.ci/run starts PostgreSQL).
func PostgresURL(t testing.TB) string {
	t.Helper()
	return freshSchema(t, RequirePostgres(t))
}

// RequirePostgres returns env PERSUARENA_PG_URL; without it t skips, or
// fails when env CI is set. Call it at the top of a test whose subtests
// open PostgresURL, so that the whole test skips rather than passing
// with skipped subtests.
func RequirePostgres(t testing.TB) string {
	t.Helper()
	return pgURL(t)
}

// pgURL returns PERSUARENA_PG_URL (a PostgreSQL database the tests may
// create schemas in); without it the test skips, or fails when CI is set.
func pgURL(t testing.TB) string {
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
func freshSchema(t testing.TB, base string) string {
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
