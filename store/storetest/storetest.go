// Package storetest is the conformance suite of store.Store: one set of
// hand-written expectations that every driver (the SQLite file store,
// the PostgreSQL store) must meet with identical results.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// Run runs the suite: each subtest calls open for a fresh, empty store
// (open registers its own cleanup with t) and checks every Store method
// against hand-computed values: runs (create, get, list, status,
// delete), episodes with turns, probe read-outs, reward vectors and judge
// fields round-tripping exactly through Episodes and EachEpisode
// (including a run larger than one page of 256 episodes), outcomes,
// arms, done keys, failed-episode deletion, terminal counts, pages with
// filters, step metrics and artifacts, and the sentinel errors
// (store.ErrNotFound, ErrDuplicate, ErrInvalid, ErrSecret).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"Runs", testRuns},
		{"RunErrors", testRunErrors},
		{"EpisodeRoundTrip", testEpisodeRoundTrip},
		{"EpisodeErrors", testEpisodeErrors},
		{"CountsAndKeys", testCountsAndKeys},
		{"Filters", testFilters},
		{"ByteOrder", testByteOrder},
		{"EpisodePage", testEpisodePage},
		{"ManyEpisodes", testManyEpisodes},
		{"DeleteFailed", testDeleteFailed},
		{"DeleteRun", testDeleteRun},
		{"Metrics", testMetrics},
		{"Artifacts", testArtifacts},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open(t)) })
	}
}

func fp(v float64) *float64 { return &v }

// seedAboveInt64 exercises the uint64 -> int64 bit-cast of seeds.
const seedAboveInt64 uint64 = 0xf0e1d2c3b4a59687

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)

func mustCreate(t *testing.T, st store.Store, id string, created time.Time) {
	t.Helper()
	if err := st.CreateRun(context.Background(), store.Run{ID: id, CreatedAt: created, Kind: "eval", Seed: 7, Version: "test"}); err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: err %v, want %v", what, err, sentinel)
	}
}

// judged is a two-turn episode with every field set: judge rating and
// cost, initial probe cost, a reward vector with per-turn components,
// unreadable probes, a nil belief and dense reward.
func judged(scenarioID string, rollout int) *episode.Episode {
	return &episode.Episode{
		ScenarioID: scenarioID, Rollout: rollout, Seed: seedAboveInt64,
		Persuader: "llm:a", Persuadee: "sim:fits/p4g.json",
		Split: scenario.Heldout, Family: scenario.Healthcare, Domain: "flu vaccination",
		Resistance: scenario.IdentityThreat,
		Initial:    []probe.Reading{{Probe: "ca", P: 0.25, OK: true}, {Probe: "pe", P: 0, OK: false}},
		B0:         fp(0.25),
		Turns: []episode.Turn{
			{
				T: 1, Persuader: "Could we talk — über the clinic? 🙂", Persuadee: "Maybe.",
				Decision: decision.Continue, Acts: []string{"question", "rapport"},
				Probes: []probe.Reading{{Probe: "ca", P: 0.5, OK: true}, {Probe: "pe", P: 0.625, OK: true}},
				Belief: fp(0.5625), Dense: fp(0.5), DenseProbes: 1, ReplyCut: true,
				PersuaderMS: 12.5, PersuadeeMS: 340.25, ProbeMS: 55,
				PersuaderUsage: episode.Usage{PromptTokens: 100, CompletionTokens: 20, CachedTokens: 64, Requests: 1},
				PersuadeeUsage: episode.Usage{PromptTokens: 300, CompletionTokens: 40, Requests: 1},
				ProbeUsage:     episode.Usage{PromptTokens: 900, CompletionTokens: 3, CachedTokens: 850, PromptOnceTokens: 475, Requests: 2},
			},
			{
				T: 2, Persuader: "It is your call.", Persuadee: "I'll book it.",
				Decision: decision.Accept, Acts: []string{},
				Probes:      []probe.Reading{{Probe: "ca", OK: false}, {Probe: "pe", OK: false}},
				PersuaderMS: 1, PersuadeeMS: 2, ProbeMS: 3,
			},
		},
		Terminal: decision.TermAccept, RGoal: 2,
		RStrategy: fp(0.75), ActsBy: "judge", JudgeError: "", JudgeMS: 81.5,
		JudgeUsage:     episode.Usage{PromptTokens: 1234, CompletionTokens: 56, CachedTokens: 1000, Requests: 1},
		InitialProbeMS: 9.25, InitialProbeUsage: episode.Usage{PromptTokens: 450, CompletionTokens: 2, CachedTokens: 400, PromptOnceTokens: 240, Requests: 2},
		Reward: &episode.RewardVector{Spec: "negotiation", R: 1.5,
			Components: []episode.RewardComponent{{Name: "r_model", Value: 3}, {Name: "e", Value: -50}},
			Turns:      []episode.TurnReward{{T: 1, R: 2.25, Components: []episode.RewardComponent{{Name: "func.no_pressure", Value: -1}}}}},
	}
}

