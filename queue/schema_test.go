package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/store/storetest"
)

// The rescue time follows the job timeout unless given: timeout + a
// tenth, at least 30 s more.
func TestRescueAfterDerived(t *testing.T) {
	for _, tc := range []struct {
		o    WorkerOptions
		want time.Duration
	}{
		{WorkerOptions{}, 33 * time.Minute},
		{WorkerOptions{JobTimeout: 2 * time.Minute}, 150 * time.Second},
		{WorkerOptions{JobTimeout: 10 * time.Minute}, 11 * time.Minute},
		{WorkerOptions{JobTimeout: 5 * time.Second, RescueAfter: 6 * time.Second}, 6 * time.Second},
	} {
		if got := tc.o.rescueAfter(); got != tc.want {
			t.Errorf("%+v: rescue after %v, want %v", tc.o, got, tc.want)
		}
	}
	o := WorkerOptions{Workers: 1, JobTimeout: time.Minute, RescueAfter: time.Minute}
	if err := o.check(); err == nil || !strings.Contains(err.Error(), "--rescue-after (1m0s) must exceed --job-timeout (1m0s)") {
		t.Fatalf("check: %v", err)
	}
}

// The worker's start-up line names what applies: the defaults filled in,
// the rescue time derived from the job timeout or given.
func TestWorkerOptionsApplied(t *testing.T) {
	for _, tc := range []struct {
		o    WorkerOptions
		want string
	}{
		{WorkerOptions{Workers: 4, Retries: 2},
			"workers 4, retries 2, job timeout 30m0s, rescue after 33m0s (derived: the job timeout plus max(30s, a tenth)), job poll 1s, finish poll 10s"},
		{WorkerOptions{Workers: 1, JobTimeout: 2 * time.Minute, PollInterval: 50 * time.Millisecond},
			"workers 1, retries 0, job timeout 2m0s, rescue after 2m30s (derived: the job timeout plus max(30s, a tenth)), job poll 50ms, finish poll 10s"},
		{WorkerOptions{Workers: 2, Retries: 1, JobTimeout: 5 * time.Second, RescueAfter: 6 * time.Second, FinishPoll: time.Second},
			"workers 2, retries 1, job timeout 5s, rescue after 6s (--rescue-after), job poll 1s, finish poll 1s"},
	} {
		if got := tc.o.Applied(); got != tc.want {
			t.Errorf("%+v:\n got %s\nwant %s", tc.o, got, tc.want)
		}
	}
}

// A run database whose store schema is newer than this binary is refused
// before River's tables are created there.
func TestOpenRefusesNewerSchemaBeforeRiver(t *testing.T) {
	db := storetest.PostgresURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO schema_migrations VALUES (%d, 'x')`, store.SchemaLatest+1)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, db, 2, nil); !errors.Is(err, store.ErrSchemaNewer) {
		t.Fatalf("Open: %v, want ErrSchemaNewer", err)
	}
	var river bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('river_job') IS NOT NULL OR to_regclass('river_migration') IS NOT NULL`).Scan(&river); err != nil || river {
		t.Fatalf("River's tables were created (%v)", err)
	}
}
