// Package arena composes the multi-domain PersuArena-style scenario set
// (Probe-RPO paper, Table 2): five domain families (healthcare, financial
// advising, workplace management, education, personal relationships),
// splits of 1,468 train / 200 val / 120 held-out scenarios, a hidden
// resistance type per scenario (EB, IT, AR, AA), and around one distinct
// domain string per scenario.
//
// The content comes from a domain bank written in the project's own words
// (domains.json, embedded; users may supply their own with LoadBank). The
// composer, Generate, draws from the bank with an explicitly seeded PCG
// generator, so one seed always yields byte-identical scenarios. See
// docs/arena.md for the recipe and how to extend the bank.
package arena

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/prose"
	"github.com/persuarena/persuarena/scenario"
)

//go:embed domains.json
var defaultBankJSON []byte

// DefaultBankName labels problems found in the embedded bank.
const DefaultBankName = "builtin:arena/domains.json"

// Bank is the domain bank: everything Generate draws from. It is decoded
// from JSON (see domains.json for the layout) and must pass Validate.
type Bank struct {
	// Version is the bank format version; only 1 exists.
	Version int `json:"version"`
	// Settings are place phrases such as "in a coastal town", appended to
	// domain strings and used for {setting} in background templates.
	Settings []string `json:"settings"`
	// Profiles are named pools of occupations and life details for
	// personas; domains and relationships pick one by name ("adult" when
	// unnamed).
	Profiles map[string]Profile `json:"profiles"`
	// Personalities holds personality sketches per resistance type, keyed
	// "EB", "IT", "AR", "AA"; each sketch is consistent with its type
	// (scenario.Resistance docs).
	Personalities map[scenario.Resistance][]string `json:"personalities"`
	// FirstNames and Surnames are the name pool (at least 2 each).
	FirstNames []string `json:"first_names"`
	Surnames   []string `json:"surnames"`
	// Domains are the base domains (at least one).
	Domains []Domain `json:"domains"`
}

// Profile is a pool of persona details for one kind of persuadee.
type Profile struct {
	// Occupations are noun phrases read after "is a/an", e.g. "bus driver".
	Occupations []string `json:"occupations"`
	// Lives are verb phrases read after "who", e.g. "sings in a choir".
	Lives []string `json:"lives"`
	// RetireAge, when positive, prefixes "retired " to the occupation of
	// personas this old or older.
	RetireAge int `json:"retire_age,omitempty"`
}

// Domain is one base domain of the bank.
type Domain struct {
	// Name is the base domain, e.g. "medication adherence"; unique.
	Name string `json:"name"`
	// Family is one of the five non-charity families.
	Family scenario.Family `json:"family"`
	// Situations are qualifiers read after Name ("after a heart attack");
	// the domain string is "Name situation, setting".
	Situations []string `json:"situations"`
	// Proposal, AcceptMeans and ConditionalMeans become the scenario's
	// public fields of the same names.
	Proposal         string `json:"proposal"`
	AcceptMeans      string `json:"accept_means"`
	ConditionalMeans string `json:"conditional_means"`
	// Background is a public template; see Placeholders.
	Background string `json:"background"`
	// Ages is the persuadee age range [min, max], years, 13-100.
	Ages []int `json:"ages"`
	// Profile names the persona pool; empty means "adult".
	Profile string `json:"profile,omitempty"`
	// Relationships are the ways the two parties can be related.
	Relationships []Relationship `json:"relationships"`
	// Concerns are 4-6 hidden concerns; a scenario samples 3-5 of them.
	// Each has 4-8 lower-case keywords, words a persuader would say when
	// addressing the concern; none may be shared with (or contained as a
	// phrase in) another concern's keywords, or appear in Name or Proposal.
	Concerns []scenario.Concern `json:"concerns"`
	// Motivations are candidate hidden motivations (at least one).
	Motivations []string `json:"motivations"`
	// Constraints are candidate hard limits; a scenario samples 1-2.
	Constraints []string `json:"constraints"`
}

// Relationship is one way the persuader and persuadee can be related.
type Relationship struct {
	// Relationship is free text such as "clinician-patient".
	Relationship string `json:"relationship"`
	// Closeness is from the closed vocabulary (scenario.Closenesses).
	Closeness scenario.Closeness `json:"closeness"`
	// PersuaderRoles and PersuadeeRoles are role nouns that read after a
	// possessive ("Amara's family doctor").
	PersuaderRoles []string `json:"persuader_roles"`
	PersuadeeRoles []string `json:"persuadee_roles"`
	// Ages, when set, overrides the domain's persuadee age range.
	Ages []int `json:"ages,omitempty"`
	// Profile, when set, overrides the domain's persona pool.
	Profile string `json:"profile,omitempty"`
	// Kin gives both parties the same surname (family members).
	Kin bool `json:"kin,omitempty"`
}

