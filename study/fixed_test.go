package study

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// keyed is a persuadee that accepts the first turn whose acts are exactly
// its type's key (EB e+c, IT d+c, AR c+a, AA p+c) and reports belief 0.9
// after accepting, 0.2 before: each type has one right move.
type keyed struct{}

func (keyed) Name() string { return "keyed" }

var keys = map[scenario.Resistance]tagger.ActSet{
	scenario.EntrenchedBelief:    set(tagger.Evidence, tagger.Commitment),
	scenario.IdentityThreat:      set(tagger.Diagnostic, tagger.Commitment),
	scenario.AutonomyResistance:  set(tagger.Commitment, tagger.Autonomy),
	scenario.AmbivalentAvoidance: set(tagger.Plan, tagger.Commitment),
}

func set(acts ...tagger.Act) tagger.ActSet {
	var s tagger.ActSet
	for _, a := range acts {
		s = s.With(a)
	}
	return s
}

func (keyed) Start(_ context.Context, sc *scenario.Scenario, _ uint64) (episode.PersuadeeSession, error) {
	return &keyedSession{key: keys[sc.Hidden.Resistance]}, nil
}

type keyedSession struct {
	key tagger.ActSet
	yes bool
}

func (s *keyedSession) Reply(_ context.Context, tr []episode.Message) (episode.Reply, error) {
	if tagger.Tag(tr[len(tr)-1].Text).Acts == s.key {
		s.yes = true
		return episode.Reply{Text: "Yes.", Decision: decision.Accept}, nil
	}
	return episode.Reply{Text: "Not sure.", Decision: decision.Continue}, nil
}

func (s *keyedSession) Probe(_ context.Context, _ []episode.Message, basis probe.Basis) ([]probe.Answer, error) {
	p := 0.2
	if s.yes {
		p = 0.9
	}
	return flat(basis, p), nil
}

// keyedScenarios holds two EB scenarios and one of each other type.
func keyedScenarios() []scenario.Scenario {
	var out []scenario.Scenario
	for i, r := range append([]scenario.Resistance{scenario.EntrenchedBelief}, scenario.Resistances...) {
		out = append(out, scenario.Scenario{
			ID: fmt.Sprintf("k%d", i), Split: scenario.Heldout, Domain: "flu vaccination",
			Family: scenario.Healthcare, Proposal: "Get the seasonal flu shot at the staff clinic this week.",
			Persuader: scenario.Party{Name: "Dana", Role: "lead"}, Persuadee: scenario.Party{Name: "Sam", Role: "nurse"},
			Closeness: scenario.Closenesses[0],
			Hidden: scenario.HiddenProfile{Resistance: r, InitialStance: 0,
				Concerns: []scenario.Concern{{ID: "fever", Description: "The shot gave me a fever.", Keywords: []string{"fever"}}}},
		})
	}
	return out
}

