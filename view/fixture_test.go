package view

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

func fp(v float64) *float64 { return &v }

// Fixture runs: "ra" (done, persuader script) and "rb" (running,
// persuader informer) on the same four p4g held-out scenarios against
// "sim", so their pairs move accept→accept, conditional→accept,
// reject→reject and failed→pending; "rbig" holds 120 episodes for paging.
const (
	runA, runB, runBig = "20260101-000000-aaaa", "20260102-000000-bbbb", "20260103-000000-cccc"
)

var (
	termsA = []decision.Terminal{decision.TermAccept, decision.TermConditional, decision.TermReject, decision.TermFailed}
	termsB = []decision.Terminal{decision.TermAccept, decision.TermAccept, decision.TermReject, decision.TermPending}
)

// fixtureScenarios returns the first n p4g held-out scenarios.
func fixtureScenarios(t testing.TB, n int) []scenario.Scenario {
	t.Helper()
	ss, err := scenario.ResolveSplit(scenario.Heldout, "p4g")
	if err != nil || len(ss) < n {
		t.Fatalf("p4g heldout: %d scenarios, %v", len(ss), err)
	}
	return ss[:n]
}

// fixtureEpisode is a two-turn episode of sc ending in term: B_0 0.2,
// B_1 0.4 (r_1 +0.2), B_2 0.7 (r_2 +0.3); a failed one has no turns.
func fixtureEpisode(sc *scenario.Scenario, per string, rollout int, term decision.Terminal) *episode.Episode {
	ep := &episode.Episode{ScenarioID: sc.ID, Rollout: rollout, Seed: 42, Persuader: per, Persuadee: "sim",
		Split: sc.Split, Family: sc.Family, Domain: sc.Domain, Resistance: sc.Hidden.Resistance, Terminal: term,
		Initial: []probe.Reading{{Probe: "ca", P: 0.1, OK: true}, {Probe: "pe", P: 0.3, OK: true}, {Probe: "ac", P: 0.2, OK: true}},
		B0:      fp(0.2)}
	if term == decision.TermFailed {
		ep.Error = "engine refused the request"
		return ep
	}
	ep.RGoal = map[decision.Terminal]float64{decision.TermAccept: 3, decision.TermConditional: 1, decision.TermPending: 0, decision.TermReject: -3}[term]
	last := decision.Continue
	switch term {
	case decision.TermAccept:
		last = decision.Accept
	case decision.TermConditional:
		last = decision.Conditional
	case decision.TermReject:
		last = decision.Reject
	}
	ep.Turns = []episode.Turn{
		{T: 1, Persuader: per + " opens on " + sc.ID, Persuadee: "Tell me more.", Decision: decision.Continue,
			Acts: []string{"rapport"}, Probes: []probe.Reading{{Probe: "ca", P: 0.3, OK: true}, {Probe: "pe", P: 0.5, OK: true}, {Probe: "ac", P: 0.4, OK: true}},
			Belief: fp(0.4), Dense: fp(0.2), PersuaderMS: 12.5, PersuadeeMS: 250, ProbeMS: 40,
			PersuadeeUsage: episode.Usage{PromptTokens: 310, CompletionTokens: 25, CachedTokens: 128, Requests: 1}},
		{T: 2, Persuader: "Here is the evidence, and it is your call.", Persuadee: "Fine, let me think.", Decision: last,
			Acts: []string{"evidence", "autonomy"}, Probes: []probe.Reading{{Probe: "ca", P: 0.6, OK: true}, {Probe: "pe", P: 0.8, OK: true}, {Probe: "ac", P: 0, OK: false}},
			Belief: fp(0.7), Dense: fp(0.3), PersuaderMS: 10, PersuadeeMS: 1500, ProbeMS: 35},
	}
	return ep
}

// newFixture returns a viewer over an in-memory store holding the
// fixture runs, and the fixture's scenarios.
func newFixture(t testing.TB) (*Server, store.Store, []scenario.Scenario) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ss := fixtureScenarios(t, 4)
	cfg := func(per string) []byte {
		return []byte(fmt.Sprintf(`{"persuaders":[%q],"persuadees":["sim"],"scenarios":["p4g"],"split":"heldout","tmax":10,"rollouts":1,"seed":1}`, per))
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, r := range []store.Run{
		{ID: runA, Kind: "eval", Seed: 1, Version: "test", Config: cfg("script"), Status: store.StatusDone, CreatedAt: t0},
		{ID: runB, Kind: "eval", Seed: 1, Version: "test", Config: cfg("informer"), Status: store.StatusRunning, CreatedAt: t0.Add(24 * time.Hour)},
		{ID: runBig, Kind: "serve", Seed: 1, Version: "test", Status: store.StatusDone, CreatedAt: t0.Add(48 * time.Hour)},
	} {
		_ = i
		if err := db.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range ss {
		a := fixtureEpisode(&ss[i], "script", 0, termsA[i])
		if i == 0 {
			a.RStrategy, a.JudgeMS = fp(0.5), 800
			a.JudgeUsage = episode.Usage{PromptTokens: 900, CompletionTokens: 4, Requests: 1}
		}
		if err := db.SaveEpisode(ctx, runA, a); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveEpisode(ctx, runB, fixtureEpisode(&ss[i], "informer", 0, termsB[i])); err != nil {
			t.Fatal(err)
		}
	}
	var big []*episode.Episode
	for r := range 120 {
		big = append(big, fixtureEpisode(&ss[r%4], "script", r/4, decision.TermReject))
	}
	if err := db.SaveEpisodes(ctx, runBig, big); err != nil {
		t.Fatal(err)
	}
	return New(db, "fixture.db"), db, ss
}

// get requests path from h and returns the status and body.
func get(t testing.TB, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// mustContain fails unless body holds every want.
func mustContain(t testing.TB, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s: missing %q", what, w)
		}
	}
}
