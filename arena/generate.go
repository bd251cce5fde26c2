package arena

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/scenario"
)

// Source, License and the id prefix written into every generated scenario.
const (
	// Source is the provenance source of generated scenarios.
	Source = "persuarena-arena"
	// License is the provenance licence: the bank is the project's own
	// text, so generated scenarios carry the project's licence (Apache-2.0,
	// see LICENSE).
	License = "Apache-2.0"
	// IDPrefix starts every id: "arena-train-0001".
	IDPrefix = "arena"
)

// Sizes are the number of scenarios per split.
type Sizes struct {
	Train   int
	Val     int
	Heldout int
}

// DefaultSizes are the Probe-RPO paper's Table 2 splits: 1,468 train, 200 val,
// 120 held-out.
var DefaultSizes = Sizes{Train: 1468, Val: 200, Heldout: 120}

func (s Sizes) of(sp scenario.Split) int {
	switch sp {
	case scenario.Train:
		return s.Train
	case scenario.Val:
		return s.Val
	default:
		return s.Heldout
	}
}

// heldoutMix is the held-out resistance mix of the Probe-RPO paper (Table 6):
// IT 36, EB 45, AR 22, AA 17 of 120, in scenario.Resistances order.
var heldoutMix = [4]int{45, 36, 22, 17}

// heldoutTotal is the sum of heldoutMix.
const heldoutTotal = 120

// ResistanceMix returns how many of n scenarios get each resistance type:
// the held-out proportions IT 36 : EB 45 : AR 22 : AA 17 (Probe-RPO paper)
// apportioned by largest remainder, ties to the larger share, then to
// scenario.Resistances order. For n = 120 it is exactly the paper's mix;
// for 1,468 it is EB 551, IT 440, AR 269, AA 208; for 200 it is EB 75,
// IT 60, AR 37, AA 28. Counts sum to n (n >= 0).
//
// Choice: the Probe-RPO paper reports only the held-out mix; train and val use the
// same proportions so that every split sees the same type balance.
func ResistanceMix(n int) map[scenario.Resistance]int {
	counts := [4]int{}
	rem := [4]int{}
	left := n
	for i, w := range heldoutMix {
		counts[i] = n * w / heldoutTotal
		rem[i] = n * w % heldoutTotal
		left -= counts[i]
	}
	order := []int{0, 1, 2, 3}
	slices.SortStableFunc(order, func(a, b int) int {
		if rem[a] != rem[b] {
			return rem[b] - rem[a]
		}
		return heldoutMix[b] - heldoutMix[a]
	})
	for k := 0; k < left; k++ {
		counts[order[k]]++
	}
	out := map[scenario.Resistance]int{}
	for i, r := range scenario.Resistances {
		out[r] = counts[i]
	}
	return out
}

// stanceRange is the uniform range of initial_stance per resistance type,
// in scenario.Resistances order (EB, IT, AR, AA).
//
// Choice: the Probe-RPO paper does not publish stances. Entrenched Belief and
// Identity Threat start most against the proposal, Autonomy Resistance
// mildly against (its resistance is to pressure, not to the idea), and
// Ambivalent Avoidance near neutral on either side.
var stanceRange = [4][2]float64{
	{-0.80, -0.35}, // EB
	{-0.70, -0.25}, // IT
	{-0.50, -0.05}, // AR
	{-0.25, 0.15},  // AA
}

// StanceRange returns the [lo, hi] range initial stances of resistance
// type r are drawn from (uniform, rounded to 0.01); ok is false for an
// unknown type.
func StanceRange(r scenario.Resistance) (lo, hi float64, ok bool) {
	i := slices.Index(scenario.Resistances, r)
	if i < 0 {
		return 0, 0, false
	}
	return stanceRange[i][0], stanceRange[i][1], true
}

// pcgStream is the second PCG seed word, fixed so that a seed names one
// stream ("arena" in ASCII).
const pcgStream = 0x6172656e61

// Report summarises a generated set.
type Report struct {
	// Seed is the generator seed.
	Seed uint64
	// BankDomains counts the bank's base domains per family.
	BankDomains map[scenario.Family]int
	// Splits has one entry per split, in train, val, held-out order.
	Splits []SplitReport
}

// SplitReport summarises one split.
type SplitReport struct {
	Split     scenario.Split
	Scenarios int
	// Resistance and Family count scenarios per resistance type and family.
	Resistance map[scenario.Resistance]int
	Family     map[scenario.Family]int
	// DistinctDomains counts distinct domain strings (Probe-RPO paper, Table 2:
	// 1,401 of 1,468 train).
	DistinctDomains int
	// BaseDomains counts distinct base domains used.
	BaseDomains int
}

