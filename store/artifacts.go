package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// SaveArtifact stores content under name in run runID, replacing an
// artifact of that name: the run's records that are not episodes (a masp
// eval run's dialogues as JSON Lines, for one). Errors: ErrInvalid for an
// empty name, ErrNotFound for an unknown run.
func (db *DB) SaveArtifact(ctx context.Context, runID, name string, content []byte) error {
	if name == "" {
		return fmt.Errorf("store: run %s: artifact: %w: empty name", runID, ErrInvalid)
	}
	if content == nil {
		content = []byte{}
	}
	err := db.write(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO artifacts(run_id, name, content) VALUES (?, ?, ?)
			ON CONFLICT(run_id, name) DO UPDATE SET content = excluded.content`, runID, name, content)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: run %s: artifact %s: %w", runID, name, err)
	}
	return nil
}

// Artifact returns the content stored under name in run runID. Errors:
// ErrNotFound when the run or the artifact does not exist.
func (db *DB) Artifact(ctx context.Context, runID, name string) ([]byte, error) {
	var b []byte
	err := db.queryRow(ctx, `SELECT content FROM artifacts WHERE run_id = ? AND name = ?`, runID, name).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: run %s: artifact %s: %w", runID, name, err)
	}
	return b, nil
}

// OpenExisting opens the run database at path like Open, but refuses to
// create a missing file (a mistyped --db would otherwise read as an empty
// store). A PostgreSQL URL (IsURL) opens with OpenURL: the server refuses
// a database that does not exist. Errors: "no run database at PATH (set
// --db)" for a missing file; Open's and OpenURL's errors.
func OpenExisting(ctx context.Context, path string) (*DB, error) {
	if IsURL(path) {
		return OpenURL(ctx, path)
	}
	if path != ":memory:" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no run database at %s (set --db)", Shown(path))
		}
	}
	return Open(ctx, path)
}
