package p4g

import (
	"fmt"
	"math"
	"strings"

	"github.com/persuarena/persuarena/scenario"
)

// TraitKeys are the numeric survey columns of full_info.csv, in file order,
// with the ".x" suffix removed. Every imported scenario stores all of them
// in hidden.traits under exactly these keys (the simulator reads them):
// Big Five 1-5 (extrovert … open), moral foundations 1-6 (care … purity),
// Schwartz values 1-6 (freedom … security), decision style 1-5 (rational,
// intuitive), age in years and income bracket 1-12.
var TraitKeys = []string{
	"extrovert", "agreeable", "conscientious", "neurotic", "open",
	"care", "fairness", "loyalty", "authority", "purity",
	"freedom", "conform", "tradition", "benevolence", "universalism",
	"self_direction", "stimulation", "hedonism", "achievement", "power", "security",
	"rational", "intuitive", "age", "income",
}

// TraitIdeology and TraitReligiosity are the two coded categorical answers
// that every imported scenario also stores in hidden.traits (CodedTraitKeys):
// ideology Liberal -1, Moderate 0, Conservative +1; religion Atheist -1,
// Protestant or Catholic +1, any other 0 (the codings of the composites,
// docs/p4g.md). docs/fidelity.md finds conservatism and religiosity go with giving.
const (
	TraitIdeology    = "ideology"
	TraitReligiosity = "religiosity"
)

// CodedTraitKeys lists the coded categorical traits, in the order the
// fidelity baseline uses them.
var CodedTraitKeys = []string{TraitIdeology, TraitReligiosity}

// demoKeys are the categorical demographic columns (".x" removed).
var demoKeys = []string{"sex", "race", "edu", "marital", "employment", "religion", "ideology"}

// Survey is one participant's survey from full_info.csv.
type Survey struct {
	// Scores holds every TraitKeys value, keyed without ".x".
	Scores map[string]float64
	// Sex, Edu, Marital, Employment, Religion and Ideology are the
	// categorical answers as written in the file (e.g. "Liberal").
	Sex, Edu, Marital, Employment, Religion, Ideology string
}

// variable returns the value of a composite input: a TraitKeys score, or
// one of two codings of categorical answers:
//
//   - "ideology_num": Liberal -1, Moderate 0, Conservative +1;
//   - "religiosity": Atheist -1, Protestant or Catholic +1, otherwise 0.
func (s Survey) variable(name string) float64 {
	switch name {
	case "ideology_num":
		switch strings.ToLower(s.Ideology) {
		case "liberal":
			return -1
		case "conservative":
			return 1
		}
		return 0
	case "religiosity":
		switch strings.ToLower(s.Religion) {
		case "atheist":
			return -1
		case "protestant", "catholic":
			return 1
		}
		return 0
	}
	return s.Scores[name]
}

// variables lists every composite input in a fixed order.
var variables = append(append([]string{}, TraitKeys...), "ideology_num", "religiosity")

// term is one weighted, standardised input of a composite.
type term struct {
	v string
	w float64
}

// A composite is a weighted mean of standardised inputs, itself
// standardised over the imported population, so every composite has mean
// 0 and SD 1 and thresholds are relative ("0.5 SD above the others").
type composite struct {
	name  string
	terms []term
}

// Composites. Signs follow the psychology cited in docs/p4g.md.
var (
	// Resistance propensities.
	compEB = composite{"EB", []term{{"rational", 1}, {"care", -1}, {"benevolence", -1}}}
	compIT = composite{"IT", []term{{"loyalty", 1}, {"authority", 1}, {"purity", 1}, {"ideology_num", 1}, {"universalism", -1}}}
	compAR = composite{"AR", []term{{"self_direction", 1}, {"freedom", 1}, {"conform", -1}}}
	compAA = composite{"AA", []term{{"neurotic", 1}, {"intuitive", 1}}}
	// Initial stance: prosocial dispositions up, self-enhancement down.
	compStance = composite{"stance", []term{
		{"care", 1}, {"benevolence", 1}, {"agreeable", 1}, {"universalism", 1},
		{"power", -1}, {"achievement", -1},
	}}
)

// Norms are the population means and SDs used to standardise surveys and
// composites. They are computed from the surveys being imported, so the
// same data always gives the same norms.
type Norms struct {
	mean, sd   map[string]float64
	cmean, csd map[string]float64
}