func TestFixedStudyKeyed(t *testing.T) {
	ctx := context.Background()
	cands := []tagger.ActSet{keys[scenario.EntrenchedBelief], keys[scenario.IdentityThreat],
		keys[scenario.AutonomyResistance], keys[scenario.AmbivalentAvoidance], set(tagger.Evidence)}
	res, err := FixedStudy(ctx, FixedOptions{Scenarios: keyedScenarios(), Persuadee: keyed{}, Tmax: 2, Beam: 1, Refine: -1,
		Candidates: cands, Seed: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// every one-turn sequence (5), then each objective's best prefix
	// (e+c, d+c, c+a, p+c: 4 distinct) extended by 5
	if res.Evaluated != 5+4*5 || res.Types != [4]int{2, 1, 1, 1} {
		t.Fatalf("evaluated %d, types %v", res.Evaluated, res.Types)
	}
	// two turns can win two types; of the ties the first name
	want := []string{"c+a > e+c", "e+c", "d+c", "c+a", "p+c"}
	for i, b := range res.Best {
		if b.Name != want[i] {
			t.Errorf("best for %s = %q, want %q", Objectives[i], b.Name, want[i])
		}
	}
	eb := res.Best[1].Score
	// e+c accepts both EB scenarios of five: 40 %, B_T (2·0.9 + 3·0.2)/5
	if eb.All.Accept != 0.4 || eb.All.Moved != 0.4 || fmt.Sprintf("%.4f", eb.All.BT) != "0.4800" || eb.By[0].Accept != 1 || eb.By[3].Accept != 0 {
		t.Errorf("best overall score %+v", eb)
	}
	if l := res.Losses(0.10); l != [4]int{3, 3, 3, 3} {
		t.Errorf("losses %v, want 3 each", l)
	}
	// each type's best wins every scenario of its type: 5 of 5 told the type
	if res.TypeOracle != 1 {
		t.Errorf("type oracle %v, want 1", res.TypeOracle)
	}
	var b bytes.Buffer
	if err := res.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| AA | p+c | 20.0 | 20.0 | 0.34 | 0.0 | 0.0 | 0.0 | 100.0 |") || strings.Contains(b.String(), "test scenarios") ||
		!strings.Contains(b.String(), "Told each persuadee's type, playing that type's best sequence: 100.0 % full acceptance, against 60.0 % for the best single sequence.") {
		t.Errorf("markdown:\n%s", b.String())
	}

	// Scored on test scenarios (here the AR and AA ones alone): the same
	// bests, never searched there; the AA best p+c wins its AA scenario.
	test := keyedScenarios()[3:]
	res, err = FixedStudy(ctx, FixedOptions{Scenarios: keyedScenarios(), Test: test, Persuadee: keyed{}, Tmax: 2, Beam: 1, Refine: -1,
		Candidates: cands, Seed: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Test) != 5 || res.TestTypes != [4]int{0, 0, 1, 1} || res.Test[4].Name != "p+c" || res.Test[4].Score.All.Accept != 0.5 ||
		res.Test[4].Score.By[3].Accept != 1 || res.Test[1].Score.All.Accept != 0 || res.Test[0].Score.All.Accept != 0.5 {
		t.Errorf("test scores %+v, types %v", res.Test, res.TestTypes)
	}
	// AR's best c+a and AA's p+c each win their one test scenario
	if res.TestTypeOracle != 1 {
		t.Errorf("test type oracle %v, want 1", res.TestTypeOracle)
	}
	b.Reset()
	if err := res.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	// the search's oracle line, then the test scenarios' (AR's c+a and AA's
	// p+c each win theirs; the best single sequence one of the two)
	if !strings.Contains(b.String(), "test scenarios (EB 0, IT 0, AR 1, AA 1)") || !strings.Contains(b.String(), "| AA | p+c | 50.0 | 50.0 | 0.55 | 0.0 | 0.0 | 0.0 | 100.0 |") ||
		strings.Count(b.String(), "Told each persuadee's type") != 2 ||
		!strings.Contains(b.String(), "Told each persuadee's type, playing that type's best sequence: 100.0 % full acceptance, against 50.0 % for the best single sequence.") {
		t.Errorf("markdown with test scenarios:\n%s", b.String())
	}
}

// sameScore reports whether a and b hold the same counts and shares, and
// the same mean beliefs to 1e-9 (sums of one value in another order may
// differ in the last bits).
func sameScore(a, b Score) bool {
	same := func(x, y TypeScore) bool {
		return x.N == y.N && x.Accept == y.Accept && x.Moved == y.Moved && math.Abs(x.BT-y.BT) < 1e-9
	}
	for k := range a.By {
		if !same(a.By[k], b.By[k]) {
			return false
		}
	}
	return same(a.All, b.All)
}

// lucky is keyed for the persons of rollouts 0 and 1 of run seed 3, the
// ones searched on with Rollouts 2, and accepts nothing from anyone else.
type lucky struct{ keyed }

func (lucky) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	if seed != episode.Mix(episode.Seed(3, sc.ID, 0)^2) && seed != episode.Mix(episode.Seed(3, sc.ID, 1)^2) { // what episode.Run passes
		return &keyedSession{}, nil // key 0: no message carries no act
	}
	return keyed{}.Start(ctx, sc, seed)
}

func TestFixedStudyFresh(t *testing.T) {
	ctx := context.Background()
	cands := []tagger.ActSet{keys[scenario.EntrenchedBelief], keys[scenario.IdentityThreat],
		keys[scenario.AutonomyResistance], keys[scenario.AmbivalentAvoidance], set(tagger.Evidence)}
	o := FixedOptions{Scenarios: keyedScenarios(), Persuadee: keyed{}, Tmax: 2, Beam: 1, Refine: -1,
		Candidates: cands, Seed: 3, Workers: 2, Fresh: 3}
	// keyed reads no seed: the fresh persons react as the searched ones
	res, err := FixedStudy(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fresh) != 5 || res.FreshRollouts != 3 {
		t.Fatalf("%d fresh rows, %d rollouts; want 5, 3", len(res.Fresh), res.FreshRollouts)
	}
	for i, f := range res.Fresh {
		in := res.Best[i].Score
		in.All.N, in.By[0].N, in.By[1].N, in.By[2].N, in.By[3].N = 15, 6, 3, 3, 3
		if f.Name != res.Best[i].Name || !sameScore(f.Score, in) {
			t.Errorf("fresh %s: %s %+v, want %s %+v", Objectives[i], f.Name, f.Score, res.Best[i].Name, in)
		}
	}
	// c+a > e+c wins 3 of 5 scenarios; a resample of 5 ranges over 0..1
	// resampled by scenario (its three rollouts together): the 2.5 and
	// 97.5 % quantiles of five draws from {1, 1, 0, 1, 0}; by episode the
	// interval would be narrower ([0.333, 0.867])
	if ci := res.Fresh[0].AcceptCI; res.Fresh[0].Score.All.Accept != 0.6 || ci != [2]float64{0.2, 1} {
		t.Errorf("fresh best: accept %v, CI %v", res.Fresh[0].Score.All.Accept, ci)
	}
	if res.FreshTypeOracle != 1 || res.FreshLosses(0.10) != [4]int{3, 3, 3, 3} {
		t.Errorf("fresh type oracle %v, losses %v; want 1, 3 each", res.FreshTypeOracle, res.FreshLosses(0.10))
	}

	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"fresh":[{"seq":"c+a \u003e e+c"`) || !strings.Contains(string(js), `"accept_ci":[0.2,1]`) ||
		!strings.Contains(string(js), `"fresh_type_oracle":1,"fresh_rollouts":3`) {
		t.Errorf("json: %s", js)
	}

	// lucky accepts only the searched persons (rollouts 0 and 1): the same
	// bests, no fresh win, so fresh rollouts start after the searched ones
	o.Persuadee = lucky{}
	o.Rollouts = 2
	o.Baselines = []episode.Persuader{FixedPersuader{Seq: Seq{keys[scenario.AmbivalentAvoidance]}}}
	res, err = FixedStudy(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Best[0].Name != "c+a > e+c" || res.Best[0].Score.All.Accept != 0.6 || res.Baselines[0].Score.All.Accept != 0.2 {
		t.Fatalf("searched: best %s %v, baseline %v", res.Best[0].Name, res.Best[0].Score.All.Accept, res.Baselines[0].Score.All.Accept)
	}
	for _, f := range append(res.Fresh, res.FreshBaselines...) {
		if f.Score.All.Accept != 0 || f.Score.All.N != 15 || f.AcceptCI != [2]float64{0, 0} || math.Abs(f.Score.All.BT-0.2) > 1e-9 {
			t.Errorf("fresh %s: %+v, CI %v; want nothing won, B_T 0.2", f.Name, f.Score.All, f.AcceptCI)
		}
	}
	// every best wins nothing fresh, so no type loses anything
	if len(res.FreshBaselines) != 1 || res.FreshTypeOracle != 0 || res.FreshLosses(0.10) != [4]int{} {
		t.Errorf("fresh baselines %d, type oracle %v", len(res.FreshBaselines), res.FreshTypeOracle)
	}
	var b bytes.Buffer
	if err := res.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "fresh persons of the searched scenarios (3 rollouts each") ||
		!strings.Contains(b.String(), "| all | c+a > e+c | 0.0 | [0.0, 0.0] | 0.0 | 0.20 | 0.0 | 0.0 | 0.0 | 0.0 |") ||
		!strings.Contains(b.String(), "on the fresh persons: EB 0, IT 0, AR 0, AA 0.") ||
		!strings.Contains(b.String(), "Told each persuadee's type, playing that type's best sequence: 0.0 % full acceptance, against 0.0 % for the best single sequence.") {
		t.Errorf("markdown with fresh rollouts:\n%s", b.String())
	}

	o.Fresh = -1
	if _, err := FixedStudy(ctx, o); err == nil || !strings.Contains(err.Error(), "Fresh -1") {
		t.Errorf("Fresh -1: error %v", err)
	}
}

// late is a persuadee that accepts at turn 2 an ask after a diagnostic
// first turn (every type) or after an evidence first turn (EB only), and
// whose belief after turn 1 is 0.5 after evidence, 0.2 otherwise: the
// beam keeps the evidence prefix and misses the better diagnostic one.
type late struct{}

func (late) Name() string { return "late" }

func (late) Start(_ context.Context, sc *scenario.Scenario, _ uint64) (episode.PersuadeeSession, error) {
	return &lateSession{eb: sc.Hidden.Resistance == scenario.EntrenchedBelief}, nil
}

type lateSession struct {
	eb       bool
	first    tagger.ActSet
	turns    int
	accepted bool
}

func (s *lateSession) Reply(_ context.Context, tr []episode.Message) (episode.Reply, error) {
	acts := tagger.Tag(tr[len(tr)-1].Text).Acts
	s.turns++
	if s.turns == 1 {
		s.first = acts
	} else if acts == set(tagger.Commitment) && (s.first == set(tagger.Diagnostic) || s.eb && s.first == set(tagger.Evidence)) {
		s.accepted = true
		return episode.Reply{Text: "Yes.", Decision: decision.Accept}, nil
	}
	return episode.Reply{Text: "Not sure.", Decision: decision.Continue}, nil
}

func (s *lateSession) Probe(_ context.Context, _ []episode.Message, basis probe.Basis) ([]probe.Answer, error) {
	p := 0.2
	switch {
	case s.accepted:
		p = 0.9
	case s.turns >= 1 && s.first == set(tagger.Evidence):
		p = 0.5
	}
	return flat(basis, p), nil
}

// TestFixedStudyRefine: with one prefix kept, the beam finds only
// "e > c" (the two EB scenarios of five); the polish replaces the first
// turn and finds "d > c", which wins all five.
func TestFixedStudyRefine(t *testing.T) {
	ctx := context.Background()
	cands := []tagger.ActSet{set(tagger.Diagnostic), set(tagger.Evidence), set(tagger.Commitment)}
	o := FixedOptions{Scenarios: keyedScenarios(), Persuadee: late{}, Tmax: 2, Beam: 1, Refine: -1, Candidates: cands, Seed: 3, Workers: 2}
	beam, err := FixedStudy(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := beam.Best[0]; got.Name != "e > c" || got.Score.All.Accept != 0.4 {
		t.Fatalf("beam only: best %q accepts %v, want e > c, 0.4", got.Name, got.Score.All.Accept)
	}
	o.Refine = 1
	one, err := FixedStudy(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	// one pass: turn 1 finds d > c, and turn 2 is polished from d > c (a
	// polish that kept the sequence it started the pass with would play
	// e > d and e > e, seen, and add only 3 with the swap)
	if one.Best[0].Name != "d > c" || one.Evaluated != beam.Evaluated+5 {
		t.Errorf("one pass: best %q, evaluated %d; want d > c, the beam's %d + 5", one.Best[0].Name, one.Evaluated, beam.Evaluated)
	}
	o.Refine = 0 // the default: four passes
	res, err := FixedStudy(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range res.Best {
		if b.Name != "d > c" || b.Score.All.Accept != 1 {
			t.Errorf("polished best for %s = %q accepting %v, want d > c, 1", Objectives[i], b.Name, b.Score.All.Accept)
		}
	}
	// the beam's 3 + 3 sequences, then the polish of "e > c": d > c and
	// c > c in turn 1 (dropping it gives "c", played), then from d > c
	// d > d and d > e in turn 2 ("d" played), and the swap c > d; a
	// second pass, and the polish of every objective from the others'
	// bests (all "e > c" after the beam), find nothing new
	if res.Evaluated != beam.Evaluated+5 {
		t.Errorf("evaluated %d, want the beam's %d + 5", res.Evaluated, beam.Evaluated)
	}
}

// TestPolishRevisitsAfterDrop: from "e > e > c", one pass drops the first
// turn ("e > c" ranks above it, shorter at the same score) and must then
// polish the turn that moved into its place: "d > c" is the only better
// sequence, and it is one turn away from "e > c" only.
func TestPolishRevisitsAfterDrop(t *testing.T) {
	d, e, c := set(tagger.Diagnostic), set(tagger.Evidence), set(tagger.Commitment)
	score := func(s Seq) float64 { // 1 for "d > c", else 0.5 for any sequence ending in c
		switch {
		case len(s) == 2 && s[0] == d && s[1] == c:
			return 1
		case len(s) > 0 && s[len(s)-1] == c:
			return 0.5
		}
		return 0
	}
	start := Seq{e, e, c}
	mk := func(s Seq) *Scored {
		x := score(s)
		return &Scored{Seq: s, Name: s.String(), Score: Score{All: TypeScore{Accept: x}}}
	}
	played, evalAll := scoredBy(mk)
	best, err := polish(mk(start), 0, []tagger.ActSet{d, e, c}, 1, evalAll)
	if err != nil {
		t.Fatal(err)
	}
	if best.Name != "d > c" {
		t.Errorf("one pass from e > e > c: best %q, want d > c (played %v)", best.Name, *played)
	}
}

// TestFixedPersuaderBlind: the utterance depends on the turn count only,
// never on what the persuadee said, and carries exactly that turn's acts.
func TestFixedPersuaderBlind(t *testing.T) {
	ctx := context.Background()
	sc := keyedScenarios()[0]
	seq := Seq{set(tagger.Diagnostic), set(tagger.Evidence, tagger.Plan)}
	if got := (FixedPersuader{Seq: seq}).Name(); got != "fixed:d > e+p" {
		t.Fatalf("name %q", got)
	}
	say := func(reply string) episode.Utterance {
		s, err := FixedPersuader{Seq: seq}.Start(ctx, sc.Public(), 9)
		if err != nil {
			t.Fatal(err)
		}
		first, err := s.Say(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		u, err := s.Say(ctx, []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: first.Text},
			{Speaker: episode.PersuadeeSpeaker, Text: reply}})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	a, b := say("My worry is the night-shift schedule and the fever."), say("Fine.")
	if a.Text != b.Text {
		t.Errorf("reply changed the utterance:\n%q\n%q", a.Text, b.Text)
	}
	if got := tagger.Tag(a.Text).Acts; got != seq[1] {
		t.Errorf("acts %v, want %v", got.Names(), seq[1].Names())
	}
	if _, err := (FixedPersuader{}).Start(ctx, sc.Public(), 1); err == nil {
		t.Error("empty sequence started")
	}
}

// TestPolishSwaps: from "c > d", no replacement of one turn and no drop
// ranks higher; only swapping the two turns reaches "d > c".
func TestPolishSwaps(t *testing.T) {
	d, e, c := set(tagger.Diagnostic), set(tagger.Evidence), set(tagger.Commitment)
	mk := func(s Seq) *Scored {
		x := 0.0
		switch s.String() {
		case "d > c":
			x = 1
		case "c > d":
			x = 0.5
		}
		return &Scored{Seq: s, Name: s.String(), Score: Score{All: TypeScore{Accept: x}}}
	}
	played, evalAll := scoredBy(mk)
	best, err := polish(mk(Seq{c, d}), 0, []tagger.ActSet{d, e, c}, 1, evalAll)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"d > d", "e > d", "d", "c > e", "c > c", "c", "d > c"}
	if best.Name != "d > c" || !slices.Equal(*played, want) {
		t.Errorf("one pass from c > d: best %q, played %q; want d > c after %q", best.Name, *played, want)
	}
}

// TestFixedStudyUniformStart: the beam and a polish of its best miss
// "p > p > p+c"; the uniform start plays it.
func TestFixedStudyUniformStart(t *testing.T) {
	ctx := context.Background()
	cands := []tagger.ActSet{set(tagger.Diagnostic), set(tagger.Plan), set(tagger.Commitment), set(tagger.Plan, tagger.Commitment)}
	o := FixedOptions{Scenarios: keyedScenarios(), Persuadee: exact{want: "p > p > p+c"}, Tmax: 3, Beam: 1, Refine: 1, Candidates: cands, Seed: 3, Workers: 2}
	res, err := FixedStudy(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range res.Best {
		if b.Name != "p > p > p+c" || b.Score.All.Accept != 1 {
			t.Errorf("best for %s = %q accepting %v, want p > p > p+c, 1", Objectives[i], b.Name, b.Score.All.Accept)
		}
	}
	o.Refine = -1
	if res, err = FixedStudy(ctx, o); err != nil {
		t.Fatal(err)
	}
	if b := res.Best[0]; b.Score.All.Accept != 0 {
		t.Errorf("beam only: best %q accepts %v, want none (the test would not show the uniform start)", b.Name, b.Score.All.Accept)
	}
}

func TestParseSeq(t *testing.T) {
	d, e, p, c, a := tagger.Diagnostic, tagger.Evidence, tagger.Plan, tagger.Commitment, tagger.Autonomy
	got, err := ParseSeq(" d >e+p> a+c ")
	if want := (Seq{set(d), set(e, p), set(c, a)}); err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseSeq: %v, %v; want %v", got, err, want)
	}
	if got.String() != "d > e+p > c+a" {
		t.Errorf("spelt %q", got.String())
	}
	for _, bad := range []string{"", "d >", "d > x", "d+d", "d > e+"} {
		if _, err := ParseSeq(bad); err == nil {
			t.Errorf("ParseSeq(%q): no error", bad)
		}
	}
}

// exact is a persuadee that accepts only the sequence want, with a
// belief of 0.2 until it does, except 0.5 after the sequence warm (when
// set). With want "p > p > p+c" no prefix builds anything the beam can
// rank and no one turn changed from the beam's best wins anyone; with
// want "d > p > c" and warm "d > p > d", a polish from warm keeps its
// three turns and reaches want.
type exact struct{ want, warm string }

func (exact) Name() string { return "exact" }

func (x exact) Start(_ context.Context, _ *scenario.Scenario, _ uint64) (episode.PersuadeeSession, error) {
	return &exactSession{x: x}, nil
}

type exactSession struct {
	x        exact
	played   Seq
	accepted bool
}

func (s *exactSession) Reply(_ context.Context, tr []episode.Message) (episode.Reply, error) {
	s.played = append(s.played, tagger.Tag(tr[len(tr)-1].Text).Acts)
	if s.played.String() == s.x.want {
		s.accepted = true
		return episode.Reply{Text: "Yes.", Decision: decision.Accept}, nil
	}
	return episode.Reply{Text: "Not sure.", Decision: decision.Continue}, nil
}

func (s *exactSession) Probe(_ context.Context, _ []episode.Message, basis probe.Basis) ([]probe.Answer, error) {
	p := 0.2
	switch {
	case s.accepted:
		p = 0.9
	case s.x.warm != "" && s.played.String() == s.x.warm:
		p = 0.5
	}
	return flat(basis, p), nil
}

// flat answers every probe of basis with P(Yes) = p.
func flat(basis probe.Basis, p float64) []probe.Answer {
	out := make([]probe.Answer, len(basis))
	for i := range out {
		out[i] = probe.FromProbability(p)
	}
	return out
}

// TestFixedStudyStarts: the search alone never reaches "d > p > c" (two
// turns from anything it keeps, and not uniform); a caller's start one
// turn away is polished into it, and a start too long is refused.
func TestFixedStudyStarts(t *testing.T) {
	ctx := context.Background()
	cands := []tagger.ActSet{set(tagger.Diagnostic), set(tagger.Plan), set(tagger.Commitment)}
	o := FixedOptions{Scenarios: keyedScenarios(), Persuadee: exact{want: "d > p > c", warm: "d > p > d"}, Tmax: 3, Beam: 1, Refine: 2, Candidates: cands, Seed: 3, Workers: 2}
	res, err := FixedStudy(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Best[0]; b.Score.All.Accept != 0 {
		t.Fatalf("without starts: best %q accepts %v, want none (the test would not show the start)", b.Name, b.Score.All.Accept)
	}
	o.Starts = []Seq{parseSeq(t, "d > p > d")}
	if res, err = FixedStudy(ctx, o); err != nil {
		t.Fatal(err)
	}
	for i, b := range res.Best {
		if b.Name != "d > p > c" || b.Score.All.Accept != 1 {
			t.Errorf("best for %s = %q accepting %v, want d > p > c, 1", Objectives[i], b.Name, b.Score.All.Accept)
		}
	}
	o.Starts = []Seq{parseSeq(t, "d > p > d > c")}
	if _, err := FixedStudy(ctx, o); err == nil || !strings.Contains(err.Error(), "Tmax 3") {
		t.Errorf("a start of 4 turns with Tmax 3: err %v", err)
	}
}

// scoredBy is an evalAll for polish that scores each sequence by mk and
// records the names played, in order.
func scoredBy(mk func(Seq) *Scored) (*[]string, func([]Seq) ([]*Scored, error)) {
	played := new([]string)
	return played, func(seqs []Seq) ([]*Scored, error) {
		var out []*Scored
		for _, s := range seqs {
			*played = append(*played, s.String())
			out = append(out, mk(s))
		}
		return out, nil
	}
}

func TestTypeOracle(t *testing.T) {
	best := make([]Scored, len(Objectives))
	// each type's best on its own type: EB 0.5, IT 1, AR 0.25, AA (no
	// scenarios) 1; what the bests win elsewhere does not count
	for k, acc := range []float64{0.5, 1, 0.25, 1} {
		best[k+1].Score.By[k].Accept = acc
		best[k+1].Score.By[(k+1)%4].Accept = 0.9
	}
	// (4·0.5 + 2·1 + 4·0.25) / 10
	if got := typeOracle(best, [4]int{4, 2, 4, 0}); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("type oracle %v, want 0.5", got)
	}
	if got := typeOracle(best[:3], [4]int{4, 2, 4, 0}); got != 0 {
		t.Errorf("without every type's best: %v, want 0", got)
	}
	if got := typeOracle(best, [4]int{}); got != 0 {
		t.Errorf("without scenarios: %v, want 0", got)
	}
}
