package store

import (
	"context"
	"fmt"
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
