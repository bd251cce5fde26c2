package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

// MaxPageLimit is the largest page EpisodePage returns.
const MaxPageLimit = 1000

// EpisodeRow is one episode of a page: its outcome (key, terminal state,
// R_goal, R_strategy, turns, final belief) and its scenario facts, read
// from the episodes table alone (no turns or probe read-outs).
type EpisodeRow struct {
	episode.Outcome
	Seed       uint64
	Split      scenario.Split
	Family     scenario.Family
	Domain     string
	Resistance scenario.Resistance
	// B0 is the initial belief in [0, 1]; nil when unreadable.
	B0 *float64
	// Error is a failed episode's message ("" otherwise).
	Error string
}

// Key returns the row's episode key.
func (r EpisodeRow) Key() episode.Key {
	return episode.Key{Persuader: r.Persuader, Persuadee: r.Persuadee, ScenarioID: r.ScenarioID, Rollout: r.Rollout}
}

// Page is one page of a run's episodes and the number of episodes that
// match its filters in all.
type Page struct {
	Rows  []EpisodeRow
	Total int
}

// EpisodePage returns the run's episodes matching every filter, in
// Episodes' order (persuader, persuadee, scenario ID, rollout), skipping
// the first offset and returning at most limit, with the count of all
// matching episodes. It reads the episodes table only, walking its
// unique (run, persuader, persuadee, scenario, rollout) index, so the
// first page of a 200k-episode run costs about a page of rows plus one
// count over the run's index entries (BenchmarkEpisodePage).
//
// Errors: ErrInvalid when offset < 0 or limit is not in [1,
// MaxPageLimit]; ErrNotFound when the run does not exist.
func (db *DB) EpisodePage(ctx context.Context, runID string, offset, limit int, filters ...Filter) (Page, error) {
	var pg Page
	if offset < 0 || limit < 1 || limit > MaxPageLimit {
		return pg, fmt.Errorf("store: episode page of run %s: %w: offset %d, limit %d (want offset >= 0, 1 <= limit <= %d)",
			runID, ErrInvalid, offset, limit, MaxPageLimit)
	}
	conds, args := []string{"e.run_id = ?"}, []any{runID}
	for _, f := range filters {
		conds, args = f.where(conds, args)
	}
	where := strings.Join(conds, " AND ")
	pg.Rows = []EpisodeRow{}
	err := db.read(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM episodes e WHERE `+where, args...).Scan(&pg.Total); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT e.persuader, e.persuadee, e.scenario_id, e.rollout, e.seed,
			e.split, e.family, e.domain, e.resistance, e.terminal, e.r_goal, e.r_strategy, e.judge_error,
			e.n_turns, e.b0, e.b_final, e.error
			FROM episodes e WHERE `+where+` ORDER BY `+episodeOrder+` LIMIT ? OFFSET ?`,
			append(args, limit, offset)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				r                                   EpisodeRow
				seed                                int64
				split, family, resistance, terminal string
				rs, b0, bf                          sql.NullFloat64
			)
			if err := rows.Scan(&r.Persuader, &r.Persuadee, &r.ScenarioID, &r.Rollout, &seed,
				&split, &family, &r.Domain, &resistance, &terminal, &r.RGoal, &rs, &r.JudgeError,
				&r.Turns, &b0, &bf, &r.Error); err != nil {
				return err
			}
			r.Seed = uint64(seed)
			r.Split, r.Family, r.Resistance = scenario.Split(split), scenario.Family(family), scenario.Resistance(resistance)
			r.Terminal = decision.Terminal(terminal)
			r.RStrategy, r.B0, r.BFinal = floatPtr(rs), floatPtr(b0), floatPtr(bf)
			pg.Rows = append(pg.Rows, r)
		}
		return rows.Err()
	})
	if err != nil {
		return Page{}, fmt.Errorf("store: episode page of run %s: %w", runID, err)
	}
	return pg, nil
}

// floatPtr maps SQL NULL to nil.
func floatPtr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	x := v.Float64
	return &x
}
