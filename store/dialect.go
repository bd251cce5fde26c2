package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// dialect is what differs between the SQL databases a DB can sit on:
// SQLite (Open) and PostgreSQL (OpenURL). Every query of the package is
// written once, with '?' placeholders, and run through the dialect's
// rebinding; the schema history is one migration list per dialect, with
// the same version numbers meaning the same tables and columns.
type dialect struct {
	// name is "sqlite" or "postgres".
	name string
	// numbered rewrites '?' placeholders as $1, $2, ... (PostgreSQL).
	numbered bool
	// readOpts are the options of read transactions; each must see one
	// snapshot across its statements.
	readOpts *sql.TxOptions
	// unique reports a UNIQUE or PRIMARY KEY violation.
	unique func(error) bool
	// migrations is the dialect's schema history (len == SchemaLatest).
	migrations []string
	// packed ends migration 7 after packTranscripts: the tables turns and
	// probe_readings become views.
	packed string
	// lastID is the SQL expression of the id of the episode the
	// transaction inserted last (insertTranscriptSQL).
	lastID string
	// lock, when not empty, runs first in every migration transaction so
	// that concurrent openers migrate one at a time.
	lock string
	// bound caches rebound statements.
	bound sync.Map
}

var sqliteDialect = &dialect{
	name:       "sqlite",
	readOpts:   &sql.TxOptions{ReadOnly: true},
	unique:     isUnique,
	migrations: migrations,
	packed:     sqlitePacked,
	lastID:     `last_insert_rowid()`,
}

// insertSQL returns the dialect's texts of the two statements that insert
// an episode (insertEpisodes): its episodes row, then its transcripts row
// (which reads the episode's id from the dialect's last-inserted-id
// function).
func (d *dialect) insertSQL() (episode, transcript string) {
	return d.sql(insertEpisodeSQL), d.sql(fmt.Sprintf(insertTranscriptSQL, d.lastID))
}

// sql returns q with the dialect's placeholders. '?' never occurs in the
// package's SQL except as a placeholder.
func (d *dialect) sql(q string) string {
	if !d.numbered {
		return q
	}
	if s, ok := d.bound.Load(q); ok {
		return s.(string)
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	d.bound.Store(q, s)
	return s
}

// dbtx is a transaction whose statements are rebound to its dialect.
type dbtx struct {
	*sql.Tx
	d *dialect
}

func (t *dbtx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.d.sql(q), args...)
}

func (t *dbtx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(ctx, t.d.sql(q), args...)
}

func (t *dbtx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, t.d.sql(q), args...)
}

func (t *dbtx) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return t.Tx.PrepareContext(ctx, t.d.sql(q))
}

// queryRow and query run one statement outside a transaction.
func (db *DB) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return db.sql.QueryRowContext(ctx, db.d.sql(q), args...)
}

func (db *DB) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return db.sql.QueryContext(ctx, db.d.sql(q), args...)
}