// DistinctShare is DistinctDomains / Scenarios, in [0, 1]; 0 for an empty
// split.
func (s SplitReport) DistinctShare() float64 {
	if s.Scenarios == 0 {
		return 0
	}
	return float64(s.DistinctDomains) / float64(s.Scenarios)
}

// Write prints the report as plain text: bank domains per family, then per
// split its size, resistance mix, family mix and distinct domain strings.
func (r *Report) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d\nbank domains:", r.Seed)
	total := 0
	for _, f := range arenaFamilies {
		fmt.Fprintf(&b, " %s %d;", f, r.BankDomains[f])
		total += r.BankDomains[f]
	}
	fmt.Fprintf(&b, " total %d\n", total)
	for _, s := range r.Splits {
		fmt.Fprintf(&b, "%-8s %5d scenarios, %d distinct domain strings (%.1f%%) from %d base domains\n",
			s.Split, s.Scenarios, s.DistinctDomains, 100*s.DistinctShare(), s.BaseDomains)
		b.WriteString("  resistance:")
		for _, x := range scenario.Resistances {
			fmt.Fprintf(&b, " %s %d", x, s.Resistance[x])
		}
		b.WriteString("\n  family:")
		for i, f := range arenaFamilies {
			if i > 0 {
				b.WriteByte(';')
			}
			fmt.Fprintf(&b, " %s %d", f, s.Family[f])
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Summarize builds the Report of ss (any scenario set) for seed and bank.
func Summarize(seed uint64, bank *Bank, ss []scenario.Scenario) *Report {
	rep := &Report{Seed: seed, BankDomains: map[scenario.Family]int{}}
	for _, d := range bank.Domains {
		rep.BankDomains[d.Family]++
	}
	for _, sp := range scenario.Splits {
		sr := SplitReport{Split: sp, Resistance: map[scenario.Resistance]int{}, Family: map[scenario.Family]int{}}
		doms, bases := map[string]bool{}, map[string]bool{}
		for i := range ss {
			s := &ss[i]
			if s.Split != sp {
				continue
			}
			sr.Scenarios++
			sr.Resistance[s.Hidden.Resistance]++
			sr.Family[s.Family]++
			doms[s.Domain] = true
			bases[baseDomain(s)] = true
		}
		sr.DistinctDomains, sr.BaseDomains = len(doms), len(bases)
		rep.Splits = append(rep.Splits, sr)
	}
	return rep
}

// baseDomain returns the bank domain name recorded in s's provenance ref
// ("seed=N domain=NAME"), or s.Domain when the ref has none.
func baseDomain(s *scenario.Scenario) string {
	const key = "domain="
	if i := strings.Index(s.Provenance.Ref, key); i >= 0 {
		return s.Provenance.Ref[i+len(key):]
	}
	return s.Domain
}

// Generate composes the arena scenario set from bank: sizes.Train,
// sizes.Val and sizes.Heldout scenarios (see DefaultSizes), returned in
// train, val, held-out order with ids "arena-SPLIT-0001" onwards, plus a
// Report. The same seed, bank and sizes always give identical scenarios;
// the held-out split depends only on seed, bank and sizes.Heldout, and the
// val split only on those and sizes.Val, since splits are drawn held-out
// first.
//
// Recipe (docs/arena.md): per split, resistance counts from ResistanceMix;
// families dealt round-robin across the resistance-sorted slots, so
// families are within one of even and each type is spread evenly over
// families; slots shuffled; base domains dealt from a shuffled cycle per
// family; each domain string "NAME SITUATION, SETTING" dealt without
// replacement from a shuffled deck of that domain's situation x setting
// pairs shared by all splits (so strings repeat only once a deck runs out);
// everything else drawn uniformly (3-5 concerns, 1-2 constraints, a
// stance from StanceRange). Traits are left empty: the bank has no
// calibrated trait scores, and the simulator treats missing traits as
// neutral.
//
// It returns the bank's *BankError if the bank is invalid, an error for a
// negative size or all sizes zero, and an error if a composed scenario
// fails (*scenario.Scenario).Check (a defect).
func Generate(seed uint64, bank Bank, sizes Sizes) ([]scenario.Scenario, *Report, error) {
	if err := bank.Validate(); err != nil {
		return nil, nil, err
	}
	if sizes.Train < 0 || sizes.Val < 0 || sizes.Heldout < 0 {
		return nil, nil, fmt.Errorf("arena: negative split size in %+v", sizes)
	}
	if sizes.Train+sizes.Val+sizes.Heldout == 0 {
		return nil, nil, errors.New("arena: all split sizes are zero")
	}
	g := newComposer(seed, &bank)
	out := map[scenario.Split][]scenario.Scenario{}
	for _, sp := range []scenario.Split{scenario.Heldout, scenario.Val, scenario.Train} {
		ss, err := g.split(sp, sizes.of(sp))
		if err != nil {
			return nil, nil, err
		}
		out[sp] = ss
	}
	var all []scenario.Scenario
	for _, sp := range scenario.Splits {
		all = append(all, out[sp]...)
	}
	return all, Summarize(seed, &bank, all), nil
}

type combo struct{ situation, setting int }

// composer holds the generator state shared across splits.
type composer struct {
	seed     uint64
	bank     *Bank
	rng      *rand.Rand
	families []scenario.Family // families with at least one domain
	byFamily [][]int           // domain indices per families entry
	cycles   [][]int           // current shuffled cycle per family
	decks    [][]combo         // shuffled domain-string deck per domain
	next     []int             // next deck position per domain
}

func newComposer(seed uint64, b *Bank) *composer {
	g := &composer{seed: seed, bank: b, rng: rand.New(rand.NewPCG(seed, pcgStream))}
	for _, f := range arenaFamilies {
		var idx []int
		for i, d := range b.Domains {
			if d.Family == f {
				idx = append(idx, i)
			}
		}
		if len(idx) > 0 {
			g.families = append(g.families, f)
			g.byFamily = append(g.byFamily, idx)
		}
	}
	g.cycles = make([][]int, len(g.families))
	for _, d := range b.Domains {
		deck := make([]combo, 0, len(d.Situations)*len(b.Settings))
		for si := range d.Situations {
			for ti := range b.Settings {
				deck = append(deck, combo{si, ti})
			}
		}
		g.shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
		g.decks = append(g.decks, deck)
	}
	g.next = make([]int, len(b.Domains))
	return g
}

func (g *composer) shuffle(n int, swap func(i, j int)) { g.rng.Shuffle(n, swap) }

func (g *composer) pick(list []string) string { return list[g.rng.IntN(len(list))] }

// domain deals the next base domain of family slot fi.
func (g *composer) domain(fi int) int {
	if len(g.cycles[fi]) == 0 {
		c := slices.Clone(g.byFamily[fi])
		g.shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
		g.cycles[fi] = c
	}
	d := g.cycles[fi][0]
	g.cycles[fi] = g.cycles[fi][1:]
	return d
}

// combo deals the next (situation, setting) pair of domain di, reshuffling
// the deck when it runs out.
func (g *composer) combo(di int) combo {
	deck := g.decks[di]
	if g.next[di] == len(deck) {
		g.shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
		g.next[di] = 0
	}
	c := deck[g.next[di]]
	g.next[di]++
	return c
}

type slot struct {
	res scenario.Resistance
	fam int
}

func (g *composer) split(sp scenario.Split, n int) ([]scenario.Scenario, error) {
	if n == 0 {
		return nil, nil
	}
	mix := ResistanceMix(n)
	slots := make([]slot, 0, n)
	famOrder := g.rng.Perm(len(g.families))
	for _, r := range scenario.Resistances {
		for k := 0; k < mix[r]; k++ {
			slots = append(slots, slot{res: r, fam: famOrder[len(slots)%len(famOrder)]})
		}
	}
	g.shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
	out := make([]scenario.Scenario, n)
	for i, sl := range slots {
		id := fmt.Sprintf("%s-%s-%04d", IDPrefix, sp, i+1)
		out[i] = g.compose(id, sp, sl)
		if err := out[i].Check(); err != nil {
			return nil, fmt.Errorf("arena: composed scenario %s is invalid: %w", id, err)
		}
	}
	return out, nil
}

// compose draws one scenario for slot sl.
func (g *composer) compose(id string, sp scenario.Split, sl slot) scenario.Scenario {
	b := g.bank
	di := g.domain(sl.fam)
	d := &b.Domains[di]
	c := g.combo(di)
	situation, setting := d.Situations[c.situation], b.Settings[c.setting]
	rel := d.Relationships[g.rng.IntN(len(d.Relationships))]
	erRole, eeRole := g.pick(rel.PersuaderRoles), g.pick(rel.PersuadeeRoles)

	eeFirst, eeLast := g.pick(b.FirstNames), g.pick(b.Surnames)
	erFirst := g.pick(b.FirstNames)
	for erFirst == eeFirst {
		erFirst = g.pick(b.FirstNames)
	}
	erLast := eeLast
	if !rel.Kin {
		for erLast == eeLast {
			erLast = g.pick(b.Surnames)
		}
	}
	ee, er := eeFirst+" "+eeLast, erFirst+" "+erLast

	ages := d.Ages
	if len(rel.Ages) == 2 {
		ages = rel.Ages
	}
	age := ages[0] + g.rng.IntN(ages[1]-ages[0]+1)
	pname := d.Profile
	if rel.Profile != "" {
		pname = rel.Profile
	}
	if pname == "" {
		pname = DefaultProfile
	}
	prof := b.Profiles[pname]
	occ := g.pick(prof.Occupations)
	if prof.RetireAge > 0 && age >= prof.RetireAge {
		occ = "retired " + occ
	}
	life := g.pick(prof.Lives)
	ri := slices.Index(scenario.Resistances, sl.res)
	persona := fmt.Sprintf("%s, %d, is %s %s who %s. %s", ee, age, article(occ), occ, life, g.pick(b.Personalities[sl.res]))

	k := 3 + g.rng.IntN(min(5, len(d.Concerns))-3+1)
	concerns := make([]scenario.Concern, 0, k)
	for _, ci := range sortedPrefix(g.rng.Perm(len(d.Concerns)), k) {
		cc := d.Concerns[ci]
		cc.Keywords = slices.Clone(cc.Keywords)
		// The first-person phrasing the simulator voices: the bank's own,
		// or the rewrite of its description, written out so that users see
		// (and may edit) exactly what the persuadee says.
		cc.Voiced = cc.Voice(ee)
		concerns = append(concerns, cc)
	}
	nc := min(1+g.rng.IntN(2), len(d.Constraints))
	var constraints []string
	for _, ci := range sortedPrefix(g.rng.Perm(len(d.Constraints)), nc) {
		constraints = append(constraints, d.Constraints[ci])
	}
	motivation := g.pick(d.Motivations)
	lo, hi := stanceRange[ri][0], stanceRange[ri][1]
	stance := math.Round((lo+g.rng.Float64()*(hi-lo))*100) / 100

	bg := strings.NewReplacer(
		"{persuader}", er, "{persuader_first}", erFirst, "{persuader_role}", erRole,
		"{persuadee}", ee, "{persuadee_first}", eeFirst, "{persuadee_role}", eeRole,
		"{situation}", situation, "{setting}", setting,
	).Replace(d.Background)

	return scenario.Scenario{
		ID:               id,
		Split:            sp,
		Domain:           d.Name + " " + situation + ", " + setting,
		Family:           d.Family,
		Proposal:         d.Proposal,
		AcceptMeans:      d.AcceptMeans,
		ConditionalMeans: d.ConditionalMeans,
		Persuader:        scenario.Party{Name: er, Role: erRole},
		Persuadee:        scenario.Party{Name: ee, Role: eeRole},
		Relationship:     rel.Relationship,
		Closeness:        rel.Closeness,
		Background:       bg,
		Hidden: scenario.HiddenProfile{
			Persona:       persona,
			Motivation:    motivation,
			Resistance:    sl.res,
			Concerns:      concerns,
			Constraints:   constraints,
			InitialStance: stance,
		},
		Provenance: scenario.Provenance{Source: Source, Ref: fmt.Sprintf("seed=%d domain=%s", g.seed, d.Name), License: License},
	}
}

// sortedPrefix returns the first k entries of perm in ascending order, so
// sampled concerns keep the bank's order.
func sortedPrefix(perm []int, k int) []int {
	p := slices.Clone(perm[:k])
	slices.Sort(p)
	return p
}

// article returns "a" or "an" for the noun phrase s, by its first letter
// with the common exceptions ("a university", "an hour").
func article(s string) string {
	l := strings.ToLower(s)
	for _, p := range []string{"uni", "use", "usu", "eu", "one"} {
		if strings.HasPrefix(l, p) {
			return "a"
		}
	}
	for _, p := range []string{"hour", "honest", "heir"} {
		if strings.HasPrefix(l, p) {
			return "an"
		}
	}
	if l != "" && strings.ContainsRune("aeiou", rune(l[0])) {
		return "an"
	}
	return "a"
}

// GenerateFile composes the set from the domain bank file domains (the
// embedded DefaultBank when "") with seed and sizes, writes it as JSONL to
// out (atomically, scenario.WriteFile) and writes "wrote N scenarios to
// OUT" and the generation Report to w. Same seed and bank, same bytes.
// Errors: the bank's (file:line), Generate's, or the write's.
func GenerateFile(seed uint64, domains string, sizes Sizes, out string, w io.Writer) error {
	var bank Bank
	var err error
	if domains == "" {
		bank, err = DefaultBank()
	} else {
		bank, err = LoadBank(domains)
	}
	if err != nil {
		return err
	}
	ss, rep, err := Generate(seed, bank, sizes)
	if err != nil {
		return err
	}
	if err := scenario.WriteFile(out, ss); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %d scenarios to %s\n", len(ss), out)
	return rep.Write(w)
}
