package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// IsURL reports whether db names a PostgreSQL database
// ("postgres://..." or "postgresql://...") rather than a SQLite file.
func IsURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// OpenURL opens the run database db names: a PostgreSQL database for a
// "postgres://" or "postgresql://" URL (libpq's URL form, e.g.
// postgres://user:pass@host:5432/persuarena?sslmode=disable), through
// pgx v5, migrating its schema to SchemaLatest; any other string is a
// SQLite path, opened by Open. The PostgreSQL store keeps the same tables,
// columns and schema versions as the SQLite one (docs/store.md,
// "Postgres") and satisfies Store with the same results.
//
// Errors: Open's for a path; for a URL, ErrInvalid when pgx cannot parse
// it, ErrSchemaNewer, otherwise the wrapped connection or driver error
// (the message names the URL without its password).
func OpenURL(ctx context.Context, db string) (*DB, error) {
	if !IsURL(db) {
		return Open(ctx, db)
	}
	shown := RedactDB(db)
	cfg, err := pgx.ParseConfig(db)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w: %v", shown, ErrInvalid, RedactText(err.Error()))
	}
	sdb := stdlib.OpenDB(*cfg)
	sdb.SetMaxOpenConns(maxPGConns)
	sdb.SetMaxIdleConns(maxPGConns)
	sdb.SetConnMaxIdleTime(5 * time.Minute)
	d := &DB{sql: sdb, path: shown, d: postgresDialect, now: time.Now}
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("store: open %s: %w", shown, err)
	}
	if err := d.setup(ctx); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", shown, err)
	}
	return d, nil
}

// maxPGConns bounds a PostgreSQL store's connection pool.
// Choice: 8, twice SQLite's readers; writes of one process still go one
// at a time (DB.write), so more connections only serve more readers.
const maxPGConns = 8

// Shown returns db as messages may show it: RedactDB's form (a path
// unchanged, a URL or connection string without its passwords), as Path
// reports it.
func Shown(db string) string { return RedactDB(db) }

// pgIsUnique reports a unique_violation (SQLSTATE 23505).
func pgIsUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// postgresDialect runs the package's queries on PostgreSQL.
var postgresDialect = &dialect{
	name:     "postgres",
	numbered: true,
	// Repeatable read: one snapshot for all statements of a read, as a
	// SQLite read transaction has.
	readOpts:   &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead},
	unique:     pgIsUnique,
	migrations: pgMigrations,
	// A transaction-scoped advisory lock (key: "PRSU" as an int) keeps
	// concurrent openers from migrating at the same time.
	lock:   `SELECT pg_advisory_xact_lock(1347572565)`,
	packed: pgPacked,
	lastID: `lastval()`,
}