// Placeholders are the names a background template may use, each written
// in braces: {persuader} and {persuadee} are full names, {persuader_first}
// and {persuadee_first} first names, {persuader_role} and {persuadee_role}
// the drawn roles, {situation} the drawn situation and {setting} the drawn
// setting phrase.
var Placeholders = []string{"persuader", "persuader_first", "persuader_role", "persuadee", "persuadee_first", "persuadee_role", "situation", "setting"}

// DefaultProfile is the profile used when a domain names none.
const DefaultProfile = "adult"

// Size limits enforced by Validate.
const (
	MinConcerns = 4 // concerns per bank domain, at least
	MaxConcerns = 6 // concerns per bank domain, at most
	MinKeywords = 4 // keywords per concern, at least
	MaxKeywords = 8 // keywords per concern, at most
	MinAge      = 13
	MaxAge      = 100
)

// arenaFamilies are the families a bank domain may use: the Probe-RPO paper's five,
// without "charity" (PersuasionForGood has its own importer).
var arenaFamilies = []scenario.Family{scenario.Healthcare, scenario.Financial, scenario.Workplace, scenario.Education, scenario.Relationships}

// BankProblem is one validation problem in a bank.
type BankProblem struct {
	// Field is a JSON path such as "domains[3].concerns[1].keywords".
	Field string
	// Domain is the domain's name when the problem is inside a domain.
	Domain string
	// Msg says what is wrong.
	Msg string
}

// BankError lists every problem found in one bank. Its message has one
// line per problem: `FILE: FIELD (domain "NAME"): MSG`.
type BankError struct {
	// File labels the bank (a path, or DefaultBankName).
	File     string
	Problems []BankProblem
}

func (e *BankError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.File)
		b.WriteString(": ")
		b.WriteString(p.Field)
		if p.Domain != "" {
			fmt.Fprintf(&b, " (domain %q)", p.Domain)
		}
		b.WriteString(": ")
		b.WriteString(p.Msg)
	}
	return b.String()
}

// DefaultBank returns the embedded domain bank (arena/domains.json),
// decoded afresh on every call so callers may modify it. An error means
// the embedded file is broken (a build defect).
func DefaultBank() (Bank, error) {
	return ParseBank(DefaultBankName, defaultBankJSON)
}

// LoadBank reads and validates the JSON domain bank at path. It returns the
// *fs.PathError of an unreadable file, an error naming path, line and
// column for malformed JSON or an unknown field, and a *BankError for
// content problems.
func LoadBank(path string) (Bank, error) {
	data, err := filelimit.ReadFile(path, filelimit.Spec)
	if err != nil {
		return Bank{}, err
	}
	return ParseBank(path, data)
}

// ParseBank decodes data as a domain bank and validates it; name labels
// errors (see LoadBank). Unknown JSON fields are errors, so misspelt
// field names are caught.
func ParseBank(name string, data []byte) (Bank, error) {
	var b Bank
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return Bank{}, jsonError(name, data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := lineCol(data, dec.InputOffset())
		return Bank{}, fmt.Errorf("%s:%d:%d: unexpected data after the bank object", name, line, col)
	}
	if err := b.validate(name); err != nil {
		return Bank{}, err
	}
	return b, nil
}

// jsonError renders a decoding error with file, line and column.
func jsonError(name string, data []byte, dec *json.Decoder, err error) error {
	off := dec.InputOffset()
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
		line, col := lineCol(data, off)
		return fmt.Errorf("%s:%d:%d: field %s: want %s, got JSON %s", name, line, col, te.Field, te.Type, te.Value)
	}
	// Unknown-field errors carry no offset: point at the key's first use.
	if m := unknownFieldRe.FindStringSubmatch(err.Error()); m != nil {
		if loc := regexp.MustCompile(regexp.QuoteMeta(m[1]) + `\s*:`).FindIndex(data); loc != nil {
			off = int64(loc[0])
		}
	}
	line, col := lineCol(data, off)
	return fmt.Errorf("%s:%d:%d: %v", name, line, col, err)
}

var unknownFieldRe = regexp.MustCompile(`unknown field ("(?:[^"\\]|\\.)*")`)

// lineCol converts a byte offset into 1-based line and column numbers.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// Validate checks the bank's content (sizes, vocabularies, templates,
// keyword overlap) and returns a *BankError listing every problem, or nil.
// ParseBank and Generate call it; call it yourself after editing a Bank
// in code.
func (b *Bank) Validate() error { return b.validate("bank") }

