package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
)

// migrations is the ordered schema history: migrations[i] brings the
// schema from version i to version i+1. Entries are append-only: a released
// migration is never edited, a change is a new entry (docs/store.md).
var migrations = []string{
	// 1: runs, episodes, turns, probe read-outs.
	`
CREATE TABLE runs (
	id         TEXT PRIMARY KEY,
	created_at TEXT NOT NULL, -- RFC 3339 UTC, fixed width (sorts as text)
	updated_at TEXT NOT NULL,
	kind       TEXT NOT NULL,
	seed       INTEGER NOT NULL, -- uint64 bit-cast to int64
	version    TEXT NOT NULL,
	config     TEXT,             -- JSON as given; NULL when none
	status     TEXT NOT NULL CHECK (status IN ('running', 'done', 'interrupted', 'failed'))
);
CREATE INDEX runs_created ON runs(created_at);

CREATE TABLE episodes (
	id          INTEGER PRIMARY KEY,
	run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	persuader   TEXT NOT NULL,
	persuadee   TEXT NOT NULL,
	scenario_id TEXT NOT NULL,
	rollout     INTEGER NOT NULL,
	seed        INTEGER NOT NULL, -- uint64 bit-cast to int64
	split       TEXT NOT NULL,
	family      TEXT NOT NULL,
	domain      TEXT NOT NULL,
	resistance  TEXT NOT NULL,
	terminal    TEXT NOT NULL,
	r_goal      REAL NOT NULL,
	b0          REAL,             -- NULL: unreadable
	b_final     REAL,             -- derived: Episode.FinalBelief, NULL when none
	n_turns     INTEGER NOT NULL, -- derived: len(Turns)
	error       TEXT NOT NULL,
	UNIQUE (run_id, persuader, persuadee, scenario_id, rollout)
);
CREATE INDEX episodes_run_terminal ON episodes(run_id, terminal);

CREATE TABLE turns (
	episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
	t          INTEGER NOT NULL CHECK (t >= 1),
	persuader_text TEXT NOT NULL,
	persuadee_text TEXT NOT NULL,
	decision   TEXT NOT NULL,
	acts       TEXT NOT NULL,     -- JSON array of act names
	belief     REAL,              -- NULL: every probe unreadable
	dense      REAL,              -- NULL: a belief missing
	persuader_ms REAL NOT NULL,
	persuadee_ms REAL NOT NULL,
	probe_ms     REAL NOT NULL,
	persuader_prompt_tokens     INTEGER NOT NULL,
	persuader_completion_tokens INTEGER NOT NULL,
	persuader_cached_tokens     INTEGER NOT NULL,
	persuader_requests          INTEGER NOT NULL,
	persuadee_prompt_tokens     INTEGER NOT NULL,
	persuadee_completion_tokens INTEGER NOT NULL,
	persuadee_cached_tokens     INTEGER NOT NULL,
	persuadee_requests          INTEGER NOT NULL,
	probe_prompt_tokens         INTEGER NOT NULL,
	probe_completion_tokens     INTEGER NOT NULL,
	probe_cached_tokens         INTEGER NOT NULL,
	probe_requests              INTEGER NOT NULL,
	PRIMARY KEY (episode_id, t)
) WITHOUT ROWID;

CREATE TABLE probe_readings (
	episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
	t     INTEGER NOT NULL CHECK (t >= 0), -- 0: initial read-out
	k     INTEGER NOT NULL CHECK (k >= 0), -- position in the basis
	probe TEXT NOT NULL,
	p     REAL NOT NULL,
	ok    INTEGER NOT NULL CHECK (ok IN (0, 1)),
	PRIMARY KEY (episode_id, t, k)
) WITHOUT ROWID;
`,
	// 2: per-step metrics of training runs (SaveMetrics).
	`
CREATE TABLE step_metrics (
	run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	step   INTEGER NOT NULL CHECK (step >= 0),
	name   TEXT NOT NULL CHECK (name <> ''),
	value  REAL NOT NULL,
	PRIMARY KEY (run_id, step, name)
) WITHOUT ROWID;
`,
	// 3: the judge's strategy rating, act source, error and cost, and the
	// t = 0 probe read-out's cost (docs/llm-roles.md). Older rows read as no judge
	// and zero cost.
	`
ALTER TABLE episodes ADD COLUMN r_strategy REAL; -- NULL: no judge, or the judge failed
ALTER TABLE episodes ADD COLUMN acts_by TEXT NOT NULL DEFAULT ''; -- '' rule tagger, 'judge'
ALTER TABLE episodes ADD COLUMN judge_error TEXT NOT NULL DEFAULT '';
ALTER TABLE episodes ADD COLUMN judge_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN judge_prompt_tokens     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN judge_completion_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN judge_cached_tokens     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN judge_requests          INTEGER NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN initial_probe_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN initial_probe_prompt_tokens     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN initial_probe_completion_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN initial_probe_cached_tokens     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN initial_probe_requests          INTEGER NOT NULL DEFAULT 0;
`,
	// 4: named artifacts of a run (SaveArtifact): e.g. the dialogues of a
	// masp eval run, which are not episodes.
	`
CREATE TABLE artifacts (
	run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	name    TEXT NOT NULL CHECK (name <> ''),
	content BLOB NOT NULL,
	PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
`,
	// 5: the reward vector of a reward spec (Episode.Reward; REPO paper):
	// JSON, '' when none. Older rows read as no reward vector.
	`
ALTER TABLE episodes ADD COLUMN reward TEXT NOT NULL DEFAULT '';
`,
	// 6: a covering index of the per-pair terminal counts (TerminalCounts:
	// the viewer's outcome table, runs show), which otherwise read every
	// episode row of the run (about 0.5 s on a 200k-episode run).
	`
CREATE INDEX episodes_run_pair_terminal ON episodes(run_id, persuader, persuadee, terminal);
`,
	// 7: an episode's turns and probe read-outs move into one row of the
	// new table transcripts, as two JSON texts (transcript.go has the
	// layout): saving an episode is two row inserts instead of one per
	// turn and read-out, and the episodes table stays
	// narrow for the scans that read outcomes only. packTranscripts fills
	// it from the old tables, which then become views of the same name and
	// columns (sqlitePacked).
	`
CREATE TABLE transcripts (
	episode_id   INTEGER PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
	initial_json TEXT NOT NULL, -- the t = 0 read-out
	turns_json   TEXT NOT NULL  -- every turn with its read-out
);
`,
	// 8: the t = 0 read-out's prompt tokens with the forks' shared context
	// counted once (Table 4 "with cache"; 0: unknown, as for older rows);
	// b_final re-derived as the belief after the last turn, NULL when that
	// read-out was unreadable (it was the last readable belief, or b0).
	migrateBFinal,
}

