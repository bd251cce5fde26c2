package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

func fp(v float64) *float64 { return &v }

// bigSeed is above math.MaxInt64, so it exercises the int64 bit-cast.
const bigSeed uint64 = 0xfedcba9876543210

// sampleEpisode is a hand-built three-turn episode: an unreadable initial
// probe, a turn whose probes are all unreadable (nil belief and dense), and
// non-zero usage and latencies.
func sampleEpisode(runID, scenarioID string, rollout int) *episode.Episode {
	return &episode.Episode{
		RunID: runID, ScenarioID: scenarioID, Rollout: rollout, Seed: bigSeed,
		Persuader: "script", Persuadee: "sim",
		Split: scenario.Heldout, Family: scenario.Healthcare, Domain: "flu vaccination",
		Resistance: scenario.IdentityThreat,
		Initial:    []probe.Reading{{Probe: "ca", P: 0.25, OK: true}, {Probe: "pe", P: 0.5, OK: true}, {Probe: "ac", P: 0, OK: false}},
		B0:         fp(0.375),
		Turns: []episode.Turn{
			{
				T: 1, Persuader: "Could we talk about the clinic?", Persuadee: "Maybe. What about it?",
				Decision: decision.Continue, Acts: []string{"question", "rapport"},
				Probes: []probe.Reading{{Probe: "ca", P: 0.5, OK: true}, {Probe: "pe", P: 0.5, OK: true}, {Probe: "ac", P: 0.5, OK: true}},
				Belief: fp(0.5), Dense: fp(0.125),
				PersuaderMS: 12.5, PersuadeeMS: 340.25, ProbeMS: 55,
				PersuaderUsage: episode.Usage{PromptTokens: 100, CompletionTokens: 20, CachedTokens: 64, Requests: 1},
				PersuadeeUsage: episode.Usage{PromptTokens: 300, CompletionTokens: 40, CachedTokens: 0, Requests: 1},
				ProbeUsage:     episode.Usage{PromptTokens: 900, CompletionTokens: 3, CachedTokens: 850, Requests: 3},
			},
			{
				T: 2, Persuader: "Here is what the data say.", Persuadee: "...",
				Decision: decision.Continue, Acts: []string{},
				Probes: []probe.Reading{{Probe: "ca", OK: false}, {Probe: "pe", OK: false}, {Probe: "ac", OK: false}},
				Belief: nil, Dense: nil, PersuaderMS: 1, PersuadeeMS: 2, ProbeMS: 3,
			},
			{
				T: 3, Persuader: "It is your call.", Persuadee: "All right, I'll book it.",
				Decision: decision.Accept, Acts: []string{"autonomy"},
				Probes: []probe.Reading{{Probe: "ca", P: 0.875, OK: true}, {Probe: "pe", P: 0.75, OK: true}, {Probe: "ac", P: 1, OK: true}},
				Belief: fp(0.875), Dense: nil,
			},
		},
		Terminal: decision.TermAccept, RGoal: 3,
	}
}

func openMem(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustRun(t testing.TB, db *DB, id string) {
	t.Helper()
	if err := db.CreateRun(context.Background(), Run{ID: id, Kind: "eval", Seed: 7, Version: "test"}); err != nil {
		t.Fatal(err)
	}
}

func count(t testing.TB, db *DB, table string) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOpenTwiceMigrationsIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, db, "r1")
	db.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != 8 || SchemaLatest != 8 {
		t.Errorf("schema version %d, latest %d; want 8, 8", v, SchemaLatest)
	}
	if n := count(t, db, "schema_migrations"); n != 8 {
		t.Errorf("schema_migrations rows = %d, want 8", n)
	}
	if _, err := db.GetRun(ctx, "r1"); err != nil {
		t.Errorf("run lost across reopen: %v", err)
	}
	// A database migrated by a newer binary is refused.
	if _, err := db.sql.Exec(`INSERT INTO schema_migrations(version, applied_at) VALUES (?, 'x')`, SchemaLatest+1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, path); !errors.Is(err, ErrSchemaNewer) {
		t.Errorf("open newer schema: err = %v, want ErrSchemaNewer", err)
	}
}

func TestOpenBadPath(t *testing.T) {
	for _, p := range []string{"", "a?b.db"} {
		if _, err := Open(context.Background(), p); !errors.Is(err, ErrInvalid) {
			t.Errorf("Open(%q) err = %v, want ErrInvalid", p, err)
		}
	}
}

