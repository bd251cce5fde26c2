package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

// EpisodeKey identifies an episode within a run; a run holds at most one
// episode per key.
type EpisodeKey struct {
	Persuader, Persuadee, ScenarioID string
	Rollout                          int
}

// KeyOf returns ep's key.
func KeyOf(ep *episode.Episode) EpisodeKey {
	return EpisodeKey{ep.Persuader, ep.Persuadee, ep.ScenarioID, ep.Rollout}
}

// ParseEpisodeKey reads the form String writes,
// "persuader/persuadee/scenario#rollout"; the persuadee may hold slashes
// (sim:FILE), the persuader and the scenario id not. Errors name the form
// wanted, or the rollout that is not an integer >= 0.
func ParseEpisodeKey(s string) (EpisodeKey, error) {
	var k EpisodeKey
	head, roll, ok := strings.Cut(s, "#")
	first, rest, ok2 := strings.Cut(head, "/")
	i := strings.LastIndex(rest, "/")
	if !ok || !ok2 || i < 0 {
		return k, fmt.Errorf("episode key %q: want persuader/persuadee/scenario#rollout", s)
	}
	n, err := strconv.Atoi(roll)
	if err != nil || n < 0 {
		return k, fmt.Errorf("episode key %q: rollout %q is not a number >= 0", s, roll)
	}
	return EpisodeKey{Persuader: first, Persuadee: rest[:i], ScenarioID: rest[i+1:], Rollout: n}, nil
}

// String formats k as "persuader/persuadee/scenario#rollout" for messages.
func (k EpisodeKey) String() string {
	return fmt.Sprintf("%s/%s/%s#%d", k.Persuader, k.Persuadee, k.ScenarioID, k.Rollout)
}