// migrateBFinal is migration 8 in both dialects (turns is a view of the
// transcripts since migration 7).
const migrateBFinal = `
ALTER TABLE episodes ADD COLUMN initial_probe_prompt_once_tokens BIGINT NOT NULL DEFAULT 0;
UPDATE episodes SET b_final = (SELECT u.belief FROM turns u WHERE u.episode_id = episodes.id ORDER BY u.t DESC LIMIT 1);
`

// sqlitePacked ends migration 7 once packTranscripts has run: the tables
// turns and probe_readings give way to views with their names and
// columns, read from the episodes' JSON texts, so plain SQL over them
// keeps working (docs/store.md).
const sqlitePacked = `
DROP TABLE turns;
DROP TABLE probe_readings;
CREATE VIEW turns(episode_id, t, persuader_text, persuadee_text, decision, acts,
	belief, dense, persuader_ms, persuadee_ms, probe_ms,
	persuader_prompt_tokens, persuader_completion_tokens, persuader_cached_tokens, persuader_requests,
	persuadee_prompt_tokens, persuadee_completion_tokens, persuadee_cached_tokens, persuadee_requests,
	probe_prompt_tokens, probe_completion_tokens, probe_cached_tokens, probe_requests) AS
SELECT e.episode_id, j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value -> 4,
	j.value ->> 5, j.value ->> 6, IFNULL(j.value ->> 8, 0.0), IFNULL(j.value ->> 9, 0.0), IFNULL(j.value ->> 10, 0.0),
	IFNULL(j.value ->> 11, 0), IFNULL(j.value ->> 12, 0), IFNULL(j.value ->> 13, 0), IFNULL(j.value ->> 14, 0),
	IFNULL(j.value ->> 15, 0), IFNULL(j.value ->> 16, 0), IFNULL(j.value ->> 17, 0), IFNULL(j.value ->> 18, 0),
	IFNULL(j.value ->> 19, 0), IFNULL(j.value ->> 20, 0), IFNULL(j.value ->> 21, 0), IFNULL(j.value ->> 22, 0)
FROM transcripts e, json_each(e.turns_json) j;
CREATE VIEW probe_readings(episode_id, t, k, probe, p, ok) AS
SELECT e.episode_id, 0, r.key, r.value ->> 0, r.value ->> 1, r.value ->> 2
FROM transcripts e, json_each(e.initial_json) r
UNION ALL
SELECT e.episode_id, j.value ->> 0, r.key, r.value ->> 0, r.value ->> 1, r.value ->> 2
FROM transcripts e, json_each(e.turns_json) j, json_each(j.value, '$[7]') r;
`

