package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

// Run statuses.
const (
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

func validStatus(s string) bool {
	switch s {
	case StatusRunning, StatusDone, StatusInterrupted, StatusFailed:
		return true
	}
	return false
}

// Run is one invocation of an evaluation, training or simulation job; its
// episodes hang off it.
type Run struct {
	// ID is the run's key, e.g. from NewRunID.
	ID string
	// CreatedAt and UpdatedAt are stored in UTC with nanosecond precision
	// and load as UTC (compare with time.Time.Equal). Zero means "now" on
	// CreateRun.
	CreatedAt, UpdatedAt time.Time
	// Kind says what produced the run, e.g. "eval", "train", "sim".
	Kind string
	// Seed is the run seed episodes derive theirs from (episode.Seed).
	Seed uint64
	// Version is the PersuArena version that wrote the run.
	Version string
	// Config is the run's configuration JSON, stored byte for byte; nil
	// means none. It must never hold credentials: callers strip API keys
	// before saving, and CreateRun refuses obvious ones (ErrSecret).
	Config json.RawMessage
	// Status is one of StatusRunning, StatusDone, StatusInterrupted,
	// StatusFailed; empty means StatusRunning on CreateRun.
	Status string
}

// timeLayout is RFC 3339 in UTC with a fixed nine-digit fraction, so text
// order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// NewRunID returns a sortable run ID "YYYYMMDD-HHMMSS-xxxx": now in UTC to
// the second, then four hex digits mixed from seed and now's nanoseconds
// (episode.Mix). It is a pure function of (now, seed): two runs started in
// the same nanosecond with the same seed collide, and CreateRun then
// reports ErrDuplicate.
func NewRunID(now time.Time, seed uint64) string {
	h := episode.Mix(seed^uint64(now.UnixNano())) & 0xffff
	return fmt.Sprintf("%s-%04x", now.UTC().Format("20060102-150405"), h)
}

// CreateRun stores a new run. Zero CreatedAt/UpdatedAt become the current
// time, an empty Status StatusRunning.
//
// Errors: ErrInvalid (empty ID, unknown status, Config not valid JSON),
// ErrSecret (Config holds a credential-like key with a non-empty string
// value, see ConfigSecrets), ErrDuplicate (ID taken).
func (db *DB) CreateRun(ctx context.Context, r Run) error {
	if r.ID == "" {
		return fmt.Errorf("store: create run: %w: empty id", ErrInvalid)
	}
	if r.Status == "" {
		r.Status = StatusRunning
	}
	if !validStatus(r.Status) {
		return fmt.Errorf("store: create run %s: %w: status %q", r.ID, ErrInvalid, r.Status)
	}
	var config any
	if r.Config != nil {
		if !json.Valid(r.Config) {
			return fmt.Errorf("store: create run %s: %w: config is not valid JSON", r.ID, ErrInvalid)
		}
		if keys := ConfigSecrets(r.Config); len(keys) > 0 {
			return fmt.Errorf("store: create run %s: %w: config key %s (strip credentials before saving)", r.ID, ErrSecret, keys[0])
		}
		config = string(r.Config)
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = db.now()
	}
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt = r.CreatedAt
	}
	err := db.write(ctx, func(tx *dbtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO runs(id, created_at, updated_at, kind, seed, version, config, status)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, formatTime(r.CreatedAt), formatTime(r.UpdatedAt), r.Kind, int64(r.Seed), r.Version, config, r.Status)
		return err
	})
	if db.d.unique(err) {
		return fmt.Errorf("store: create run %s: %w", r.ID, ErrDuplicate)
	}
	if err != nil {
		return fmt.Errorf("store: create run %s: %w", r.ID, err)
	}
	return nil
}

const runColumns = `id, created_at, updated_at, kind, seed, version, config, status`

type scanner interface{ Scan(dest ...any) error }

func scanRun(s scanner, extra ...any) (Run, error) {
	var (
		r                Run
		created, updated string
		seed             int64
		config           sql.NullString
	)
	dest := append([]any{&r.ID, &created, &updated, &r.Kind, &seed, &r.Version, &config, &r.Status}, extra...)
	if err := s.Scan(dest...); err != nil {
		return Run{}, err
	}
	var err error
	if r.CreatedAt, err = parseTime(created); err != nil {
		return Run{}, fmt.Errorf("run %s: created_at: %w", r.ID, err)
	}
	if r.UpdatedAt, err = parseTime(updated); err != nil {
		return Run{}, fmt.Errorf("run %s: updated_at: %w", r.ID, err)
	}
	r.Seed = uint64(seed)
	if config.Valid {
		r.Config = json.RawMessage(config.String)
	}
	return r, nil
}

