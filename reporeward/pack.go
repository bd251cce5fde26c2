package reporeward

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
)

// PackPrefix marks a scenario pack where a scenario set is named
// (persuarena eval --scenarios repo:negotiation): the package registers
// it with the run plan (runplan.RegisterSource), which then resolves such
// names through LoadPack.
const PackPrefix = "repo:"

func init() {
	runplan.RegisterSource(PackPrefix, func(name string) ([]scenario.Scenario, error) {
		p, err := LoadPack(name)
		if err != nil {
			return nil, err
		}
		return p.Scenarios, nil
	})
}

// BuiltinPacks lists the built-in scenario packs.
var BuiltinPacks = []string{"negotiation"}

// Pack is a scenario pack: plain scenarios (package scenario, validated by
// its schema) with the facts the rule functions check and the SOP the
// agent must follow (REPO paper).
type Pack struct {
	Name      string
	SOP       SOP
	Scenarios []scenario.Scenario
	// Facts holds each scenario's facts by scenario id.
	Facts map[string]Facts
}

// packFile is a pack's YAML form: an SOP, a bank of partner concerns and
// compact scenario entries from which the scenarios are written.
type packFile struct {
	Name     string         `yaml:"name"`
	SOP      SOP            `yaml:"sop"`
	Concerns []packConcern  `yaml:"concerns"`
	Entries  []packScenario `yaml:"scenarios"`
}

type packConcern struct {
	ID          string   `yaml:"id"`
	Description string   `yaml:"description"`
	Keywords    []string `yaml:"keywords"`
}

type packScenario struct {
	ID         string  `yaml:"id"`
	Split      string  `yaml:"split"`
	Hotel      string  `yaml:"hotel"`
	City       string  `yaml:"city"`
	Agent      string  `yaml:"agent"`
	Partner    string  `yaml:"partner"`
	PartnerOrg string  `yaml:"partner_org"`
	PartnerJob string  `yaml:"partner_role"`
	Resistance string  `yaml:"resistance"`
	Stance     float64 `yaml:"stance"`
	Persona    string  `yaml:"persona"`
	Motivation string  `yaml:"motivation"`
	// Target is the commission the agent proposes, in percent.
	Target   float64  `yaml:"target"`
	Concerns []string `yaml:"concerns"`
	Facts    Facts    `yaml:"facts"`
}

// LoadPack reads a scenario pack: a built-in name (BuiltinPacks) or a
// pack YAML file. Errors are *SpecError naming file, line and field
// (unknown fields, facts out of range, unknown concerns, bad SOP
// patterns), or a *scenario.LoadError for a scenario the schema rejects.
func LoadPack(ref string) (*Pack, error) {
	for _, b := range BuiltinPacks {
		if ref == b {
			data, err := builtin.ReadFile("pack/" + ref + ".yaml")
			if err != nil {
				return nil, err
			}
			return ParsePack("builtin:"+PackPrefix+ref, data)
		}
	}
	data, err := filelimit.ReadFile(ref, filelimit.Spec)
	if err != nil {
		return nil, fmt.Errorf("scenario pack: %w", err)
	}
	return ParsePack(ref, data)
}

// ParsePack is LoadPack on data already read; file names it in errors.
func ParsePack(file string, data []byte) (*Pack, error) {
	var pf packFile
	lines, err := llm.DecodeYAML(file, data, &pf)
	if err != nil {
		return nil, err
	}
	at := func(field, format string, a ...any) error { return llm.FieldError(file, lines, field, format, a...) }
	if pf.Name == "" {
		return nil, at("name", "missing")
	}
	if len(pf.SOP.Stages) == 0 {
		return nil, at("sop.stages", "missing: a pack declares its SOP's ordered stages")
	}
	for i := range pf.SOP.Stages {
		s := &pf.SOP.Stages[i]
		f := fmt.Sprintf("sop.stages[%d]", i)
		if s.Name == "" {
			return nil, at(f+".name", "missing")
		}
		if len(s.Entry.Patterns) == 0 && len(s.Entry.Acts) == 0 {
			return nil, at(f+".entry", "missing: entry criteria need patterns or acts")
		}
		for _, c := range []struct {
			f string
			c *Criteria
		}{{f + ".entry", &s.Entry}, {f + ".exit", &s.Exit}} {
			if k, err := c.c.compile(); err != nil {
				return nil, at(fmt.Sprintf("%s.patterns[%d]", c.f, k), "%v", err)
			}
			for k, a := range c.c.Acts {
				if !isAct(a) {
					return nil, at(fmt.Sprintf("%s.acts[%d]", c.f, k), "%q: want diagnostic, evidence, plan, commitment or autonomy", a)
				}
			}
		}
	}
	bank := map[string]packConcern{}
	for i, c := range pf.Concerns {
		if c.ID == "" || c.Description == "" || len(c.Keywords) == 0 {
			return nil, at(fmt.Sprintf("concerns[%d]", i), "a concern needs id, description and keywords")
		}
		bank[c.ID] = c
	}
	p := &Pack{Name: pf.Name, SOP: pf.SOP, Facts: map[string]Facts{}}
	for i, e := range pf.Entries {
		f := fmt.Sprintf("scenarios[%d]", i)
		c := e.Facts.Commission
		switch {
		case e.ID == "":
			return nil, at(f+".id", "missing")
		case !(c.Min > 0 && c.Min <= c.Max && c.Max <= 100):
			return nil, at(f+".facts.commission", "min %v, max %v: want 0 < min <= max <= 100", c.Min, c.Max)
		case e.Target < c.Min || e.Target > c.Max:
			return nil, at(f+".target", "%v%% outside the allowed %v–%v%%", e.Target, c.Min, c.Max)
		case len(e.Facts.Rates) == 0:
			return nil, at(f+".facts.rates", "missing: the hotel's real room rates")
		case e.Facts.Currency == "":
			return nil, at(f+".facts.currency", "missing")
		}
		sc := e.scenario(p.Name)
		for k, id := range e.Concerns {
			bc, ok := bank[id]
			if !ok {
				return nil, at(fmt.Sprintf("%s.concerns[%d]", f, k), "unknown concern %q (not in concerns)", id)
			}
			sc.Hidden.Concerns = append(sc.Hidden.Concerns, scenario.Concern{ID: bc.ID, Description: bc.Description, Keywords: bc.Keywords})
		}
		p.Scenarios = append(p.Scenarios, sc)
		p.Facts[e.ID] = e.Facts
	}
	if len(p.Scenarios) == 0 {
		return nil, at("scenarios", "missing")
	}
	if err := scenario.Validate(file, p.Scenarios); err != nil {
		var le *scenario.LoadError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("scenario pack %s (line = scenario index): %w", file, err)
		}
		return nil, err
	}
	return p, nil
}