// short is a one-turn episode with the given pair, scenario facts and
// terminal state; a failed one carries an error and no turn.
func short(per, pee, sc string, rollout int, term decision.Terminal, split scenario.Split, fam scenario.Family, res scenario.Resistance) *episode.Episode {
	ep := &episode.Episode{
		Persuader: per, Persuadee: pee, ScenarioID: sc, Rollout: rollout, Seed: uint64(rollout) + 1,
		Split: split, Family: fam, Domain: "d-" + sc, Resistance: res, Terminal: term,
		Turns: []episode.Turn{{T: 1, Persuader: "p", Persuadee: "q", Decision: decision.Continue, Acts: []string{"a"}, Belief: fp(0.5)}},
		RGoal: 1,
	}
	if term == decision.TermFailed {
		ep.Turns, ep.Error, ep.RGoal = []episode.Turn{}, "engine: 503", 0
	}
	return ep
}

func testRuns(t *testing.T, st store.Store) {
	ctx := context.Background()
	cfg := json.RawMessage(`{"persuaders": ["a", "b"],  "turns": 8}`)
	r := store.Run{ID: "20260304-050607-00aa", CreatedAt: t0, UpdatedAt: t0.Add(time.Second), Kind: "train",
		Seed: seedAboveInt64, Version: "v1.2.3", Config: cfg, Status: store.StatusInterrupted}
	if err := st.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != r.ID || !got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t0.Add(time.Second)) || got.Kind != "train" ||
		got.Seed != seedAboveInt64 || got.Version != "v1.2.3" || string(got.Config) != string(cfg) || got.Status != store.StatusInterrupted {
		t.Fatalf("GetRun = %+v, want %+v", got, r)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Fatalf("CreatedAt location %v, want UTC", got.CreatedAt.Location())
	}
	// Defaults: status running, UpdatedAt = CreatedAt, no config.
	if err := st.CreateRun(ctx, store.Run{ID: "b", CreatedAt: t0.Add(time.Hour), Kind: "eval"}); err != nil {
		t.Fatal(err)
	}
	b, err := st.GetRun(ctx, "b")
	if err != nil || b.Status != store.StatusRunning || !b.UpdatedAt.Equal(t0.Add(time.Hour)) || b.Config != nil {
		t.Fatalf("GetRun(b) = %+v, %v", b, err)
	}
	// A zero CreatedAt is now.
	before := time.Now().Add(-time.Second)
	if err := st.CreateRun(ctx, store.Run{ID: "c"}); err != nil {
		t.Fatal(err)
	}
	c, err := st.GetRun(ctx, "c")
	if err != nil || c.CreatedAt.Before(before) || c.CreatedAt.After(time.Now().Add(time.Second)) {
		t.Fatalf("GetRun(c) = %+v, %v, want CreatedAt about now", c, err)
	}

	// Status.
	before = time.Now().Add(-time.Second)
	if err := st.SetRunStatus(ctx, r.ID, store.StatusDone); err != nil {
		t.Fatal(err)
	}
	got, err = st.GetRun(ctx, r.ID)
	if err != nil || got.Status != store.StatusDone || got.UpdatedAt.Before(before) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("after SetRunStatus: %+v, %v", got, err)
	}

	// Heartbeat: TouchRun stamps a running run's UpdatedAt and leaves a
	// finished one as it is.
	before = time.Now().Add(-time.Second)
	if err := st.TouchRun(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if b, err = st.GetRun(ctx, "b"); err != nil || b.Status != store.StatusRunning || b.UpdatedAt.Before(before) ||
		b.UpdatedAt.After(time.Now().Add(time.Second)) || !b.CreatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("after TouchRun(b): %+v, %v", b, err)
	}
	if err := st.TouchRun(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if again, err := st.GetRun(ctx, r.ID); err != nil || again.Status != store.StatusDone || !again.UpdatedAt.Equal(got.UpdatedAt) {
		t.Fatalf("TouchRun of a finished run changed it: %+v, %v", again, err)
	}
	if err := st.TouchRun(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("TouchRun(nope): %v", err)
	}

	// List: newest first (c is now, b is t0+1h, r is t0); counts.
	if err := st.SaveEpisodes(ctx, "b", []*episode.Episode{
		short("a", "s", "x", 0, decision.TermAccept, scenario.Train, scenario.Charity, scenario.EntrenchedBelief),
		short("a", "s", "x", 1, decision.TermReject, scenario.Train, scenario.Charity, scenario.EntrenchedBelief),
		short("a", "s", "x", 2, decision.TermFailed, scenario.Train, scenario.Charity, scenario.EntrenchedBelief),
		short("a", "s", "x", 3, decision.TermAccept, scenario.Train, scenario.Charity, scenario.EntrenchedBelief),
		short("a", "s", "x", 4, decision.TermTruncated, scenario.Train, scenario.Charity, scenario.EntrenchedBelief),
	}); err != nil {
		t.Fatal(err)
	}
	list, err := st.ListRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if !reflect.DeepEqual(ids, []string{"c", "b", r.ID}) {
		t.Fatalf("ListRuns order %v", ids)
	}
	// b: 5 episodes, 1 failed, 2 accepted of 4 counted.
	if s := list[1]; s.Episodes != 5 || s.Failed != 1 || s.Accepted != 2 || s.AcceptShare != 0.5 || s.Kind != "eval" {
		t.Fatalf("ListRuns[b] = %+v", s)
	}
	if s := list[2]; s.Episodes != 0 || s.AcceptShare != 0 || s.Status != store.StatusDone || string(s.Config) != string(cfg) {
		t.Fatalf("ListRuns[r] = %+v", s)
	}
	// Equal creation times order by ID descending.
	mustCreate(t, st, "b0", t0.Add(time.Hour))
	mustCreate(t, st, "b9", t0.Add(time.Hour))
	list, err = st.ListRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids = ids[:0]
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if !reflect.DeepEqual(ids, []string{"c", "b9", "b0", "b", r.ID}) {
		t.Fatalf("ListRuns order %v", ids)
	}
}

