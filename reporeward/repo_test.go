package reporeward

import (
	"context"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
)

func TestREPOComposition(t *testing.T) {
	for _, c := range []struct {
		name                     string
		rModel, eJudge, eFunc, n float64
		wantE, wantR             float64
	}{
		{"positive model, good conduct", 3, 40, -10, 100, 30, 3.9},    // 3·(1+0.3)
		{"positive model, bad conduct", 3, 0, -50, 100, -50, 1.5},     // 3·(1-0.5)
		{"negative model, good conduct", -3, 40, 10, 100, 50, -1.5},   // -3·(1-0.5)
		{"negative model, bad conduct", -3, -20, -30, 100, -50, -4.5}, // -3·(1+0.5)
		{"clipped above", 1, 150, 20, 100, 100, 2},
		{"clipped below", -1, -90, -90, 100, -100, -2},
		{"zero model", 0, 80, 0, 100, 80, 0},
		{"small n", 2, 3, 0, 10, 3, 2.6},
	} {
		e, r := REPO(c.rModel, c.eJudge, c.eFunc, c.n)
		if math.Abs(e-c.wantE) > 1e-12 || math.Abs(r-c.wantR) > 1e-12 {
			t.Errorf("%s: E, R = %v, %v; want %v, %v", c.name, e, r, c.wantE, c.wantR)
		}
	}
	e, r := Weighted(2, 40, -20, 100, 1, 0.5, 2)
	if e != 20 || math.Abs(r-(2+0.2-0.4)) > 1e-12 {
		t.Errorf("Weighted: %v, %v; want 20, 1.8", e, r)
	}
	if Unit(1, 1, 5) != -1 || Unit(5, 1, 5) != 1 || Unit(3, 1, 5) != 0 || Unit(9, 1, 5) != 1 {
		t.Error("Unit does not map [1, 5] to [-1, 1]")
	}
}

func facts() Facts {
	var f Facts
	f.Commission.Current, f.Commission.Min, f.Commission.Max = 18, 13, 15
	f.Currency = "USD"
	f.Rates = map[string]float64{"standard": 129, "deluxe": 189}
	f.Figures = []float64{240000}
	f.Percents = []float64{30}
	return f
}

func TestExtractors(t *testing.T) {
	if got := Percents("We offer 14%, then 14.5 percent, not 20 per cent."); !equal(got, []float64{14, 14.5, 20}) {
		t.Errorf("Percents = %v", got)
	}
	if got := Amounts("Rooms are $129 or USD 189.50, and 1,250 euros; 12 nights."); !equal(got, []float64{129, 189.5, 1250}) {
		t.Errorf("Amounts = %v", got)
	}
	if Words("Hello there, partner. It's 14%.") != 5 {
		t.Errorf("Words = %d", Words("Hello there, partner. It's 14%."))
	}
}

func TestRuleFunctions(t *testing.T) {
	f := facts()
	for _, c := range []struct {
		text string
		want float64
	}{
		{"We could move to 14% from next month.", 0},
		{"Today you pay 18%, and we propose 13%.", 0}, // current and in range
		{"You bring 30% of our online bookings.", 0},  // a real percentage
		{"We can go down to 10% commission.", -1},     // below the allowed range
		{"Let's settle on 16%.", -1},                  // above the allowed range
		{"No figures here, just thanks.", 0},
	} {
		if v := CheckCommission(f, c.text); v.Value != c.want {
			t.Errorf("CheckCommission(%q) = %v (%s), want %v", c.text, v.Value, v.Why, c.want)
		}
	}
	for _, c := range []struct {
		text string
		want float64
	}{
		{"Our deluxe room sells at $189 a night.", 0},
		{"The standard room is USD 129.", 0},
		{"Last year you sold USD 240,000 of our rooms.", 0},
		{"Our standard room is only $99.", -1},
		{"Bookings were worth 300000 dollars.", -1},
	} {
		if v := CheckFigures(f, 0.005, c.text); v.Value != c.want {
			t.Errorf("CheckFigures(%q) = %v (%s), want %v", c.text, v.Value, v.Why, c.want)
		}
	}
	res := []*regexp.Regexp{regexp.MustCompile(`(?i)\bguarantee[ds]?\b`), regexp.MustCompile(`(?i)\blast chance\b`)}
	if v := CheckForbid(res, "I Guarantee more bookings."); v.Value != -1 || !strings.Contains(v.Why, "Guarantee") {
		t.Errorf("CheckForbid = %+v", v)
	}
	if v := CheckForbid(res, "We expect more bookings."); v.Value != 0 {
		t.Errorf("CheckForbid on clean text = %+v", v)
	}
	if CheckLength(3, "one two three").Value != 0 || CheckLength(3, "one two three four").Value != -1 {
		t.Error("CheckLength boundary wrong")
	}
}