func isAct(a string) bool {
	switch a {
	case "diagnostic", "evidence", "plan", "commitment", "autonomy":
		return true
	}
	return false
}

func pct(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) + "%" }

func money(cur string, v float64) string {
	return cur + " " + strconv.FormatFloat(v, 'f', -1, 64)
}

// scenario writes e's scenario (concerns are added by ParsePack).
//
// Choice: the facts (current commission, allowed range, real rates) are
// in the public background, since the agent must know them to state them
// correctly and a persuader sees only the public scenario; the partner
// seeing the range is the price of that.
func (e packScenario) scenario(pack string) scenario.Scenario {
	f := e.Facts
	var rates []string
	for _, k := range slices.Sorted(maps.Keys(f.Rates)) {
		rates = append(rates, k+" "+money(f.Currency, f.Rates[k]))
	}
	bg := fmt.Sprintf("%s is the business development manager of %s in %s and is renegotiating the distribution contract with %s of %s, which currently takes %s commission on every booking. "+
		"Hotel policy lets %s offer a commission between %s and %s. The hotel's published nightly rates are: %s.",
		e.Agent, e.Hotel, e.City, e.Partner, e.PartnerOrg, pct(f.Commission.Current),
		firstName(e.Agent), pct(f.Commission.Min), pct(f.Commission.Max), strings.Join(rates, ", "))
	if len(f.Figures) > 0 {
		bg += fmt.Sprintf(" Bookings through %s last year were worth %s.", e.PartnerOrg, money(f.Currency, f.Figures[0]))
	}
	if len(f.Percents) > 0 {
		bg += fmt.Sprintf(" %s brings %s of the hotel's online bookings.", e.PartnerOrg, pct(f.Percents[0]))
	}
	return scenario.Scenario{
		ID: e.ID, Split: scenario.Split(e.Split),
		Domain:           "hotel distribution commission negotiation in " + e.City,
		Family:           scenario.Workplace,
		Proposal:         fmt.Sprintf("Agree to a commission of %s (down from %s) on bookings of %s through %s for the next contract year.", pct(e.Target), pct(f.Commission.Current), e.Hotel, e.PartnerOrg),
		AcceptMeans:      fmt.Sprintf("Agrees to the new commission of %s for the coming contract year.", pct(e.Target)),
		ConditionalMeans: "Agrees to a lower commission only with conditions, such as a trial period, a review clause or extra promotion of the hotel.",
		Persuader:        scenario.Party{Name: e.Agent, Role: "business development manager at " + e.Hotel},
		Persuadee:        scenario.Party{Name: e.Partner, Role: e.PartnerJob + " at " + e.PartnerOrg},
		Relationship:     "hotel business development manager and distribution partner",
		Closeness:        scenario.Professional,
		Background:       bg,
		Hidden: scenario.HiddenProfile{
			Persona: e.Persona, Motivation: e.Motivation, Resistance: scenario.Resistance(e.Resistance),
			InitialStance: e.Stance,
		},
		Provenance: scenario.Provenance{Source: "persuarena-repo", Ref: "pack " + pack, License: "Apache-2.0"},
	}
}

func firstName(n string) string {
	if i := strings.IndexByte(n, ' '); i > 0 {
		return n[:i]
	}
	return n
}