// NewNorms computes norms over ss (population SD, n in the denominator).
// A variable or composite with zero spread standardises to 0.
func NewNorms(ss []Survey) *Norms {
	n := &Norms{mean: map[string]float64{}, sd: map[string]float64{}, cmean: map[string]float64{}, csd: map[string]float64{}}
	for _, v := range variables {
		xs := make([]float64, len(ss))
		for i, s := range ss {
			xs[i] = s.variable(v)
		}
		n.mean[v], n.sd[v] = meanSD(xs)
	}
	for _, c := range allComposites() {
		xs := make([]float64, len(ss))
		for i, s := range ss {
			xs[i] = n.raw(s, c)
		}
		n.cmean[c.name], n.csd[c.name] = meanSD(xs)
	}
	return n
}

func meanSD(xs []float64) (m, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		sd += (x - m) * (x - m)
	}
	return m, math.Sqrt(sd / float64(len(xs)))
}

func allComposites() []composite {
	cs := []composite{compEB, compIT, compAR, compAA, compStance}
	for _, c := range concernBank {
		cs = append(cs, c.comp)
	}
	return cs
}

// Z returns the standardised value (x - mean) / SD of variable v for s.
func (n *Norms) Z(s Survey, v string) float64 {
	if n.sd[v] == 0 {
		return 0
	}
	return (s.variable(v) - n.mean[v]) / n.sd[v]
}

// raw is the weighted mean of the standardised inputs of c.
func (n *Norms) raw(s Survey, c composite) float64 {
	var sum, wsum float64
	for _, t := range c.terms {
		sum += t.w * n.Z(s, t.v)
		wsum += math.Abs(t.w)
	}
	return sum / wsum
}

// comp returns composite c for s standardised over the population.
func (n *Norms) comp(s Survey, c composite) float64 {
	if n.csd[c.name] == 0 {
		return 0
	}
	return (n.raw(s, c) - n.cmean[c.name]) / n.csd[c.name]
}

// Propensities are the standardised resistance composites of one persuadee
// (mean 0, SD 1 over the imported population); see docs/p4g.md:
//
//	EB = std(mean(z rational, -z care, -z benevolence))
//	IT = std(mean(z loyalty, z authority, z purity, z ideology, -z universalism))
//	AR = std(mean(z self_direction, z freedom, -z conform))
//	AA = std(mean(z neurotic, z intuitive))
type Propensities struct {
	EB, IT, AR, AA float64
}

// Propensities computes s's resistance propensities under n.
func (n *Norms) Propensities(s Survey) Propensities {
	return Propensities{EB: n.comp(s, compEB), IT: n.comp(s, compIT), AR: n.comp(s, compAR), AA: n.comp(s, compAA)}
}

// ResistanceThreshold is how far (in SD) the strongest value-driven
// propensity (EB, IT or AR) must stand above the population mean for it to
// decide the resistance type.
//
// Choice: 0.25 SD. With 0.5 over a third of persuadees came out ambivalent;
// 0.25 gives a non-degenerate mix (about EB 21%, IT 30%, AR 21%, AA 27% on
// the P4G persuadees; the Probe-RPO paper's held-out mix is EB 38%, IT 30%,
// AR 18%, AA 14%). The importer prints the mix; docs/p4g.md records it.
const ResistanceThreshold = 0.25

// ResistanceOf applies the resistance rule (docs/p4g.md) to standardised
// propensities: the strongest of EB, IT and AR (ties in that order) wins if
// it is at least ResistanceThreshold and at least AA; otherwise the type is
// Ambivalent Avoidance (no value-driven resistance stands out, or anxious,
// gut-driven indecision dominates).
func ResistanceOf(p Propensities) scenario.Resistance {
	best, top := scenario.EntrenchedBelief, p.EB
	if p.IT > top {
		best, top = scenario.IdentityThreat, p.IT
	}
	if p.AR > top {
		best, top = scenario.AutonomyResistance, p.AR
	}
	if top < ResistanceThreshold || p.AA > top {
		return scenario.AmbivalentAvoidance
	}
	return best
}

// StanceScale is the slope of the initial-stance squashing.
//
// Choice: 0.5, so a persuadee 1 SD above average on the stance composite
// starts at tanh(0.5) = +0.46 and nobody starts at the extremes.
const StanceScale = 0.5