// pgMigrations is the PostgreSQL schema history, version for version the
// same tables and columns as migrations (SQLite), with PostgreSQL's types:
// DOUBLE PRECISION for REAL, BIGINT for INTEGER, BOOLEAN for the 0/1
// flag, BYTEA for BLOB, an identity column for the episode id. Text keys
// that are sorted or compared use COLLATE "C", byte order, as SQLite's
// BINARY collation does, so listings come out in the same order.
// Append-only, as migrations is.
var pgMigrations = []string{
	// 1: runs, episodes, turns, probe read-outs.
	`
CREATE TABLE runs (
	id         TEXT COLLATE "C" PRIMARY KEY,
	created_at TEXT COLLATE "C" NOT NULL,
	updated_at TEXT NOT NULL,
	kind       TEXT NOT NULL,
	seed       BIGINT NOT NULL,
	version    TEXT NOT NULL,
	config     TEXT,
	status     TEXT NOT NULL CHECK (status IN ('running', 'done', 'interrupted', 'failed'))
);
CREATE INDEX runs_created ON runs(created_at);

CREATE TABLE episodes (
	id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	run_id      TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	persuader   TEXT COLLATE "C" NOT NULL,
	persuadee   TEXT COLLATE "C" NOT NULL,
	scenario_id TEXT COLLATE "C" NOT NULL,
	rollout     BIGINT NOT NULL,
	seed        BIGINT NOT NULL,
	split       TEXT NOT NULL,
	family      TEXT NOT NULL,
	domain      TEXT NOT NULL,
	resistance  TEXT NOT NULL,
	terminal    TEXT COLLATE "C" NOT NULL,
	r_goal      DOUBLE PRECISION NOT NULL,
	b0          DOUBLE PRECISION,
	b_final     DOUBLE PRECISION,
	n_turns     BIGINT NOT NULL,
	error       TEXT NOT NULL,
	UNIQUE (run_id, persuader, persuadee, scenario_id, rollout)
);
CREATE INDEX episodes_run_terminal ON episodes(run_id, terminal);

CREATE TABLE turns (
	episode_id BIGINT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
	t          BIGINT NOT NULL CHECK (t >= 1),
	persuader_text TEXT NOT NULL,
	persuadee_text TEXT NOT NULL,
	decision   TEXT NOT NULL,
	acts       TEXT NOT NULL,
	belief     DOUBLE PRECISION,
	dense      DOUBLE PRECISION,
	persuader_ms DOUBLE PRECISION NOT NULL,
	persuadee_ms DOUBLE PRECISION NOT NULL,
	probe_ms     DOUBLE PRECISION NOT NULL,
	persuader_prompt_tokens     BIGINT NOT NULL,
	persuader_completion_tokens BIGINT NOT NULL,
	persuader_cached_tokens     BIGINT NOT NULL,
	persuader_requests          BIGINT NOT NULL,
	persuadee_prompt_tokens     BIGINT NOT NULL,
	persuadee_completion_tokens BIGINT NOT NULL,
	persuadee_cached_tokens     BIGINT NOT NULL,
	persuadee_requests          BIGINT NOT NULL,
	probe_prompt_tokens         BIGINT NOT NULL,
	probe_completion_tokens     BIGINT NOT NULL,
	probe_cached_tokens         BIGINT NOT NULL,
	probe_requests              BIGINT NOT NULL,
	PRIMARY KEY (episode_id, t)
);

CREATE TABLE probe_readings (
	episode_id BIGINT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
	t     BIGINT NOT NULL CHECK (t >= 0),
	k     BIGINT NOT NULL CHECK (k >= 0),
	probe TEXT NOT NULL,
	p     DOUBLE PRECISION NOT NULL,
	ok    BOOLEAN NOT NULL,
	PRIMARY KEY (episode_id, t, k)
);
`,
	// 2: per-step metrics of training runs (SaveMetrics).
	`
CREATE TABLE step_metrics (
	run_id TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	step   BIGINT NOT NULL CHECK (step >= 0),
	name   TEXT COLLATE "C" NOT NULL CHECK (name <> ''),
	value  DOUBLE PRECISION NOT NULL,
	PRIMARY KEY (run_id, step, name)
);
`,
	// 3: the judge's strategy rating, act source, error and cost, and the
	// t = 0 probe read-out's cost.
	`
ALTER TABLE episodes ADD COLUMN r_strategy DOUBLE PRECISION;
ALTER TABLE episodes ADD COLUMN acts_by TEXT NOT NULL DEFAULT '';
ALTER TABLE episodes ADD COLUMN judge_error TEXT NOT NULL DEFAULT '';
ALTER TABLE episodes ADD COLUMN judge_ms DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN judge_prompt_tokens     BIGINT NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN judge_completion_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN judge_cached_tokens     BIGINT NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN judge_requests          BIGINT NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN initial_probe_ms DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN initial_probe_prompt_tokens     BIGINT NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN initial_probe_completion_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN initial_probe_cached_tokens     BIGINT NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN initial_probe_requests          BIGINT NOT NULL DEFAULT 0;
`,
	// 4: named artifacts of a run (SaveArtifact).
	`
CREATE TABLE artifacts (
	run_id  TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	name    TEXT COLLATE "C" NOT NULL CHECK (name <> ''),
	content BYTEA NOT NULL,
	PRIMARY KEY (run_id, name)
);
`,
	// 5: the reward vector of a reward spec (Episode.Reward): JSON, '' when none.
	`
ALTER TABLE episodes ADD COLUMN reward TEXT NOT NULL DEFAULT '';
`,
	// 6: the covering index of the per-pair terminal counts (TerminalCounts).
	`
CREATE INDEX episodes_run_pair_terminal ON episodes(run_id, persuader, persuadee, terminal);
`,
	// 7: an episode's turns and probe read-outs move into one row of
	// transcripts, as two JSON texts (packTranscripts fills it; pgPacked
	// makes the old tables views).
	`
CREATE TABLE transcripts (
	episode_id   BIGINT PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
	initial_json TEXT NOT NULL,
	turns_json   TEXT NOT NULL
);
`,
	// 8: the t = 0 read-out's prefix-once tokens and b_final re-derived, as
	// the SQLite migration 8.
	migrateBFinal,
}

