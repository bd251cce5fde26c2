package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrCorrupt: an existing SQLite database failed PRAGMA quick_check when
// opened for writing; nothing was written to it.
var ErrCorrupt = errors.New("database is corrupt")

// quickCheck runs PRAGMA quick_check (SQLite's structural check of every
// page, without the index cross-check of integrity_check) and returns
// ErrCorrupt with its first findings unless it answers "ok".
//
// Choice: quick_check, not integrity_check: it reads each page once
// (about a second per GB) and finds the garbled pages that matter before
// a write builds on them.
func quickCheck(ctx context.Context, sdb *sql.DB, path string) error {
	rows, err := sdb.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err != nil {
		return fmt.Errorf("%w (%s: PRAGMA quick_check: %v); restore a backup or write to a new file", ErrCorrupt, path, err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("%w (%s: %v)", ErrCorrupt, path, err)
		}
		found = append(found, s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w (%s: PRAGMA quick_check: %v); restore a backup or write to a new file", ErrCorrupt, path, err)
	}
	if len(found) != 1 || found[0] != "ok" {
		return fmt.Errorf("%w (%s: PRAGMA quick_check: %s); restore a backup or write to a new file", ErrCorrupt, path, strings.Join(found, "; "))
	}
	return nil
}

// existingFile reports whether path names a non-empty file (a database
// Open will check before writing).
func existingFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// OpenReadOnly opens an existing run database for reading only, for the
// commands that never write (runs list and show, view, report, compare,
// export, analyze): a PostgreSQL URL as OpenURL does; a SQLite file with
// mode=ro, or, when its directory is not writable (SQLite could not
// create the WAL index there), with immutable=1, which reads the main
// file as it is (a database closed cleanly has its WAL checkpointed into
// it). Nothing is migrated: a database older than SchemaLatest must be
// opened once by a writing command. Errors: "no run database" for a
// missing file, ErrSchemaNewer, an older schema, or the driver's.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	if IsURL(path) || path == ":memory:" {
		return OpenExisting(ctx, path)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("store: open %s: %w: not a regular file: give a run database file", path, ErrInvalid)
	}
	if !existingFile(path) {
		return nil, fmt.Errorf("no run database at %s (set --db)", Shown(path))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// mode=ro needs the WAL index (-shm) beside the file; in a directory
	// it cannot be created in, immutable=1 reads the file alone.
	var db *DB
	var v int
	for _, mode := range []string{"mode=ro", "immutable=1"} {
		u := url.URL{Scheme: "file", Path: abs}
		sdb, err := sql.Open("sqlite", u.String()+"?"+mode+fmt.Sprintf("&_pragma=busy_timeout(%d)", BusyTimeout.Milliseconds()))
		if err != nil {
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
		sdb.SetMaxOpenConns(maxFileConns)
		sdb.SetMaxIdleConns(maxFileConns)
		db = &DB{sql: sdb, path: path, d: sqliteDialect, now: time.Now}
		if v, err = db.SchemaVersion(ctx); err == nil {
			break
		}
		sdb.Close()
		if mode != "mode=ro" {
			return nil, fmt.Errorf("store: open %s read-only: %w", path, err)
		}
	}
	sdb := db.sql
	if v > SchemaLatest {
		sdb.Close()
		return nil, fmt.Errorf("store: open %s: %w: database at version %d, binary knows %d", path, ErrSchemaNewer, v, SchemaLatest)
	}
	if v < SchemaLatest {
		sdb.Close()
		return nil, fmt.Errorf("store: open %s read-only: database at version %d needs migrating to %d: open it once with a command that writes (e.g. eval --resume)", path, v, SchemaLatest)
	}
	return db, nil
}
