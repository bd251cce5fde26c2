package arena

import (
	"bytes"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/scenarios"
)

// defaultSet generates the default set (seed 1, DefaultSizes) once.
var defaultSet = sync.OnceValues(func() ([]scenario.Scenario, *Report) {
	b, err := DefaultBank()
	if err != nil {
		panic(err)
	}
	ss, rep, err := Generate(1, b, DefaultSizes)
	if err != nil {
		panic(err)
	}
	return ss, rep
})

func mustBank(t *testing.T) Bank {
	t.Helper()
	b, err := DefaultBank()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonl renders ss exactly as scenario.WriteFile writes them.
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

func bySplit(ss []scenario.Scenario, sp scenario.Split) []scenario.Scenario {
	var out []scenario.Scenario
	for _, s := range ss {
		if s.Split == sp {
			out = append(out, s)
		}
	}
	return out
}

func TestDefaultBankHasTenDomainsPerFamily(t *testing.T) {
	b := mustBank(t)
	if len(b.Domains) != 50 {
		t.Errorf("bank has %d domains, want 50", len(b.Domains))
	}
	per := map[scenario.Family]int{}
	for _, d := range b.Domains {
		per[d.Family]++
	}
	for _, f := range arenaFamilies {
		if per[f] != 10 {
			t.Errorf("family %q has %d domains, want 10", f, per[f])
		}
	}
}

func TestResistanceMix(t *testing.T) {
	// Largest remainder over 45:36:22:17 (EB, IT, AR, AA) of 120, by hand:
	// 1468 -> 550.5, 440.4, 269.13, 207.97 -> +1 to AA and EB;
	// 200 -> 75, 60, 36.67, 28.33 -> +1 to AR;
	// 7 -> 2.625, 2.1, 1.28, 0.99 -> +1 to AA and EB.
	cases := []struct {
		n              int
		eb, it, ar, aa int
	}{
		{120, 45, 36, 22, 17},
		{1468, 551, 440, 269, 208},
		{200, 75, 60, 37, 28},
		{7, 3, 2, 1, 1},
		{0, 0, 0, 0, 0},
	}
	for _, c := range cases {
		m := ResistanceMix(c.n)
		got := [4]int{m[scenario.EntrenchedBelief], m[scenario.IdentityThreat], m[scenario.AutonomyResistance], m[scenario.AmbivalentAvoidance]}
		if want := [4]int{c.eb, c.it, c.ar, c.aa}; got != want {
			t.Errorf("ResistanceMix(%d) = EB,IT,AR,AA %v, want %v", c.n, got, want)
		}
	}
}

func TestGenerateSizesAndMixes(t *testing.T) {
	ss, rep := defaultSet()
	if len(ss) != 1468+200+120 {
		t.Fatalf("got %d scenarios, want 1788", len(ss))
	}
	want := map[scenario.Split]int{scenario.Train: 1468, scenario.Val: 200, scenario.Heldout: 120}
	for _, sp := range scenario.Splits {
		part := bySplit(ss, sp)
		if len(part) != want[sp] {
			t.Errorf("%s: %d scenarios, want %d", sp, len(part), want[sp])
		}
		res := map[scenario.Resistance]int{}
		fam := map[scenario.Family]int{}
		for _, s := range part {
			res[s.Hidden.Resistance]++
			fam[s.Family]++
		}
		mix := ResistanceMix(len(part))
		for _, r := range scenario.Resistances {
			if res[r] != mix[r] {
				t.Errorf("%s: %s count %d, want %d", sp, r, res[r], mix[r])
			}
		}
		// Family balance: within one of n/5.
		for _, f := range arenaFamilies {
			if d := fam[f]*5 - len(part); d < -5 || d > 5 {
				t.Errorf("%s: family %q has %d of %d scenarios, not within one of even", sp, f, fam[f], len(part))
			}
		}
	}
	// the Probe-RPO paper: held-out mix IT 36, EB 45, AR 22, AA 17.
	held := rep.Splits[2]
	if held.Split != scenario.Heldout || held.Resistance[scenario.IdentityThreat] != 36 || held.Resistance[scenario.EntrenchedBelief] != 45 ||
		held.Resistance[scenario.AutonomyResistance] != 22 || held.Resistance[scenario.AmbivalentAvoidance] != 17 {
		t.Errorf("held-out report %+v, want IT 36, EB 45, AR 22, AA 17", held)
	}
}

func TestGenerateScenariosValid(t *testing.T) {
	ss, _ := defaultSet()
	if err := scenario.Validate("arena", ss); err != nil {
		t.Fatalf("schema/Check validation failed: %v", err)
	}
	idRe := regexp.MustCompile(`^arena-(train|val|heldout)-\d{4}$`)
	for i := range ss {
		s := &ss[i]
		if err := s.Check(); err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		if !idRe.MatchString(s.ID) || !strings.HasPrefix(s.ID, "arena-"+string(s.Split)+"-") {
			t.Errorf("%s: bad id for split %s", s.ID, s.Split)
		}
		if n := len(s.Hidden.Concerns); n < 3 || n > 5 {
			t.Errorf("%s: %d concerns, want 3-5", s.ID, n)
		}
		for _, c := range s.Hidden.Concerns {
			// the bank is written in the first person: voiced is the
			// description as written
			if c.Voiced != c.Description {
				t.Errorf("%s %s: voiced %q, want the description %q", s.ID, c.ID, c.Voiced, c.Description)
			}
		}
		if n := len(s.Hidden.Constraints); n < 1 || n > 2 {
			t.Errorf("%s: %d constraints, want 1-2", s.ID, n)
		}
		if strings.ContainsAny(s.Background, "{}") {
			t.Errorf("%s: unfilled placeholder in background %q", s.ID, s.Background)
		}
		if !strings.Contains(s.Background, s.Persuadee.Name) || !strings.Contains(s.Hidden.Persona, s.Persuadee.Name) {
			t.Errorf("%s: persuadee %q missing from background or persona", s.ID, s.Persuadee.Name)
		}
		if s.Provenance.Source != Source || s.Provenance.License != License || !strings.HasPrefix(s.Provenance.Ref, "seed=1 domain=") {
			t.Errorf("%s: provenance %+v", s.ID, s.Provenance)
		}
		if s.Persuader.Name == s.Persuadee.Name {
			t.Errorf("%s: both parties are named %q", s.ID, s.Persuader.Name)
		}
		lo, hi, _ := StanceRange(s.Hidden.Resistance)
		if st := s.Hidden.InitialStance; st < lo-1e-9 || st > hi+1e-9 {
			t.Errorf("%s: stance %g outside %s range [%g, %g]", s.ID, st, s.Hidden.Resistance, lo, hi)
		}
	}
}

func TestKinShareSurname(t *testing.T) {
	ss, _ := defaultSet()
	last := func(name string) string { return name[strings.LastIndexByte(name, ' ')+1:] }
	var kin, other int
	for _, s := range ss {
		same := last(s.Persuader.Name) == last(s.Persuadee.Name)
		switch s.Relationship {
		case "siblings", "parent and child", "adult child and parent", "parent and adult child":
			kin++
			if !same {
				t.Errorf("%s: %s relationship but surnames %q / %q", s.ID, s.Relationship, s.Persuader.Name, s.Persuadee.Name)
			}
		case "partners", "spouses", "friends", "manager-report":
			other++
			if same {
				t.Errorf("%s: non-kin %s share a surname: %q / %q", s.ID, s.Relationship, s.Persuader.Name, s.Persuadee.Name)
			}
		}
	}
	if kin == 0 || other == 0 {
		t.Fatalf("checked %d kin and %d non-kin scenarios; want both > 0", kin, other)
	}
}

func TestDistinctDomainShare(t *testing.T) {
	ss, rep := defaultSet()
	for i, sp := range scenario.Splits {
		part := bySplit(ss, sp)
		seen := map[string]bool{}
		for _, s := range part {
			seen[s.Domain] = true
		}
		sr := rep.Splits[i]
		if sr.Split != sp || sr.DistinctDomains != len(seen) || sr.Scenarios != len(part) {
			t.Errorf("report %+v disagrees with recount (%d distinct of %d)", sr, len(seen), len(part))
		}
		if share := float64(len(seen)) / float64(len(part)); share < 0.9 {
			t.Errorf("%s: distinct domain share %.3f < 0.9", sp, share)
		}
		if sr.BaseDomains != 50 {
			t.Errorf("%s: %d base domains used, want all 50", sp, sr.BaseDomains)
		}
	}
}

func TestDeterminism(t *testing.T) {
	b := mustBank(t)
	ss, _ := defaultSet()
	again, _, err := Generate(1, b, DefaultSizes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(jsonl(t, ss), jsonl(t, again)) {
		t.Fatal("seed 1 twice gave different bytes")
	}
	other, _, err := Generate(2, b, DefaultSizes)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(jsonl(t, ss), jsonl(t, other)) {
		t.Fatal("seeds 1 and 2 gave identical bytes")
	}
	// Held-out and val are drawn first, so the train size cannot move them.
	small, _, err := Generate(1, b, Sizes{Train: 10, Val: 200, Heldout: 120})
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range []scenario.Split{scenario.Val, scenario.Heldout} {
		if !bytes.Equal(jsonl(t, bySplit(ss, sp)), jsonl(t, bySplit(small, sp))) {
			t.Errorf("%s split changed when only the train size changed", sp)
		}
	}
}

// TestCommittedFileUpToDate checks that scenarios/arena.jsonl is what
// `persuarena scenarios generate arena` writes with its defaults.
func TestCommittedFileUpToDate(t *testing.T) {
	got, err := scenarios.Open("arena")
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := defaultSet()
	if !bytes.Equal(got, jsonl(t, ss)) {
		t.Fatal("scenarios/arena.jsonl is stale: run `go run ./cmd/persuarena scenarios generate arena`")
	}
}

func TestGenerateRejectsBadSizes(t *testing.T) {
	b := mustBank(t)
	for _, sz := range []Sizes{{Train: -1, Val: 1, Heldout: 1}, {}} {
		if _, _, err := Generate(1, b, sz); err == nil {
			t.Errorf("Generate with sizes %+v: no error", sz)
		}
	}
	ss, rep, err := Generate(3, b, Sizes{Heldout: 120})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 120 || rep.Splits[0].Scenarios != 0 || rep.Splits[2].Scenarios != 120 {
		t.Errorf("held-out only: %d scenarios, report %+v", len(ss), rep.Splits)
	}
}

func TestBankErrorsNameDomainAndField(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(b *Bank)
		wants []string
	}{
		{"three concerns", func(b *Bank) { b.Domains[0].Concerns = b.Domains[0].Concerns[:3] },
			[]string{`domains[0].concerns (domain "medication adherence"): 3 concerns, want 4 to 6`}},
		{"unknown family", func(b *Bank) { b.Domains[1].Family = "astrology" },
			[]string{`domains[1].family (domain "cancer screening"): unknown family "astrology"`}},
		{"charity family", func(b *Bank) { b.Domains[2].Family = scenario.Charity },
			[]string{`domains[2].family (domain "physiotherapy plan"): unknown family "charity"`}},
		{"shared keyword", func(b *Bank) {
			cs := b.Domains[0].Concerns
			cs[1].Keywords = append(slices.Clone(cs[1].Keywords), cs[0].Keywords[0])
		}, []string{`domains[0].concerns[0].keywords (domain "medication adherence"): keyword "side effects" of concern "side_effects" overlaps keyword "side effects" of concern "cost"`}},
		{"keyword inside phrase", func(b *Bank) {
			cs := b.Domains[0].Concerns
			cs[1].Keywords = append(slices.Clone(cs[1].Keywords), "effects")
		}, []string{`keyword "effects" of concern "cost" overlaps keyword "side effects" of concern "side_effects"`}},
		{"keyword in proposal", func(b *Bank) {
			cs := b.Domains[0].Concerns
			cs[1].Keywords = append(slices.Clone(cs[1].Keywords), "medication")
		}, []string{`keyword "medication" of concern "cost" matches the domain's proposal`}},
		{"inflected keyword", func(b *Bank) {
			cs := b.Domains[0].Concerns
			cs[0].Keywords = append(slices.Clone(cs[0].Keywords), "prices")
		}, []string{`keyword "prices" of concern "side_effects" overlaps keyword "price" of concern "cost"`}},
		{"upper-case keyword", func(b *Bank) { b.Domains[3].Concerns[0].Keywords[0] = "Safe" },
			[]string{`domains[3].concerns[0].keywords[0] (domain "vaccination"): "Safe" must be lower case`}},
		{"too few keywords", func(b *Bank) { b.Domains[3].Concerns[0].Keywords = []string{"safe", "safety", "tested"} },
			[]string{`domains[3].concerns[0].keywords (domain "vaccination"): 3 keywords, want 4 to 8`}},
		{"unknown placeholder", func(b *Bank) { b.Domains[4].Background += " {persuadee_age}" },
			[]string{`domains[4].background (domain "quitting smoking"): unknown placeholder {persuadee_age}`}},
		{"bad closeness", func(b *Bank) { b.Domains[5].Relationships[0].Closeness = "besties" },
			[]string{`domains[5].relationships[0].closeness (domain "sleep routine"): unknown closeness "besties"`}},
		{"unknown profile", func(b *Bank) { b.Domains[6].Profile = "astronaut" },
			[]string{`domains[6].profile (domain "diabetes self-care"): unknown profile "astronaut"`}},
		{"duplicate name", func(b *Bank) { b.Domains[7].Name = "Vaccination" },
			[]string{`domains[7].name (domain "Vaccination"): duplicate of domains[3]`}},
		{"third-person voiced", func(b *Bank) { b.Domains[9].Concerns[0].Voiced = "She thinks it's pointless." },
			[]string{`domains[9].concerns[0].voiced (domain `, `"She thinks it's pointless." speaks of the persuadee in the third person`}},
		{"bad ages", func(b *Bank) { b.Domains[8].Ages = []int{60, 40} },
			[]string{`domains[8].ages (domain "hearing aids"): [60 40] is not a range`}},
		{"two problems", func(b *Bank) {
			b.Domains[0].Concerns = b.Domains[0].Concerns[:3]
			b.Domains[1].Family = "astrology"
		}, []string{`"medication adherence"`, `"cancer screening"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := mustBank(t)
			c.edit(&b)
			err := b.Validate()
			var be *BankError
			if !errors.As(err, &be) {
				t.Fatalf("Validate() = %v, want *BankError", err)
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
			if _, _, gerr := Generate(1, b, DefaultSizes); gerr == nil {
				t.Error("Generate accepted the invalid bank")
			}
		})
	}
}

func TestParseBankJSONErrors(t *testing.T) {
	_, err := ParseBank("my.json", []byte("{\n  \"version\": 1,\n  \"setings\": []\n}"))
	if err == nil || !strings.Contains(err.Error(), "my.json:3:") || !strings.Contains(err.Error(), `unknown field "setings"`) {
		t.Errorf("unknown field: got %v, want my.json:3:... unknown field \"setings\"", err)
	}
	_, err = ParseBank("my.json", []byte("{\n  \"version\": \"one\"\n}"))
	if err == nil || !strings.Contains(err.Error(), "my.json:2:") || !strings.Contains(err.Error(), "version") {
		t.Errorf("wrong type: got %v, want my.json:2:... version", err)
	}
	_, err = ParseBank("my.json", []byte("{\"version\": 1,\n\n  ]"))
	if err == nil || !strings.Contains(err.Error(), "my.json:3:") {
		t.Errorf("syntax error: got %v, want my.json:3:...", err)
	}
	_, err = LoadBank("testdata/does-not-exist.json")
	if err == nil {
		t.Error("LoadBank of a missing file: no error")
	}
}

func TestStanceRangesOrdered(t *testing.T) {
	ss, _ := defaultSet()
	sum := map[scenario.Resistance]float64{}
	n := map[scenario.Resistance]int{}
	for _, s := range ss {
		sum[s.Hidden.Resistance] += s.Hidden.InitialStance
		n[s.Hidden.Resistance]++
	}
	mean := func(r scenario.Resistance) float64 { return sum[r] / float64(n[r]) }
	// Range midpoints: EB -0.575, IT -0.475, AR -0.275, AA -0.05; with
	// hundreds of draws each, sample means keep that order.
	eb, it, ar, aa := mean(scenario.EntrenchedBelief), mean(scenario.IdentityThreat), mean(scenario.AutonomyResistance), mean(scenario.AmbivalentAvoidance)
	if !(eb < it && it < ar && ar < aa) {
		t.Errorf("mean stances EB %.3f IT %.3f AR %.3f AA %.3f, want increasing", eb, it, ar, aa)
	}
	if _, _, ok := StanceRange("XX"); ok {
		t.Error("StanceRange accepted an unknown type")
	}
}

func TestArticle(t *testing.T) {
	cases := map[string]string{
		"bus driver": "a", "accountant": "an", "university lecturer": "a", "IT support technician": "an",
		"hour-long job": "an", "engineer": "an", "retired nurse": "a", "undergraduate": "an", "European": "a",
	}
	for in, want := range cases {
		if got := article(in); got != want {
			t.Errorf("article(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReportWrite(t *testing.T) {
	_, rep := defaultSet()
	var buf bytes.Buffer
	if err := rep.Write(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{
		"seed 1\n",
		"total 50",
		"heldout    120 scenarios",
		"resistance: EB 45 IT 36 AR 22 AA 17",
		"resistance: EB 551 IT 440 AR 269 AA 208",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("report\n%s\nlacks %q", out, w)
		}
	}
}