func testRunErrors(t *testing.T, st store.Store) {
	ctx := context.Background()
	mustCreate(t, st, "r", t0)
	wantErr(t, "duplicate run", st.CreateRun(ctx, store.Run{ID: "r"}), store.ErrDuplicate)
	wantErr(t, "empty id", st.CreateRun(ctx, store.Run{}), store.ErrInvalid)
	wantErr(t, "bad status", st.CreateRun(ctx, store.Run{ID: "x", Status: "paused"}), store.ErrInvalid)
	wantErr(t, "bad config", st.CreateRun(ctx, store.Run{ID: "x", Config: json.RawMessage(`{"a":`)}), store.ErrInvalid)
	wantErr(t, "secret", st.CreateRun(ctx, store.Run{ID: "x", Config: json.RawMessage(`{"api_key":"sk-abc"}`)}), store.ErrSecret)
	_, err := st.GetRun(ctx, "x")
	wantErr(t, "refused run stored", err, store.ErrNotFound)
	wantErr(t, "status of unknown", st.SetRunStatus(ctx, "nope", store.StatusDone), store.ErrNotFound)
	wantErr(t, "bad status", st.SetRunStatus(ctx, "r", "paused"), store.ErrInvalid)
	wantErr(t, "delete unknown", st.DeleteRun(ctx, "nope"), store.ErrNotFound)
	list, err := st.ListRuns(ctx)
	if err != nil || len(list) != 1 || list[0].ID != "r" {
		t.Fatalf("ListRuns = %+v, %v", list, err)
	}
	for name, f := range map[string]func() error{
		"DoneKeys":       func() error { _, err := st.DoneKeys(ctx, "nope"); return err },
		"DeleteFailed":   func() error { _, err := st.DeleteFailed(ctx, "nope"); return err },
		"Episodes":       func() error { _, err := st.Episodes(ctx, "nope"); return err },
		"EachEpisode":    func() error { return st.EachEpisode(ctx, "nope", func(*episode.Episode) error { return nil }) },
		"EachOutcome":    func() error { return st.EachOutcome(ctx, "nope", func(episode.Outcome) error { return nil }) },
		"TerminalCounts": func() error { _, err := st.TerminalCounts(ctx, "nope"); return err },
		"EpisodePage":    func() error { _, err := st.EpisodePage(ctx, "nope", 0, 10); return err },
		"Arms":           func() error { _, err := st.Arms(ctx, "nope"); return err },
		"Metrics":        func() error { _, err := st.Metrics(ctx, "nope"); return err },
		"SaveMetrics":    func() error { return st.SaveMetrics(ctx, "nope", 0, map[string]float64{"a": 1}) },
		"SaveArtifact":   func() error { return st.SaveArtifact(ctx, "nope", "a", []byte("x")) },
		"Artifact":       func() error { _, err := st.Artifact(ctx, "nope", "a"); return err },
		"SaveEpisode":    func() error { return st.SaveEpisode(ctx, "nope", judged("s", 0)) },
	} {
		wantErr(t, name+" of unknown run", f(), store.ErrNotFound)
	}
}

// wantLoaded is ep as Episodes returns it: RunID set, empty probe lists nil.
func wantLoaded(runID string, ep *episode.Episode) *episode.Episode {
	b, _ := json.Marshal(ep)
	var w episode.Episode
	json.Unmarshal(b, &w)
	w.RunID = runID
	if len(w.Initial) == 0 {
		w.Initial = nil
	}
	for i := range w.Turns {
		if len(w.Turns[i].Probes) == 0 {
			w.Turns[i].Probes = nil
		}
	}
	return &w
}