// InitialStance returns tanh(StanceScale * S) rounded to 3 decimals, in
// (-1, 1), where S is the standardised stance composite
// mean(z care, z benevolence, z agreeable, z universalism, -z power,
// -z achievement): prosocial dispositions raise openness to donating,
// self-enhancement values lower it (docs/p4g.md).
func (n *Norms) InitialStance(s Survey) float64 {
	return math.Round(math.Tanh(StanceScale*n.comp(s, compStance))*1000) / 1000
}

// concernDef is a bank entry: the concern and the composite that scores
// how strongly a persuadee holds it.
type concernDef struct {
	c    scenario.Concern
	comp composite
}

// concernBank is the bank of donation concerns, in priority order (earlier
// wins ties). Keywords are lower-case words a persuader naturally uses
// when addressing the concern.
var concernBank = []concernDef{
	{scenario.Concern{ID: "reach", Description: "I'm not sure the money really gets to the children who need it.",
		Keywords: []string{"reach", "reaches", "directly", "goes to", "delivered", "on the ground", "programs", "impact", "spent on"}},
		composite{"c_reach", []term{{"rational", 1}, {"conscientious", 1}, {"universalism", -1}}}},
	{scenario.Concern{ID: "overhead", Description: "Big charities waste a lot on overhead and salaries; I don't really trust them.",
		Keywords: []string{"overhead", "administrative", "admin", "percent", "salaries", "transparency", "transparent", "rating", "charity navigator", "efficient"}},
		composite{"c_overhead", []term{{"rational", 1}, {"agreeable", -1}, {"authority", -1}}}},
	{scenario.Concern{ID: "need_money", Description: "Honestly, I need this money myself; every cent of my payment counts.",
		Keywords: []string{"afford", "budget", "spare", "tight", "cents", "keep the rest", "small part", "your own needs"}},
		composite{"c_need_money", []term{{"income", -2}, {"security", 1}}}},
	{scenario.Concern{ID: "local", Description: "I'd rather help people closer to home before children overseas.",
		Keywords: []string{"local", "at home", "community", "domestic", "united states", "america", "american"}},
		composite{"c_local", []term{{"loyalty", 1}, {"universalism", -1}, {"ideology_num", 1}}}},
	{scenario.Concern{ID: "small_amount", Description: "I doubt a dollar or two from me makes any real difference.",
		Keywords: []string{"difference", "adds up", "every bit", "small", "matters", "even a", "cents"}},
		composite{"c_small_amount", []term{{"care", -1}, {"universalism", -1}, {"power", 1}}}},
	{scenario.Concern{ID: "stranger", Description: "I don't know you, and I'm wary when a stranger online asks me for money.",
		Keywords: []string{"trust", "stranger", "legit", "legitimate", "scam", "researchers", "research team", "who i am", "honest"}},
		composite{"c_stranger", []term{{"agreeable", -1}, {"neurotic", 1}, {"security", 1}}}},
	{scenario.Concern{ID: "own_choice", Description: "I want to decide for myself what to do with my money, without being pushed.",
		Keywords: []string{"choice", "decide", "up to you", "your call", "no pressure", "pressure", "your decision", "whatever you"}},
		composite{"c_own_choice", []term{{"freedom", 1}, {"self_direction", 1}, {"conform", -1}}}},
	{scenario.Concern{ID: "own_causes", Description: "I already give to causes I picked myself, like my church or my family.",
		Keywords: []string{"church", "other charities", "other causes", "causes", "tithe", "already give", "already donate"}},
		composite{"c_own_causes", []term{{"tradition", 1}, {"religiosity", 1}, {"age", 1}}}},
	{scenario.Concern{ID: "check_first", Description: "I'd want to look into the charity myself before giving anything.",
		Keywords: []string{"website", "look up", "check", "learn more", "verify", "founded", "savethechildren.org", "read about"}},
		composite{"c_check_first", []term{{"rational", 1}, {"conscientious", 1}, {"intuitive", -1}}}},
	{scenario.Concern{ID: "values_fit", Description: "I'm not sure this organisation shares my values.",
		Keywords: []string{"values", "faith", "religious", "political", "beliefs", "mission", "christian", "neutral"}},
		composite{"c_values_fit", []term{{"purity", 1}, {"authority", 1}, {"ideology_num", 1}}}},
}