// packVersion is the migration whose Go step is packTranscripts.
const packVersion = 7

// packTranscripts is migration 7's data step, in its transaction: it
// writes every episode's transcripts row from the rows of the tables
// turns and probe_readings (read as schema versions 1-6 store
// them, so every value is carried over exactly), a page of episodes at a
// time, then runs packed (the dialect's SQL replacing the tables by
// views).
func packTranscripts(ctx context.Context, tx *dbtx, packed string) error {
	const page = 512
	var buf []byte
	last := int64(-1)
	for {
		var ids []int64
		rows, err := tx.QueryContext(ctx, `SELECT id FROM episodes WHERE id > ? ORDER BY id LIMIT ?`, last, page)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == 0 {
			break
		}
		lo, hi := ids[0], ids[len(ids)-1]
		last = hi
		eps := make(map[int64]*episode.Episode, len(ids))
		for _, id := range ids {
			eps[id] = &episode.Episode{}
		}
		if err := legacyTurns(ctx, tx, lo, hi, eps); err != nil {
			return err
		}
		if err := legacyReadings(ctx, tx, lo, hi, eps); err != nil {
			return err
		}
		for _, id := range ids {
			ep := eps[id]
			buf = appendReadings(buf[:0], ep.Initial)
			n := len(buf)
			buf = appendTurns(buf, ep.Turns)
			if _, err := tx.ExecContext(ctx, `INSERT INTO transcripts(episode_id, initial_json, turns_json) VALUES (?, ?, ?)`,
				id, string(buf[:n]), string(buf[n:])); err != nil {
				return err
			}
		}
	}
	_, err := tx.ExecContext(ctx, packed)
	return err
}