const insertEpisodeSQL = `INSERT INTO episodes(run_id, persuader, persuadee, scenario_id, rollout, seed,
	split, family, domain, resistance, terminal, r_goal, b0, b_final, n_turns, error,
	r_strategy, acts_by, judge_error, judge_ms,
	judge_prompt_tokens, judge_completion_tokens, judge_cached_tokens, judge_requests,
	initial_probe_ms, initial_probe_prompt_tokens, initial_probe_completion_tokens,
	initial_probe_cached_tokens, initial_probe_requests, reward)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const insertTurnHead = `INSERT INTO turns(episode_id, t, persuader_text, persuadee_text, decision, acts,
	belief, dense, persuader_ms, persuadee_ms, probe_ms,
	persuader_prompt_tokens, persuader_completion_tokens, persuader_cached_tokens, persuader_requests,
	persuadee_prompt_tokens, persuadee_completion_tokens, persuadee_cached_tokens, persuadee_requests,
	probe_prompt_tokens, probe_completion_tokens, probe_cached_tokens, probe_requests)`

const turnCols = 23

const insertReadingHead = `INSERT INTO probe_readings(episode_id, t, k, probe, p, ok)`

const readingCols = 6

// nullable maps a nil *float64 to SQL NULL.
func nullable(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// checkFinite rejects NaN and ±Inf, which neither SQLite (NaN becomes
// NULL) nor the episode JSON encoding can carry; field names the value.
func checkFinite(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%w: %s = %v is not finite", ErrInvalid, field, v)
	}
	return nil
}

func checkEpisode(ep *episode.Episode) error {
	type fv struct {
		f string
		v *float64
	}
	check := func(vs ...fv) error {
		for _, x := range vs {
			if x.v != nil {
				if err := checkFinite(x.f, *x.v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	readings := func(prefix string, rs []probe.Reading) error {
		for k := range rs {
			if err := check(fv{fmt.Sprintf("%s[%d].p", prefix, k), &rs[k].P}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check(fv{"r_goal", &ep.RGoal}, fv{"b0", ep.B0}, fv{"r_strategy", ep.RStrategy},
		fv{"judge_ms", &ep.JudgeMS}, fv{"initial_probe_ms", &ep.InitialProbeMS}); err != nil {
		return err
	}
	if err := readings("initial", ep.Initial); err != nil {
		return err
	}
	for i := range ep.Turns {
		tu := &ep.Turns[i]
		p := fmt.Sprintf("turns[%d]", i)
		if tu.T < 1 {
			return fmt.Errorf("%w: %s.t = %d, want >= 1", ErrInvalid, p, tu.T)
		}
		if err := check(fv{p + ".belief", tu.Belief}, fv{p + ".dense", tu.Dense},
			fv{p + ".persuader_ms", &tu.PersuaderMS}, fv{p + ".persuadee_ms", &tu.PersuadeeMS},
			fv{p + ".probe_ms", &tu.ProbeMS}); err != nil {
			return err
		}
		if err := readings(p+".probes", tu.Probes); err != nil {
			return err
		}
	}
	return nil
}

// SaveEpisode stores ep under run runID: the episode row, all its turns and
// all its probe read-outs (Initial at t = 0, each turn's Probes at its T)
// in one transaction, so either all of it is stored or nothing is.
//
// ep.RunID must be empty or equal runID; episodes load with RunID =
// runID. Turn indices T must be >= 1 and distinct. Seeds are stored as
// int64 bit-casts of the uint64 and load unchanged.
//
// Errors: ErrInvalid (nil episode, mismatched RunID, a NaN or infinite
// number, a duplicate or non-positive turn index), ErrNotFound (no such
// run), ErrDuplicate (the run already holds an episode with ep's
// EpisodeKey; nothing is written).
func (db *DB) SaveEpisode(ctx context.Context, runID string, ep *episode.Episode) error {
	return db.SaveEpisodes(ctx, runID, []*episode.Episode{ep})
}

// SaveEpisodes stores eps under run runID in one transaction, as
// SaveEpisode does for one: all of them or none. Batching amortises the
// transaction's commit (one WAL sync) over the batch, which dominates the
// cost of small episodes (performance issue). Errors are SaveEpisode's,
// naming the first offending episode; on any error nothing is written.
func (db *DB) SaveEpisodes(ctx context.Context, runID string, eps []*episode.Episode) error {
	if len(eps) == 0 {
		return nil
	}
	// Validate and encode outside the write lock.
	rows, err := encodeRows(runID, eps)
	if err != nil {
		return err
	}
	var failed *episodeRow
	err = db.write(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		ins := &sqlInserter{tx: tx, ins: tx.StmtContext(ctx, db.insEpisode), returning: db.d.returning}
		for i := range rows {
			if err := db.insertEpisode(ctx, ins, runID, &rows[i]); err != nil {
				failed = &rows[i]
				return err
			}
		}
		return nil
	})
	if err != nil {
		key := KeyOf(eps[0])
		if failed != nil {
			key = KeyOf(failed.ep)
		}
		return fmt.Errorf("store: save episode %s to run %s: %w", key, runID, err)
	}
	return nil
}

// episodeRow is an episode checked and encoded for insertion.
type episodeRow struct {
	ep     *episode.Episode
	acts   []string
	bFinal any
	reward string // Episode.Reward as JSON, "" when nil
}

// encodeRows checks and encodes eps for insertion under run runID.
// Errors: encode's, for the first offending episode.
func encodeRows(runID string, eps []*episode.Episode) ([]episodeRow, error) {
	rows := make([]episodeRow, len(eps))
	for i, ep := range eps {
		if err := rows[i].encode(runID, ep); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func (r *episodeRow) encode(runID string, ep *episode.Episode) error {
	if ep == nil {
		return fmt.Errorf("store: save episode: %w: nil episode", ErrInvalid)
	}
	key := KeyOf(ep)
	if ep.RunID != "" && ep.RunID != runID {
		return fmt.Errorf("store: save episode %s: %w: episode run_id %q, saving to run %q", key, ErrInvalid, ep.RunID, runID)
	}
	if err := checkEpisode(ep); err != nil {
		return fmt.Errorf("store: save episode %s: %w", key, err)
	}
	r.ep = ep
	r.acts = make([]string, len(ep.Turns))
	for i, tu := range ep.Turns {
		if tu.Acts == nil {
			r.acts[i] = "[]"
			continue
		}
		b, err := json.Marshal(tu.Acts)
		if err != nil {
			return fmt.Errorf("store: save episode %s: turns[%d].acts: %w", key, i, err)
		}
		r.acts[i] = string(b)
	}
	if b, ok := ep.FinalBelief(); ok {
		r.bFinal = b
	}
	if ep.Reward != nil {
		b, err := json.Marshal(ep.Reward)
		if err != nil {
			return fmt.Errorf("store: save episode %s: reward: %w", key, err)
		}
		r.reward = string(b)
	}
	return nil
}

// inserter runs insertEpisode's statements inside one transaction: a
// database/sql one (sqlInserter) or a caller's pgx one (pgxInserter,
// SaveEpisodesTx).
type inserter interface {
	// episode inserts one episodes row of args and returns its id.
	episode(ctx context.Context, args []any) (int64, error)
	// bulk inserts the rows whose values args holds with b's statements.
	bulk(ctx context.Context, b *bulkInsert, args []any) error
}

// sqlInserter is an inserter on a database/sql transaction with the DB's
// prepared statements; ins is the episodes insert bound to tx.
type sqlInserter struct {
	tx        *dbtx
	ins       *sql.Stmt
	returning bool
}

func (s *sqlInserter) episode(ctx context.Context, args []any) (int64, error) {
	var id int64
	if s.returning {
		err := s.ins.QueryRowContext(ctx, args...).Scan(&id)
		return id, err
	}
	res, err := s.ins.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func (s *sqlInserter) bulk(ctx context.Context, b *bulkInsert, args []any) error {
	return b.exec(ctx, s.tx, args)
}

// insertEpisode writes one encoded episode, its turns and its probe
// readings inside tx.
func (db *DB) insertEpisode(ctx context.Context, tx inserter, runID string, r *episodeRow) error {
	ep := r.ep
	ju, iu := ep.JudgeUsage, ep.InitialProbeUsage
	args := []any{
		runID, ep.Persuader, ep.Persuadee, ep.ScenarioID, ep.Rollout, int64(ep.Seed),
		string(ep.Split), string(ep.Family), ep.Domain, string(ep.Resistance), string(ep.Terminal),
		ep.RGoal, nullable(ep.B0), r.bFinal, len(ep.Turns), ep.Error,
		nullable(ep.RStrategy), ep.ActsBy, ep.JudgeError, ep.JudgeMS,
		ju.PromptTokens, ju.CompletionTokens, ju.CachedTokens, ju.Requests,
		ep.InitialProbeMS, iu.PromptTokens, iu.CompletionTokens, iu.CachedTokens, iu.Requests, r.reward}
	id, err := tx.episode(ctx, args)
	if db.d.unique(err) {
		return ErrDuplicate
	}
	if err != nil {
		return err
	}
	targs := make([]any, 0, len(ep.Turns)*turnCols)
	nr := len(ep.Initial)
	for i := range ep.Turns {
		tu := &ep.Turns[i]
		nr += len(tu.Probes)
		pu, eu, ru := tu.PersuaderUsage, tu.PersuadeeUsage, tu.ProbeUsage
		targs = append(targs, id, tu.T, tu.Persuader, tu.Persuadee, string(tu.Decision), r.acts[i],
			nullable(tu.Belief), nullable(tu.Dense), tu.PersuaderMS, tu.PersuadeeMS, tu.ProbeMS,
			pu.PromptTokens, pu.CompletionTokens, pu.CachedTokens, pu.Requests,
			eu.PromptTokens, eu.CompletionTokens, eu.CachedTokens, eu.Requests,
			ru.PromptTokens, ru.CompletionTokens, ru.CachedTokens, ru.Requests)
	}
	err = tx.bulk(ctx, db.insTurn, targs)
	if db.d.unique(err) {
		return fmt.Errorf("turns: %w: duplicate turn index t=%d", ErrInvalid, duplicateT(ep.Turns))
	}
	if err != nil {
		return fmt.Errorf("turns: %w", err)
	}
	rargs := make([]any, 0, nr*readingCols)
	for k, rd := range ep.Initial {
		rargs = append(rargs, id, 0, k, rd.Probe, rd.P, rd.OK)
	}
	for i := range ep.Turns {
		for k, rd := range ep.Turns[i].Probes {
			rargs = append(rargs, id, ep.Turns[i].T, k, rd.Probe, rd.P, rd.OK)
		}
	}
	if err := tx.bulk(ctx, db.insReading, rargs); err != nil {
		return fmt.Errorf("probe readings: %w", err)
	}
	return nil
}

// duplicateT returns the first turn index that occurs twice in ts (0 if none).
func duplicateT(ts []episode.Turn) int {
	seen := map[int]bool{}
	for _, tu := range ts {
		if seen[tu.T] {
			return tu.T
		}
		seen[tu.T] = true
	}
	return 0
}

// DeleteFailed removes the run's failed episodes (terminal "failed") with
// their turns and probe readings, in one transaction, and returns how many
// it removed; a resume then replays them (eval --resume RUN --retry-failed).
// Errors: ErrNotFound when the run does not exist.
func (db *DB) DeleteFailed(ctx context.Context, runID string) (int, error) {
	var n int64
	err := db.write(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM episodes WHERE run_id = ? AND terminal = ?`, runID, string(decision.TermFailed))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: delete failed episodes of run %s: %w", runID, err)
	}
	return int(n), nil
}

