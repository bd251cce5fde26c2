// Package store keeps PersuArena's results in one SQLite file (pure Go,
// modernc.org/sqlite, WAL mode): runs, their episodes, every turn and every
// probe read-out, so that evaluations can be listed, exported, analysed
// with plain SQL and resumed after an interruption. The schema is versioned
// by ordered migrations (see docs/store.md). OpenURL opens the same store
// on PostgreSQL (pgx v5) for a postgres:// URL; package storetest is the
// conformance suite both drivers pass.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	sqlite "modernc.org/sqlite"
)

// Sentinel errors; test with errors.Is. Every error the package returns
// wraps one of these or the underlying driver / I/O error.
var (
	// ErrNotFound: the run does not exist.
	ErrNotFound = errors.New("not found")
	// ErrDuplicate: a run with that ID, or an episode with that
	// (run, persuader, persuadee, scenario, rollout) key, is already stored.
	ErrDuplicate = errors.New("already stored")
	// ErrInvalid: the value cannot be stored as given (empty ID, unknown
	// status, non-finite number, config that is not JSON, ...).
	ErrInvalid = errors.New("invalid value")
	// ErrSecret: a run config carries what looks like a credential.
	ErrSecret = errors.New("run config contains a secret")
	// ErrSchemaNewer: the database was written by a newer PersuArena whose
	// schema this binary does not know.
	ErrSchemaNewer = errors.New("database schema is newer than this binary")
)

// BusyTimeout is how long a connection waits for another writer (another
// process, or a checkpoint) before failing with SQLITE_BUSY.
const BusyTimeout = 5 * time.Second

// maxFileConns bounds the connection pool of a file database: WAL lets
// readers run beside the single writer.
const maxFileConns = 4

// DB is an open PersuArena store. It is safe for concurrent use: reads run
// in parallel; writes are serialised by a mutex inside the process and by
// SQLite's write lock (waiting up to BusyTimeout) across processes.
type DB struct {
	sql  *sql.DB
	path string
	// d is the SQL dialect (SQLite for Open, PostgreSQL for OpenURL).
	d *dialect
	// wmu serialises this process's write transactions, so they queue in
	// Go instead of spinning on SQLITE_BUSY.
	wmu sync.Mutex
	// now is the clock for created/updated stamps (tests replace it).
	now func() time.Time
	// insEpisode and insTranscript are insertEpisodeSQL and
	// insertTranscriptSQL, prepared once (per connection, by database/sql).
	insEpisode, insTranscript *sql.Stmt
}

// Open opens the store at path, creating the file if needed, and migrates
// its schema to the newest version this binary knows. Every connection runs
// with journal_mode=WAL, foreign_keys=ON, synchronous=NORMAL and
// busy_timeout=BusyTimeout; write transactions start with BEGIN IMMEDIATE.
//
// path ":memory:" opens a private in-memory database on a single
// connection (tests); it is lost on Close.
//
// Errors: ErrInvalid for an empty path or one containing '?' (the driver
// reads connection options after it), or a path that exists but is not a
// regular file (a directory, named pipe or device); ErrSchemaNewer when the file was
// migrated by a newer binary; otherwise the wrapped driver error.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("store: open %q: %w: path must be non-empty and must not contain '?'", path, ErrInvalid)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		// A directory, named pipe or device is no database (SQLite would
		// answer "disk I/O error", or block on a pipe).
		return nil, fmt.Errorf("store: open %s: %w: not a regular file: give a run database file", path, ErrInvalid)
	}
	// Per-connection settings travel in the DSN so that every pooled
	// connection gets them, not just the first.
	dsn := path + fmt.Sprintf("?_txlock=immediate&_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)",
		BusyTimeout.Milliseconds())
	memory := path == ":memory:"
	existed := !memory && existingFile(path) // checked before any write
	if !memory {
		dsn += "&_pragma=journal_mode(WAL)"
	}
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if memory {
		// Each connection to ":memory:" is its own empty database.
		sdb.SetMaxOpenConns(1)
		sdb.SetMaxIdleConns(1)
		sdb.SetConnMaxLifetime(0)
		sdb.SetConnMaxIdleTime(0)
	} else {
		sdb.SetMaxOpenConns(maxFileConns)
		sdb.SetMaxIdleConns(maxFileConns)
	}
	db := &DB{sql: sdb, path: path, d: sqliteDialect, now: time.Now}
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if existed {
		if err := quickCheck(ctx, sdb, path); err != nil {
			sdb.Close()
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
	}
	if err := db.setup(ctx); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return db, nil
}

// setup migrates a freshly opened database and prepares the statements
// SaveEpisode runs many times; on error it closes the database.
func (db *DB) setup(ctx context.Context) error {
	if err := db.migrate(ctx); err != nil {
		db.sql.Close()
		return err
	}
	var err error
	epSQL, trSQL := db.d.insertSQL()
	if db.insEpisode, err = db.sql.PrepareContext(ctx, epSQL); err == nil {
		db.insTranscript, err = db.sql.PrepareContext(ctx, trSQL)
	}
	if err != nil {
		db.Close()
		return fmt.Errorf("prepare: %w", err)
	}
	return nil
}

// Close closes the database; a file database checkpoints its WAL.
func (db *DB) Close() error {
	for _, s := range []*sql.Stmt{db.insEpisode, db.insTranscript} {
		if s != nil {
			s.Close()
		}
	}
	if err := db.sql.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", db.path, err)
	}
	return nil
}

// Path returns the path the store was opened with; for a PostgreSQL
// store, its URL without the password. It implements Located.
func (db *DB) Path() string { return db.path }

// Located is implemented by a Store that knows where it is (*DB): Path
// names the database file, or the URL without its password, for
// messages.
type Located interface {
	Path() string
}

// SchemaVersion returns the highest migration version applied to the
// database (0 for none).
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.queryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}

// JournalMode returns the database's journal mode as SQLite reports it:
// "wal" for a file store, "memory" for ":memory:".
func (db *DB) JournalMode(ctx context.Context) (string, error) {
	if db.d != sqliteDialect {
		return "", fmt.Errorf("store: journal mode: %w: a %s store has none", ErrInvalid, db.d.name)
	}
	var m string
	if err := db.sql.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&m); err != nil {
		return "", fmt.Errorf("store: journal mode: %w", err)
	}
	return strings.ToLower(m), nil
}

// write runs fn in one write transaction (BEGIN IMMEDIATE), committing when
// fn returns nil and rolling back otherwise, so nothing partial is kept.
func (db *DB) write(ctx context.Context, fn func(*dbtx) error) error {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(&dbtx{tx, db.d}); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// read runs fn in one read-only transaction, so that its queries see one
// consistent snapshot even while another connection writes.
func (db *DB) read(ctx context.Context, fn func(*dbtx) error) error {
	tx, err := db.sql.BeginTx(ctx, db.d.readOpts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(&dbtx{tx, db.d})
}

// Extended SQLite result codes (stable across SQLite versions).
const (
	sqliteConstraintPrimaryKey = 1555
	sqliteConstraintUnique     = 2067
)

// isUnique reports whether err is a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqliteConstraintUnique || se.Code() == sqliteConstraintPrimaryKey
	}
	return false
}
