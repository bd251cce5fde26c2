package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/store/storetest"
)

// legacyDB is a database at schema version 6 written as versions 1-6
// did, with '?' placeholders rebound for PostgreSQL.
type legacyDB struct {
	*sql.DB
	pg bool
}

func (l legacyDB) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if l.pg {
		var b strings.Builder
		n := 0
		for _, r := range q {
			if r == '?' {
				n++
				b.WriteString("$" + strconv.Itoa(n))
				continue
			}
			b.WriteRune(r)
		}
		q = b.String()
	}
	if _, err := l.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
}

// newLegacy creates the schema of version 6 in db from the dialect's
// migration list and a run r1.
func newLegacy(t *testing.T, db *sql.DB, pg bool, migrations []string) legacyDB {
	l := legacyDB{db, pg}
	l.exec(t, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`)
	for v := 1; v <= 6; v++ {
		l.exec(t, migrations[v-1])
		l.exec(t, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, 'x')`, v)
	}
	l.exec(t, `INSERT INTO runs VALUES ('r1', 'x', 'x', 'eval', 1, 'v', NULL, 'done')`)
	return l
}

// save writes ep with episode id id as schema version 6 stored it: an
// episodes row, a turns row per turn, a probe_readings row per read-out,
// and b_final as versions before 8 derived it: the last readable belief,
// else b0.
func (l legacyDB) save(t *testing.T, id int64, ep *episode.Episode) {
	t.Helper()
	var bFinal any
	if ep.B0 != nil {
		bFinal = *ep.B0
	}
	for _, tu := range ep.Turns {
		if tu.Belief != nil {
			bFinal = *tu.Belief
		}
	}
	reward := ""
	if ep.Reward != nil {
		b, _ := json.Marshal(ep.Reward)
		reward = string(b)
	}
	opt := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	ju, iu := ep.JudgeUsage, ep.InitialProbeUsage
	cols := `run_id, persuader, persuadee, scenario_id, rollout, seed,
		split, family, domain, resistance, terminal, r_goal, b0, b_final, n_turns, error,
		r_strategy, acts_by, judge_error, judge_ms,
		judge_prompt_tokens, judge_completion_tokens, judge_cached_tokens, judge_requests,
		initial_probe_ms, initial_probe_prompt_tokens, initial_probe_completion_tokens,
		initial_probe_cached_tokens, initial_probe_requests, reward`
	args := []any{"r1", ep.Persuader, ep.Persuadee, ep.ScenarioID, ep.Rollout, int64(ep.Seed),
		string(ep.Split), string(ep.Family), ep.Domain, string(ep.Resistance), string(ep.Terminal),
		ep.RGoal, opt(ep.B0), bFinal, len(ep.Turns), ep.Error,
		opt(ep.RStrategy), ep.ActsBy, ep.JudgeError, ep.JudgeMS,
		ju.PromptTokens, ju.CompletionTokens, ju.CachedTokens, ju.Requests,
		ep.InitialProbeMS, iu.PromptTokens, iu.CompletionTokens, iu.CachedTokens, iu.Requests, reward}
	if l.pg {
		l.exec(t, `INSERT INTO episodes(id, `+cols+`) OVERRIDING SYSTEM VALUE VALUES (?`+strings.Repeat(", ?", len(args))+`)`, append([]any{id}, args...)...)
	} else {
		l.exec(t, `INSERT INTO episodes(id, `+cols+`) VALUES (?`+strings.Repeat(", ?", len(args))+`)`, append([]any{id}, args...)...)
	}
	reading := func(t0, k int, r probe.Reading) {
		ok := any(r.OK)
		if !l.pg {
			ok = map[bool]int{false: 0, true: 1}[r.OK]
		}
		l.exec(t, `INSERT INTO probe_readings(episode_id, t, k, probe, p, ok) VALUES (?, ?, ?, ?, ?, ?)`, id, t0, k, r.Probe, r.P, ok)
	}
	for k, r := range ep.Initial {
		reading(0, k, r)
	}
	// Rows in reverse turn order: the old tables' primary keys, not the
	// insertion order, gave the turns' order.
	for i := len(ep.Turns) - 1; i >= 0; i-- {
		tu := ep.Turns[i]
		acts, _ := json.Marshal(tu.Acts)
		if tu.Acts == nil {
			acts = []byte("[]")
		}
		pu, eu, ru := tu.PersuaderUsage, tu.PersuadeeUsage, tu.ProbeUsage
		l.exec(t, `INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, tu.T, tu.Persuader, tu.Persuadee, string(tu.Decision), string(acts),
			opt(tu.Belief), opt(tu.Dense), tu.PersuaderMS, tu.PersuadeeMS, tu.ProbeMS,
			pu.PromptTokens, pu.CompletionTokens, pu.CachedTokens, pu.Requests,
			eu.PromptTokens, eu.CompletionTokens, eu.CachedTokens, eu.Requests,
			ru.PromptTokens, ru.CompletionTokens, ru.CachedTokens, ru.Requests)
		for k, r := range tu.Probes {
			reading(tu.T, k, r)
		}
	}
}

func fptr(v float64) *float64 { return &v }

// legacyEpisodes are what the migration must carry over: awkward text
// (quotes, escapes, control characters, non-ASCII), floats that need 17
// digits, a zero dense reward, nil beliefs, unreadable probes, a judged
// episode with a reward vector, and a failed one without turns.
func legacyEpisodes() []*episode.Episode {
	third, tenth, fifth := 1.0, 0.1, 0.2
	third /= 3
	sum := tenth + fifth // 0.30000000000000004, not the constant 0.3
	return []*episode.Episode{
		{
			ScenarioID: "hc-001", Rollout: 2, Seed: 0xfedcba9876543210, Persuader: "script", Persuadee: "sim",
			Split: scenario.Heldout, Family: scenario.Healthcare, Domain: "flu \"jab\"", Resistance: scenario.IdentityThreat,
			Initial: []probe.Reading{{Probe: "ca", P: third, OK: true}, {Probe: "pe", P: 0, OK: false}},
			B0:      fptr(third),
			Turns: []episode.Turn{
				{T: 1, Persuader: "Line one\nline \"two\"\t\\ end\x01", Persuadee: "Ça va — 好 🙂",
					Decision: decision.Continue, Acts: []string{"question", "rapport"},
					Probes: []probe.Reading{{Probe: "ca", P: sum, OK: true}, {Probe: "pe", P: 5e-324, OK: true}},
					Belief: fptr(sum), Dense: fptr(math.Copysign(0, -1)), // SQLite stored -0 as 0
					PersuaderMS: 12.345678901234567, PersuadeeMS: 1e21, ProbeMS: 55,
					PersuaderUsage: episode.Usage{PromptTokens: 100, CompletionTokens: 20, CachedTokens: 64, Requests: 1},
					PersuadeeUsage: episode.Usage{PromptTokens: 300, CompletionTokens: 40, Requests: 2},
					ProbeUsage:     episode.Usage{PromptTokens: 900, CompletionTokens: 3, CachedTokens: 850, Requests: 3}},
				{T: 2, Persuader: "", Persuadee: "...", Decision: decision.Continue, Acts: []string{},
					Probes: []probe.Reading{{Probe: "ca", OK: false}}},
				{T: 4, Persuader: "Last.", Persuadee: "Yes.", Decision: decision.Accept, Acts: []string{"autonomy"},
					Belief: fptr(0.875)},
			},
			Terminal: decision.TermAccept, RGoal: 3,
			RStrategy: fptr(-0.5), ActsBy: "judge", JudgeMS: 1.5, JudgeUsage: episode.Usage{PromptTokens: 7, Requests: 1},
			InitialProbeMS: 2.25, InitialProbeUsage: episode.Usage{PromptTokens: 11, CompletionTokens: 1, Requests: 2},
			Reward: &episode.RewardVector{Spec: "repo:default", R: 0.25},
		},
		{ScenarioID: "hc-002", Persuader: "llm", Persuadee: "sim", Terminal: decision.TermFailed, Error: "engine: refused"},
	}
}

// A database at schema version 6 (turns and read-outs in their own tables)
// migrates to 7 with every value carried over: its episodes load equal to
// the same episodes saved at version 7, and the views turns and
// probe_readings answer the old tables' queries.
func TestMigrateFromVersion6(t *testing.T) {
	forLegacy(t, func(t *testing.T, l legacyDB, old, fresh string) {
		testMigrate6(t, l, old, fresh)
	})
}

// forLegacy runs f on a database at schema version 6 in each dialect
// (PostgreSQL where the tests have one), with the URL of that database and
// of a fresh one.
func forLegacy(t *testing.T, f func(t *testing.T, l legacyDB, old, fresh string)) {
	t.Run("sqlite", func(t *testing.T) {
		path := t.TempDir() + "/v6.db"
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		f(t, newLegacy(t, raw, false, store.SQLiteMigrations()), path, t.TempDir()+"/fresh.db")
	})
	t.Run("postgres", func(t *testing.T) {
		storetest.RequirePostgres(t)
		u := storetest.PostgresURL(t)
		raw, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		f(t, newLegacy(t, raw, true, store.PostgresMigrations()), u, storetest.PostgresURL(t))
	})
}

// migrated saves eps (episode ids from firstID on) in the version-6
// database l, closes it and opens it at url, migrated to the latest
// version; the store closes when the test ends.
func migrated(t *testing.T, l legacyDB, url string, eps []*episode.Episode, firstID int64) *store.DB {
	t.Helper()
	for i, ep := range eps {
		l.save(t, firstID+int64(i), ep)
	}
	l.Close()
	db, err := store.OpenURL(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func testMigrate6(t *testing.T, l legacyDB, old, fresh string) {
	ctx := context.Background()
	eps := legacyEpisodes()
	db := migrated(t, l, old, eps, 10)
	if v, err := db.SchemaVersion(ctx); err != nil || v != store.SchemaLatest {
		t.Fatalf("schema version %d, %v; want %d", v, err, store.SchemaLatest)
	}
	ref, err := store.OpenURL(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if err := ref.CreateRun(ctx, store.Run{ID: "r1", Kind: "eval", Seed: 1, Version: "v"}); err != nil {
		t.Fatal(err)
	}
	if err := ref.SaveEpisodes(ctx, "r1", legacyEpisodes()); err != nil {
		t.Fatal(err)
	}
	got, err := db.Episodes(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Episodes(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Fatalf("migrated episodes\n got %s\nwant %s", gj, wj)
	}
	// Hand-checked values, bit for bit (episodes come in persuader order).
	sum := 0.1
	sum += 0.2
	ep, failed := got[1], got[0]
	tu := ep.Turns
	if len(tu) != 3 || tu[0].Persuader != eps[0].Turns[0].Persuader || tu[0].Persuadee != "Ça va — 好 🙂" ||
		*tu[0].Belief != sum || sum == 0.3 || *tu[0].Dense != 0 || tu[0].Probes[1].P != 5e-324 ||
		tu[0].PersuaderMS != 12.345678901234567 || tu[0].ProbeUsage.CachedTokens != 850 ||
		tu[1].Belief != nil || tu[1].Probes[0].OK || tu[2].T != 4 || tu[2].Probes != nil ||
		ep.Initial[0].P != 1.0/3 || ep.Seed != 0xfedcba9876543210 || ep.Reward.R != 0.25 ||
		failed.Turns == nil || len(failed.Turns) != 0 || failed.Initial != nil || failed.Error != "engine: refused" {
		j, _ := json.Marshal(got)
		t.Fatalf("migrated values: %s", j)
	}
	// The views answer as the tables did.
	raw, err := sql.Open(map[bool]string{false: "sqlite", true: "pgx"}[l.pg], old)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var nTurns, nReadings, okSum int
	var acts string
	var belief float64
	if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM turns`).Scan(&nTurns); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRowContext(ctx, `SELECT COUNT(*), SUM(CASE WHEN ok THEN 1 ELSE 0 END) FROM probe_readings`).Scan(&nReadings, &okSum); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRowContext(ctx, `SELECT acts, belief FROM turns WHERE episode_id = 10 AND t = 1`).Scan(&acts, &belief); err != nil {
		t.Fatal(err)
	}
	if nTurns != 3 || nReadings != 5 || okSum != 3 || acts != `["question","rapport"]` || belief != sum {
		t.Errorf("views: %d turns, %d readings (%d ok), acts %s, belief %v; want 3, 5 (3), [\"question\",\"rapport\"], 0.30000000000000004",
			nTurns, nReadings, okSum, acts, belief)
	}
	var ms, ms2 float64
	var req, req2 int
	if err := raw.QueryRowContext(ctx, `SELECT a.persuader_ms, a.probe_requests, b.persuader_ms, b.probe_requests
		FROM turns a JOIN turns b ON b.episode_id = a.episode_id WHERE a.episode_id = 10 AND a.t = 1 AND b.t = 2`).Scan(&ms, &req, &ms2, &req2); err != nil ||
		ms != 12.345678901234567 || req != 3 || ms2 != 0 || req2 != 0 {
		t.Errorf("view costs %v %d, %v %d (%v); want 12.345678901234567 3, 0 0", ms, req, ms2, req2, err)
	}
	var k, t0 int
	var pid string
	if err := raw.QueryRowContext(ctx, `SELECT t, k, probe FROM probe_readings WHERE episode_id = 10 ORDER BY t DESC, k DESC LIMIT 1`).Scan(&t0, &k, &pid); err != nil || t0 != 2 || k != 0 || pid != "ca" {
		t.Errorf("last reading t=%d k=%d %q, %v; want t=2 k=0 ca", t0, k, pid, err)
	}
	// The migrated store keeps working: a resume adds an episode.
	more := legacyEpisodes()[1]
	more.ScenarioID = "hc-003"
	if err := db.SaveEpisode(ctx, "r1", more); err != nil {
		t.Fatal(err)
	}
	if k, err := db.DoneKeys(ctx, "r1"); err != nil || len(k) != 3 {
		t.Fatalf("%d keys after a save, %v", len(k), err)
	}
}

// Migration 8 re-derives b_final as the belief after the last turn: an
// episode whose last read-out was unreadable had its last readable
// belief (or b0) stored, and now has none, as Episode.FinalBelief says.
func TestMigrateRederivesBFinal(t *testing.T) {
	forLegacy(t, func(t *testing.T, l legacyDB, old, _ string) { testRederiveBFinal(t, l, old) })
}

func testRederiveBFinal(t *testing.T, l legacyDB, path string) {
	ctx := context.Background()
	carried := &episode.Episode{ScenarioID: "s", Persuader: "a", Persuadee: "b", Terminal: decision.TermAccept, RGoal: 3, B0: fptr(0.8),
		Turns: []episode.Turn{{T: 1, Decision: decision.Continue, Acts: []string{}, Belief: fptr(0.6)},
			{T: 2, Decision: decision.Accept, Acts: []string{}}}}
	readable := &episode.Episode{ScenarioID: "s", Rollout: 1, Persuader: "a", Persuadee: "b", Terminal: decision.TermReject, RGoal: -3, B0: fptr(0.8),
		Turns: []episode.Turn{{T: 1, Decision: decision.Reject, Acts: []string{}, Belief: fptr(0.25)}}}
	none := &episode.Episode{ScenarioID: "s", Rollout: 2, Persuader: "a", Persuadee: "b", Terminal: decision.TermTruncated, RGoal: -1, B0: fptr(0.8)}
	db := migrated(t, l, path, []*episode.Episode{carried, readable, none}, 20)
	var got []*float64
	if err := db.EachOutcome(ctx, "r1", func(o episode.Outcome) error { got = append(got, o.BFinal); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != nil || got[1] == nil || *got[1] != 0.25 || got[2] != nil {
		t.Fatalf("b_final after migration: %v; want missing, 0.25, missing", got)
	}
}
