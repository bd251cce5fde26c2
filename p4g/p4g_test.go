package p4g

import (
	"bytes"
	"cmp"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/scenario"
)

// dataDir is the shared P4G copy beside the repository (CI copies shared/
// next to the clone).
var dataDir = filepath.Join("..", "..", "shared", "data", "p4g")

func needData(t *testing.T) {
	t.Helper()
	cidata.Require(t, filepath.Join(dataDir, InfoFile))
}

func TestImportRealData(t *testing.T) {
	needData(t)
	ss, rep, err := Import(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	// Counts observed in the files (see docs/p4g.md).
	ints := []struct {
		name      string
		got, want int
	}{
		{"info rows", rep.InfoRows, 2034},
		{"dialogues", rep.Dialogues, 1017},
		{"persuadee rows", rep.PersuadeeRows, 1017},
		{"persuader rows", rep.PersuaderRows, 1017},
		{"dialog sentences", rep.DialogRows, 20932},
		{"dialog dialogues", rep.DialogDialogues, 1017},
		{"annotated dialogues", rep.AnnotatedDialogues, 300},
		{"skipped", len(rep.Skipped), 35},
		{"scenarios", rep.Scenarios, 982},
		{"len(ss)", len(ss), 982},
		{"annotated scenarios", rep.Annotated, 295},
		{"donated", rep.Donated, 526},
		{"B6 capped", rep.DonationCapped, 23},
		{"B5 capped", rep.IntendedCapped, 50},
		{"ages < 18", rep.ImplausibleAge, 1},
		{"train", rep.Splits[scenario.Train], 662},
		{"val", rep.Splits[scenario.Val], 200},
		{"heldout", rep.Splits[scenario.Heldout], HeldoutSize},
		{"EB", rep.MixAll[scenario.EntrenchedBelief], 206},
		{"IT", rep.MixAll[scenario.IdentityThreat], 297},
		{"AR", rep.MixAll[scenario.AutonomyResistance], 209},
		{"AA", rep.MixAll[scenario.AmbivalentAvoidance], 270},
		// Split by user (measured on this import, docs/p4g.md).
		{"train users", rep.Users[scenario.Train], 499},
		{"val users", rep.Users[scenario.Val], 164},
		{"heldout users", rep.Users[scenario.Heldout], 85},
		{"train donated", rep.SplitDonated[scenario.Train], 358},
		{"val donated", rep.SplitDonated[scenario.Val], 106},
		{"heldout donated", rep.SplitDonated[scenario.Heldout], 62},
		{"heldout EB", rep.Mix[scenario.Heldout][scenario.EntrenchedBelief], 20},
		{"heldout IT", rep.Mix[scenario.Heldout][scenario.IdentityThreat], 41},
		{"heldout AR", rep.Mix[scenario.Heldout][scenario.AutonomyResistance], 19},
		{"heldout AA", rep.Mix[scenario.Heldout][scenario.AmbivalentAvoidance], 40},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	reasons, counts := rep.SkipCounts()
	if !slices.Equal(reasons, []string{SkipSurvey, SkipBad}) || !slices.Equal(counts, []int{8, 27}) {
		t.Errorf("skip reasons %v %v, want [survey bad] [8 27]", reasons, counts)
	}
	// full_info.csv line 1141 is the first persuadee with an empty survey.
	if s := rep.Skipped[0]; s.Line != 1141 || s.DialogueID != "20180723-042344_940_live" || s.Reason != SkipSurvey {
		t.Errorf("first skip = %+v, want line 1141 20180723-042344_940_live survey", s)
	}

	for i := range ss {
		s := &ss[i]
		if err := s.Check(); err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		if n := len(s.Hidden.Concerns); n < MinConcerns || n > MaxConcerns {
			t.Errorf("%s: %d concerns", s.ID, n)
		}
		if len(s.Hidden.Traits) != len(TraitKeys)+len(CodedTraitKeys) {
			t.Errorf("%s: %d traits, want %d", s.ID, len(s.Hidden.Traits), len(TraitKeys)+len(CodedTraitKeys))
		}
		if s.Outcome == nil || s.Outcome.Donation == nil || *s.Outcome.Donation > MaxDonation {
			t.Fatalf("%s: bad outcome %+v", s.ID, s.Outcome)
		}
		if i > 0 && ss[i-1].ID >= s.ID {
			t.Errorf("not sorted by id at %d", i)
		}
	}

	// full_info.csv line 1243: 20180719-210146_172_live,user_446,1,0.0,10,
	// 4.0,5.0,4.2,3.6,4.8,6.0,5.5,2.333333333,2.6,1.6666666669999999,5.0,
	// 4.0,2.0,6.0,6.0,5.0,4.0,5.0,5.0,5.0,5.0,5.0,3.0,20.0,Female,White,
	// Four-year college,Unmarried,Other,12.0,Atheist,Liberal
	// 300_info.csv line 21: ...,user_446,1,2,0,10 (intended $2, gave $0).
	s, ok := scenario.ByID(ss, "p4g-20180719-210146_172_live")
	if !ok {
		t.Fatal("p4g-20180719-210146_172_live missing")
	}
	want := map[string]float64{
		"extrovert": 4, "agreeable": 5, "conscientious": 4.2, "neurotic": 3.6, "open": 4.8,
		"care": 6, "fairness": 5.5, "loyalty": 2.333333333, "authority": 2.6, "purity": 1.6666666669999999,
		"freedom": 5, "conform": 4, "tradition": 2, "benevolence": 6, "universalism": 6,
		"self_direction": 5, "stimulation": 4, "hedonism": 5, "achievement": 5, "power": 5,
		"security": 5, "rational": 5, "intuitive": 3, "age": 20, "income": 12,
		TraitIdeology: -1, TraitReligiosity: -1, // Liberal, Atheist
	}
	for k, v := range want {
		if got, ok := s.Hidden.Traits[k]; !ok || got != v {
			t.Errorf("trait %s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	o := s.Outcome
	if *o.Donation != 0 || o.IntendedDonation == nil || *o.IntendedDonation != 2 || o.Turns != 10 {
		t.Errorf("outcome donation %v intended %v turns %d; want 0, 2, 10", *o.Donation, o.IntendedDonation, o.Turns)
	}
	if s.Provenance.Ref != "dialogue=20180719-210146_172_live user=user_446" || s.Provenance.License != "Apache-2.0" {
		t.Errorf("provenance %+v", s.Provenance)
	}
	if u, ok := UserOf(&s); !ok || u != "user_446" {
		t.Errorf("UserOf = %q, %v; want user_446", u, ok)
	}
	// full_dialog.csv: turns 0..9; the persuader's two sentences of turn 0.
	if len(o.PersuaderUtterances) != 10 || o.PersuaderUtterances[0] != "Hello. How are you?" ||
		o.PersuaderUtterances[6] != "Would $2.00 be too much to ask?" {
		t.Errorf("persuader utterances %q", o.PersuaderUtterances)
	}
	// 300_dialog.csv persuadee labels of turns 0, 5 and 8.
	if len(o.PersuadeeActs) != 10 || !slices.Equal(o.PersuadeeActs[0], []string{"greeting"}) ||
		!slices.Equal(o.PersuadeeActs[5], []string{"agree-donation"}) ||
		!slices.Equal(o.PersuadeeActs[8], []string{"provide-donation-amount", "positive-reaction-to-donation"}) {
		t.Errorf("persuadee acts %q", o.PersuadeeActs)
	}
	if !strings.HasPrefix(s.Hidden.Persona, "A 20-year-old woman, unmarried, with a four-year college degree") {
		t.Errorf("persona %q", s.Hidden.Persona)
	}

	// full_info.csv line 1113: user_127 reported B6 = 700.0, capped to $2;
	// not annotated, so no acts.
	s, _ = scenario.ByID(ss, "p4g-20180723-085449_363_live")
	if s.Outcome == nil || *s.Outcome.Donation != MaxDonation || s.Outcome.PersuadeeActs != nil || s.Outcome.IntendedDonation != nil {
		t.Errorf("capped donation scenario outcome %+v", s.Outcome)
	}

	// Deterministic: a second import gives the same bytes, and those are the
	// bytes of the committed scenarios/p4g.jsonl (regenerate it with
	// `persuarena scenarios import p4g --from DIR` if this fails).
	ss2, _, err := Import(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	b1, b2 := jsonl(t, ss), jsonl(t, ss2)
	if !bytes.Equal(b1, b2) {
		t.Error("two imports differ")
	}
	committed, err := os.ReadFile(filepath.Join("..", "scenarios", "p4g.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, committed) {
		t.Error("scenarios/p4g.jsonl is stale: it differs from a fresh import")
	}
}

func jsonl(t *testing.T, ss []scenario.Scenario) []byte {
	t.Helper()
	var buf bytes.Buffer
	for i := range ss {
		b, err := scenario.Marshal(&ss[i])
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// disjointUsers fails t when a user id has scenarios in two splits, and
// returns the number of distinct users.
func disjointUsers(t *testing.T, ss []scenario.Scenario) int {
	t.Helper()
	split := map[string]scenario.Split{}
	for i := range ss {
		u, ok := UserOf(&ss[i])
		if !ok {
			t.Fatalf("%s: no user id in provenance ref %q", ss[i].ID, ss[i].Provenance.Ref)
		}
		if sp, seen := split[u]; seen && sp != ss[i].Split {
			t.Errorf("user %s is in %s and %s (%s)", u, sp, ss[i].Split, ss[i].ID)
		}
		split[u] = ss[i].Split
	}
	return len(split)
}

func TestSplitsDisjointByUser(t *testing.T) {
	// The embedded set (what the product ships) and a fresh import of the
	// real files: no persuadee user in two splits. 748 users own the 982
	// usable dialogues (115 of them several, up to 12).
	emb, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	if n := disjointUsers(t, emb); n != 748 {
		t.Errorf("embedded set: %d users, want 748", n)
	}
	needData(t)
	ss, _, err := Import(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if n := disjointUsers(t, ss); n != 748 {
		t.Errorf("import: %d users, want 748", n)
	}
}

func TestSplitsBySize(t *testing.T) {
	// 400 synthetic dialogues of 300 users: users 0-99 own two dialogues
	// each, the others one. Whole users are fitted in hash order: 120
	// heldout, 200 val, 80 train, and no user straddles two splits.
	ps := make([]*persuadee, 400)
	for i := range ps {
		u := i % 300
		ps[i] = &persuadee{id: "d" + strconv.Itoa(i), user: strings.Repeat("x", u%7) + string(rune('a'+u%26)) + strings.Repeat("y", u/26)}
	}
	m := assignSplits(ps)
	n := map[scenario.Split]int{}
	userSplit := map[string]scenario.Split{}
	var maxHeld, minVal uint64 = 0, math.MaxUint64
	for _, p := range ps {
		sp := m[p.id]
		n[sp]++
		if prev, ok := userSplit[p.user]; ok && prev != sp {
			t.Errorf("user %s in %s and %s", p.user, prev, sp)
		}
		userSplit[p.user] = sp
		h := SplitHash(p.user)
		if sp == scenario.Heldout {
			maxHeld = max(maxHeld, h)
		}
		if sp == scenario.Val {
			minVal = min(minVal, h)
		}
	}
	if n[scenario.Heldout] != 120 || n[scenario.Val] != 200 || n[scenario.Train] != 80 {
		t.Errorf("split sizes %v, want 120/200/80", n)
	}
	if maxHeld == 0 || minVal == math.MaxUint64 {
		t.Error("no held-out or val hashes seen")
	}

	// First-fit by hand: five users in hash order owning 119, 2, 1, 199
	// and 198 dialogues. 119 -> heldout; 2 would make 121 -> val (2); 1 ->
	// heldout (120); 199 would make val 201 -> train; 198 -> val (200).
	users := []string{"a", "b", "c", "d", "e"}
	slices.SortFunc(users, func(x, y string) int { return cmp.Compare(SplitHash(x), SplitHash(y)) })
	sizes := []int{119, 2, 1, 199, 198}
	want := []scenario.Split{scenario.Heldout, scenario.Val, scenario.Heldout, scenario.Train, scenario.Val}
	ps = ps[:0]
	for r, u := range users {
		for k := range sizes[r] {
			ps = append(ps, &persuadee{id: u + strconv.Itoa(k), user: u})
		}
	}
	m = assignSplits(ps)
	for r, u := range users {
		for k := range sizes[r] {
			if got := m[u+strconv.Itoa(k)]; got != want[r] {
				t.Fatalf("user %s (rank %d, %d dialogues): %s, want %s", u, r, sizes[r], got, want[r])
			}
		}
	}

	// Stratified: 200 single-dialogue donors and 200 non-donors give
	// quotas ceil(120*200/400) = 60 and ceil(200*200/400) = 100 per
	// stratum, so held-out holds exactly 60 donors and val 100.
	ps = ps[:0]
	one, zero := 1.0, 0.0
	for i := range 400 {
		d := &zero
		if i%2 == 0 {
			d = &one
		}
		ps = append(ps, &persuadee{id: "s" + strconv.Itoa(i), user: "u" + strconv.Itoa(i), donation: d})
	}
	m = assignSplits(ps)
	donors := map[scenario.Split]int{}
	n = map[scenario.Split]int{}
	for _, p := range ps {
		n[m[p.id]]++
		if *p.donation > 0 {
			donors[m[p.id]]++
		}
	}
	if n[scenario.Heldout] != 120 || n[scenario.Val] != 200 || donors[scenario.Heldout] != 60 || donors[scenario.Val] != 100 {
		t.Errorf("stratified split: sizes %v donors %v, want 120/200 with 60/100 donors", n, donors)
	}
	// A user who gave in one dialogue of two is "mixed".
	if k := stratum([]*persuadee{{donation: &one}, {donation: &zero}}); k != strataMixed {
		t.Errorf("stratum of a mixed user = %d", k)
	}
	// FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (Fowler/Noll/Vo reference).
	if SplitHash("a") != 0xaf63dc4c8601ec8c {
		t.Errorf("SplitHash(a) = %x", SplitHash("a"))
	}
}

func TestResistanceOf(t *testing.T) {
	cases := []struct {
		p    Propensities
		want scenario.Resistance
	}{
		{Propensities{EB: 1, IT: 0.5, AR: 0.2, AA: 0}, scenario.EntrenchedBelief},
		{Propensities{EB: 0.3, IT: 0.9, AR: 0.9, AA: 0}, scenario.IdentityThreat}, // tie IT/AR -> IT
		{Propensities{EB: -1, IT: 0.1, AR: 1.2, AA: 1.2}, scenario.AutonomyResistance},
		{Propensities{EB: -1, IT: 0.1, AR: 1.2, AA: 1.5}, scenario.AmbivalentAvoidance},  // AA dominates
		{Propensities{EB: 0.1, IT: 0.2, AR: 0.24, AA: -2}, scenario.AmbivalentAvoidance}, // nothing stands out
		{Propensities{EB: 0.25, IT: 0.2, AR: 0.2, AA: -2}, scenario.EntrenchedBelief},    // exactly the threshold
	}
	for _, c := range cases {
		if got := ResistanceOf(c.p); got != c.want {
			t.Errorf("ResistanceOf(%+v) = %s, want %s", c.p, got, c.want)
		}
	}
}

// survey returns a survey with every score 3 (income 6, age 40), a
// moderate ideology and "other" religion, then applies set.
func survey(set map[string]float64, ideology string) Survey {
	s := Survey{Scores: map[string]float64{}, Sex: "Female", Edu: "Postgraduate", Marital: "Married",
		Employment: "Other", Religion: "Other religion", Ideology: ideology}
	for _, k := range TraitKeys {
		s.Scores[k] = 3
	}
	s.Scores["age"], s.Scores["income"] = 40, 6
	for k, v := range set {
		s.Scores[k] = v
	}
	return s
}

func TestRulesOnHandMadeSurveys(t *testing.T) {
	// Two persuadees differing only in the reactance inputs. Over this
	// population of two, every differing input has z = ±1, so AR's raw
	// composite is mean(+1, +1, -(-1)) = +1 for a and -1 for b, which
	// standardises to ±1; every other composite has zero spread, so 0.
	a := survey(map[string]float64{"self_direction": 6, "freedom": 6, "conform": 1}, "Moderate")
	b := survey(map[string]float64{"self_direction": 2, "freedom": 2, "conform": 5}, "Moderate")
	n := NewNorms([]Survey{a, b})
	if p := n.Propensities(a); p != (Propensities{AR: 1}) {
		t.Errorf("a: %+v, want AR 1", p)
	}
	if got := ResistanceOf(n.Propensities(a)); got != scenario.AutonomyResistance {
		t.Errorf("a: %s, want AR", got)
	}
	if got := ResistanceOf(n.Propensities(b)); got != scenario.AmbivalentAvoidance {
		t.Errorf("b: %s, want AA", got)
	}
	// Concerns: own_choice scores +1 for a; all others tie at 0 and are
	// taken in bank order (reach, overhead); none else reaches 0.75.
	var ids []string
	for _, c := range n.Concerns(a) {
		ids = append(ids, c.ID)
	}
	if !slices.Equal(ids, []string{"own_choice", "reach", "overhead"}) {
		t.Errorf("a concerns %v", ids)
	}
	// Stance only involves unchanged inputs: 0.
	if st := n.InitialStance(a); st != 0 {
		t.Errorf("a stance %v, want 0", st)
	}

	// Identity: conservative with strong binding foundations and low
	// universalism versus the mirror image. IT = ±1 -> IT for c.
	c := survey(map[string]float64{"loyalty": 5, "authority": 5, "purity": 5, "universalism": 2}, "Conservative")
	d := survey(map[string]float64{"loyalty": 1, "authority": 1, "purity": 1, "universalism": 4}, "Liberal")
	n = NewNorms([]Survey{c, d})
	if p := n.Propensities(c); p.IT != 1 || ResistanceOf(p) != scenario.IdentityThreat {
		t.Errorf("c: %+v, want IT 1 -> IT", p)
	}
	// Entrenched belief: rational with low care and benevolence.
	e := survey(map[string]float64{"rational": 5, "care": 2, "benevolence": 2}, "Moderate")
	f := survey(map[string]float64{"rational": 1, "care": 5, "benevolence": 6}, "Moderate")
	n = NewNorms([]Survey{e, f})
	if p := n.Propensities(e); p.EB != 1 || ResistanceOf(p) != scenario.EntrenchedBelief {
		t.Errorf("e: %+v, want EB 1 -> EB", p)
	}
	// Stance: care and benevolence up for f (2 of 6 stance inputs), so the
	// stance composite is ±1 and the stance tanh(±0.5) = ±0.462.
	if st := n.InitialStance(f); st != 0.462 {
		t.Errorf("f stance %v, want 0.462", st)
	}
	if st := n.InitialStance(e); st != -0.462 {
		t.Errorf("e stance %v, want -0.462", st)
	}
	// Ambivalent: anxious and intuitive with nothing else standing out.
	g := survey(map[string]float64{"neurotic": 5, "intuitive": 5}, "Moderate")
	h := survey(map[string]float64{"neurotic": 1, "intuitive": 1}, "Moderate")
	n = NewNorms([]Survey{g, h})
	if p := n.Propensities(g); p.AA != 1 || ResistanceOf(p) != scenario.AmbivalentAvoidance {
		t.Errorf("g: %+v, want AA 1 -> AA", p)
	}
}

// tinyHeader is the full_info.csv header.
func tinyHeader() string {
	cols := []string{"B2", "B3", "B4", "B6", "B7"}
	for _, k := range TraitKeys {
		cols = append(cols, k+".x")
	}
	for _, k := range demoKeys {
		cols = append(cols, k+".x")
	}
	return strings.Join(cols, ",")
}

// tinyRow is a full_info.csv row with all scores 3, age 30, income 5.
func tinyRow(id, user string, role int, donation string) string {
	f := []string{id, user, string(rune('0' + role)), donation, "3"}
	for _, k := range TraitKeys {
		switch k {
		case "age":
			f = append(f, "30.0")
		case "income":
			f = append(f, "5.0")
		default:
			f = append(f, "3.0")
		}
	}
	f = append(f, "Male", "White", "Postgraduate", "Married", "Employed for wages", "Catholic", "Moderate")
	return strings.Join(f, ",")
}

func writeTiny(t *testing.T, info string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		InfoFile: info,
		DialogFile: ",Unit,Turn,B4,B2\n" +
			"0,Hi there.,0,0,d1\n1,Hello.,0,1,d1\n" +
			"2,Fine thanks.,1,1,d1\n" + // turn 1: persuadee only
			"3,Would you give $1?,2,0,d1\n4,\"It helps, really.\",2,0,d1\n5,Sure.,2,1,d1\n" +
			"0,Hey.,0,0,d2\n1,Hi.,0,1,d2\n" +
			"0,x,0,0,BAD_d3\n",
		AnnotatedInfoFile: "B2,B3,B4,B5,B6,B7\nd1,u1,0,,0,3\nd1,u2,1,0.5,1.0,3\n",
		AnnotatedDialog: ",B2,B4,Turn,Unit,er_label_1,ee_label_1,er_label_2,ee_label_2,neg,neu,pos\n" +
			"0,d1,0,0,Hi there.,greeting,,,,0,1,0\n1,d1,1,0,Hello.,,greeting,,,0,1,0\n" +
			"2,d1,1,1,Fine thanks.,,,,,0,1,0\n" +
			"3,d1,0,2,Would you give $1?,proposition-of-donation,,,,0,1,0\n" +
			"4,d1,1,2,Sure.,,agree-donation,,positive-reaction-to-donation,0,0,1\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestImportTiny(t *testing.T) {
	info := tinyHeader() + "\n" + tinyRow("d1", "u1", 0, "0.0") + "\n" + tinyRow("d1", "u2", 1, "1.0") + "\n" +
		tinyRow("d2", "u3", 1, "0.0") + "\n" + tinyRow("BAD_d3", "u4", 1, "0.0") + "\n"
	ss, rep, err := Import(writeTiny(t, info))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || rep.Scenarios != 2 || len(rep.Skipped) != 1 || rep.Skipped[0].Reason != SkipBad || rep.Skipped[0].Line != 5 {
		t.Fatalf("got %d scenarios, report %+v", len(ss), rep)
	}
	o := ss[0].Outcome
	if ss[0].ID != "p4g-d1" || !slices.Equal(o.PersuaderUtterances, []string{"Hi there.", "", "Would you give $1? It helps, really."}) {
		t.Errorf("d1 utterances %q", o.PersuaderUtterances)
	}
	if len(o.PersuadeeActs) != 3 || !slices.Equal(o.PersuadeeActs[0], []string{"greeting"}) || o.PersuadeeActs[1] == nil ||
		len(o.PersuadeeActs[1]) != 0 || !slices.Equal(o.PersuadeeActs[2], []string{"agree-donation", "positive-reaction-to-donation"}) {
		t.Errorf("d1 acts %q", o.PersuadeeActs)
	}
	if *o.Donation != 1 || *o.IntendedDonation != 0.5 || o.Turns != 3 {
		t.Errorf("d1 outcome %+v", o)
	}
	if ref := ss[0].Provenance.Ref; ref != "dialogue=d1 user=u2" {
		t.Errorf("d1 ref %q", ref)
	}
	// Catholic and Moderate (tinyRow): religiosity +1, ideology 0.
	if tr := ss[0].Hidden.Traits; tr[TraitReligiosity] != 1 || tr[TraitIdeology] != 0 {
		t.Errorf("d1 coded traits %v %v", tr[TraitReligiosity], tr[TraitIdeology])
	}
	// Identical surveys: every z is 0, so the stance is 0 and the type AA.
	if h := ss[1].Hidden; h.InitialStance != 0 || h.Resistance != scenario.AmbivalentAvoidance || ss[1].Outcome.PersuadeeActs != nil {
		t.Errorf("d2 hidden %+v", h)
	}
	b, _ := scenario.Marshal(&ss[0])
	if !bytes.Contains(b, []byte(`"persuadee_acts":[["greeting"],[],[`)) {
		t.Errorf("empty act list not written as []: %s", b)
	}
}

func TestImportErrors(t *testing.T) {
	good := tinyRow("d1", "u2", 1, "1.0")
	cases := []struct {
		name, info, want string
	}{
		{"non-numeric score", tinyHeader() + "\n" + tinyRow("d1", "u1", 0, "0") + "\n" + strings.Replace(good, ",3.0,", ",abc,", 1) + "\n",
			"full_info.csv:3: field extrovert.x: \"abc\" is not a number"},
		{"bad role", tinyHeader() + "\n" + strings.Replace(good, ",u2,1,", ",u2,7,", 1) + "\n",
			"full_info.csv:2: field B4: \"7\" is not a role"},
		{"missing column", strings.Replace(tinyHeader(), ",B6,", ",Bx,", 1) + "\n" + good + "\n",
			"full_info.csv:1: field B6: missing column"},
		{"duplicate persuadee", tinyHeader() + "\n" + good + "\n" + good + "\n",
			"full_info.csv:3: field B2: dialogue d1 has a second persuadee (first on line 2)"},
		{"empty user", tinyHeader() + "\n" + strings.Replace(good, ",u2,1,", ",,1,", 1) + "\n",
			"full_info.csv:2: field B3: empty user id"},
		{"bad donation", tinyHeader() + "\n" + strings.Replace(good, ",1.0,3,", ",one,3,", 1) + "\n",
			"full_info.csv:2: field B6: \"one\" is not a number"},
	}
	for _, c := range cases {
		_, _, err := Import(writeTiny(t, c.info))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want containing %q", c.name, err, c.want)
		}
	}
	// A missing file names the file.
	dir := writeTiny(t, tinyHeader()+"\n"+good+"\n")
	os.Remove(filepath.Join(dir, AnnotatedDialog))
	if _, _, err := Import(dir); err == nil || !strings.Contains(err.Error(), AnnotatedDialog) {
		t.Errorf("missing file: err = %v", err)
	}
}