var (
	concernIDRe   = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	placeholderRe = regexp.MustCompile(`\{([^{}]*)\}`)
)

func (b *Bank) validate(file string) error {
	v := &validator{}
	if b.Version != 1 {
		v.add("version", "", "got %d, want 1", b.Version)
	}
	v.texts("settings", "", b.Settings, 1)
	if len(b.Profiles) == 0 {
		v.add("profiles", "", "no profiles")
	}
	for _, name := range sortedKeys(b.Profiles) {
		p := b.Profiles[name]
		f := fmt.Sprintf("profiles[%q]", name)
		v.texts(f+".occupations", "", p.Occupations, 1)
		v.texts(f+".lives", "", p.Lives, 1)
		if p.RetireAge < 0 {
			v.add(f+".retire_age", "", "%d is negative", p.RetireAge)
		}
	}
	for _, r := range sortedKeys(b.Personalities) {
		if !slices.Contains(scenario.Resistances, r) {
			v.add(fmt.Sprintf("personalities[%q]", r), "", "unknown resistance type (want EB, IT, AR or AA)")
		}
	}
	for _, r := range scenario.Resistances {
		v.texts(fmt.Sprintf("personalities[%q]", r), "", b.Personalities[r], 1)
	}
	v.texts("first_names", "", b.FirstNames, 2)
	v.texts("surnames", "", b.Surnames, 2)
	if len(b.Domains) == 0 {
		v.add("domains", "", "no domains")
	}
	seen := map[string]int{}
	for i := range b.Domains {
		d := &b.Domains[i]
		f := fmt.Sprintf("domains[%d]", i)
		key := strings.ToLower(strings.TrimSpace(d.Name))
		if key == "" {
			v.add(f+".name", "", "empty")
		} else if j, dup := seen[key]; dup {
			v.add(f+".name", d.Name, "duplicate of domains[%d]", j)
		} else {
			seen[key] = i
		}
		b.validateDomain(v, f, d)
	}
	if len(v.problems) > 0 {
		return &BankError{File: file, Problems: v.problems}
	}
	return nil
}

func (b *Bank) validateDomain(v *validator, f string, d *Domain) {
	n := d.Name
	if !slices.Contains(arenaFamilies, d.Family) {
		v.add(f+".family", n, "unknown family %q (want one of %s)", d.Family, familyList())
	}
	v.texts(f+".situations", n, d.Situations, 1)
	v.text(f+".proposal", n, d.Proposal)
	v.text(f+".accept_means", n, d.AcceptMeans)
	v.text(f+".conditional_means", n, d.ConditionalMeans)
	if v.text(f+".background", n, d.Background) {
		for _, m := range placeholderRe.FindAllStringSubmatch(d.Background, -1) {
			if !slices.Contains(Placeholders, m[1]) {
				v.add(f+".background", n, "unknown placeholder {%s} (known: %s)", m[1], strings.Join(Placeholders, ", "))
			}
		}
	}
	v.ages(f+".ages", n, d.Ages, true)
	b.profileRef(v, f+".profile", n, d.Profile)
	if len(d.Relationships) == 0 {
		v.add(f+".relationships", n, "no relationships")
	}
	for i, r := range d.Relationships {
		rf := fmt.Sprintf("%s.relationships[%d]", f, i)
		v.text(rf+".relationship", n, r.Relationship)
		if !slices.Contains(scenario.Closenesses, r.Closeness) {
			v.add(rf+".closeness", n, "unknown closeness %q (want intimate, close, acquainted, professional or strangers)", r.Closeness)
		}
		v.texts(rf+".persuader_roles", n, r.PersuaderRoles, 1)
		v.texts(rf+".persuadee_roles", n, r.PersuadeeRoles, 1)
		if r.Ages != nil {
			v.ages(rf+".ages", n, r.Ages, false)
		}
		if r.Profile != "" {
			b.profileRef(v, rf+".profile", n, r.Profile)
		}
	}
	validateConcerns(v, f, n, d.Concerns)
	// A keyword found in the name or proposal would let a persuader touch
	// the concern by merely restating the ask.
	for i, c := range d.Concerns {
		for _, k := range c.Keywords {
			for _, ask := range [...]struct{ where, text string }{{"name", d.Name}, {"proposal", d.Proposal}} {
				if touches(ask.text, k) {
					v.add(fmt.Sprintf("%s.concerns[%d].keywords", f, i), n, "keyword %q of concern %q matches the domain's %s; restating the ask would touch the concern", k, c.ID, ask.where)
				}
			}
		}
	}
	v.texts(f+".motivations", n, d.Motivations, 1)
	v.texts(f+".constraints", n, d.Constraints, 1)
}