func testSOP(t *testing.T) *SOP {
	t.Helper()
	s := &SOP{Stages: []Stage{
		{Name: "rapport", Entry: Criteria{Patterns: []string{`\bhello\b`}}},
		{Name: "discovery", Entry: Criteria{Acts: []string{"diagnostic"}}},
		{Name: "proposal", Entry: Criteria{Patterns: []string{`%`}}, Exit: Criteria{Patterns: []string{`agreed`}}},
		{Name: "close", Entry: Criteria{Patterns: []string{`\bsign\b`}}},
	}}
	for i := range s.Stages {
		for _, c := range []*Criteria{&s.Stages[i].Entry, &s.Stages[i].Exit} {
			if _, err := c.compile(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

func TestTrackerInOrderAndSkips(t *testing.T) {
	tr := NewTracker(testSOP(t))
	st := tr.Observe("Hello Ana.", nil)
	if st.Stage != 0 || len(st.Skipped) != 0 {
		t.Fatalf("turn 1: %+v", st)
	}
	st = tr.Observe("What matters to you?", []string{"diagnostic"})
	if st.Stage != 1 || len(st.Skipped) != 0 {
		t.Fatalf("turn 2: %+v", st)
	}
	st = tr.Observe("We propose 14%.", nil)
	if st.Stage != 2 || len(st.Skipped) != 0 {
		t.Fatalf("turn 3: %+v", st)
	}
	// proposal has an exit criterion not yet met: entering close skips it
	st = tr.Observe("Please sign today.", nil)
	if st.Stage != 3 || !equalInts(st.Skipped, []int{2}) || tr.Skips() != 1 || tr.Reached() != 4 {
		t.Fatalf("turn 4: %+v skips %d reached %d", st, tr.Skips(), tr.Reached())
	}

	tr = NewTracker(testSOP(t))
	st = tr.Observe("We propose 14%, agreed?", nil) // jumps to proposal
	if st.Stage != 2 || !equalInts(st.Skipped, []int{0, 1}) {
		t.Fatalf("jump: %+v", st)
	}
}

// a stub judge answering a fixed score per rubric name found in the prompt
type stubRater map[string]float64

func (s stubRater) Rate(_ context.Context, sys, _ string, lo, hi float64) (float64, episode.Usage, error) {
	for k, v := range s {
		if strings.Contains(sys, k) {
			return v, episode.Usage{Requests: 1}, nil
		}
	}
	return lo, episode.Usage{Requests: 1}, nil
}

func TestRewardVectorHandComputed(t *testing.T) {
	spec, err := ParseSpec("t.yaml", []byte(`
name: t
model: {kind: constant, value: 2}
judges:
  - {name: warmth, prompt: "WARMTH", scale: [1, 5], weight: 20}
rules:
  - {name: no_guarantee, kind: forbid, weight: 30, patterns: ['\bguarantee']}
  - {name: commission, kind: commission, weight: 10}
  - {name: sop_order, kind: sop, weight: 20}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(spec, stubRater{"WARMTH": 4})
	if err != nil {
		t.Fatal(err)
	}
	sc := r.Pack.Scenarios[0] // repo-neg-01: commission 12-14%, current 17%
	ep := &episode.Episode{ScenarioID: sc.ID, Turns: []episode.Turn{
		{T: 1, Persuader: "Hello Tomas, thank you for your time."},
		{T: 2, Persuader: "We guarantee more bookings at 10% commission."},
	}}
	tr := []episode.Message{{Speaker: "persuader", Text: ep.Turns[0].Persuader}, {Speaker: "persuadee", Text: "Hi."},
		{Speaker: "persuader", Text: ep.Turns[1].Persuader}, {Speaker: "persuadee", Text: "No."}}
	v, u, err := r.Reward(context.Background(), sc.Public(), ep, tr)
	if err != nil {
		t.Fatal(err)
	}
	if u.Requests != 1 {
		t.Errorf("usage %+v, want 1 request", u)
	}
	// turn 2 enters "proposal" (commission pattern) after rapport: skips discovery and value.
	// E_judge = 20·Unit(4) = 10; E_func = 30·(-1) + 10·(-1) + 20·(-1) = -60
	// E = -50; R = 2·(1 - 0.5) = 1
	want := map[string]float64{"r_model": 2, "judge.warmth": 4, "e_judge": 10, "e_func": -60, "e": -50, "r": 1,
		"func.no_guarantee": -1, "func.commission": -1, "func.sop_order": -1, "sop.reached": 2, "sop.skipped": 2}
	for k, w := range want {
		if g, ok := v.Get(k); !ok || math.Abs(g-w) > 1e-12 {
			t.Errorf("%s = %v (%v), want %v", k, g, ok, w)
		}
	}
	if v.R != 1 || len(v.Turns) != 2 {
		t.Fatalf("R = %v, turns %d", v.R, len(v.Turns))
	}
	// turn 1: no violation, no per-turn judge: E = 0, R = R_model
	if v.Turns[0].R != 2 || v.Turns[1].R != 2*(1-0.6) {
		t.Errorf("turn R = %v, %v; want 2, 0.8", v.Turns[0].R, v.Turns[1].R)
	}
}

func TestSpecErrorsNameLineAndField(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"name: x\nrules:\n  - {name: a, kind: regexy, weight: 1}\n", "t.yaml:3: rules[0].kind: \"regexy\""},
		{"name: x\nrules:\n  - name: a\n    kind: forbid\n    weight: 1\n    patterns: ['(']\n", "t.yaml:6: rules[0].patterns[0]"},
		{"name: x\njudges:\n  - name: w\n    prompt: p\n    scale: [5, 1]\n", "t.yaml:5: judges[0].scale"},
		{"name: x\nmodel: {kind: http, url: 'http://x', api: tgi}\nrules: [{name: a, kind: sop}]\n", "t.yaml:2: model.api"},
		{"name: x\nbogus: 1\n", "t.yaml:2"},
		{"name: x\nrules:\n  - {name: Bad-Name, kind: sop}\n", "rules[0].name"},
		{"name: x\n", "needs at least one"},
	} {
		_, err := ParseSpec("t.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSpec(%q) = %v, want an error containing %q", c.yaml, err, c.want)
		}
	}
}

func TestNegotiationPack(t *testing.T) {
	p, err := LoadPack("negotiation")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Scenarios) < 20 || len(p.SOP.Stages) != 5 {
		t.Fatalf("%d scenarios, %d stages", len(p.Scenarios), len(p.SOP.Stages))
	}
	for _, sc := range p.Scenarios {
		f := p.Facts[sc.ID]
		// the proposal's figure is within policy, the background's figures are real
		if v := CheckCommission(f, sc.Proposal); v.Value != 0 {
			t.Errorf("%s: proposal breaks its own rule: %s", sc.ID, v.Why)
		}
		if v := CheckFigures(f, 0.005, sc.Background); v.Value != 0 {
			t.Errorf("%s: background states an unreal figure: %s", sc.ID, v.Why)
		}
	}
	_, err = ParsePack("p.yaml", []byte("name: p\nsop:\n  stages:\n    - name: a\n      entry: {acts: [bogus]}\nscenarios: []\n"))
	if err == nil || !strings.Contains(err.Error(), "p.yaml:5: sop.stages[0].entry.acts[0]") {
		t.Errorf("bad act: %v", err)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			return false
		}
	}
	return true
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