// legacyTurns reads the turns of episodes lo..hi from the table turns of
// schema versions 1-6 into eps, in t order.
func legacyTurns(ctx context.Context, tx *dbtx, lo, hi int64, eps map[int64]*episode.Episode) error {
	rows, err := tx.QueryContext(ctx, `SELECT episode_id, t, persuader_text, persuadee_text, decision, acts,
		belief, dense, persuader_ms, persuadee_ms, probe_ms,
		persuader_prompt_tokens, persuader_completion_tokens, persuader_cached_tokens, persuader_requests,
		persuadee_prompt_tokens, persuadee_completion_tokens, persuadee_cached_tokens, persuadee_requests,
		probe_prompt_tokens, probe_completion_tokens, probe_cached_tokens, probe_requests
		FROM turns WHERE episode_id BETWEEN ? AND ? ORDER BY episode_id, t`, lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
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
			return err
		}
		tu.Decision = decision.Decision(dec)
		if err := json.Unmarshal([]byte(acts), &tu.Acts); err != nil {
			return fmt.Errorf("episode %d turn t=%d: acts: %w", id, tu.T, err)
		}
		tu.Belief, tu.Dense = floatPtr(belief), floatPtr(dense)
		ep := eps[id]
		if ep == nil { // cannot happen: the ids are the range's
			return fmt.Errorf("turn t=%d of unknown episode %d", tu.T, id)
		}
		ep.Turns = append(ep.Turns, tu)
	}
	return rows.Err()
}

// legacyReadings reads the probe read-outs of episodes lo..hi from the
// table probe_readings of schema versions 1-6 into eps: t = 0 into
// Initial, the others into their turn's Probes, in k order.
func legacyReadings(ctx context.Context, tx *dbtx, lo, hi int64, eps map[int64]*episode.Episode) error {
	rows, err := tx.QueryContext(ctx, `SELECT episode_id, t, probe, p, ok FROM probe_readings
		WHERE episode_id BETWEEN ? AND ? ORDER BY episode_id, t, k`, lo, hi)
	if err != nil {
		return err
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
			return err
		}
		ep := eps[id]
		if ep == nil {
			return fmt.Errorf("probe reading t=%d of unknown episode %d", t, id)
		}
		if id != curID {
			curID, cur = id, 0
		}
		if t == 0 {
			ep.Initial = append(ep.Initial, r)
			continue
		}
		for cur < len(ep.Turns) && ep.Turns[cur].T < t {
			cur++
		}
		if cur == len(ep.Turns) || ep.Turns[cur].T != t {
			return fmt.Errorf("episode %d: probe reading for missing turn t=%d", id, t)
		}
		ep.Turns[cur].Probes = append(ep.Turns[cur].Probes, r)
	}
	return rows.Err()
}

// SchemaLatest is the schema version this binary writes.
var SchemaLatest = len(migrations)

// migrate applies the pending migrations, each in its own transaction
// together with its schema_migrations row. Re-running it is a no-op; a
// database already past SchemaLatest is ErrSchemaNewer.
func (db *DB) migrate(ctx context.Context) error {
	if err := db.write(ctx, func(tx *dbtx) error {
		if db.d.lock != "" {
			if _, err := tx.ExecContext(ctx, db.d.lock); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			applied_at TEXT NOT NULL)`)
		return err
	}); err != nil {
		return fmt.Errorf("schema_migrations: %w", err)
	}
	migrations := db.d.migrations
	for v := 1; v <= len(migrations); v++ {
		err := db.write(ctx, func(tx *dbtx) error {
			// Re-read inside the write lock: another process may have
			// migrated meanwhile.
			if db.d.lock != "" {
				if _, err := tx.ExecContext(ctx, db.d.lock); err != nil {
					return err
				}
			}
			var cur int
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&cur); err != nil {
				return err
			}
			if cur > len(migrations) {
				return fmt.Errorf("%w: database at version %d, binary knows %d", ErrSchemaNewer, cur, len(migrations))
			}
			if cur >= v {
				return nil
			}
			if _, err := tx.ExecContext(ctx, migrations[v-1]); err != nil {
				return err
			}
			if v == packVersion {
				if err := packTranscripts(ctx, tx, db.d.packed); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`,
				v, formatTime(db.now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
	}
	// A database with no pending migration still has to be checked.
	cur, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if cur > len(migrations) {
		return fmt.Errorf("%w: database at version %d, binary knows %d", ErrSchemaNewer, cur, len(migrations))
	}
	return nil
}