// pgPacked is sqlitePacked for PostgreSQL: the same view names, columns
// and types as the tables of pgMigrations 1 (json, not jsonb, so that acts
// keeps its stored text).
const pgPacked = `
DROP TABLE turns;
DROP TABLE probe_readings;
CREATE VIEW turns AS
SELECT e.episode_id, (j.v ->> 0)::bigint AS t, j.v ->> 1 AS persuader_text, j.v ->> 2 AS persuadee_text,
	j.v ->> 3 AS decision, (j.v -> 4)::text AS acts,
	(j.v ->> 5)::double precision AS belief, (j.v ->> 6)::double precision AS dense,
	COALESCE((j.v ->> 8)::double precision, 0) AS persuader_ms, COALESCE((j.v ->> 9)::double precision, 0) AS persuadee_ms,
	COALESCE((j.v ->> 10)::double precision, 0) AS probe_ms,
	COALESCE((j.v ->> 11)::bigint, 0) AS persuader_prompt_tokens, COALESCE((j.v ->> 12)::bigint, 0) AS persuader_completion_tokens,
	COALESCE((j.v ->> 13)::bigint, 0) AS persuader_cached_tokens, COALESCE((j.v ->> 14)::bigint, 0) AS persuader_requests,
	COALESCE((j.v ->> 15)::bigint, 0) AS persuadee_prompt_tokens, COALESCE((j.v ->> 16)::bigint, 0) AS persuadee_completion_tokens,
	COALESCE((j.v ->> 17)::bigint, 0) AS persuadee_cached_tokens, COALESCE((j.v ->> 18)::bigint, 0) AS persuadee_requests,
	COALESCE((j.v ->> 19)::bigint, 0) AS probe_prompt_tokens, COALESCE((j.v ->> 20)::bigint, 0) AS probe_completion_tokens,
	COALESCE((j.v ->> 21)::bigint, 0) AS probe_cached_tokens, COALESCE((j.v ->> 22)::bigint, 0) AS probe_requests
FROM transcripts e CROSS JOIN LATERAL json_array_elements(e.turns_json::json) AS j(v);
CREATE VIEW probe_readings AS
SELECT e.episode_id, 0::bigint AS t, r.k - 1 AS k, r.v ->> 0 AS probe,
	(r.v ->> 1)::double precision AS p, (r.v ->> 2) = '1' AS ok
FROM transcripts e CROSS JOIN LATERAL json_array_elements(e.initial_json::json) WITH ORDINALITY AS r(v, k)
UNION ALL
SELECT e.episode_id, (j.v ->> 0)::bigint, r.k - 1, r.v ->> 0, (r.v ->> 1)::double precision, (r.v ->> 2) = '1'
FROM transcripts e CROSS JOIN LATERAL json_array_elements(e.turns_json::json) AS j(v)
	CROSS JOIN LATERAL json_array_elements(j.v -> 7) WITH ORDINALITY AS r(v, k);
`
