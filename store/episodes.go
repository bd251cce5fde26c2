package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

const insertEpisodeSQL = `INSERT INTO episodes(run_id, persuader, persuadee, scenario_id, rollout, seed,
	split, family, domain, resistance, terminal, r_goal, b0, b_final, n_turns, error,
	r_strategy, acts_by, judge_error, judge_ms,
	judge_prompt_tokens, judge_completion_tokens, judge_cached_tokens, judge_requests,
	initial_probe_ms, initial_probe_prompt_tokens, initial_probe_completion_tokens,
	initial_probe_cached_tokens, initial_probe_requests, reward, initial_probe_prompt_once_tokens)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// insertTranscriptSQL stores the transcript of the episode inserted just
// before in the same transaction; %s is the dialect's lastID.
const insertTranscriptSQL = `INSERT INTO transcripts(episode_id, initial_json, turns_json) VALUES (%s, ?, ?)`

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

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// optFinite is finite for a value that may be absent.
func optFinite(p *float64) bool { return p == nil || finite(*p) }

// checkReadings returns the index of the first reading of rs whose P is
// not finite, or -1.
func checkReadings(rs []probe.Reading) int {
	for k := range rs {
		if !finite(rs[k].P) {
			return k
		}
	}
	return -1
}

// checkEpisode rejects what cannot be stored (ErrInvalid): non-finite
// numbers, turn indices < 1 or repeated. Field names are formatted only
// for the error.
func checkEpisode(ep *episode.Episode) error {
	for _, x := range [...]struct {
		f string
		v *float64
	}{{"r_goal", &ep.RGoal}, {"b0", ep.B0}, {"r_strategy", ep.RStrategy},
		{"judge_ms", &ep.JudgeMS}, {"initial_probe_ms", &ep.InitialProbeMS}} {
		if x.v != nil {
			if err := checkFinite(x.f, *x.v); err != nil {
				return err
			}
		}
	}
	if k := checkReadings(ep.Initial); k >= 0 {
		return checkFinite(fmt.Sprintf("initial[%d].p", k), ep.Initial[k].P)
	}
	increasing := true
	for i := range ep.Turns {
		tu := &ep.Turns[i]
		if tu.T < 1 {
			return fmt.Errorf("%w: turns[%d].t = %d, want >= 1", ErrInvalid, i, tu.T)
		}
		if !optFinite(tu.Belief) || !optFinite(tu.Dense) || !finite(tu.PersuaderMS) || !finite(tu.PersuadeeMS) || !finite(tu.ProbeMS) {
			for _, x := range [...]struct {
				f string
				v *float64
			}{{"belief", tu.Belief}, {"dense", tu.Dense}, {"persuader_ms", &tu.PersuaderMS},
				{"persuadee_ms", &tu.PersuadeeMS}, {"probe_ms", &tu.ProbeMS}} {
				if x.v != nil {
					if err := checkFinite(fmt.Sprintf("turns[%d].%s", i, x.f), *x.v); err != nil {
						return err
					}
				}
			}
		}
		if k := checkReadings(tu.Probes); k >= 0 {
			return checkFinite(fmt.Sprintf("turns[%d].probes[%d].p", i, k), tu.Probes[k].P)
		}
		increasing = increasing && (i == 0 || tu.T > ep.Turns[i-1].T)
	}
	if !increasing {
		if t := duplicateT(ep.Turns); t != 0 {
			return fmt.Errorf("%w: duplicate turn index t=%d", ErrInvalid, t)
		}
	}
	return nil
}

// SaveEpisode stores ep under run runID: the episode row with all its
// turns and all its probe read-outs (Initial at t = 0, each turn's Probes
// at its T) in one transaction, so either all of it is stored or nothing
// is.
//
// ep.RunID must be empty or equal runID; episodes load with RunID =
// runID. Turn indices T must be >= 1 and distinct. Seeds are stored as
// int64 bit-casts of the uint64 and load unchanged.
//
// Errors: ErrInvalid (nil episode, mismatched RunID, a NaN or infinite
// number, a duplicate or non-positive turn index), ErrNotFound (no such
// run), ErrDuplicate (the run already holds an episode with ep's
// episode.Key; nothing is written).
func (db *DB) SaveEpisode(ctx context.Context, runID string, ep *episode.Episode) error {
	return db.SaveEpisodes(ctx, runID, []*episode.Episode{ep})
}

// SaveEpisodes stores eps under run runID in one transaction, as
// SaveEpisode does for one: all of them or none. Batching amortises the
// transaction's commit (one WAL sync) over the batch, which dominates the
// cost of small episodes. Errors are SaveEpisode's,
// naming the first offending episode; on any error nothing is written.
func (db *DB) SaveEpisodes(ctx context.Context, runID string, eps []*episode.Episode) error {
	if len(eps) == 0 {
		return nil
	}
	// Validate and encode outside the write lock.
	rows, err := encodeEpisodes(runID, eps)
	if err != nil {
		return err
	}
	return db.saveRows(ctx, runID, eps, rows)
}

// saveRows is SaveEpisodes of episodes already encoded: rows[i] is
// eps[i]'s.
func (db *DB) saveRows(ctx context.Context, runID string, eps []*episode.Episode, rows []episodeRow) error {
	failed := -1
	err := db.write(ctx, func(tx *dbtx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		var err error
		failed, err = insertEpisodes(ctx, tx.StmtContext(ctx, db.insEpisode), tx.StmtContext(ctx, db.insTranscript), db.d, rows)
		return err
	})
	if err != nil {
		key := episode.KeyOf(eps[0])
		if failed >= 0 {
			key = episode.KeyOf(eps[failed])
		}
		return fmt.Errorf("store: save episode %s to run %s: %w", key, runID, err)
	}
	return nil
}

// episodeRow is an episode checked and encoded for insertion: args are
// the values of insertEpisodeSQL's placeholders, in order, transcript
// insertTranscriptSQL's.
type episodeRow struct {
	args       [31]any
	transcript [2]any
}

// encodeEpisodes checks and encodes eps for run runID. Errors: ErrInvalid
// as SaveEpisode documents, naming the episode.
func encodeEpisodes(runID string, eps []*episode.Episode) ([]episodeRow, error) {
	rows := make([]episodeRow, len(eps))
	// One buffer for the transcripts of the batch; each episode's texts
	// are copied out as strings.
	var buf []byte
	for i, ep := range eps {
		var err error
		if buf, err = rows[i].encode(runID, ep, buf[:0]); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func (r *episodeRow) encode(runID string, ep *episode.Episode, buf []byte) ([]byte, error) {
	if ep == nil {
		return buf, fmt.Errorf("store: save episode: %w: nil episode", ErrInvalid)
	}
	key := episode.KeyOf(ep)
	if ep.RunID != "" && ep.RunID != runID {
		return buf, fmt.Errorf("store: save episode %s: %w: episode run_id %q, saving to run %q", key, ErrInvalid, ep.RunID, runID)
	}
	if err := checkEpisode(ep); err != nil {
		return buf, fmt.Errorf("store: save episode %s: %w", key, err)
	}
	var bFinal any
	if b, ok := ep.FinalBelief(); ok {
		bFinal = b
	}
	var reward string
	if ep.Reward != nil {
		b, err := json.Marshal(ep.Reward)
		if err != nil {
			return buf, fmt.Errorf("store: save episode %s: reward: %w", key, err)
		}
		reward = string(b)
	}
	buf = appendReadings(buf, ep.Initial)
	n := len(buf)
	buf = appendTurns(buf, ep.Turns)
	all := string(buf)
	ju, iu := ep.JudgeUsage, ep.InitialProbeUsage
	r.args = [...]any{
		runID, ep.Persuader, ep.Persuadee, ep.ScenarioID, ep.Rollout, int64(ep.Seed),
		string(ep.Split), string(ep.Family), ep.Domain, string(ep.Resistance), string(ep.Terminal),
		ep.RGoal, nullable(ep.B0), bFinal, len(ep.Turns), ep.Error,
		nullable(ep.RStrategy), ep.ActsBy, ep.JudgeError, ep.JudgeMS,
		ju.PromptTokens, ju.CompletionTokens, ju.CachedTokens, ju.Requests,
		ep.InitialProbeMS, iu.PromptTokens, iu.CompletionTokens, iu.CachedTokens, iu.Requests, reward, iu.PromptOnceTokens}
	r.transcript = [2]any{all[:n], all[n:]}
	return buf, nil
}

// stmtExecer runs one prepared statement: a *sql.Stmt, or an adapter over
// another driver's transaction running insertEpisodeSQL (rebound to its
// dialect) with the same arguments.
type stmtExecer interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
}

// insertEpisodes writes encoded episodes, an episodes row and a
// transcripts row each, through insEp and insTr, the insertEpisodeSQL and
// insertTranscriptSQL statements of an open transaction of dialect d.
// It is the whole insert of an episode, whatever holds the transaction.
// On error it returns the index of the row that failed (-1 if none did)
// and the error, ErrDuplicate for a key the run already holds; the caller
// rolls back.
func insertEpisodes(ctx context.Context, insEp, insTr stmtExecer, d *dialect, rows []episodeRow) (int, error) {
	for i := range rows {
		_, err := insEp.ExecContext(ctx, rows[i].args[:]...)
		if d.unique(err) {
			return i, ErrDuplicate
		}
		if err == nil {
			_, err = insTr.ExecContext(ctx, rows[i].transcript[:]...)
		}
		if err != nil {
			return i, err
		}
	}
	return -1, nil
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
// so memory does not grow with the run (loading a 177k-episode run whole
// to print its table takes 2 GB). An error from fn stops the scan and is
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
func (db *DB) DoneKeys(ctx context.Context, runID string) (map[episode.Key]bool, error) {
	done := map[episode.Key]bool{}
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
			var k episode.Key
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
// persuadee, scenario ID, rollout. It reads with one query per call,
// whatever the episode count: an episode's turns and read-outs are one
// transcripts row (schema version 7).
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

// selectEpisodeCols are the columns scanEpisode reads, in order, from
// fromEpisodes.
const (
	selectEpisodeCols = `e.persuader, e.persuadee, e.scenario_id, e.rollout, e.seed,
		e.split, e.family, e.domain, e.resistance, e.terminal, e.r_goal, e.b0, e.n_turns, e.error,
		e.r_strategy, e.acts_by, e.judge_error, e.judge_ms,
		e.judge_prompt_tokens, e.judge_completion_tokens, e.judge_cached_tokens, e.judge_requests,
		e.initial_probe_ms, e.initial_probe_prompt_tokens, e.initial_probe_completion_tokens,
		e.initial_probe_cached_tokens, e.initial_probe_requests, e.reward, e.initial_probe_prompt_once_tokens,
		COALESCE(x.initial_json, '[]'), COALESCE(x.turns_json, '[]')`
	// fromEpisodes joins each episode's transcript.
	fromEpisodes = `episodes e LEFT JOIN transcripts x ON x.episode_id = e.id`
	episodeOrder = `e.persuader, e.persuadee, e.scenario_id, e.rollout`
)

// scanEpisode reads one row of selectEpisodeCols into a whole episode.
func scanEpisode(rows *sql.Rows, runID string) (*episode.Episode, error) {
	var (
		seed                                int64
		nTurns                              int
		split, family, resistance, terminal string
		b0, rStrategy                       sql.NullFloat64
		rewardJSON, initial, turns          string
		ep                                  = &episode.Episode{RunID: runID}
		ju, iu                              = &ep.JudgeUsage, &ep.InitialProbeUsage
	)
	if err := rows.Scan(&ep.Persuader, &ep.Persuadee, &ep.ScenarioID, &ep.Rollout, &seed,
		&split, &family, &ep.Domain, &resistance, &terminal, &ep.RGoal, &b0, &nTurns, &ep.Error,
		&rStrategy, &ep.ActsBy, &ep.JudgeError, &ep.JudgeMS,
		&ju.PromptTokens, &ju.CompletionTokens, &ju.CachedTokens, &ju.Requests,
		&ep.InitialProbeMS, &iu.PromptTokens, &iu.CompletionTokens, &iu.CachedTokens, &iu.Requests,
		&rewardJSON, &iu.PromptOnceTokens, &initial, &turns); err != nil {
		return nil, err
	}
	if rewardJSON != "" {
		ep.Reward = new(episode.RewardVector)
		if err := json.Unmarshal([]byte(rewardJSON), ep.Reward); err != nil {
			return nil, fmt.Errorf("episode %s: reward: %w", episode.KeyOf(ep), err)
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
	var err error
	if ep.Initial, err = decodeReadings(initial); err != nil {
		return nil, fmt.Errorf("episode %s: transcript initial_json: %w", episode.KeyOf(ep), err)
	}
	if ep.Turns, err = decodeTurns(turns, nTurns); err != nil {
		return nil, fmt.Errorf("episode %s: transcript turns_json: %w", episode.KeyOf(ep), err)
	}
	return ep, nil
}

// eachRow runs the episodes query for where/args in Episodes' order
// inside tx and calls fn with each episode.
func eachRow(ctx context.Context, tx *dbtx, runID, where string, args []any, fn func(*episode.Episode) error) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+selectEpisodeCols+`
		FROM `+fromEpisodes+` WHERE `+where+` ORDER BY `+episodeOrder, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		ep, err := scanEpisode(rows, runID)
		if err != nil {
			return err
		}
		if err := fn(ep); err != nil {
			return err
		}
	}
	return rows.Err()
}

func loadEpisodes(ctx context.Context, tx *dbtx, runID, where string, args []any) ([]*episode.Episode, error) {
	out := []*episode.Episode{}
	err := eachRow(ctx, tx, runID, where, args, func(ep *episode.Episode) error {
		out = append(out, ep)
		return nil
	})
	return out, err
}

// EachEpisode calls fn with every episode of the run that matches every
// filter, fully reconstructed as Episodes returns it (same fields, same
// normalisations) and in Episodes' order (persuader, persuadee, scenario
// ID, rollout), but one episode at a time: one cursor walks the run's
// rows in that order in one snapshot, so memory holds one episode, not the
// run. fn may keep the episode it is given (each call gets a fresh one).
// An error from fn stops the scan and is returned.
//
// Errors: ErrNotFound when the run does not exist; a stored transcript
// that does not decode (a corrupt store).
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
		return eachRow(ctx, tx, runID, where, args, fn)
	})
	if err != nil {
		return fmt.Errorf("store: episodes of run %s: %w", runID, err)
	}
	return nil
}
