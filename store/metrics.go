package store

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// StepMetrics is one training step's named metrics, e.g. "mean_r_out",
// "accept", "dead_share" (docs/training.md lists the trainer's).
type StepMetrics struct {
	// Step is the step index (>= 0).
	Step int
	// Metrics maps metric name to value.
	Metrics map[string]float64
}

// SaveMetrics stores the metrics of one step of a run (table step_metrics,
// schema version 2), replacing any value already stored under the same
// (run, step, name): a resumed training run that replays a step writes the
// same key again. All metrics of the call are written in one transaction.
//
// Errors: ErrInvalid (empty runID, negative step, an empty name, a NaN or
// infinite value; nothing is written), ErrNotFound (no such run).
func (db *DB) SaveMetrics(ctx context.Context, runID string, step int, metrics map[string]float64) error {
	if runID == "" || step < 0 {
		return fmt.Errorf("store: save metrics of run %q step %d: %w: want a run ID and step >= 0", runID, step, ErrInvalid)
	}
	names := make([]string, 0, len(metrics))
	for name, v := range metrics {
		if name == "" {
			return fmt.Errorf("store: save metrics of run %s step %d: %w: empty metric name", runID, step, ErrInvalid)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("store: save metrics of run %s step %d: %w: %s = %v, want a finite value", runID, step, ErrInvalid, name, v)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	err := db.write(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO step_metrics(run_id, step, name, value) VALUES (?, ?, ?, ?)
			ON CONFLICT(run_id, step, name) DO UPDATE SET value = excluded.value`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, name := range names {
			if _, err := stmt.ExecContext(ctx, runID, step, name, metrics[name]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: save metrics of run %s step %d: %w", runID, step, err)
	}
	return nil
}

// Metrics returns a run's stored step metrics, one entry per step in
// increasing step order (an empty slice when none were stored). Errors:
// ErrNotFound (no such run).
func (db *DB) Metrics(ctx context.Context, runID string) ([]StepMetrics, error) {
	out := []StepMetrics{}
	err := db.read(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT step, name, value FROM step_metrics WHERE run_id = ? ORDER BY step, name`, runID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var step int
			var name string
			var v float64
			if err := rows.Scan(&step, &name, &v); err != nil {
				return err
			}
			if len(out) == 0 || out[len(out)-1].Step != step {
				out = append(out, StepMetrics{Step: step, Metrics: map[string]float64{}})
			}
			out[len(out)-1].Metrics[name] = v
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: metrics of run %s: %w", runID, err)
	}
	return out, nil
}
