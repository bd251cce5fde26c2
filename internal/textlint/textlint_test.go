package textlint

import (
	"context"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// Each check, on hand-written text.
func TestChecks(t *testing.T) {
	if got := Sentences("Hm. Maybe. Dr. Okafor said e.g. this! Ok? \"Yes.\" Fine"); strings.Join(got, "|") != `Hm.|Maybe.|Dr. Okafor said e.g. this!|Ok?|"Yes."|Fine` {
		t.Errorf("Sentences: %q", got)
	}
	for s, want := range map[string]bool{"honestly? strangers.": true, "\"so it goes.\"": true, "Fine.": false, "$2 is a lot.": false, "I see.": false} {
		if got := LowerStart(s); got != want {
			t.Errorf("LowerStart(%q) = %v", s, got)
		}
	}
	for s, want := range map[string]bool{"Afford, really.": true, "Website, honestly.": true, "Honestly?": false,
		"Blame, basically!": true, "It is cost, really.": false, "Really.": true, "Right.": false} {
		if got := Crumb(s); got != want {
			t.Errorf("Crumb(%q) = %v", s, got)
		}
	}
	for s, want := range map[string]bool{"Mr, what worries you?": true, "Mr Tanaka, what worries you?": false,
		"Thanks, Dr.": true, "Dr. Okafor, hello.": false, "Mrs. patel": true, "Drew, hi. Mister.": false, "Ms": true} {
		if got := HonorificAsName(s); got != want {
			t.Errorf("HonorificAsName(%q) = %v", s, got)
		}
	}
	var r Report
	r.Add("Mr, tell me more.", "Honestly? strangers caring for him. Afford, really.")
	r.Add("ok", "I see.")
	r.Add("", "I see.")
	if r.Replies != 3 || r.Utterances != 2 || r.LowerStarts != 2 || r.Crumbs != 1 || r.ThirdPerson != 1 || r.HonorificNames != 1 {
		t.Errorf("report: %s", r.String())
	}
	if top, n := r.Top(); top != "I see." || n != 2 || r.TopShare() != 2.0/3 {
		t.Errorf("top %q %d", top, n)
	}
}

// lintSet runs the built-in persuaders against the default simulator on
// scs until at least turns persuadee replies are linted: episode k uses
// scenario k*7919 mod len(scs), persuader k mod 4 and seed k.
func lintSet(t testing.TB, scs []scenario.Scenario, turns int) *Report {
	t.Helper()
	var pers []episode.Persuader
	for _, n := range baseline.Names() {
		p, err := baseline.New(n)
		if err != nil {
			t.Fatal(err)
		}
		pers = append(pers, p)
	}
	pee := sim.New(sim.DefaultConfig())
	var r Report
	ctx := context.Background()
	for k := 0; r.Replies < turns; k++ {
		sc := &scs[k*7919%len(scs)]
		ep, err := episode.Run(ctx, episode.Config{}, sc, pers[k%len(pers)], pee, uint64(k))
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ep.Turns {
			r.Add(tr.Persuader, tr.Persuadee)
		}
	}
	return &r
}

// The lint over 10,000 turns of each built-in set (held-out and train
// splits) and of the hand-written third-person scenarios in testdata:
// no lower-case sentence start, no crumb, no third-person self-reference,
// no honorific used as a name, and no reply above 2 % of all replies.
func TestBuiltinSetsLintClean(t *testing.T) {
	cidata.Slow(t, "scans every built-in scenario")
	sets := map[string][]scenario.Scenario{}
	for _, name := range []string{"arena", "p4g"} {
		all, err := scenario.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		sets[name] = append(scenario.Filter(all, scenario.Heldout), scenario.Filter(all, scenario.Train)...)
	}
	user, err := scenario.LoadFile("testdata/thirdperson.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sets["third-person"] = user
	for _, name := range []string{"arena", "p4g", "third-person"} {
		r := lintSet(t, sets[name], 10000)
		t.Logf("%s: %s", name, r)
		if r.LowerStarts != 0 || r.Crumbs != 0 || r.ThirdPerson != 0 || r.HonorificNames != 0 || r.TopShare() > 0.02 {
			t.Errorf("%s: %s\n%s", name, r, strings.Join(r.Examples, "\n"))
		}
	}
}