// EachOutcome calls fn with the outcome of every episode of the run (failed
// ones included) that matches every filter (see Filter), in storage order,
// reading one row at a time from the episodes table: no turns are loaded,
// so memory does not grow with the run (a 177k-episode run used to take
// 2 GB to print its table). An error from fn stops the scan and is
// returned.
// Errors: ErrNotFound when the run does not exist.
func (db *DB) EachOutcome(ctx context.Context, runID string, fn func(episode.Outcome) error, filters ...Filter) error {
	conds, args := []string{"e.run_id = ?"}, []any{runID}
	for _, f := range filters {
		conds, args = f.where(conds, args)
	}
	err := db.read(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT e.persuader, e.persuadee, e.scenario_id, e.rollout, e.terminal, e.r_goal,
			e.r_strategy, e.judge_error, e.n_turns, e.b_final FROM episodes e WHERE `+strings.Join(conds, " AND ")+` ORDER BY e.id`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var o episode.Outcome
			var term string
			var rs, bf sql.NullFloat64
			if err := rows.Scan(&o.Persuader, &o.Persuadee, &o.ScenarioID, &o.Rollout, &term, &o.RGoal,
				&rs, &o.JudgeError, &o.Turns, &bf); err != nil {
				return err
			}
			o.Terminal = decision.Terminal(term)
			if rs.Valid {
				o.RStrategy = &rs.Float64
			}
			if bf.Valid {
				o.BFinal = &bf.Float64
			}
			if err := fn(o); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("store: outcomes of run %s: %w", runID, err)
	}
	return nil
}

// Arm is one (persuader, persuadee) combination of a run.
type Arm struct{ Persuader, Persuadee string }

// Arms returns the run's distinct (persuader, persuadee) combinations,
// sorted by persuader then persuadee, from the episodes table's unique
// index (no episode is decoded).
// Errors: ErrNotFound when the run does not exist.
func (db *DB) Arms(ctx context.Context, runID string) ([]Arm, error) {
	var out []Arm
	err := db.read(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT persuader, persuadee FROM episodes WHERE run_id = ?
			ORDER BY persuader, persuadee`, runID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a Arm
			if err := rows.Scan(&a.Persuader, &a.Persuadee); err != nil {
				return err
			}
			out = append(out, a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: arms of run %s: %w", runID, err)
	}
	return out, nil
}

// DoneKeys returns the keys of every episode stored in the run, failed
// ones included: on resume a runner skips them and plays the rest (unless
// DeleteFailed removed them first).
// Errors: ErrNotFound when the run does not exist.
func (db *DB) DoneKeys(ctx context.Context, runID string) (map[EpisodeKey]bool, error) {
	done := map[EpisodeKey]bool{}
	err := db.read(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT persuader, persuadee, scenario_id, rollout FROM episodes WHERE run_id = ?`, runID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k EpisodeKey
			if err := rows.Scan(&k.Persuader, &k.Persuadee, &k.ScenarioID, &k.Rollout); err != nil {
				return err
			}
			done[k] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: done keys of run %s: %w", runID, err)
	}
	return done, nil
}

// Filter narrows Episodes; empty fields match everything, and several
// filters must all match.
type Filter struct {
	Persuader, Persuadee, ScenarioID string
	Split                            scenario.Split
	Terminal                         decision.Terminal
	// Family is the scenario's domain family, Resistance its hidden
	// resistance type (scenario.Families, scenario.Resistances).
	Family     scenario.Family
	Resistance scenario.Resistance
}

func (f Filter) where(conds []string, args []any) ([]string, []any) {
	for _, c := range []struct{ col, v string }{
		{"persuader", f.Persuader}, {"persuadee", f.Persuadee}, {"scenario_id", f.ScenarioID},
		{"split", string(f.Split)}, {"terminal", string(f.Terminal)},
		{"family", string(f.Family)}, {"resistance", string(f.Resistance)},
	} {
		if c.v != "" {
			conds = append(conds, "e."+c.col+" = ?")
			args = append(args, c.v)
		}
	}
	return conds, args
}

// Episodes returns the run's episodes matching every filter, fully
// reconstructed (turns and probe read-outs), ordered by persuader,
// persuadee, scenario ID, rollout. It reads with three queries per call
// (episodes, turns, readings) in one snapshot, whatever the episode count.
//
// A loaded episode equals the saved one field for field (reflect.DeepEqual)
// with these normalisations: RunID is runID; Turns is sorted by T and is
// a non-nil slice (empty when there are none); every turn's Acts is
// non-nil; Initial and each turn's Probes are nil when empty. None of them
// changes the JSON encoding except a nil Turns or Acts ("null" becomes
// "[]").
//
// Errors: ErrNotFound when the run does not exist.
func (db *DB) Episodes(ctx context.Context, runID string, filters ...Filter) ([]*episode.Episode, error) {
	conds, args := []string{"e.run_id = ?"}, []any{runID}
	for _, f := range filters {
		conds, args = f.where(conds, args)
	}
	where := strings.Join(conds, " AND ")
	var out []*episode.Episode
	err := db.read(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		var err error
		out, err = loadEpisodes(ctx, tx, runID, where, args)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: episodes of run %s: %w", runID, err)
	}
	return out, nil
}

// selectEpisodeCols and selectTurnCols are the columns scanEpisode and
// scanTurn read, in order.
const (
	selectEpisodeCols = `e.id, e.persuader, e.persuadee, e.scenario_id, e.rollout, e.seed,
		e.split, e.family, e.domain, e.resistance, e.terminal, e.r_goal, e.b0, e.n_turns, e.error,
		e.r_strategy, e.acts_by, e.judge_error, e.judge_ms,
		e.judge_prompt_tokens, e.judge_completion_tokens, e.judge_cached_tokens, e.judge_requests,
		e.initial_probe_ms, e.initial_probe_prompt_tokens, e.initial_probe_completion_tokens,
		e.initial_probe_cached_tokens, e.initial_probe_requests, e.reward`
	selectTurnCols = `t.episode_id, t.t, t.persuader_text, t.persuadee_text, t.decision, t.acts,
		t.belief, t.dense, t.persuader_ms, t.persuadee_ms, t.probe_ms,
		t.persuader_prompt_tokens, t.persuader_completion_tokens, t.persuader_cached_tokens, t.persuader_requests,
		t.persuadee_prompt_tokens, t.persuadee_completion_tokens, t.persuadee_cached_tokens, t.persuadee_requests,
		t.probe_prompt_tokens, t.probe_completion_tokens, t.probe_cached_tokens, t.probe_requests`
	episodeOrder = `e.persuader, e.persuadee, e.scenario_id, e.rollout`
)

// scanEpisode reads one row of selectEpisodeCols (Turns empty, capacity n_turns).
func scanEpisode(rows *sql.Rows, runID string) (int64, *episode.Episode, error) {
	var (
		id, seed                            int64
		nTurns                              int
		split, family, resistance, terminal string
		b0, rStrategy                       sql.NullFloat64
		rewardJSON                          string
		ep                                  = &episode.Episode{RunID: runID}
		ju, iu                              = &ep.JudgeUsage, &ep.InitialProbeUsage
	)
	if err := rows.Scan(&id, &ep.Persuader, &ep.Persuadee, &ep.ScenarioID, &ep.Rollout, &seed,
		&split, &family, &ep.Domain, &resistance, &terminal, &ep.RGoal, &b0, &nTurns, &ep.Error,
		&rStrategy, &ep.ActsBy, &ep.JudgeError, &ep.JudgeMS,
		&ju.PromptTokens, &ju.CompletionTokens, &ju.CachedTokens, &ju.Requests,
		&ep.InitialProbeMS, &iu.PromptTokens, &iu.CompletionTokens, &iu.CachedTokens, &iu.Requests, &rewardJSON); err != nil {
		return 0, nil, err
	}
	if rewardJSON != "" {
		ep.Reward = new(episode.RewardVector)
		if err := json.Unmarshal([]byte(rewardJSON), ep.Reward); err != nil {
			return id, nil, fmt.Errorf("episode %d: reward: %w", id, err)
		}
	}
	ep.Seed = uint64(seed)
	ep.Split, ep.Family, ep.Resistance = scenario.Split(split), scenario.Family(family), scenario.Resistance(resistance)
	ep.Terminal = decision.Terminal(terminal)
	if b0.Valid {
		ep.B0 = &b0.Float64
	}
	if rStrategy.Valid {
		ep.RStrategy = &rStrategy.Float64
	}
	ep.Turns = make([]episode.Turn, 0, nTurns)
	return id, ep, nil
}

// scanTurn reads one row of selectTurnCols: the episode id and the turn.
func scanTurn(rows *sql.Rows) (int64, episode.Turn, error) {
	var (
		id            int64
		tu            episode.Turn
		dec, acts     string
		belief, dense sql.NullFloat64
	)
	pu, eu, ru := &tu.PersuaderUsage, &tu.PersuadeeUsage, &tu.ProbeUsage
	if err := rows.Scan(&id, &tu.T, &tu.Persuader, &tu.Persuadee, &dec, &acts,
		&belief, &dense, &tu.PersuaderMS, &tu.PersuadeeMS, &tu.ProbeMS,
		&pu.PromptTokens, &pu.CompletionTokens, &pu.CachedTokens, &pu.Requests,
		&eu.PromptTokens, &eu.CompletionTokens, &eu.CachedTokens, &eu.Requests,
		&ru.PromptTokens, &ru.CompletionTokens, &ru.CachedTokens, &ru.Requests); err != nil {
		return 0, tu, err
	}
	tu.Decision = decision.Decision(dec)
	if err := json.Unmarshal([]byte(acts), &tu.Acts); err != nil {
		return id, tu, fmt.Errorf("turn t=%d: acts: %w", tu.T, err)
	}
	if tu.Acts == nil { // stored "null" by hand
		tu.Acts = []string{}
	}
	if belief.Valid {
		v := belief.Float64
		tu.Belief = &v
	}
	if dense.Valid {
		v := dense.Float64
		tu.Dense = &v
	}
	return id, tu, nil
}

// addReading files reading r of turn t into ep (t = 0: the initial
// read-out); *cur is the index of the turn reached so far, since readings
// come in (t, k) order.
func addReading(ep *episode.Episode, t int, r probe.Reading, cur *int) error {
	if t == 0 {
		ep.Initial = append(ep.Initial, r)
		return nil
	}
	for *cur < len(ep.Turns) && ep.Turns[*cur].T < t {
		*cur++
	}
	if *cur == len(ep.Turns) || ep.Turns[*cur].T != t {
		return fmt.Errorf("episode %s: probe reading for missing turn t=%d", KeyOf(ep), t)
	}
	ep.Turns[*cur].Probes = append(ep.Turns[*cur].Probes, r)
	return nil
}

func loadEpisodes(ctx context.Context, tx *dbtx, runID, where string, args []any) ([]*episode.Episode, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+selectEpisodeCols+`
		FROM episodes e WHERE `+where+` ORDER BY `+episodeOrder, args...)
	if err != nil {
		return nil, err
	}
	out := []*episode.Episode{}
	byID := map[int64]*episode.Episode{}
	for rows.Next() {
		id, ep, err := scanEpisode(rows, runID)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, ep)
		byID[id] = ep
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}

	// Turns of all selected episodes, one query.
	rows, err = tx.QueryContext(ctx, `SELECT `+selectTurnCols+`
		FROM turns t JOIN episodes e ON e.id = t.episode_id WHERE `+where+` ORDER BY t.episode_id, t.t`, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		id, tu, err := scanTurn(rows)
		ep := byID[id]
		if err != nil {
			rows.Close()
			if ep != nil {
				return nil, fmt.Errorf("episode %s %w", KeyOf(ep), err)
			}
			return nil, err
		}
		if ep == nil { // cannot happen: same WHERE, same snapshot
			rows.Close()
			return nil, fmt.Errorf("turn t=%d of unknown episode %d", tu.T, id)
		}
		ep.Turns = append(ep.Turns, tu)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	// Probe read-outs of all selected episodes, one query; rows come in
	// (episode, t, k) order, so each episode's turns are walked once.
	rows, err = tx.QueryContext(ctx, `SELECT r.episode_id, r.t, r.probe, r.p, r.ok
		FROM probe_readings r JOIN episodes e ON e.id = r.episode_id WHERE `+where+` ORDER BY r.episode_id, r.t, r.k`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		curID int64 = -1
		cur   int
	)
	for rows.Next() {
		var (
			id int64
			t  int
			r  probe.Reading
		)
		if err := rows.Scan(&id, &t, &r.Probe, &r.P, &r.OK); err != nil {
			return nil, err
		}
		ep := byID[id]
		if ep == nil {
			return nil, fmt.Errorf("probe reading t=%d of unknown episode %d", t, id)
		}
		if id != curID {
			curID, cur = id, 0
		}
		if err := addReading(ep, t, r, &cur); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// EachEpisode calls fn with every episode of the run that matches every
// filter, fully reconstructed as Episodes returns it (same fields, same
// normalisations) and in Episodes' order (persuader, persuadee, scenario
// ID, rollout), but one episode at a time: three cursors (episodes, turns,
// readings) walk the run in that order in one snapshot, so memory holds
// one episode, not the run. fn may keep the episode it is given (each call
// gets a fresh one). An error from fn stops the scan and is returned.
//
// Errors: ErrNotFound when the run does not exist; a turn or reading
// that belongs to no episode of the scan (a corrupt store).
func (db *DB) EachEpisode(ctx context.Context, runID string, fn func(*episode.Episode) error, filters ...Filter) error {
	conds, args := []string{"e.run_id = ?"}, []any{runID}
	for _, f := range filters {
		conds, args = f.where(conds, args)
	}
	where := strings.Join(conds, " AND ")
	err := db.read(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		if !db.d.streams {
			return db.eachEpisodePaged(ctx, tx, runID, where, args, fn)
		}
		eps, err := tx.QueryContext(ctx, `SELECT `+selectEpisodeCols+` FROM episodes e WHERE `+where+` ORDER BY `+episodeOrder, args...)
		if err != nil {
			return err
		}
		defer eps.Close()
		// The child rows are read in the episodes' order through the
		// episodes index (no sort of the turns table), so each cursor
		// moves forward only.
		turns, err := tx.QueryContext(ctx, `SELECT `+selectTurnCols+` FROM episodes e JOIN turns t ON t.episode_id = e.id
			WHERE `+where+` ORDER BY `+episodeOrder+`, t.t`, args...)
		if err != nil {
			return err
		}
		defer turns.Close()
		reads, err := tx.QueryContext(ctx, `SELECT r.episode_id, r.t, r.probe, r.p, r.ok FROM episodes e
			JOIN probe_readings r ON r.episode_id = e.id WHERE `+where+` ORDER BY `+episodeOrder+`, r.t, r.k`, args...)
		if err != nil {
			return err
		}
		defer reads.Close()
		var (
			tID, rID     int64 = -1, -1
			tu           episode.Turn
			rt           int
			rr           probe.Reading
			tMore, rMore = true, true
		)
		nextTurn := func() error {
			if tMore = turns.Next(); !tMore {
				return turns.Err()
			}
			var err error
			tID, tu, err = scanTurn(turns)
			return err
		}
		nextReading := func() error {
			if rMore = reads.Next(); !rMore {
				return reads.Err()
			}
			return reads.Scan(&rID, &rt, &rr.Probe, &rr.P, &rr.OK)
		}
		if err := nextTurn(); err != nil {
			return err
		}
		if err := nextReading(); err != nil {
			return err
		}
		for eps.Next() {
			id, ep, err := scanEpisode(eps, runID)
			if err != nil {
				return err
			}
			for tMore && tID == id {
				ep.Turns = append(ep.Turns, tu)
				if err := nextTurn(); err != nil {
					return fmt.Errorf("episode %s %w", KeyOf(ep), err)
				}
			}
			cur := 0
			for rMore && rID == id {
				if err := addReading(ep, rt, rr, &cur); err != nil {
					return err
				}
				if err := nextReading(); err != nil {
					return err
				}
			}
			if err := fn(ep); err != nil {
				return err
			}
		}
		if err := eps.Err(); err != nil {
			return err
		}
		if tMore {
			return fmt.Errorf("turn t=%d of unknown episode %d", tu.T, tID)
		}
		if rMore {
			return fmt.Errorf("probe reading t=%d of unknown episode %d", rt, rID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: episodes of run %s: %w", runID, err)
	}
	return nil
}
