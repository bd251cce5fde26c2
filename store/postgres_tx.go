package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/persuarena/persuarena/episode"
)

// SaveEpisodesTx stores eps under run runID inside tx, a transaction the
// caller began on the same PostgreSQL database (pgx v5) and commits, so
// that other writes of that transaction (a job queue's completion of the
// job that played the episodes) commit with the episodes or not at all.
// It writes the same rows as SaveEpisodes, with the same statements, in
// a savepoint: on any error nothing of eps is kept and tx stays usable.
//
// Errors: SaveEpisodes's, naming the first offending episode:
// ErrInvalid (also when db is not a PostgreSQL store), ErrNotFound (no
// such run), ErrDuplicate (the run already holds one of the episode keys,
// e.g. an episode a re-delivered job played again; tx stays usable and
// nothing is written).
func (db *DB) SaveEpisodesTx(ctx context.Context, tx pgx.Tx, runID string, eps []*episode.Episode) error {
	if db.d != postgresDialect {
		return fmt.Errorf("store: save episodes in a pgx transaction: %w: a %s store", ErrInvalid, db.d.name)
	}
	if len(eps) == 0 {
		return nil
	}
	rows, err := encodeEpisodes(runID, eps)
	if err != nil {
		return err
	}
	sp, err := tx.Begin(ctx) // a savepoint
	if err != nil {
		return fmt.Errorf("store: save episode %s to run %s: %w", episode.KeyOf(eps[0]), runID, err)
	}
	epSQL, trSQL := db.d.insertSQL()
	failed, err := insertEpisodes(ctx, pgxStmt{sp, epSQL}, pgxStmt{sp, trSQL}, db.d, rows)
	if err != nil {
		if pgIsForeignKey(err) {
			err = ErrNotFound
		}
		return errors.Join(fmt.Errorf("store: save episode %s to run %s: %w", episode.KeyOf(eps[max(failed, 0)]), runID, err), sp.Rollback(ctx))
	}
	if err := sp.Commit(ctx); err != nil {
		return fmt.Errorf("store: save episode %s to run %s: %w", episode.KeyOf(eps[0]), runID, err)
	}
	return nil
}

// pgIsForeignKey reports a foreign_key_violation (SQLSTATE 23503): an
// episode of a run that does not exist.
func pgIsForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

// pgxStmt runs one of the DB's insert statements on a pgx transaction
// (a stmtExecer for insertEpisodes; pgx caches prepared statements per
// connection). Its sql.Result is nil: insertEpisodes reads none.
type pgxStmt struct {
	tx  pgx.Tx
	sql string
}

func (p pgxStmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	_, err := p.tx.Exec(ctx, p.sql, args...)
	return nil, err
}
