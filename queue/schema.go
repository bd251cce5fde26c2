package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/persuarena/persuarena/store"
)

// checkStoreSchema refuses a run database whose run-store schema is newer
// than this binary's (store.ErrSchemaNewer), before River's tables are
// created or migrated there: an old worker must leave a newer database as
// it found it. A database without the store's tables passes (the store
// creates them when it is opened).
func checkStoreSchema(ctx context.Context, pool *pgxpool.Pool) error {
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return nil
	}
	var cur int
	if err := pool.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&cur); err != nil {
		return err
	}
	if cur > store.SchemaLatest {
		return fmt.Errorf("%w: database at version %d, binary knows %d (River's tables were not touched)", store.ErrSchemaNewer, cur, store.SchemaLatest)
	}
	return nil
}

// rescueAfter returns the applied RescueAfter: o's, or when 0 the job
// timeout plus a tenth of it, at least 30 s more.
//
// Choice: River rescues a job only once it has run RescueAfter, and it
// must exceed the job timeout (a job still running is never handed out
// twice); the margin covers the time a timed-out episode takes to unwind
// and its retry to be recorded. A killed worker's episodes are replayed
// after that long, so a short --job-timeout also shortens the tail.
func (o WorkerOptions) rescueAfter() time.Duration {
	if o.RescueAfter > 0 {
		return o.RescueAfter
	}
	jt := o.jobTimeout()
	return jt + max(30*time.Second, jt/10)
}

// jobTimeout returns the applied JobTimeout.
func (o WorkerOptions) jobTimeout() time.Duration {
	if o.JobTimeout > 0 {
		return o.JobTimeout
	}
	return DefaultJobTimeout
}
