package masp

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
)

// Persuader lines with known tagger readings (checked in
// TestEpisodeRationalityRules): a diagnostic question; evidence that
// mentions the "time" concern; pressure; a bare commitment ask.
const (
	ask      = "What worries you most about it?"
	evidence = "It only takes 20 minutes of your time; a 2019 study found 80% of walkers slept better."
	pressure = "You need to decide right now, there's no time to waste!"
	commit   = "Will you sign up today?"
)

type eturn struct {
	say   string
	d     decision.Decision
	dense float64
}

func mkEpisode(per, pee, sc string, turns ...eturn) *episode.Episode {
	ep := &episode.Episode{ScenarioID: sc, Persuader: per, Persuadee: pee, Terminal: decision.TermPending}
	for i, t := range turns {
		d := t.dense
		ep.Turns = append(ep.Turns, episode.Turn{T: i + 1, Persuader: t.say, Persuadee: "reply", Decision: t.d, Dense: &d})
		switch t.d {
		case decision.Accept:
			ep.Terminal = decision.TermAccept
		case decision.Conditional:
			ep.Terminal = decision.TermConditional
		case decision.Reject:
			ep.Terminal = decision.TermReject
		}
	}
	return ep
}

func c(say string, dense float64) eturn { return eturn{say, decision.Continue, dense} }

func episodeScenarios() map[string]*scenario.Scenario {
	m := map[string]*scenario.Scenario{}
	for _, id := range []string{"s1", "s2"} {
		m[id] = &scenario.Scenario{ID: id, Proposal: "Join a walking group.", Hidden: scenario.HiddenProfile{InitialStance: -0.4,
			Concerns: []scenario.Concern{{ID: "time", Description: "I have no time", Keywords: []string{"time"}}}}}
	}
	return m
}

func TestEpisodeRationalityRules(t *testing.T) {
	sc := episodeScenarios()["s1"]
	for _, tc := range []struct {
		name  string
		ep    *episode.Episode
		sc    *scenario.Scenario
		wantQ []int
	}{
		{"reasons then accept", mkEpisode("a", "u", "s1", c(ask, 0.02), c(evidence, 0.1), eturn{commit, decision.Accept, 0.2}), sc, []int{1, 1, 1}},
		{"sycophantic accept", mkEpisode("a", "u", "s1", eturn{commit, decision.Accept, 0.4}), sc, []int{-1}},
		{"pressure", mkEpisode("a", "u", "s1", c(pressure, 0.1), eturn{evidence, decision.Reject, -0.3}), sc, []int{-1, -1}},
		{"yield under pressure", mkEpisode("a", "u", "s1", c(evidence, 0), eturn{pressure, decision.Conditional, 0.1}), sc, []int{1, -1}},
		{"away after a reason", mkEpisode("a", "u", "s1", c(ask, -0.2), c(evidence, -0.1), eturn{ask, decision.Reject, 0}), sc, []int{1, -1, 1}},
		// Evidence that misses every concern is no reason with the
		// scenario; without it any evidence is.
		{"off-concern evidence", mkEpisode("a", "u", "s1", c("A 2019 study found 80% of walkers slept better.", -0.2)), sc, []int{1}},
		{"no scenario", mkEpisode("a", "u", "s1", c("A 2019 study found 80% of walkers slept better.", -0.2)), nil, []int{-1}},
	} {
		q, raw := EpisodeRationality(tc.ep, tc.sc)
		if !reflect.DeepEqual(q, tc.wantQ) {
			t.Errorf("%s: q %v (%v), want %v", tc.name, q, raw, tc.wantQ)
		}
	}
	// Without a scenario the start comes from B_0: against below 0.5.
	for b0, want := range map[float64]int{0.3: -1, 0.6: 1} {
		ep := mkEpisode("a", "u", "x", eturn{commit, decision.Accept, 0})
		ep.B0 = &b0
		if q, _ := EpisodeRationality(ep, nil); q[0] != want {
			t.Errorf("B0 %g: q %d, want %d", b0, q[0], want)
		}
	}
}