func TestWALAndPragmas(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := db.JournalMode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m != "wal" {
		t.Errorf("journal_mode = %q, want wal", m)
	}
	// Per-connection settings hold on every pooled connection: hold
	// several at once and ask each.
	var conns []interface{ Close() error }
	for i := 0; i < maxFileConns; i++ {
		c, err := db.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var fk, busy, sync int
		if err := c.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if fk != 1 || busy != 5000 || sync != 1 { // synchronous NORMAL = 1
			t.Errorf("conn %d: foreign_keys=%d busy_timeout=%d synchronous=%d, want 1 5000 1", i, fk, busy, sync)
		}
	}
	for _, c := range conns {
		c.Close()
	}
}

func TestRunRoundTripAndStatus(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	fixed := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	db.now = func() time.Time { return fixed }
	created := time.Date(2026, 11, 29, 11, 35, 0, 123456789, time.FixedZone("CET", 3600))
	cfg := json.RawMessage(`{"persuaders": ["script"],  "tmax": 10}`)
	in := Run{ID: "20261129-103500-ab12", CreatedAt: created, Kind: "eval", Seed: bigSeed, Version: "v0.1.0", Config: cfg}
	if err := db.CreateRun(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetRun(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(created) || got.CreatedAt.Location() != time.UTC || !got.UpdatedAt.Equal(created) {
		t.Errorf("times: created %v updated %v, want %v in UTC", got.CreatedAt, got.UpdatedAt, created)
	}
	if got.Seed != bigSeed || got.Kind != "eval" || got.Version != "v0.1.0" || got.Status != StatusRunning {
		t.Errorf("run = %+v", got)
	}
	if !bytes.Equal(got.Config, cfg) {
		t.Errorf("config %s, want byte-identical %s", got.Config, cfg)
	}
	if err := db.CreateRun(ctx, in); !errors.Is(err, ErrDuplicate) {
		t.Errorf("second CreateRun err = %v, want ErrDuplicate", err)
	}
	if err := db.SetRunStatus(ctx, in.ID, StatusDone); err != nil {
		t.Fatal(err)
	}
	got, _ = db.GetRun(ctx, in.ID)
	if got.Status != StatusDone || !got.UpdatedAt.Equal(fixed) || !got.CreatedAt.Equal(created) {
		t.Errorf("after SetRunStatus: status %q updated %v created %v", got.Status, got.UpdatedAt, got.CreatedAt)
	}
	if err := db.SetRunStatus(ctx, in.ID, "finished"); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad status err = %v, want ErrInvalid", err)
	}
	if err := db.SetRunStatus(ctx, "nope", StatusDone); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing run err = %v, want ErrNotFound", err)
	}
	if _, err := db.GetRun(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetRun missing err = %v, want ErrNotFound", err)
	}
	// No config stays nil.
	if err := db.CreateRun(ctx, Run{ID: "plain"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.GetRun(ctx, "plain"); got.Config != nil || !got.CreatedAt.Equal(fixed) {
		t.Errorf("plain run: config %q created %v", got.Config, got.CreatedAt)
	}
	if err := db.CreateRun(ctx, Run{ID: "bad", Config: json.RawMessage(`{"a":`)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("invalid config JSON err = %v, want ErrInvalid", err)
	}
}

func TestNewRunID(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 35, 0, 0, time.UTC)
	id := NewRunID(now, 42)
	if !regexp.MustCompile(`^20261129-103500-[0-9a-f]{4}$`).MatchString(id) {
		t.Errorf("NewRunID = %q, want 20261129-103500-xxxx", id)
	}
	if again := NewRunID(now, 42); again != id {
		t.Errorf("NewRunID not deterministic: %q then %q", id, again)
	}
	if other := NewRunID(now, 43); other == id {
		t.Errorf("seeds 42 and 43 give the same id %q", id)
	}
	// The time part is UTC whatever the zone of now.
	if got := NewRunID(now.In(time.FixedZone("X", -5*3600)), 42); got != id {
		t.Errorf("zone changed id: %q vs %q", got, id)
	}
	// Later runs sort after earlier ones.
	if later := NewRunID(now.Add(time.Second), 0); later <= id {
		t.Errorf("%q does not sort after %q", later, id)
	}
}

func TestEpisodeRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	want := sampleEpisode("r1", "hc-001", 2)
	if err := db.SaveEpisode(ctx, "r1", want); err != nil {
		t.Fatal(err)
	}
	eps, err := db.Episodes(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 1 {
		t.Fatalf("loaded %d episodes, want 1", len(eps))
	}
	if !reflect.DeepEqual(eps[0], want) {
		g, _ := json.MarshalIndent(eps[0], "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("round trip differs:\n got %s\nwant %s", g, w)
	}
	// Row counts: 1 episode, 3 turns, 3 initial + 9 turn readings.
	if e, tu, r := count(t, db, "episodes"), count(t, db, "turns"), count(t, db, "probe_readings"); e != 1 || tu != 3 || r != 12 {
		t.Errorf("rows: %d episodes %d turns %d readings, want 1 3 12", e, tu, r)
	}
	// Derived columns and the seed's bit-cast, as sqlite3 users see them.
	var seed int64
	var bFinal float64
	var nTurns int
	if err := db.sql.QueryRow(`SELECT seed, b_final, n_turns FROM episodes`).Scan(&seed, &bFinal, &nTurns); err != nil {
		t.Fatal(err)
	}
	if seed != -81985529216486896 || bFinal != 0.875 || nTurns != 3 {
		t.Errorf("seed %d b_final %v n_turns %d, want -81985529216486896 0.875 3", seed, bFinal, nTurns)
	}
	// Turns handed over out of order are stored, and read back, in
	// ascending T.
	rev := sampleEpisode("r1", "hc-002", 0)
	slices.Reverse(rev.Turns)
	if err := db.SaveEpisode(ctx, "r1", rev); err != nil {
		t.Fatal(err)
	}
	if eps, err = db.Episodes(ctx, "r1"); err != nil || len(eps) != 2 || eps[1].ScenarioID != "hc-002" {
		t.Fatalf("%d episodes, %v", len(eps), err)
	}
	if !reflect.DeepEqual(eps[1].Turns, want.Turns) {
		t.Errorf("reversed turns read back as %+v, want %+v", eps[1].Turns, want.Turns)
	}
}

// The judge's rating, act source, error and costs and the t = 0 read-out's
// cost round-trip (migration 3); a nil rating stays nil, distinct from 0.
func TestEpisodeJudgeRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	judged := sampleEpisode("r1", "hc-001", 0)
	judged.RStrategy = fp(-0.25)
	judged.ActsBy = episode.ActsByJudge
	judged.JudgeUsage = episode.Usage{PromptTokens: 1435, CompletionTokens: 8, CachedTokens: 512, Requests: 4}
	judged.JudgeMS = 306.5
	judged.InitialProbeUsage = episode.Usage{PromptTokens: 2500, CompletionTokens: 3, CachedTokens: 2400, Requests: 1}
	judged.InitialProbeMS = 31.25
	zero := sampleEpisode("r1", "hc-001", 1)
	zero.RStrategy = fp(0)
	failedJudge := sampleEpisode("r1", "hc-001", 2)
	failedJudge.JudgeError = "strategy: llm judge llm:j: no readable answer"
	failedJudge.JudgeUsage = episode.Usage{PromptTokens: 900, CompletionTokens: 12, Requests: 1}
	noJudge := sampleEpisode("r1", "hc-001", 3)
	want := []*episode.Episode{judged, zero, failedJudge, noJudge}
	for _, ep := range want {
		if err := db.SaveEpisode(ctx, "r1", ep); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.Episodes(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("round trip differs:\n got %s\nwant %s", g, w)
	}
	if got[1].RStrategy == nil || *got[1].RStrategy != 0 || got[2].RStrategy != nil || got[3].RStrategy != nil {
		t.Errorf("r_strategy: %v %v %v", got[1].RStrategy, got[2].RStrategy, got[3].RStrategy)
	}
	// As sqlite3 users see it: NULL for no rating.
	var nulls int
	if err := db.sql.QueryRow(`SELECT COUNT(*) FROM episodes WHERE r_strategy IS NULL`).Scan(&nulls); err != nil || nulls != 2 {
		t.Errorf("%d NULL r_strategy rows, %v; want 2", nulls, err)
	}
	// JSON stays as before for an episode without judge or t = 0 cost.
	j, _ := json.Marshal(noJudge)
	for _, k := range []string{"r_strategy", "judge_usage", "judge_ms", "judge_error", "acts_by", "initial_probe_usage", "initial_probe_ms"} {
		if strings.Contains(string(j), `"`+k+`"`) {
			t.Errorf("episode without judge encodes %q: %s", k, j)
		}
	}
	// A NaN rating is refused.
	bad := sampleEpisode("r1", "hc-002", 0)
	bad.RStrategy = fp(math.NaN())
	if err := db.SaveEpisode(ctx, "r1", bad); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "r_strategy") {
		t.Errorf("NaN r_strategy: %v", err)
	}
}

// A database written at schema version 2 opens, migrates to 3 and loads
// its episodes as unjudged with zero t = 0 cost.
func TestMigrateFromVersion2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`,
		migrations[0], migrations[1],
		`INSERT INTO schema_migrations VALUES (1, 'x'), (2, 'x')`,
		`INSERT INTO runs VALUES ('r1', 'x', 'x', 'eval', 1, 'v', NULL, 'done')`,
		`INSERT INTO episodes(run_id, persuader, persuadee, scenario_id, rollout, seed, split, family, domain,
			resistance, terminal, r_goal, b0, b_final, n_turns, error)
			VALUES ('r1', 'script', 'sim', 's1', 0, 5, 'heldout', 'healthcare', 'd', 'identity_threat', 'reject', -3, NULL, NULL, 0, '')`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(ctx); err != nil || v != len(migrations) {
		t.Fatalf("schema version %d, %v; want %d", v, err, len(migrations))
	}
	eps, err := db.Episodes(ctx, "r1")
	if err != nil || len(eps) != 1 {
		t.Fatalf("%d episodes, %v", len(eps), err)
	}
	ep := eps[0]
	if ep.RStrategy != nil || ep.JudgeUsage != (episode.Usage{}) || ep.InitialProbeUsage != (episode.Usage{}) ||
		ep.ActsBy != "" || ep.JudgeError != "" || ep.OutcomeReward(1) != -3 {
		t.Errorf("migrated episode %+v", ep)
	}
}

func TestEpisodeNormalisation(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	// A failed episode with no turns at all (nil slices, nil B0), and one
	// whose turn has nil Acts and empty (non-nil) Probes.
	failed := &episode.Episode{ScenarioID: "s1", Persuader: "llm", Persuadee: "sim",
		Terminal: decision.TermFailed, Error: "engine: connection refused", Initial: []probe.Reading{}}
	oneTurn := &episode.Episode{ScenarioID: "s2", Persuader: "llm", Persuadee: "sim", Terminal: decision.TermPending, RGoal: -1,
		Turns: []episode.Turn{{T: 1, Decision: decision.Continue, Probes: []probe.Reading{}}}}
	for _, ep := range []*episode.Episode{failed, oneTurn} {
		if err := db.SaveEpisode(ctx, "r1", ep); err != nil {
			t.Fatal(err)
		}
	}
	eps, err := db.Episodes(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	f, o := eps[0], eps[1]
	if f.RunID != "r1" || f.Turns == nil || len(f.Turns) != 0 || f.Initial != nil || f.B0 != nil || f.Error != failed.Error {
		t.Errorf("failed episode loaded as %+v", f)
	}
	if o.Turns[0].Acts == nil || len(o.Turns[0].Acts) != 0 || o.Turns[0].Probes != nil || o.RGoal != -1 {
		t.Errorf("one-turn episode loaded as %+v", o.Turns[0])
	}
	j, _ := json.Marshal(f)
	if !strings.Contains(string(j), `"turns":[]`) || !strings.Contains(string(j), `"b0":null`) {
		t.Errorf("failed episode JSON %s: want \"turns\":[] and \"b0\":null", j)
	}
}

func TestSaveRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	nan := sampleEpisode("r1", "s", 0)
	nan.Turns[1].Dense = fp(math.NaN())
	err := db.SaveEpisode(ctx, "r1", nan)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "turns[1].dense") {
		t.Errorf("NaN dense: err = %v, want ErrInvalid naming turns[1].dense", err)
	}
	if err := db.SaveEpisode(ctx, "r2", sampleEpisode("r1", "s", 0)); !errors.Is(err, ErrInvalid) {
		t.Errorf("run id mismatch: err = %v, want ErrInvalid", err)
	}
	if err := db.SaveEpisode(ctx, "r2", sampleEpisode("", "s", 0)); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown run: err = %v, want ErrNotFound", err)
	}
	if err := db.SaveEpisode(ctx, "r1", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil episode: err = %v, want ErrInvalid", err)
	}
	if n := count(t, db, "episodes"); n != 0 {
		t.Errorf("%d episodes written by rejected saves", n)
	}
}

func TestDuplicateSave(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	if err := db.SaveEpisode(ctx, "r1", sampleEpisode("r1", "s", 0)); err != nil {
		t.Fatal(err)
	}
	dup := sampleEpisode("r1", "s", 0)
	dup.Turns = dup.Turns[:1] // different content, same key
	dup.Terminal = decision.TermReject
	err := db.SaveEpisode(ctx, "r1", dup)
	if !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate save err = %v, want ErrDuplicate", err)
	}
	if e, tu, r := count(t, db, "episodes"), count(t, db, "turns"), count(t, db, "probe_readings"); e != 1 || tu != 3 || r != 12 {
		t.Errorf("after duplicate: %d episodes %d turns %d readings, want 1 3 12", e, tu, r)
	}
	eps, _ := db.Episodes(ctx, "r1")
	if eps[0].Terminal != decision.TermAccept {
		t.Errorf("stored episode overwritten: terminal %q", eps[0].Terminal)
	}
	// The same key in another run is not a duplicate.
	mustRun(t, db, "r2")
	if err := db.SaveEpisode(ctx, "r2", sampleEpisode("", "s", 0)); err != nil {
		t.Errorf("same key, other run: %v", err)
	}
}

func TestSaveIsAtomic(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	if err := db.SaveEpisode(ctx, "r1", sampleEpisode("r1", "ok", 0)); err != nil {
		t.Fatal(err)
	}
	// Both failures happen inside the transaction, after the episode row,
	// the initial readings and the first turn (with its readings) were
	// inserted: a duplicate turn index (primary key) and t = 0 (CHECK).
	dupT := sampleEpisode("r1", "bad", 0)
	dupT.Turns[2].T = 1
	zeroT := sampleEpisode("r1", "bad", 1)
	zeroT.Turns[1].T = 0
	for name, ep := range map[string]*episode.Episode{"duplicate t": dupT, "t=0": zeroT} {
		err := db.SaveEpisode(ctx, "r1", ep)
		if err == nil {
			t.Fatalf("%s: saved", name)
		}
		if name == "duplicate t" && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
		if e, tu, r := count(t, db, "episodes"), count(t, db, "turns"), count(t, db, "probe_readings"); e != 1 || tu != 3 || r != 12 {
			t.Errorf("%s: %d episodes %d turns %d readings left, want 1 3 12 (the good episode only)", name, e, tu, r)
		}
	}
	keys, err := db.DoneKeys(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !keys[episode.Key{Persuader: "script", Persuadee: "sim", ScenarioID: "ok", Rollout: 0}] {
		t.Errorf("DoneKeys = %v, want only the good episode", keys)
	}
}

// saveOutcomes stores one episode per terminal in run, scenario ids s0, s1, ...
func saveOutcomes(t *testing.T, db *DB, run string, terms ...decision.Terminal) {
	t.Helper()
	for i, term := range terms {
		ep := sampleEpisode(run, fmt.Sprintf("s%d", i), 0)
		ep.Terminal = term
		if err := db.SaveEpisode(context.Background(), run, ep); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDoneKeys(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	saveOutcomes(t, db, "r1", decision.TermAccept, decision.TermFailed)
	other := sampleEpisode("r1", "s0", 1)
	other.Persuader = "planner"
	if err := db.SaveEpisode(ctx, "r1", other); err != nil {
		t.Fatal(err)
	}
	got, err := db.DoneKeys(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[episode.Key]bool{
		{Persuader: "script", Persuadee: "sim", ScenarioID: "s0", Rollout: 0}: true, {Persuader: "script", Persuadee: "sim", ScenarioID: "s1", Rollout: 0}: true, {Persuader: "planner", Persuadee: "sim", ScenarioID: "s0", Rollout: 1}: true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DoneKeys = %v, want %v", got, want)
	}
	if _, err := db.DoneKeys(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DoneKeys of missing run: err = %v, want ErrNotFound", err)
	}
	if _, err := db.Episodes(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Episodes of missing run: err = %v, want ErrNotFound", err)
	}
}

func TestListRunsAndCounts(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, id := range []string{"old", "new", "empty"} {
		if err := db.CreateRun(ctx, Run{ID: id, Kind: "eval", CreatedAt: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	saveOutcomes(t, db, "old", decision.TermAccept, decision.TermAccept, decision.TermReject, decision.TermFailed)
	saveOutcomes(t, db, "new", decision.TermConditional, decision.TermAccept)
	runs, err := db.ListRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		id                  string
		eps, failed, accept int
		share               float64
	}
	var got []row
	for _, r := range runs {
		got = append(got, row{r.ID, r.Episodes, r.Failed, r.Accepted, r.AcceptShare})
	}
	want := []row{{"empty", 0, 0, 0, 0}, {"new", 2, 0, 1, 0.5}, {"old", 4, 1, 2, 2.0 / 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListRuns = %v, want %v", got, want)
	}

	// Per-pair terminal counts.
	p := sampleEpisode("old", "s9", 0)
	p.Persuader, p.Terminal = "planner", decision.TermPending
	if err := db.SaveEpisode(ctx, "old", p); err != nil {
		t.Fatal(err)
	}
	pcs, err := db.TerminalCounts(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	wantPC := []PairCounts{
		{Persuader: "planner", Persuadee: "sim", Episodes: 1, Terminals: map[decision.Terminal]int{decision.TermPending: 1}},
		{Persuader: "script", Persuadee: "sim", Episodes: 4, Terminals: map[decision.Terminal]int{
			decision.TermAccept: 2, decision.TermReject: 1, decision.TermFailed: 1}},
	}
	if !reflect.DeepEqual(pcs, wantPC) {
		t.Errorf("TerminalCounts = %+v, want %+v", pcs, wantPC)
	}
	if _, err := db.TerminalCounts(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("TerminalCounts of missing run: err = %v, want ErrNotFound", err)
	}
}

func TestEpisodesOrderAndFilter(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	// Saved out of order; loaded by persuader, persuadee, scenario, rollout.
	keys := []episode.Key{{Persuader: "script", Persuadee: "sim", ScenarioID: "b", Rollout: 1}, {Persuader: "planner", Persuadee: "sim", ScenarioID: "z", Rollout: 0}, {Persuader: "script", Persuadee: "sim", ScenarioID: "b", Rollout: 0}, {Persuader: "script", Persuadee: "sim", ScenarioID: "a", Rollout: 3}}
	for i, k := range keys {
		ep := sampleEpisode("r1", k.ScenarioID, k.Rollout)
		ep.Persuader = k.Persuader
		if i%2 == 1 {
			ep.Terminal = decision.TermReject
		}
		if err := db.SaveEpisode(ctx, "r1", ep); err != nil {
			t.Fatal(err)
		}
	}
	eps, err := db.Episodes(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var got []episode.Key
	for _, ep := range eps {
		got = append(got, episode.KeyOf(ep))
		if len(ep.Turns) != 3 || len(ep.Turns[0].Probes) != 3 || len(ep.Initial) != 3 {
			t.Errorf("%s: turns/probes not attached: %d turns", episode.KeyOf(ep), len(ep.Turns))
		}
	}
	want := []episode.Key{{Persuader: "planner", Persuadee: "sim", ScenarioID: "z", Rollout: 0}, {Persuader: "script", Persuadee: "sim", ScenarioID: "a", Rollout: 3}, {Persuader: "script", Persuadee: "sim", ScenarioID: "b", Rollout: 0}, {Persuader: "script", Persuadee: "sim", ScenarioID: "b", Rollout: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	rej, err := db.Episodes(ctx, "r1", Filter{Terminal: decision.TermReject}, Filter{Persuader: "script"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rej) != 1 || episode.KeyOf(rej[0]) != (episode.Key{Persuader: "script", Persuadee: "sim", ScenarioID: "a", Rollout: 3}) || len(rej[0].Turns) != 3 {
		t.Errorf("filtered = %v, want only script/sim/a#3 with its turns", rej)
	}
}

func TestSecretGuard(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	for _, c := range []struct {
		config string
		secret []string
	}{
		{`{"engine": {"url": "http://x", "api_key": "sk-123"}}`, []string{"engine.api_key"}},
		{`{"headers": [{"Authorization": "Bearer abc"}]}`, []string{"headers[0].Authorization"}},
		{`{"OPENAI_API_KEY": "sk", "x-api-key": "k", "apiKey": "k"}`, []string{"OPENAI_API_KEY", "apiKey", "x-api-key"}},
		{`{"api_key": "", "api_key_env": "OPENAI_API_KEY", "max_tokens": 512, "apikey": null}`, nil},
		{`[1, 2]`, nil},
	} {
		got := ConfigSecrets([]byte(c.config))
		if !reflect.DeepEqual(got, c.secret) {
			t.Errorf("ConfigSecrets(%s) = %q, want %q", c.config, got, c.secret)
		}
		err := db.CreateRun(ctx, Run{ID: "r", Config: json.RawMessage(c.config)})
		if c.secret != nil {
			if !errors.Is(err, ErrSecret) {
				t.Errorf("CreateRun(%s) err = %v, want ErrSecret", c.config, err)
			}
			if strings.Contains(fmt.Sprint(err), "sk-123") || strings.Contains(fmt.Sprint(err), "Bearer") {
				t.Errorf("error leaks the secret: %v", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("CreateRun(%s) err = %v, want nil", c.config, err)
		}
		db.sql.Exec(`DELETE FROM runs`)
	}
	if n := count(t, db, "runs"); n != 0 {
		t.Errorf("%d runs stored", n)
	}
}

func TestConcurrentSaves(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	db1, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db1.Close()
	// A second handle has its own mutex and pool, like a second process:
	// its writers meet db1's only in SQLite's lock and busy timeout.
	db2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	mustRun(t, db1, "r1")
	const workers, each = 8, 5
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			db := db1
			if w%2 == 1 {
				db = db2
			}
			for i := 0; i < each; i++ {
				if err := db.SaveEpisode(ctx, "r1", sampleEpisode("r1", fmt.Sprintf("w%d", w), i)); err != nil {
					errs[w] = err
					return
				}
				// Readers run beside the writers.
				if _, err := db.DoneKeys(ctx, "r1"); err != nil {
					errs[w] = err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", w, err)
		}
	}
	keys, err := db2.DoneKeys(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != workers*each {
		t.Errorf("%d episodes stored, want %d", len(keys), workers*each)
	}
	if n := count(t, db1, "turns"); n != workers*each*3 {
		t.Errorf("%d turns stored, want %d", n, workers*each*3)
	}
}

// tenTurns returns a 10-turn episode with K = 3 probes per turn.
func tenTurns(rollout int) *episode.Episode {
	ep := sampleEpisode("", "bench", rollout)
	base := ep.Turns[0]
	ep.Turns = nil
	for t := 1; t <= 10; t++ {
		tu := base
		tu.T = t
		ep.Turns = append(ep.Turns, tu)
	}
	ep.Terminal = decision.TermPending
	return ep
}

func BenchmarkSaveEpisode(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	mustRun(b, db, "r1")
	eps := make([]*episode.Episode, b.N)
	for i := range eps {
		eps[i] = tenTurns(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := db.SaveEpisode(ctx, "r1", eps[i]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEpisodes1000(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	mustRun(b, db, "r1")
	for i := 0; i < 1000; i++ {
		if err := db.SaveEpisode(ctx, "r1", tenTurns(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		eps, err := db.Episodes(ctx, "r1")
		if err != nil || len(eps) != 1000 {
			b.Fatal(len(eps), err)
		}
	}
}

// TestDeleteFailed removes only the run's failed episodes, with their
// turns and probe readings, so a resume replays exactly those.
func TestDeleteFailed(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	mustRun(t, db, "r2")
	saveOutcomes(t, db, "r1", decision.TermAccept, decision.TermFailed, decision.TermFailed, decision.TermReject)
	saveOutcomes(t, db, "r2", decision.TermFailed)
	turns, readings := count(t, db, "turns"), count(t, db, "probe_readings")
	if turns == 0 || readings == 0 {
		t.Fatal("sample episodes carry no turns or readings: the cascade is untested")
	}
	n, err := db.DeleteFailed(ctx, "r1")
	if err != nil || n != 2 {
		t.Fatalf("deleted %d, %v; want 2", n, err)
	}
	got, err := db.DoneKeys(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[episode.Key]bool{{Persuader: "script", Persuadee: "sim", ScenarioID: "s0", Rollout: 0}: true, {Persuader: "script", Persuadee: "sim", ScenarioID: "s3", Rollout: 0}: true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	perEp := turns / 5
	if count(t, db, "turns") != turns-2*perEp || count(t, db, "probe_readings") != readings-2*(readings/5) {
		t.Fatal("turns or probe readings of deleted episodes left behind")
	}
	if n, err := db.DeleteFailed(ctx, "r1"); err != nil || n != 0 {
		t.Fatalf("second delete: %d, %v", n, err)
	}
	if k, _ := db.DoneKeys(ctx, "r2"); len(k) != 1 {
		t.Fatal("another run's failed episode was deleted")
	}
	if _, err := db.DeleteFailed(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing run: %v", err)
	}
}

// BenchmarkEpisodeWriter is BenchmarkSaveEpisode through an EpisodeWriter
// (batches of DefaultWriterBatch): the per-episode cost eval pays
// (performance issue target: <= 50 µs per episode amortised).
func BenchmarkEpisodeWriter(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	mustRun(b, db, "r1")
	eps := make([]*episode.Episode, b.N)
	for i := range eps {
		eps[i] = tenTurns(i)
	}
	w := db.NewEpisodeWriter("r1", 0, time.Hour, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.Add(ctx, eps[i]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		b.Fatal(err)
	}
}

// TestEachOutcome streams exactly what Episodes() gives, reduced to
// outcomes.
func TestEachOutcome(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	saveOutcomes(t, db, "r1", decision.TermAccept, decision.TermFailed, decision.TermReject)
	judged := sampleEpisode("r1", "s9", 0)
	judged.RStrategy, judged.JudgeError = fp(-0.5), ""
	if err := db.SaveEpisode(ctx, "r1", judged); err != nil {
		t.Fatal(err)
	}
	eps, err := db.Episodes(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var want, got []episode.Outcome
	for _, ep := range eps {
		want = append(want, ep.Outcome())
	}
	if err := db.EachOutcome(ctx, "r1", func(o episode.Outcome) error { got = append(got, o); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes\n got %+v\nwant %+v", got, want)
	}
	if got[3].RStrategy == nil || *got[3].RStrategy != -0.5 || got[0].BFinal == nil {
		t.Fatalf("nullable columns lost: %+v", got)
	}
	stop := errors.New("stop")
	n := 0
	if err := db.EachOutcome(ctx, "r1", func(episode.Outcome) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("callback error: %v after %d", err, n)
	}
	if err := db.EachOutcome(ctx, "nope", func(episode.Outcome) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing run: %v", err)
	}
}

// TestArmsAndFilteredOutcomes: Arms lists the distinct (persuader,
// persuadee) pairs, sorted; EachOutcome with a Filter streams only the
// matching episodes.
func TestArmsAndFilteredOutcomes(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	for _, a := range []struct{ r, e, sc string }{
		{"script", "sim", "s1"}, {"pushy", "sim", "s1"}, {"script", "sim", "s2"}, {"script", "llm:x", "s1"},
	} {
		ep := sampleEpisode("r1", a.sc, 0)
		ep.Persuader, ep.Persuadee = a.r, a.e
		if err := db.SaveEpisode(ctx, "r1", ep); err != nil {
			t.Fatal(err)
		}
	}
	arms, err := db.Arms(ctx, "r1")
	want := []Arm{{"pushy", "sim"}, {"script", "llm:x"}, {"script", "sim"}}
	if err != nil || !reflect.DeepEqual(arms, want) {
		t.Fatalf("arms %v %v, want %v", arms, err, want)
	}
	var got []string
	err = db.EachOutcome(ctx, "r1", func(o episode.Outcome) error {
		got = append(got, o.Persuader+"/"+o.Persuadee+"/"+o.ScenarioID)
		return nil
	}, Filter{Persuader: "script", Persuadee: "sim"})
	if err != nil || strings.Join(got, ",") != "script/sim/s1,script/sim/s2" {
		t.Fatalf("filtered outcomes %v %v", got, err)
	}
	if _, err := db.Arms(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing run: %v", err)
	}
}

// TestEachEpisode: EachEpisode yields exactly Episodes' episodes, in its
// order, with and without filters, including episodes without turns or
// readings and a second run's episodes interleaved in storage; an error
// from fn stops the scan.
func TestEachEpisode(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	mustRun(t, db, "r2")
	keys := []episode.Key{{Persuader: "script", Persuadee: "sim", ScenarioID: "b", Rollout: 1}, {Persuader: "planner", Persuadee: "sim", ScenarioID: "z", Rollout: 0}, {Persuader: "script", Persuadee: "sim", ScenarioID: "b", Rollout: 0},
		{Persuader: "script", Persuadee: "sim-hard", ScenarioID: "a", Rollout: 3}, {Persuader: "planner", Persuadee: "sim", ScenarioID: "a", Rollout: 2}, {Persuader: "script", Persuadee: "sim", ScenarioID: "c", Rollout: 0}}
	for i, k := range keys {
		ep := sampleEpisode("r1", k.ScenarioID, k.Rollout)
		ep.Persuader, ep.Persuadee = k.Persuader, k.Persuadee
		switch i % 3 {
		case 1:
			ep.Terminal, ep.Turns = decision.TermReject, ep.Turns[:1]
		case 2:
			ep.Terminal, ep.Error, ep.Turns, ep.Initial, ep.B0 = decision.TermFailed, "down", nil, nil, nil
		}
		for _, run := range []string{"r1", "r2"} {
			ep.RunID = run
			if err := db.SaveEpisode(ctx, run, ep); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, fs := range [][]Filter{nil, {{Persuader: "script"}}, {{Persuader: "script", Persuadee: "sim"}}, {{Terminal: decision.TermFailed}}} {
		want, err := db.Episodes(ctx, "r1", fs...)
		if err != nil {
			t.Fatal(err)
		}
		var got []*episode.Episode
		if err := db.EachEpisode(ctx, "r1", func(ep *episode.Episode) error { got = append(got, ep); return nil }, fs...); err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("filters %+v:\n got %+v\nwant %+v", fs, got, want)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := db.EachEpisode(ctx, "r1", func(*episode.Episode) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("callback error: %v after %d", err, n)
	}
	if err := db.EachEpisode(ctx, "nope", func(*episode.Episode) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing run: %v", err)
	}
}
