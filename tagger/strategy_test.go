package tagger

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func strats(ss ...Strategy) StrategySet {
	var s StrategySet
	for _, x := range ss {
		s = s.With(x)
	}
	return s
}

// strategyLabelled are hand-written utterances (not P4G text) with the
// strategies a reader assigns under Wang et al. 2019's definitions, as the
// rules read them.
var strategyLabelled = []struct {
	text string
	want StrategySet
}{
	{"Hello, how are you today?", strats(Greeting)},
	{"Thank you so much for your time!", strats(Thanks)},
	{"That is very kind of you.", strats(Praise)},
	{"You are a generous person.", strats(Praise)},
	{"Save the Children is an international non-governmental organization.", strats(CredibilityAppeal)},
	{"Thousands of children have been killed or injured by violence.", strats(EmotionAppeal)},
	{"Even a small donation can make a difference.", strats(FootInTheDoor, LogicalAppeal)},
	{"It will be deducted from your task payment.", strats(DonationInformation)},
	{"Your donation will be deducted from your task payment.", strats(DonationInformation, LogicalAppeal)}, // "your donation will"
	{"I will donate $1 myself.", strats(SelfModeling)},
	{"I hope you will donate.", 0}, // a wish about the persuadee, not self-modelling
	{"I remember when I was a kid, we had nothing.", strats(PersonalStory)},
	{"Have you heard of Save the Children?", strats(SourceInquiry)},
	{"Do you have kids?", strats(PersonalInquiry)},
	{"What is your view on online charities?", strats(TaskInquiry)},                   // a question to "you": the task-inquiry fallback
	{"What do you think about online charities?", strats(TaskInquiry, LogicalAppeal)}, // "think about"
	{"How much would you like to donate?", strats(AskAmount)},
	{"I heard of it.", 0},                                     // "heard of" only counts in a question
	{"How much would it cost?", strats(AskAmount)},            // an amount head with a modal, in a question
	{"How much does that weigh on you?", strats(TaskInquiry)}, // no decision term, no modal: not an amount request
	{"How are you?", strats(Greeting)},                        // small talk is no task inquiry
	{"Would you be willing to donate?", 0},                    // a decision request (Commitment), no inquiry
}

func TestTagStrategies(t *testing.T) {
	for _, c := range strategyLabelled {
		if got := Tag(c.text).Strategies; got != c.want {
			t.Errorf("Tag(%q).Strategies = %v, want %v", c.text, got.Strings(), c.want.Strings())
		}
	}
}

func TestStrategyNames(t *testing.T) {
	if len(Strategies) != NumStrategies {
		t.Fatalf("Strategies has %d entries", len(Strategies))
	}
	for i, st := range Strategies {
		if int(st) != i {
			t.Errorf("Strategies[%d] = %d", i, st)
		}
		if got, ok := ParseStrategy(strings.ToUpper(st.String())); !ok || got != st {
			t.Errorf("ParseStrategy(%q) = %v, %v", st, got, ok)
		}
	}
	if st, ok := ParseStrategy("non-personal-Task-related-inquiry"); !ok || st != TaskInquiry {
		t.Errorf("rare spelling: %v, %v", st, ok)
	}
	for _, l := range []string{"other", "acknowledgement", "proposition-of-donation", ""} {
		if _, ok := ParseStrategy(l); ok {
			t.Errorf("ParseStrategy(%q) ok", l)
		}
	}
	if got := ContentFree.Strings(); !slices.Equal(got, []string{"greeting", "praise-user", "thank"}) {
		t.Errorf("ContentFree = %v", got)
	}
	if Strategy(99).String() != "unknown" || len(StrategySet(0).Strings()) != 0 || StrategySet(0).Strings() == nil {
		t.Error("String/Strings edge cases")
	}
}

func TestStrategiesLeaveActsAlone(t *testing.T) {
	// Every hand-labelled act utterance keeps its acts and pressure (the
	// strategy table is a second reading, never a change to the first).
	for _, c := range labelled {
		if got := Tag(c.text); got.Acts != c.want || got.Pressure != c.pressure {
			t.Errorf("Tag(%q) = %v/%d", c.text, got.Acts.Strings(), got.Pressure)
		}
	}
}