// GetRun returns the run with the given ID, or ErrNotFound.
func (db *DB) GetRun(ctx context.Context, id string) (Run, error) {
	r, err := scanRun(db.queryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("store: run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("store: run %s: %w", id, err)
	}
	return r, nil
}

// DeleteRun removes run id with its episodes, turns, probe read-outs and
// step metrics, in one transaction (the schema's ON DELETE CASCADE with
// foreign keys on): either all of it goes or nothing does.
// Errors: ErrNotFound for an unknown run.
func (db *DB) DeleteRun(ctx context.Context, id string) error {
	err := db.write(ctx, func(tx *dbtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err == nil && n == 0 {
			err = ErrNotFound
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete run %s: %w", id, err)
	}
	return nil
}

// SetRunStatus sets a run's status and stamps UpdatedAt with the current
// time. Errors: ErrInvalid (unknown status), ErrNotFound.
func (db *DB) SetRunStatus(ctx context.Context, id, status string) error {
	if !validStatus(status) {
		return fmt.Errorf("store: run %s: %w: status %q", id, ErrInvalid, status)
	}
	var n int64
	err := db.write(ctx, func(tx *dbtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, updated_at = ? WHERE id = ?`,
			status, formatTime(db.now()), id)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("store: run %s: set status: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("store: run %s: %w", id, ErrNotFound)
	}
	return nil
}

// TouchRun stamps a running run's UpdatedAt with the current time, the
// heartbeat of the process that plays it (runs.Service); a run with
// another status is left as it is, so a late heartbeat never undoes a
// finish. Errors: ErrNotFound for an unknown run.
func (db *DB) TouchRun(ctx context.Context, id string) error {
	var n int64
	err := db.write(ctx, func(tx *dbtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET updated_at = ? WHERE id = ? AND status = ?`,
			formatTime(db.now()), id, StatusRunning)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("store: run %s: touch: %w", id, err)
	}
	if n == 0 {
		if _, err := db.GetRun(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// RunSummary is a run with its episode counts, as ListRuns reports it.
type RunSummary struct {
	Run
	// Episodes is the number of stored episodes; Failed those with terminal
	// "failed"; Accepted those with terminal "accept".
	Episodes, Failed, Accepted int
	// AcceptShare is the full acceptance rate Accepted / (Episodes -
	// Failed) in [0, 1] (Probe-RPO paper; failed episodes are excluded from outcome
	// metrics, decision.TermFailed), 0 when no episode counts.
	// Choice: truncated episodes stay in the denominator.
	AcceptShare float64
}

// ListRuns returns every run with its counts, newest first (CreatedAt
// descending, then ID descending).
func (db *DB) ListRuns(ctx context.Context) ([]RunSummary, error) {
	rows, err := db.query(ctx, `SELECT `+prefixed("r.", runColumns)+`,
			COUNT(e.id),
			COUNT(CASE WHEN e.terminal = ? THEN 1 END),
			COUNT(CASE WHEN e.terminal = ? THEN 1 END)
		FROM runs r LEFT JOIN episodes e ON e.run_id = r.id
		GROUP BY r.id
		ORDER BY r.created_at DESC, r.id DESC`, string(decision.TermFailed), string(decision.TermAccept))
	if err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	defer rows.Close()
	out := []RunSummary{}
	for rows.Next() {
		var s RunSummary
		s.Run, err = scanRun(rows, &s.Episodes, &s.Failed, &s.Accepted)
		if err != nil {
			return nil, fmt.Errorf("store: list runs: %w", err)
		}
		if n := s.Episodes - s.Failed; n > 0 {
			s.AcceptShare = float64(s.Accepted) / float64(n)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	return out, nil
}

// prefixed qualifies each column of a ", "-separated list with p.
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}

// PairCounts counts one persuader/persuadee pair's episodes by terminal
// state.
type PairCounts struct {
	Persuader, Persuadee string
	// Episodes is the pair's episode count; Terminals splits it by terminal
	// state (states with no episode are absent).
	Episodes  int
	Terminals map[decision.Terminal]int
}

// Stored returns how many episodes pcs count over all their pairs (a
// run's stored episodes, from TerminalCounts).
func Stored(pcs []PairCounts) int {
	n := 0
	for _, pc := range pcs {
		n += pc.Episodes
	}
	return n
}

// TerminalCounts returns, for each persuader/persuadee pair of the run
// (sorted by persuader then persuadee), its episodes counted by terminal
// state. Errors: ErrNotFound when the run does not exist.
func (db *DB) TerminalCounts(ctx context.Context, runID string) ([]PairCounts, error) {
	var out []PairCounts
	err := db.read(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT persuader, persuadee, terminal, COUNT(*) FROM episodes
			WHERE run_id = ? GROUP BY persuader, persuadee, terminal ORDER BY persuader, persuadee, terminal`, runID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var per, pee, term string
			var n int
			if err := rows.Scan(&per, &pee, &term, &n); err != nil {
				return err
			}
			if len(out) == 0 || out[len(out)-1].Persuader != per || out[len(out)-1].Persuadee != pee {
				out = append(out, PairCounts{Persuader: per, Persuadee: pee, Terminals: map[decision.Terminal]int{}})
			}
			pc := &out[len(out)-1]
			pc.Terminals[decision.Terminal(term)] += n
			pc.Episodes += n
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: terminal counts of run %s: %w", runID, err)
	}
	return out, nil
}

// runExists returns ErrNotFound unless the run exists.
func runExists(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, runID string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, runID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
