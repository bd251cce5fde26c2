package store

import (
	"context"
	"database/sql"
	"strings"
)

// bulkInsert inserts many rows into one table with few statements: it
// holds prepared multi-row INSERTs for 1, 2, 4, ..., 2^(len-1) rows, and
// writes n rows with one statement per set bit of n (chunks of the largest
// size first). Multi-row statements cut SaveEpisode's per-row cost
// (docs/store.md has the figures); preparing the sizes once at Open keeps
// SQL parsing out of the write path.
type bulkInsert struct {
	cols  int
	stmts []*sql.Stmt
	// texts are stmts' SQL, rebound to the dialect (pgxInserter runs them).
	texts []string
}

// prepareBulk prepares "head VALUES (?, ...), ..." for 2^0..2^maxPow rows of
// cols columns each.
func prepareBulk(ctx context.Context, db *DB, head string, cols, maxPow int) (*bulkInsert, error) {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	b := &bulkInsert{cols: cols}
	for p := 0; p <= maxPow; p++ {
		n := 1 << p
		text := db.d.sql(head + " VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", n), ", "))
		s, err := db.sql.PrepareContext(ctx, text)
		if err != nil {
			b.close()
			return nil, err
		}
		b.stmts, b.texts = append(b.stmts, s), append(b.texts, text)
	}
	return b, nil
}

// exec inserts the rows whose values args holds, row after row (len(args)
// is a multiple of cols), within tx.
func (b *bulkInsert) exec(ctx context.Context, tx *dbtx, args []any) error {
	return b.each(args, func(p int, chunk []any) error {
		_, err := tx.StmtContext(ctx, b.stmts[p]).ExecContext(ctx, chunk...)
		return err
	})
}

// each splits args into chunks of 2^p rows, the largest first, and calls
// run with each chunk and its statement's index p.
func (b *bulkInsert) each(args []any, run func(p int, chunk []any) error) error {
	n := len(args) / b.cols
	for n > 0 {
		p := len(b.stmts) - 1
		for 1<<p > n {
			p--
		}
		m := 1 << p
		if err := run(p, args[:m*b.cols]); err != nil {
			return err
		}
		args, n = args[m*b.cols:], n-m
	}
	return nil
}

func (b *bulkInsert) close() {
	if b == nil {
		return
	}
	for _, s := range b.stmts {
		s.Close()
	}
}