func TestReadP4GPersuaders(t *testing.T) {
	in := "B2,B3,B4,B5,B6,B7\nd1,user_1,0,,0.5,10\nd1,user_2,1,1,1,10\nd2,user_3,0,,0,9\n"
	m, err := ReadP4GPersuaders(strings.NewReader(in), "i.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["d1"] != "user_1" || m["d2"] != "user_3" {
		t.Errorf("persuaders %v", m)
	}
	for _, c := range []struct{ in, want string }{
		{"", "i.csv: empty file"},
		{"B2,B4\n", `i.csv:1: header lacks field "B3"`},
		{"B2,B3,B4\nd1,u\n", `i.csv:2: field "B4" missing`},
	} {
		if _, err := ReadP4GPersuaders(strings.NewReader(c.in), "i.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadP4GPersuaders(%q) error %v, want %q", c.in, err, c.want)
		}
	}
	units := []LabelledUnit{{Ref: "x:2", Dialogue: "d1"}, {Ref: "x:3", Dialogue: "d9"}}
	if _, _, err := SplitP4G(units, m); err == nil || !strings.Contains(err.Error(), `x:3: dialogue "d9"`) {
		t.Errorf("SplitP4G unknown dialogue: %v", err)
	}
}

func TestP4GHeldOut(t *testing.T) {
	// FNV-1a 32 mod 4: pinned so the split never moves.
	for user, want := range map[string]bool{"user_1843": false, "user_585": false} {
		if got := P4GHeldOut(user); got != want {
			t.Errorf("P4GHeldOut(%q) = %v", user, got)
		}
	}
	n := 0
	for i := range 4000 {
		if P4GHeldOut("user_" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))) {
			n++
		}
	}
	if n < 800 || n > 1200 {
		t.Errorf("held out %d of 4000 ids, want about a quarter", n)
	}
}

func TestFormatStrategies(t *testing.T) {
	units := []LabelledUnit{
		{Text: "Hello!", GoldStrategies: strats(Greeting)},
		{Text: "Thanks!", GoldStrategies: strats(Greeting)},
		{Text: "Nothing here."},
	}
	r := Agreement(units)
	g := r.Strategies[Greeting]
	// TP 1, FP 0, FN 1, TN 1: po 2/3, pe = 1/3*2/3 + 2/3*1/3 = 4/9,
	// kappa = (2/3 - 4/9)/(5/9) = 0.4.
	if g.TP != 1 || g.FP != 0 || g.FN != 1 || g.TN != 1 || g.Support != 2 || !near(g.Kappa, 0.4) || !near(g.Precision, 1) || !near(g.Recall, 0.5) {
		t.Errorf("greeting %+v", g)
	}
	if th := r.Strategies[Thanks]; th.FP != 1 || th.Support != 0 || !math.IsNaN(th.Recall) {
		t.Errorf("thanks %+v", th)
	}
	k, st, ok := r.MinKappa(1)
	if !ok || st != Greeting || !near(k, 0.4) {
		t.Errorf("MinKappa = %v %v %v", k, st, ok)
	}
	if _, _, ok := r.MinKappa(3); ok {
		t.Error("MinKappa(3) found a strategy")
	}
	var b strings.Builder
	if err := FormatStrategies(&b, []string{"all"}, []AgreementReport{r}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "greeting                  |     2  1.000  0.500  0.400") {
		t.Errorf("FormatStrategies:\n%s", b.String())
	}
}

// p4gDir is the shared P4G copy beside the repository (CI copies shared/
// next to the clone, as for package p4g's tests).
var p4gDir = filepath.Join("..", "..", "shared", "data", "p4g")

// needP4G skips a test when the P4G data is absent, except under CI
// (CI set), where the data is always present and a skip would hide a
// broken figure.
func needP4G(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(p4gDir, "300_dialog.csv")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("P4G data not available at %s under CI: %v", p4gDir, err)
		}
		t.Skipf("P4G data not available at %s: %v", p4gDir, err)
	}
}

