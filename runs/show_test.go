package runs

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/store"
)

// Show orders a run's pairs as eval prints them (the stored --persuader
// order: script before pushy, not alphabetically), and ShowKeys lists the
// episode keys ShowEpisode takes, filtered as the viewer filters: script's
// 21 accepted held-out p4g episodes at seed 1 (the README's table: 17.5 %
// of 120).
func TestShowOrderAndKeys(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	spec := EvalSpec{Grid: runplan.Grid{Persuaders: []string{"script", "pushy"}, Persuadees: []string{"sim"},
		Scenarios: []string{"p4g"}, Split: "heldout", Tmax: 10, Rollouts: 1, Seed: 1}, Basis: probe.Default, Workers: 2}
	plan, err := PrepareEval(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	svc := New(db)
	res, err := svc.Eval(ctx, plan, EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := svc.Show(ctx, res.RunID, &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if i, j := strings.Index(out, "\nscript "), strings.Index(out, "\npushy "); i < 0 || j < 0 || i > j {
		t.Fatalf("pairs not in the run's persuader order:\n%s", out)
	}
	buf.Reset()
	if err := svc.ShowKeys(ctx, res.RunID, store.Filter{Persuader: "script", Terminal: decision.TermAccept}, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 23 || !regexp.MustCompile(`^EPISODE +TERMINAL +TURNS$`).MatchString(lines[0]) || lines[22] != "21 episodes" {
		t.Fatalf("keys:\n%s", buf.String())
	}
	row := regexp.MustCompile(`^(script/sim/p4g-\S+#0) +accept +\d+$`)
	for _, l := range lines[1:22] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("key line %q", l)
		}
	}
	// --split as every command reads it: "all" is every split (the
	// same 30), a name that is no split an error, not an empty list.
	var all bytes.Buffer
	if err := svc.ShowKeys(ctx, res.RunID, store.Filter{Persuader: "script", Terminal: decision.TermAccept, Split: "all"}, &all); err != nil || all.String() != buf.String() {
		t.Fatalf("--split all: %v\n%s", err, all.String())
	}
	if err := svc.ShowKeys(ctx, res.RunID, store.Filter{Split: "test"}, &all); err == nil || !strings.Contains(err.Error(), `unknown split "test"`) {
		t.Fatalf("--split test: %v", err)
	}
	// Each listed key opens its transcript.
	key := row.FindStringSubmatch(lines[1])[1]
	buf.Reset()
	if err := svc.ShowEpisode(ctx, res.RunID, key, &buf); err != nil || !strings.Contains(buf.String(), "accept") {
		t.Fatalf("ShowEpisode(%s): %v\n%s", key, err, buf.String())
	}
}

// The transcript shows an unreadable read-out as "-", with the reason its
// engine answer was rejected.
func TestTranscriptShowsUnreadableReason(t *testing.T) {
	b := 0.25
	ep := &episode.Episode{Persuader: "script", Persuadee: "llm:x", ScenarioID: "s1", Initial: []probe.Reading{
		{Probe: "ca", P: 0.25, OK: true}, {Probe: "pe", Reason: "llm: engine artefact: post-sampling"}, {Probe: "ac"}}, B0: &b}
	var buf bytes.Buffer
	WriteTranscript(&buf, ep)
	if want := "start: probes ca 0.250, pe - (llm: engine artefact: post-sampling), ac -; belief B_0 0.250\n"; !strings.Contains(buf.String(), want) {
		t.Fatalf("transcript lacks %q:\n%s", want, buf.String())
	}
}