// validateConcerns checks counts, ids and keywords, including that no
// keyword of one concern matches inside a keyword of another concern of
// the same domain (a persuader touching one topic should not touch
// several).
func validateConcerns(v *validator, f, n string, cs []scenario.Concern) {
	if len(cs) < MinConcerns || len(cs) > MaxConcerns {
		v.add(f+".concerns", n, "%d concerns, want %d to %d", len(cs), MinConcerns, MaxConcerns)
	}
	ids := map[string]int{}
	for i, c := range cs {
		cf := fmt.Sprintf("%s.concerns[%d]", f, i)
		if !concernIDRe.MatchString(c.ID) {
			v.add(cf+".id", n, "%q is not a lower-case identifier (a-z, 0-9, _)", c.ID)
		} else if j, dup := ids[c.ID]; dup {
			v.add(cf+".id", n, "duplicate id %q (also concerns[%d])", c.ID, j)
		} else {
			ids[c.ID] = i
		}
		v.text(cf+".description", n, c.Description)
		if c.Voiced != "" {
			v.text(cf+".voiced", n, c.Voiced)
			if scenario.ThirdPerson(c.Voiced) {
				v.add(cf+".voiced", n, "%q speaks of the persuadee in the third person; write it as the persuadee says it", c.Voiced)
			}
		}
		if len(c.Keywords) < MinKeywords || len(c.Keywords) > MaxKeywords {
			v.add(cf+".keywords", n, "%d keywords, want %d to %d", len(c.Keywords), MinKeywords, MaxKeywords)
		}
		kw := map[string]bool{}
		for k, w := range c.Keywords {
			kf := fmt.Sprintf("%s.keywords[%d]", cf, k)
			switch {
			case strings.TrimSpace(w) == "":
				v.add(kf, n, "empty")
			case w != strings.ToLower(strings.TrimSpace(w)):
				v.add(kf, n, "%q must be lower case without surrounding spaces", w)
			case kw[w]:
				v.add(kf, n, "duplicate keyword %q", w)
			}
			kw[w] = true
		}
	}
	for i := range cs {
		for j := range cs {
			if i == j {
				continue
			}
			for _, a := range cs[i].Keywords {
				for _, b := range cs[j].Keywords {
					// Report a mutual match (same word, or inflections of
					// one word) once, from the earlier concern.
					if touches(b, a) && (i < j || !touches(a, b)) {
						v.add(fmt.Sprintf("%s.concerns[%d].keywords", f, i), n,
							"keyword %q of concern %q overlaps keyword %q of concern %q", a, cs[i].ID, b, cs[j].ID)
					}
				}
			}
		}
	}
}

// touches reports whether text mentions keyword kw under the shared
// mention rule (prose.Doc.Mentions: whole words, phrases within one
// sentence, small inflection tolerance).
func touches(text, kw string) bool { return prose.Parse(text).Mentions(kw) }

func (b *Bank) profileRef(v *validator, f, n, name string) {
	if name == "" {
		name = DefaultProfile
	}
	if _, ok := b.Profiles[name]; !ok {
		v.add(f, n, "unknown profile %q (known: %s)", name, strings.Join(sortedKeys(b.Profiles), ", "))
	}
}

func familyList() string {
	parts := make([]string, len(arenaFamilies))
	for i, f := range arenaFamilies {
		parts[i] = fmt.Sprintf("%q", f)
	}
	return strings.Join(parts, ", ")
}

type validator struct{ problems []BankProblem }

func (v *validator) add(field, domain, format string, args ...any) {
	v.problems = append(v.problems, BankProblem{Field: field, Domain: domain, Msg: fmt.Sprintf(format, args...)})
}

// text reports an empty s and returns whether s is non-empty.
func (v *validator) text(field, domain, s string) bool {
	if strings.TrimSpace(s) == "" {
		v.add(field, domain, "empty")
		return false
	}
	return true
}

// texts checks a list: at least min entries, none empty, no duplicates.
func (v *validator) texts(field, domain string, list []string, min int) {
	if len(list) < min {
		v.add(field, domain, "%d entries, want at least %d", len(list), min)
	}
	seen := map[string]bool{}
	for i, s := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		if strings.TrimSpace(s) == "" {
			v.add(f, domain, "empty")
		} else if seen[s] {
			v.add(f, domain, "duplicate %q", s)
		}
		seen[s] = true
	}
}

func (v *validator) ages(field, domain string, a []int, required bool) {
	if len(a) == 0 && !required {
		return
	}
	if len(a) != 2 || a[0] < MinAge || a[0] > a[1] || a[1] > MaxAge {
		v.add(field, domain, "%v is not a range [min, max] with %d <= min <= max <= %d", a, MinAge, MaxAge)
	}
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