func readP4GParts(t *testing.T) (all, tuning, held []LabelledUnit) {
	t.Helper()
	needP4G(t)
	f, err := os.Open(filepath.Join(p4gDir, "300_dialog.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err = ReadP4G(f, "300_dialog.csv")
	if err != nil {
		t.Fatal(err)
	}
	g, err := os.Open(filepath.Join(p4gDir, "300_info.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	per, err := ReadP4GPersuaders(g, "300_info.csv")
	if err != nil {
		t.Fatal(err)
	}
	tuning, held, err = SplitP4G(all, per)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]bool{}
	dialogues := map[string]bool{}
	for _, u := range held {
		users[per[u.Dialogue]] = true
		dialogues[u.Dialogue] = true
	}
	if len(all) != 6017 || len(held) != 1534 || len(users) != 60 || len(dialogues) != 79 {
		t.Fatalf("split: %d units, %d held out from %d persuaders in %d dialogues; want 6017, 1534, 60, 79",
			len(all), len(held), len(users), len(dialogues))
	}
	return all, tuning, held
}

// TestStrategyAgreementP4G pins the per-strategy figures recorded in
// docs/tagger.md (support and kappa on all annotated persuader units, on
// the tuning part the rules were written from, and on the held-out
// persuaders). Regenerate with `persuarena tag agreement --from DIR`.
func TestStrategyAgreementP4G(t *testing.T) {
	all, tuning, held := readP4GParts(t)
	want := [NumStrategies]struct {
		n          [3]int
		kappa      [3]float64
		prec, reca float64 // on all
	}{
		{[3]int{470, 357, 113}, [3]float64{0.289, 0.290, 0.285}, 0.304, 0.423},
		{[3]int{377, 272, 105}, [3]float64{0.479, 0.501, 0.415}, 0.485, 0.546},
		{[3]int{1083, 816, 267}, [3]float64{0.588, 0.569, 0.646}, 0.677, 0.644},
		{[3]int{154, 122, 32}, [3]float64{0.333, 0.320, 0.381}, 0.344, 0.357},
		{[3]int{164, 129, 35}, [3]float64{0.488, 0.495, 0.458}, 0.509, 0.494},
		{[3]int{164, 129, 35}, [3]float64{0.544, 0.554, 0.509}, 0.442, 0.762},
		{[3]int{491, 363, 128}, [3]float64{0.589, 0.592, 0.581}, 0.579, 0.680},
		{[3]int{180, 135, 45}, [3]float64{0.793, 0.777, 0.839}, 0.902, 0.717},
		{[3]int{193, 140, 53}, [3]float64{0.315, 0.355, 0.192}, 0.289, 0.415},
		{[3]int{169, 104, 65}, [3]float64{0.430, 0.424, 0.438}, 0.403, 0.503},
		{[3]int{333, 242, 91}, [3]float64{0.765, 0.777, 0.731}, 0.827, 0.733},
		{[3]int{176, 129, 47}, [3]float64{0.405, 0.402, 0.413}, 0.441, 0.403},
		{[3]int{299, 235, 64}, [3]float64{0.712, 0.733, 0.641}, 0.730, 0.722},
		{[3]int{130, 94, 36}, [3]float64{0.774, 0.752, 0.834}, 0.746, 0.815},
	}
	reps := []AgreementReport{Agreement(all), Agreement(tuning), Agreement(held)}
	for st, w := range want {
		for p, r := range reps {
			g := r.Strategies[st]
			if g.Support != w.n[p] || !near(g.Kappa, w.kappa[p]) {
				t.Errorf("%v part %d: n %d kappa %.4f, want %d %.3f", Strategy(st), p, g.Support, g.Kappa, w.n[p], w.kappa[p])
			}
		}
		if g := reps[0].Strategies[st]; !near(g.Precision, w.prec) || !near(g.Recall, w.reca) {
			t.Errorf("%v: precision %.4f recall %.4f, want %.3f %.3f", Strategy(st), g.Precision, g.Recall, w.prec, w.reca)
		}
	}
	// Target: kappa >= 0.4 on every label with >= 100
	// occurrences. Met on 11 of 14 labels; logical appeal, personal story
	// and task-related inquiry fall short (docs/tagger.md).
	short := []string{}
	for _, s := range reps[0].Strategies {
		if s.Support >= 100 && s.Kappa < 0.4 {
			short = append(short, s.Strategy.String())
		}
	}
	if !slices.Equal(short, []string{"logical-appeal", "personal-story", "task-related-inquiry"}) {
		t.Errorf("labels below kappa 0.4: %v", short)
	}
}