// Hand-built runs: two persuaders (a, b) against two persuadees (u1, u2)
// on two scenarios; the table's every figure is worked out by hand.
func TestEpisodeResultsHand(t *testing.T) {
	nine := []eturn{}
	for range 8 {
		nine = append(nine, c(ask, 0))
	}
	nine = append(nine, eturn{evidence, decision.Accept, 0.3})
	failed := mkEpisode("b", "u1", "s2", eturn{commit, decision.Accept, 0})
	failed.Terminal, failed.Error = decision.TermFailed, "engine down"
	eps := []*episode.Episode{
		// a vs u1: success at 3 after a reason (RCSR) and a sycophantic
		// success at 1 (q = -1): SR 1, AT 2, RCSR 0.5.
		mkEpisode("a", "u1", "s1", c(ask, 0.02), c(evidence, 0.1), eturn{commit, decision.Accept, 0.2}),
		mkEpisode("a", "u1", "s2", eturn{commit, decision.Accept, 0.4}),
		// a vs u2: a refusal, and an acceptance at turn 9 (after T = 8):
		// SR 0, AT 8.
		mkEpisode("a", "u2", "s1", c(pressure, 0.1), eturn{evidence, decision.Reject, -0.3}),
		mkEpisode("a", "u2", "s2", nine...),
		// b vs u1: a conditional (P4G "positive", no success) and a failed
		// episode (no success though it ends on accept).
		mkEpisode("b", "u1", "s1", c(ask, 0), eturn{evidence, decision.Conditional, 0.1}),
		failed,
		// b vs u2: success at 2 after a reason; a refusal: SR 0.5, AT 5.
		mkEpisode("b", "u2", "s1", c(evidence, 0.05), eturn{commit, decision.Accept, 0.2}),
		mkEpisode("b", "u2", "s2", eturn{commit, decision.Reject, -0.1}),
		// A key only one pair holds is dropped.
		mkEpisode("b", "u2", "s3", eturn{commit, decision.Accept, 0}),
	}
	res, dropped, err := EpisodeResults(context.Background(), eps, nil, nil, EpisodeOptions{Scenarios: episodeScenarios(), Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if dropped != 1 || !reflect.DeepEqual(res.Cases, []string{"s1#0", "s2#0"}) || !reflect.DeepEqual(res.Persuaders, []string{"a", "b"}) || !reflect.DeepEqual(res.Users, []string{"u1", "u2"}) {
		t.Fatalf("dropped %d, cases %v, persuaders %v, users %v", dropped, res.Cases, res.Persuaders, res.Users)
	}
	if d := res.Dialogues[1][0][1]; d.Error != "engine down" || d.SuccessTurn != 0 {
		t.Errorf("failed episode: %+v", d)
	}
	if d := res.Dialogues[0][1][1]; d.SuccessTurn != 9 || d.Turns[8].Labels[0] != "agree" {
		t.Errorf("turn-9 success: %+v", d)
	}
	rep, err := res.Report(EvalConfig{T: 8, Bootstrap: stats.BootstrapOptions{Resamples: 500, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ sr, at, rcsr float64 }
	want := map[string]row{"a/u1": {1, 2, 0.5}, "a/u2": {0, 8, 0}, "b/u1": {0, 8, 0}, "b/u2": {0.5, 5, 0.5}}
	for _, r := range rep.Rows {
		w := want[r.Persuader+"/"+r.User]
		if r.SR.Estimate != w.sr || r.AT.Estimate != w.at || r.RCSR.Estimate != w.rcsr || r.N != 2 {
			t.Errorf("%s/%s: SR %v AT %v RCSR %v, want %+v", r.Persuader, r.User, r.SR.Estimate, r.AT.Estimate, r.RCSR.Estimate, w)
		}
	}
	if rep.Rows[2].Errors != 1 {
		t.Errorf("b/u1 errors %d", rep.Rows[2].Errors)
	}
	if w := rep.Worst[0]; w.SR.Estimate != 0 || w.SRUser != "u2" || w.RCSR.Estimate != 0 {
		t.Errorf("worst a: %+v", w)
	}
	if w := rep.Worst[1]; w.SR.Estimate != 0 || w.SRUser != "u1" || w.RCSR.Estimate != 0 {
		t.Errorf("worst b: %+v", w)
	}
	if d := rep.Diffs[0]; d.User != "u1" || d.SR.Estimate != -1 || d.AT.Estimate != 6 || d.RCSR.Estimate != -0.5 {
		t.Errorf("diff b - a on u1: %+v", d)
	}
	if d := rep.Diffs[1]; d.User != "u2" || d.SR.Estimate != 0.5 || d.AT.Estimate != -3 {
		t.Errorf("diff b - a on u2: %+v", d)
	}
	// Text, JSON and CSV carry the same figures.
	rep.Title = "MASP metrics of stored episodes"
	var b strings.Builder
	if err := rep.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "MASP metrics of stored episodes: T = 8") || !strings.Contains(b.String(), "2.00 [1.00, 3.00]") {
		t.Errorf("text:\n%s", b.String())
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rows []struct {
			Persuader, User string
			SR              struct{ Estimate float64 }
		}
		Worst []struct {
			SRUser string `json:"sr_user"`
		}
	}
	if err := json.Unmarshal(js, &back); err != nil || back.Rows[3].SR.Estimate != 0.5 || back.Worst[0].SRUser != "u2" {
		t.Errorf("json %s: %v", js, err)
	}
	rows := rep.CSVRows("p4g")
	if len(rows) != 4+2+2 || len(rows[0]) != len(CSVHeader) || strings.Join(rows[0][:9], ",") != "row,p4g,a,,u1,2,1,1,1" || rows[4][4] != "u2/u2" || rows[6][0] != "diff" {
		t.Errorf("csv %v", rows)
	}
	// A judge replaces the rules.
	res2, _, err := EpisodeResults(context.Background(), eps, []string{"a"}, []string{"u1"}, EpisodeOptions{Rationality: fixedQ{1}})
	if err != nil || res2.Dialogues[0][0][1].Turns[0].Q != 1 || res2.Dialogues[0][0][1].Turns[0].QRaw != "fixed" {
		t.Errorf("judge override: %v", err)
	}
	if _, _, err := EpisodeResults(context.Background(), append(eps, eps[0]), nil, nil, EpisodeOptions{}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate: %v", err)
	}
}
