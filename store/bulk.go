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
}

// prepareBulk prepares "head VALUES (?, ...), ..." for 2^0..2^maxPow rows of
// cols columns each.
func prepareBulk(ctx context.Context, db *DB, head string, cols, maxPow int) (*bulkInsert, error) {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	b := &bulkInsert{cols: cols}
	for p := 0; p <= maxPow; p++ {
		n := 1 << p
		s, err := db.sql.PrepareContext(ctx, db.d.sql(head+" VALUES "+strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")))
		if err != nil {
			b.close()
			return nil, err
		}
		b.stmts = append(b.stmts, s)
	}
	return b, nil
}

// exec inserts the rows whose values args holds, row after row (len(args)
// is a multiple of cols), within tx.
func (b *bulkInsert) exec(ctx context.Context, tx *dbtx, args []any) error {
	n := len(args) / b.cols
	for n > 0 {
		p := len(b.stmts) - 1
		for 1<<p > n {
			p--
		}
		m := 1 << p
		if _, err := tx.StmtContext(ctx, b.stmts[p]).ExecContext(ctx, args[:m*b.cols]...); err != nil {
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