// MinConcerns and MaxConcerns bound the number of concerns per persuadee;
// ExtraConcernThreshold is the standardised score a 4th or 5th concern
// needs.
const (
	MinConcerns           = 3
	MaxConcerns           = 5
	ExtraConcernThreshold = 0.75
)

// Concerns selects s's concerns from the bank: the MinConcerns highest
// standardised concern scores, plus up to MaxConcerns-MinConcerns more that
// reach ExtraConcernThreshold; ties go to the earlier bank entry. The
// result is in descending score order and shares no slices with the bank.
func (n *Norms) Concerns(s Survey) []scenario.Concern {
	type scored struct {
		i int
		z float64
	}
	xs := make([]scored, len(concernBank))
	for i, d := range concernBank {
		xs[i] = scored{i, n.comp(s, d.comp)}
	}
	// Stable insertion sort by descending score keeps bank order on ties.
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j].z > xs[j-1].z; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
	var out []scenario.Concern
	for k, x := range xs {
		if k >= MaxConcerns || (k >= MinConcerns && x.z < ExtraConcernThreshold) {
			break
		}
		c := concernBank[x.i].c
		c.Keywords = append([]string(nil), c.Keywords...)
		// The bank's descriptions are first person already; writing the
		// voiced form makes the stored scenario say so explicitly.
		c.Voiced = c.Voice("")
		out = append(out, c)
	}
	return out
}

// Plain-language phrases for high and low standardised scores.
var (
	bigFivePhrase = map[string][2]string{ // {high, low}
		"extrovert":     {"outgoing and talkative", "reserved and quiet"},
		"agreeable":     {"warm and trusting", "blunt and sceptical of others"},
		"conscientious": {"organised and careful", "easy-going about plans"},
		"neurotic":      {"prone to worry", "calm and hard to rattle"},
		"open":          {"curious and open to new ideas", "practical and fond of the familiar"},
	}
	valuePhrase = map[string]string{
		"care": "protecting others from harm", "fairness": "fair treatment",
		"loyalty": "loyalty to their own group", "authority": "respect for authority",
		"purity": "moral purity", "freedom": "personal freedom",
		"conform": "following the rules", "tradition": "tradition",
		"benevolence": "looking after the people close to them", "universalism": "the welfare of all people",
		"self_direction": "thinking and choosing for themselves", "stimulation": "novelty",
		"hedonism": "enjoying life", "achievement": "personal success",
		"power": "status and control", "security": "safety",
	}
	bigFive = []string{"extrovert", "agreeable", "conscientious", "neurotic", "open"}
	values  = []string{"care", "fairness", "loyalty", "authority", "purity", "freedom", "conform", "tradition",
		"benevolence", "universalism", "self_direction", "stimulation", "hedonism", "achievement", "power", "security"}
)