func testEpisodeRoundTrip(t *testing.T, st store.Store) {
	ctx := context.Background()
	mustCreate(t, st, "r", t0)
	a := judged("s1", 0)
	b := judged("s1", 1)
	b.RStrategy, b.ActsBy, b.JudgeError, b.Reward, b.B0 = nil, "", "judge: timeout", nil, nil
	b.Initial = nil
	if err := st.SaveEpisode(ctx, "r", a); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveEpisodes(ctx, "r", []*episode.Episode{b}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Episodes(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	want := []*episode.Episode{wantLoaded("r", a), wantLoaded("r", b)}
	if len(got) != 2 || !reflect.DeepEqual(got[0], want[0]) || !reflect.DeepEqual(got[1], want[1]) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("Episodes:\n got %s\nwant %s", g, w)
	}
	// Spot checks against the fixture's literal values.
	if g := got[0]; g.Seed != seedAboveInt64 || *g.RStrategy != 0.75 || g.JudgeUsage.PromptTokens != 1234 ||
		g.InitialProbeUsage.CachedTokens != 400 || g.Reward.Turns[0].Components[0].Value != -1 ||
		g.Turns[0].Persuader != "Could we talk — über the clinic? 🙂" || g.Turns[1].Probes[1].OK || g.Turns[1].Belief != nil {
		t.Fatalf("loaded %+v", g)
	}
	var streamed []*episode.Episode
	if err := st.EachEpisode(ctx, "r", func(ep *episode.Episode) error { streamed = append(streamed, ep); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(streamed, got) {
		t.Fatalf("EachEpisode differs from Episodes")
	}
	// EachOutcome, in storage order: B_T is missing, the read-out after
	// the last turn being unreadable (never turn 1's 0.5625).
	var outs []episode.Outcome
	if err := st.EachOutcome(ctx, "r", func(o episode.Outcome) error { outs = append(outs, o); return nil }); err != nil {
		t.Fatal(err)
	}
	wantOut := []episode.Outcome{
		{Persuader: "llm:a", Persuadee: "sim:fits/p4g.json", ScenarioID: "s1", Rollout: 0, Terminal: decision.TermAccept,
			RGoal: 2, RStrategy: fp(0.75), Turns: 2},
		{Persuader: "llm:a", Persuadee: "sim:fits/p4g.json", ScenarioID: "s1", Rollout: 1, Terminal: decision.TermAccept,
			RGoal: 2, JudgeError: "judge: timeout", Turns: 2},
	}
	if !reflect.DeepEqual(outs, wantOut) {
		t.Fatalf("EachOutcome = %+v, want %+v", outs, wantOut)
	}
	// An error from fn stops the scan and comes back.
	stop := errors.New("stop")
	n := 0
	err = st.EachEpisode(ctx, "r", func(*episode.Episode) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("EachEpisode stop: %v after %d", err, n)
	}
	n = 0
	err = st.EachOutcome(ctx, "r", func(episode.Outcome) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("EachOutcome stop: %v after %d", err, n)
	}
}

func testEpisodeErrors(t *testing.T, st store.Store) {
	ctx := context.Background()
	mustCreate(t, st, "r", t0)
	if err := st.SaveEpisode(ctx, "r", judged("s", 0)); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "duplicate key", st.SaveEpisode(ctx, "r", judged("s", 0)), store.ErrDuplicate)
	// A batch with a duplicate stores nothing.
	wantErr(t, "batch with duplicate", st.SaveEpisodes(ctx, "r", []*episode.Episode{judged("s", 1), judged("s", 0)}), store.ErrDuplicate)
	nan := judged("s", 2)
	nan.Turns[0].Dense = fp(math.NaN())
	wantErr(t, "NaN", st.SaveEpisode(ctx, "r", nan), store.ErrInvalid)
	dupT := judged("s", 3)
	dupT.Turns[1].T = 1
	wantErr(t, "duplicate turn index", st.SaveEpisode(ctx, "r", dupT), store.ErrInvalid)
	other := judged("s", 4)
	other.RunID = "elsewhere"
	wantErr(t, "mismatched run", st.SaveEpisode(ctx, "r", other), store.ErrInvalid)
	wantErr(t, "nil episode", st.SaveEpisode(ctx, "r", nil), store.ErrInvalid)
	keys, err := st.DoneKeys(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	want := map[episode.Key]bool{{Persuader: "llm:a", Persuadee: "sim:fits/p4g.json", ScenarioID: "s", Rollout: 0}: true}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("after refused saves DoneKeys = %v, want %v", keys, want)
	}
	// The store still works after a refused write.
	if err := st.SaveEpisode(ctx, "r", judged("s", 1)); err != nil {
		t.Fatal(err)
	}
}

// saveGrid stores eight episodes over two persuaders, two persuadees and
// two scenarios, with mixed terminals and scenario facts.
func saveGrid(t *testing.T, st store.Store, run string) {
	t.Helper()
	mustCreate(t, st, run, t0)
	eps := []*episode.Episode{
		short("b", "sim", "s2", 0, decision.TermAccept, scenario.Train, scenario.Charity, scenario.EntrenchedBelief),
		short("a", "sim", "s1", 0, decision.TermAccept, scenario.Train, scenario.Charity, scenario.EntrenchedBelief),
		short("a", "sim", "s1", 1, decision.TermReject, scenario.Heldout, scenario.Healthcare, scenario.AutonomyResistance),
		short("a", "sim", "s2", 0, decision.TermFailed, scenario.Heldout, scenario.Healthcare, scenario.AutonomyResistance),
		short("a", "llm", "s1", 0, decision.TermTruncated, scenario.Train, scenario.Charity, scenario.EntrenchedBelief),
		short("b", "llm", "s1", 0, decision.TermAccept, scenario.Heldout, scenario.Charity, scenario.AutonomyResistance),
		short("b", "sim", "s1", 0, decision.TermReject, scenario.Train, scenario.Healthcare, scenario.EntrenchedBelief),
		short("b", "sim", "s1", 1, decision.TermFailed, scenario.Train, scenario.Charity, scenario.EntrenchedBelief),
	}
	if err := st.SaveEpisodes(context.Background(), run, eps); err != nil {
		t.Fatal(err)
	}
}

func key(per, pee, sc string, r int) episode.Key {
	return episode.Key{Persuader: per, Persuadee: pee, ScenarioID: sc, Rollout: r}
}

func testCountsAndKeys(t *testing.T, st store.Store) {
	ctx := context.Background()
	saveGrid(t, st, "r")
	mustCreate(t, st, "empty", t0)
	keys, err := st.DoneKeys(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := map[episode.Key]bool{
		key("b", "sim", "s2", 0): true, key("a", "sim", "s1", 0): true, key("a", "sim", "s1", 1): true,
		key("a", "sim", "s2", 0): true, key("a", "llm", "s1", 0): true, key("b", "llm", "s1", 0): true,
		key("b", "sim", "s1", 0): true, key("b", "sim", "s1", 1): true,
	}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Fatalf("DoneKeys = %v", keys)
	}
	if k, err := st.DoneKeys(ctx, "empty"); err != nil || len(k) != 0 {
		t.Fatalf("DoneKeys(empty) = %v, %v", k, err)
	}
	tc, err := st.TerminalCounts(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	wantTC := []store.PairCounts{
		{Persuader: "a", Persuadee: "llm", Episodes: 1, Terminals: map[decision.Terminal]int{decision.TermTruncated: 1}},
		{Persuader: "a", Persuadee: "sim", Episodes: 3, Terminals: map[decision.Terminal]int{decision.TermAccept: 1, decision.TermReject: 1, decision.TermFailed: 1}},
		{Persuader: "b", Persuadee: "llm", Episodes: 1, Terminals: map[decision.Terminal]int{decision.TermAccept: 1}},
		{Persuader: "b", Persuadee: "sim", Episodes: 3, Terminals: map[decision.Terminal]int{decision.TermAccept: 1, decision.TermReject: 1, decision.TermFailed: 1}},
	}
	if !reflect.DeepEqual(tc, wantTC) {
		t.Fatalf("TerminalCounts = %+v, want %+v", tc, wantTC)
	}
	if tc, err := st.TerminalCounts(ctx, "empty"); err != nil || len(tc) != 0 {
		t.Fatalf("TerminalCounts(empty) = %v, %v", tc, err)
	}
	arms, err := st.Arms(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if want := []store.Arm{{Persuader: "a", Persuadee: "llm"}, {Persuader: "a", Persuadee: "sim"}, {Persuader: "b", Persuadee: "llm"}, {Persuader: "b", Persuadee: "sim"}}; !reflect.DeepEqual(arms, want) {
		t.Fatalf("Arms = %v, want %v", arms, want)
	}
	if a, err := st.Arms(ctx, "empty"); err != nil || len(a) != 0 {
		t.Fatalf("Arms(empty) = %v, %v", a, err)
	}
}

func keysOf(eps []*episode.Episode) []string {
	out := []string{}
	for _, ep := range eps {
		out = append(out, episode.KeyOf(ep).String())
	}
	return out
}

func testFilters(t *testing.T, st store.Store) {
	ctx := context.Background()
	saveGrid(t, st, "r")
	for _, c := range []struct {
		f    []store.Filter
		want []string
	}{
		{nil, []string{"a/llm/s1#0", "a/sim/s1#0", "a/sim/s1#1", "a/sim/s2#0", "b/llm/s1#0", "b/sim/s1#0", "b/sim/s1#1", "b/sim/s2#0"}},
		{[]store.Filter{{Persuader: "b"}}, []string{"b/llm/s1#0", "b/sim/s1#0", "b/sim/s1#1", "b/sim/s2#0"}},
		{[]store.Filter{{Persuadee: "sim", ScenarioID: "s1"}}, []string{"a/sim/s1#0", "a/sim/s1#1", "b/sim/s1#0", "b/sim/s1#1"}},
		{[]store.Filter{{Split: scenario.Heldout}}, []string{"a/sim/s1#1", "a/sim/s2#0", "b/llm/s1#0"}},
		{[]store.Filter{{Terminal: decision.TermFailed}}, []string{"a/sim/s2#0", "b/sim/s1#1"}},
		{[]store.Filter{{Family: scenario.Healthcare}}, []string{"a/sim/s1#1", "a/sim/s2#0", "b/sim/s1#0"}},
		{[]store.Filter{{Resistance: scenario.AutonomyResistance}, {Persuader: "b"}}, []string{"b/llm/s1#0"}},
		{[]store.Filter{{Persuader: "c"}}, []string{}},
	} {
		got, err := st.Episodes(ctx, "r", c.f...)
		if err != nil {
			t.Fatal(err)
		}
		if g := keysOf(got); !reflect.DeepEqual(g, c.want) {
			t.Errorf("Episodes(%+v) = %v, want %v", c.f, g, c.want)
		}
		var streamed []*episode.Episode
		if err := st.EachEpisode(ctx, "r", func(ep *episode.Episode) error { streamed = append(streamed, ep); return nil }, c.f...); err != nil {
			t.Fatal(err)
		}
		if g := keysOf(streamed); !reflect.DeepEqual(g, c.want) {
			t.Errorf("EachEpisode(%+v) = %v, want %v", c.f, g, c.want)
		}
		var outs []string
		if err := st.EachOutcome(ctx, "r", func(o episode.Outcome) error {
			outs = append(outs, episode.Key{Persuader: o.Persuader, Persuadee: o.Persuadee, ScenarioID: o.ScenarioID, Rollout: o.Rollout}.String())
			return nil
		}, c.f...); err != nil {
			t.Fatal(err)
		}
		if len(outs) != len(c.want) {
			t.Errorf("EachOutcome(%+v) = %v, want %d outcomes", c.f, outs, len(c.want))
		}
	}
}

func testEpisodePage(t *testing.T, st store.Store) {
	ctx := context.Background()
	saveGrid(t, st, "r")
	pg, err := st.EpisodePage(ctx, "r", 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range pg.Rows {
		keys = append(keys, r.Key().String())
	}
	if pg.Total != 8 || !reflect.DeepEqual(keys, []string{"a/sim/s1#1", "a/sim/s2#0", "b/llm/s1#0"}) {
		t.Fatalf("EpisodePage(2, 3) = %v total %d", keys, pg.Total)
	}
	// Every column of one row, by hand.
	want := store.EpisodeRow{
		Outcome: episode.Outcome{Persuader: "a", Persuadee: "sim", ScenarioID: "s1", Rollout: 1, Terminal: decision.TermReject,
			RGoal: 1, Turns: 1, BFinal: fp(0.5)},
		Seed: 2, Split: scenario.Heldout, Family: scenario.Healthcare, Domain: "d-s1", Resistance: scenario.AutonomyResistance,
	}
	if !reflect.DeepEqual(pg.Rows[0], want) {
		t.Fatalf("row = %+v, want %+v", pg.Rows[0], want)
	}
	if f := pg.Rows[1]; f.Error != "engine: 503" || f.Terminal != decision.TermFailed || f.BFinal != nil || f.Turns != 0 {
		t.Fatalf("failed row = %+v", f)
	}
	pg, err = st.EpisodePage(ctx, "r", 1, 10, store.Filter{Persuadee: "sim"}, store.Filter{Split: scenario.Train})
	if err != nil {
		t.Fatal(err)
	}
	keys = keys[:0]
	for _, r := range pg.Rows {
		keys = append(keys, r.Key().String())
	}
	if pg.Total != 4 || !reflect.DeepEqual(keys, []string{"b/sim/s1#0", "b/sim/s1#1", "b/sim/s2#0"}) {
		t.Fatalf("filtered page = %v total %d", keys, pg.Total)
	}
	pg, err = st.EpisodePage(ctx, "r", 100, 10)
	if err != nil || pg.Total != 8 || len(pg.Rows) != 0 || pg.Rows == nil {
		t.Fatalf("past the end: %+v, %v", pg, err)
	}
	for _, c := range [][2]int{{-1, 10}, {0, 0}, {0, store.MaxPageLimit + 1}} {
		_, err := st.EpisodePage(ctx, "r", c[0], c[1])
		wantErr(t, fmt.Sprintf("EpisodePage(%d, %d)", c[0], c[1]), err, store.ErrInvalid)
	}
}

// testManyEpisodes stores more episodes than a page of a paging driver
// (256) and checks that EachEpisode hands each over once, in order, whole.
func testManyEpisodes(t *testing.T, st store.Store) {
	ctx := context.Background()
	mustCreate(t, st, "r", t0)
	const n = 600
	var eps []*episode.Episode
	for i := 0; i < n; i++ {
		per := []string{"p1", "p2"}[i%2]
		ep := short(per, "sim", fmt.Sprintf("s%03d", i/6), i%3, decision.TermAccept, scenario.Train, scenario.Charity, scenario.EntrenchedBelief)
		ep.Turns = append(ep.Turns, episode.Turn{T: 2, Decision: decision.Accept, Acts: []string{},
			Probes: []probe.Reading{{Probe: "ca", P: float64(i) / n, OK: true}}})
		eps = append(eps, ep)
	}
	if err := st.SaveEpisodes(ctx, "r", eps); err != nil {
		t.Fatal(err)
	}
	var got []*episode.Episode
	if err := st.EachEpisode(ctx, "r", func(ep *episode.Episode) error { got = append(got, ep); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("EachEpisode gave %d episodes, want %d", len(got), n)
	}
	all, err := st.Episodes(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, all) {
		t.Fatalf("EachEpisode differs from Episodes")
	}
	// Order: p1 before p2, scenarios ascending, rollouts ascending; episode
	// i = 2j (p1) of scenario s000 has rollouts 0, 2, 1 -> 0, 1, 2.
	if k := keysOf(got[:3]); !reflect.DeepEqual(k, []string{"p1/sim/s000#0", "p1/sim/s000#1", "p1/sim/s000#2"}) {
		t.Fatalf("first keys %v", k)
	}
	if k := episode.KeyOf(got[n-1]).String(); k != "p2/sim/s099#2" {
		t.Fatalf("last key %s", k)
	}
	// p1/sim/s000#1 is episode i = 4 (4%2 = 0, 4/6 = 0, 4%3 = 1).
	if p := got[1].Turns[1].Probes[0].P; p != 4.0/n {
		t.Fatalf("probe of p1/sim/s000#1 = %v, want %v", p, 4.0/n)
	}
	filtered := 0
	if err := st.EachEpisode(ctx, "r", func(*episode.Episode) error { filtered++; return nil }, store.Filter{Persuader: "p2"}); err != nil || filtered != n/2 {
		t.Fatalf("EachEpisode(p2) = %d, %v", filtered, err)
	}
}

func testDeleteFailed(t *testing.T, st store.Store) {
	ctx := context.Background()
	saveGrid(t, st, "r")
	n, err := st.DeleteFailed(ctx, "r")
	if err != nil || n != 2 {
		t.Fatalf("DeleteFailed = %d, %v, want 2", n, err)
	}
	keys, err := st.DoneKeys(ctx, "r")
	if err != nil || len(keys) != 6 || keys[key("a", "sim", "s2", 0)] || keys[key("b", "sim", "s1", 1)] {
		t.Fatalf("DoneKeys after DeleteFailed = %v, %v", keys, err)
	}
	if n, err := st.DeleteFailed(ctx, "r"); err != nil || n != 0 {
		t.Fatalf("second DeleteFailed = %d, %v", n, err)
	}
	// A replayed key can be saved again.
	if err := st.SaveEpisode(ctx, "r", short("a", "sim", "s2", 0, decision.TermAccept, scenario.Train, scenario.Charity, scenario.EntrenchedBelief)); err != nil {
		t.Fatal(err)
	}
}

func testDeleteRun(t *testing.T, st store.Store) {
	ctx := context.Background()
	saveGrid(t, st, "r")
	saveGrid(t, st, "keep")
	if err := st.SaveMetrics(ctx, "r", 0, map[string]float64{"loss": 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveArtifact(ctx, "r", "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteRun(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	_, err := st.GetRun(ctx, "r")
	wantErr(t, "deleted run", err, store.ErrNotFound)
	_, err = st.Episodes(ctx, "r")
	wantErr(t, "episodes of deleted run", err, store.ErrNotFound)
	// The key is free again, with nothing left of the old run.
	mustCreate(t, st, "r", t0)
	if eps, err := st.Episodes(ctx, "r"); err != nil || len(eps) != 0 {
		t.Fatalf("recreated run has %d episodes, %v", len(eps), err)
	}
	if m, err := st.Metrics(ctx, "r"); err != nil || len(m) != 0 {
		t.Fatalf("recreated run has metrics %v, %v", m, err)
	}
	_, err = st.Artifact(ctx, "r", "a")
	wantErr(t, "artifact of recreated run", err, store.ErrNotFound)
	if eps, err := st.Episodes(ctx, "keep"); err != nil || len(eps) != 8 {
		t.Fatalf("other run has %d episodes, %v", len(eps), err)
	}
}

func testMetrics(t *testing.T, st store.Store) {
	ctx := context.Background()
	mustCreate(t, st, "r", t0)
	if m, err := st.Metrics(ctx, "r"); err != nil || m == nil || len(m) != 0 {
		t.Fatalf("Metrics of a fresh run = %#v, %v, want empty non-nil", m, err)
	}
	for _, s := range []struct {
		step int
		m    map[string]float64
	}{
		{2, map[string]float64{"accept": 0.25}},
		{0, map[string]float64{"mean_r_out": -1.5, "accept": 0}},
		{2, map[string]float64{"accept": 0.5, "dead_share": 1e-9}},
		{1, map[string]float64{}},
	} {
		if err := st.SaveMetrics(ctx, "r", s.step, s.m); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.Metrics(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.StepMetrics{
		{Step: 0, Metrics: map[string]float64{"accept": 0, "mean_r_out": -1.5}},
		{Step: 2, Metrics: map[string]float64{"accept": 0.5, "dead_share": 1e-9}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Metrics = %+v, want %+v", got, want)
	}
	wantErr(t, "negative step", st.SaveMetrics(ctx, "r", -1, map[string]float64{"a": 1}), store.ErrInvalid)
	wantErr(t, "empty name", st.SaveMetrics(ctx, "r", 3, map[string]float64{"": 1}), store.ErrInvalid)
	wantErr(t, "infinite", st.SaveMetrics(ctx, "r", 3, map[string]float64{"a": math.Inf(1)}), store.ErrInvalid)
	wantErr(t, "empty run", st.SaveMetrics(ctx, "", 3, map[string]float64{"a": 1}), store.ErrInvalid)
	if got, _ := st.Metrics(ctx, "r"); len(got) != 2 {
		t.Fatalf("refused metrics were stored: %+v", got)
	}
}

func testArtifacts(t *testing.T, st store.Store) {
	ctx := context.Background()
	mustCreate(t, st, "r", t0)
	bin := []byte{0, 1, 2, 0xff, '\n', 0}
	if err := st.SaveArtifact(ctx, "r", "dialogues.jsonl", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveArtifact(ctx, "r", "dialogues.jsonl", bin); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveArtifact(ctx, "r", "empty", nil); err != nil {
		t.Fatal(err)
	}
	got, err := st.Artifact(ctx, "r", "dialogues.jsonl")
	if err != nil || string(got) != string(bin) {
		t.Fatalf("Artifact = %q, %v, want %q", got, err, bin)
	}
	got, err = st.Artifact(ctx, "r", "empty")
	if err != nil || len(got) != 0 {
		t.Fatalf("empty Artifact = %q, %v", got, err)
	}
	_, err = st.Artifact(ctx, "r", "missing")
	wantErr(t, "missing artifact", err, store.ErrNotFound)
	wantErr(t, "empty name", st.SaveArtifact(ctx, "r", "", []byte("x")), store.ErrInvalid)
}

// testByteOrder: text keys sort by byte (SQLite's BINARY collation), not
// by a locale: "Zed" < "_x" < "alpha" < "alpha-2" < "alpha2".
func testByteOrder(t *testing.T, st store.Store) {
	ctx := context.Background()
	mustCreate(t, st, "r", t0)
	var eps []*episode.Episode
	for _, per := range []string{"alpha2", "_x", "alpha", "Zed", "alpha-2"} {
		eps = append(eps, short(per, "sim", "s", 0, decision.TermAccept, scenario.Train, scenario.Charity, scenario.EntrenchedBelief))
	}
	if err := st.SaveEpisodes(ctx, "r", eps); err != nil {
		t.Fatal(err)
	}
	want := []string{"Zed/sim/s#0", "_x/sim/s#0", "alpha/sim/s#0", "alpha-2/sim/s#0", "alpha2/sim/s#0"}
	got, err := st.Episodes(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if k := keysOf(got); !reflect.DeepEqual(k, want) {
		t.Fatalf("Episodes order %v, want %v", k, want)
	}
	var streamed []*episode.Episode
	if err := st.EachEpisode(ctx, "r", func(ep *episode.Episode) error { streamed = append(streamed, ep); return nil }); err != nil {
		t.Fatal(err)
	}
	if k := keysOf(streamed); !reflect.DeepEqual(k, want) {
		t.Fatalf("EachEpisode order %v, want %v", k, want)
	}
	arms, err := st.Arms(ctx, "r")
	if err != nil || len(arms) != 5 || arms[0].Persuader != "Zed" || arms[4].Persuader != "alpha2" {
		t.Fatalf("Arms = %v, %v", arms, err)
	}
	pg, err := st.EpisodePage(ctx, "r", 1, 1)
	if err != nil || len(pg.Rows) != 1 || pg.Rows[0].Persuader != "_x" {
		t.Fatalf("EpisodePage(1, 1) = %+v, %v", pg, err)
	}
	tc, err := st.TerminalCounts(ctx, "r")
	if err != nil || len(tc) != 5 || tc[0].Persuader != "Zed" || tc[3].Persuader != "alpha-2" {
		t.Fatalf("TerminalCounts = %+v, %v", tc, err)
	}
	mustCreate(t, st, "B", t0)
	mustCreate(t, st, "a", t0)
	list, err := st.ListRuns(ctx)
	if err != nil || len(list) != 3 || list[0].ID != "r" || list[1].ID != "a" || list[2].ID != "B" {
		t.Fatalf("ListRuns with equal times: %+v, %v", list, err)
	}
}