// pick returns up to k of keys whose |z| >= 0.5, largest |z| first (ties in
// key order), with their z.
func (n *Norms) pick(s Survey, keys []string, k int, sign int) []string {
	type kz struct {
		k string
		z float64
	}
	var xs []kz
	for _, key := range keys {
		z := n.Z(s, key)
		if (sign > 0 && z >= 0.5) || (sign < 0 && z <= -0.5) || (sign == 0 && math.Abs(z) >= 0.5) {
			xs = append(xs, kz{key, z})
		}
	}
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && math.Abs(xs[j].z) > math.Abs(xs[j-1].z); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
	var out []string
	for i := 0; i < len(xs) && i < k; i++ {
		out = append(out, xs[i].k)
	}
	return out
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// Persona renders s as plain-language persona text: demographics, then a
// sentence each on personality, values and decision style derived from
// the standardised scores (only traits at least 0.5 SD from the mean are
// named).
func (n *Norms) Persona(s Survey) string {
	var b strings.Builder
	noun := map[string]string{"male": "man", "female": "woman"}[strings.ToLower(s.Sex)]
	if noun == "" {
		noun = "person"
	}
	age := s.Scores["age"]
	if age >= 18 && age < 120 {
		fmt.Fprintf(&b, "A %d-year-old %s", int(age), noun)
	} else {
		fmt.Fprintf(&b, "An adult %s (age not usable)", noun)
	}
	edu := map[string]string{
		"less than four-year college": "without a four-year college degree",
		"four-year college":           "with a four-year college degree",
		"postgraduate":                "with a postgraduate degree",
	}[strings.ToLower(s.Edu)]
	if edu == "" {
		edu = "education: " + strings.ToLower(s.Edu)
	}
	emp := map[string]string{"employed for wages": "employed for wages", "other": "not employed for wages"}[strings.ToLower(s.Employment)]
	if emp == "" {
		emp = strings.ToLower(s.Employment)
	}
	inc := int(s.Scores["income"])
	band := "high"
	switch {
	case inc <= 3:
		band = "low"
	case inc <= 6:
		band = "lower-middle"
	case inc <= 9:
		band = "upper-middle"
	}
	rel := map[string]string{"other religion": "another religion or none given", "protestant": "Protestant",
		"catholic": "Catholic", "atheist": "atheist"}[strings.ToLower(s.Religion)]
	if rel == "" {
		rel = s.Religion
	}
	fmt.Fprintf(&b, ", %s, %s and %s; income bracket %d of 12 (%s); religion: %s; politically %s.",
		strings.ToLower(s.Marital), edu, emp, inc, band, rel, strings.ToLower(s.Ideology))

	var traits []string
	for _, k := range n.pick(s, bigFive, 2, 0) {
		p := bigFivePhrase[k]
		if n.Z(s, k) > 0 {
			traits = append(traits, p[0])
		} else {
			traits = append(traits, p[1])
		}
	}
	if len(traits) == 0 {
		b.WriteString(" Their personality is close to average on every Big Five trait.")
	} else {
		fmt.Fprintf(&b, " Compared with most people they are %s.", traits[0])
		if len(traits) > 1 {
			fmt.Fprintf(&b, " They are also %s.", traits[1])
		}
	}
	var hi, lo []string
	for _, k := range n.pick(s, values, 2, 1) {
		hi = append(hi, valuePhrase[k])
	}
	for _, k := range n.pick(s, values, 1, -1) {
		lo = append(lo, valuePhrase[k])
	}
	switch {
	case len(hi) > 0 && len(lo) > 0:
		fmt.Fprintf(&b, " They care more than most about %s, and less than most about %s.", joinAnd(hi), joinAnd(lo))
	case len(hi) > 0:
		fmt.Fprintf(&b, " They care more than most about %s.", joinAnd(hi))
	case len(lo) > 0:
		fmt.Fprintf(&b, " They care less than most about %s.", joinAnd(lo))
	default:
		b.WriteString(" Their values are close to the average.")
	}
	switch d := n.Z(s, "rational") - n.Z(s, "intuitive"); {
	case d >= 0.5:
		b.WriteString(" They decide mostly by careful reasoning.")
	case d <= -0.5:
		b.WriteString(" They decide mostly by gut feeling.")
	default:
		b.WriteString(" They mix reasoning and gut feeling when deciding.")
	}
	return b.String()
}

// motiveClause is a first-person clause per Schwartz value, used by
// Motivation for the persuadee's most pronounced value.
var motiveClause = map[string]string{
	"benevolence":    "looking after the people around me matters a lot to me",
	"universalism":   "I care about the welfare of people everywhere",
	"security":       "I like my finances safe and predictable",
	"power":          "I like to stay in control of my own resources",
	"achievement":    "I want my effort in this task to pay off",
	"self_direction": "I want to make up my own mind",
	"tradition":      "I like to give the way I always have, to causes I know",
	"hedonism":       "I'd like to enjoy what I earn",
	"stimulation":    "I like a conversation that tells me something new",
	"conform":        "I like to do what is expected and proper",
	"freedom":        "I value being free to choose",
}

var motiveValues = []string{"benevolence", "universalism", "security", "power", "achievement",
	"self_direction", "tradition", "hedonism", "stimulation", "conform", "freedom"}

// Motivation returns the persuadee's motivation in the first person: a
// stance-dependent base (open, undecided or reluctant) and a clause for
// their most pronounced Schwartz value, if any is 0.5 SD above the mean.
func (n *Norms) Motivation(s Survey, stance float64) string {
	var base string
	switch {
	case stance >= 0.25:
		base = "I'd be glad to help children with part of my pay if I can see it doing real good"
	case stance <= -0.25:
		base = "I took this task for the pay and would rather keep it unless I hear a genuinely good reason to give"
	default:
		base = "I'm open to helping, but I want the decision to feel sensible and my own"
	}
	if top := n.pick(s, motiveValues, 1, 1); len(top) > 0 {
		return base + "; " + motiveClause[top[0]] + "."
	}
	return base + "."
}
