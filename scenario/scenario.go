// Package scenario defines the persuasion scenario: the public setting both
// parties see, and the hidden profile (phi) that only the persuadee knows.
//
// Scenarios are stored as JSON Lines, one Scenario per line, and validated on
// load against the JSON Schema embedded in this package (schema.json). The
// field set follows the Probe-RPO paper's Table 2 (domain, domain family,
// resistance type, motivation, relationship, closeness).
package scenario

import (
	"fmt"
	"slices"
)

// Split is the data split a scenario belongs to (1,468 train /
// 200 val / 120 held-out in the Probe-RPO paper's Table 2).
type Split string

// The three splits.
const (
	Train   Split = "train"
	Val     Split = "val"
	Heldout Split = "heldout"
)

// Splits lists the valid splits in canonical order.
var Splits = []Split{Train, Val, Heldout}

// ParseSplit reads a split as commands, stored run specs and the server
// take it: train, val or heldout, or "all" or "" for every split, which
// it returns as "" (Filter's and ResolveSplit's "every split"). The one
// check of split names. Errors: any other name, as "unknown split %q
// (want train, val, heldout or all)".
func ParseSplit(name string) (Split, error) {
	if name == "" || name == "all" {
		return "", nil
	}
	if sp := Split(name); slices.Contains(Splits, sp) {
		return sp, nil
	}
	return "", fmt.Errorf("unknown split %q (want train, val, heldout or all)", name)
}

// Family is a domain family (five families in the Probe-RPO paper plus
// "charity" for PersuasionForGood and "debate" for PersuasionTrace).
type Family string

// The domain families.
const (
	Healthcare    Family = "healthcare"
	Financial     Family = "financial advising"
	Workplace     Family = "workplace management"
	Education     Family = "education"
	Relationships Family = "personal relationships"
	Charity       Family = "charity"
	// Debate is a claim argued to a stranger: a debate proposition or a
	// personal decision the persuadee is to come to agree or disagree
	// with (PersuasionTrace, package persuasiontrace).
	Debate Family = "debate"
)

// Families lists the valid domain families in canonical order.
var Families = []Family{Healthcare, Financial, Workplace, Education, Relationships, Charity, Debate}

// Resistance is the hidden resistance type (Probe-RPO paper, Table 2).
type Resistance string

// The four resistance types.
const (
	// EntrenchedBelief (EB): holds a settled contrary belief; moves on
	// evidence that addresses its concerns, hardens under bare assertion.
	EntrenchedBelief Resistance = "EB"
	// IdentityThreat (IT): the proposal threatens who the persuadee is;
	// backfires under direct challenge unless it first feels understood.
	IdentityThreat Resistance = "IT"
	// AutonomyResistance (AR): reacts against pressure (reactance); calms
	// when the choice is left to it.
	AutonomyResistance Resistance = "AR"
	// AmbivalentAvoidance (AA): sees both sides and avoids deciding; stalls
	// without concrete plans and small first steps.
	AmbivalentAvoidance Resistance = "AA"
)

// Resistances lists the resistance types in canonical order.
var Resistances = []Resistance{EntrenchedBelief, IdentityThreat, AutonomyResistance, AmbivalentAvoidance}

// Closeness is the closed vocabulary for how close the two parties are
// (the Probe-RPO paper's Table 2 maps free text to a closed vocabulary).
type Closeness string

// The closeness levels, from most to least close.
const (
	Intimate     Closeness = "intimate"
	Close        Closeness = "close"
	Acquainted   Closeness = "acquainted"
	Professional Closeness = "professional"
	Strangers    Closeness = "strangers"
)

// Closenesses lists the closeness vocabulary in canonical order.
var Closenesses = []Closeness{Intimate, Close, Acquainted, Professional, Strangers}

// Concern is one hidden worry of the persuadee. The persuader must discover
// it (by asking, or by touching its topic) and address it.
type Concern struct {
	// ID is unique within the scenario, e.g. "cost".
	ID string `json:"id"`
	// Description is one short sentence about the worry, ideally in the
	// persuadee's voice; user scenarios often write it in the third person
	// ("feels she is being treated as incompetent").
	Description string `json:"description"`
	// Voiced is the optional first-person phrasing the persuadee says
	// aloud ("I feel I'm being treated as incompetent."); it must not
	// contain a third-person pronoun (he, she, his, her, ...). When empty,
	// the simulator voices FirstPerson(Description, name) (see Voice).
	Voiced string `json:"voiced,omitempty"`
	// Keywords are lower-case topic words; a persuader utterance mentioning
	// any of them touches the concern. At least one.
	Keywords []string `json:"keywords"`
}

// HiddenProfile is phi: everything only the persuadee knows. It must never
// reach a persuader (Probe-RPO paper, §2).
type HiddenProfile struct {
	// Persona is free text describing the persuadee.
	Persona string `json:"persona"`
	// Motivation is what the persuadee wants for itself here.
	Motivation string `json:"motivation"`
	// Resistance is the hidden resistance type.
	Resistance Resistance `json:"resistance"`
	// Concerns are 2-6 hidden concerns.
	Concerns []Concern `json:"concerns"`
	// Constraints are hard limits (money, time, rules); may be empty.
	Constraints []string `json:"constraints,omitempty"`
	// InitialStance is the persuadee's openness to the proposal before the
	// conversation, in [-1, 1] (-1 firmly against, +1 already in favour).
	InitialStance float64 `json:"initial_stance"`
	// Traits holds optional numeric trait scores the simulator may use,
	// keyed by name (e.g. Big Five "agreeable" on 1-5 from P4G surveys).
	Traits map[string]float64 `json:"traits,omitempty"`
}

// Party describes one side of the conversation.
type Party struct {
	Name string `json:"name,omitempty"`
	Role string `json:"role"`
}

// Outcome is the real-world outcome kept with imported scenarios (P4G).
type Outcome struct {
	// Donation is the actual donation made after the task, US$ 0-2 (P4G B6).
	Donation *float64 `json:"donation,omitempty"`
	// IntendedDonation is the donation mentioned in the dialogue (P4G B5,
	// 300 annotated dialogues only).
	IntendedDonation *float64 `json:"intended_donation,omitempty"`
	// Turns is the number of turns of the real dialogue (P4G B7).
	Turns int `json:"turns,omitempty"`
	// PersuaderUtterances is the real persuader's utterances, one per turn,
	// for open-loop replay (fidelity).
	PersuaderUtterances []string `json:"persuader_utterances,omitempty"`
	// PersuadeeActs is, per turn, the annotated persuadee acts (P4G
	// ee_label_*), 300 annotated dialogues only.
	PersuadeeActs [][]string `json:"persuadee_acts,omitempty"`
}

// Provenance records where a scenario came from.
type Provenance struct {
	// Source is the data set or generator, e.g. "PersuasionForGood" or
	// "persuarena-arena".
	Source string `json:"source"`
	// Ref is the upstream identifier (P4G dialogue id) or generator recipe.
	Ref string `json:"ref,omitempty"`
	// License is the upstream licence (e.g. "Apache-2.0").
	License string `json:"license,omitempty"`
}

// Scenario is one persuasion task. All fields except Hidden and Outcome are
// public: both parties see them.
type Scenario struct {
	ID     string `json:"id"`
	Split  Split  `json:"split"`
	Domain string `json:"domain"`
	Family Family `json:"family"`
	// Proposal is what the persuader asks the persuadee to do.
	Proposal string `json:"proposal"`
	// AcceptMeans describes full acceptance.
	AcceptMeans string `json:"accept_means"`
	// ConditionalMeans describes acceptance with conditions.
	ConditionalMeans string    `json:"conditional_means"`
	Persuader        Party     `json:"persuader"`
	Persuadee        Party     `json:"persuadee"`
	Relationship     string    `json:"relationship"`
	Closeness        Closeness `json:"closeness"`
	// Background is public context both sides see.
	Background string        `json:"background"`
	Hidden     HiddenProfile `json:"hidden"`
	Outcome    *Outcome      `json:"outcome,omitempty"`
	Provenance Provenance    `json:"provenance"`
}

// Public is the part of a Scenario a persuader may see: everything except
// the hidden profile and the real outcome.
type Public struct {
	ID               string    `json:"id"`
	Domain           string    `json:"domain"`
	Family           Family    `json:"family"`
	Proposal         string    `json:"proposal"`
	AcceptMeans      string    `json:"accept_means"`
	ConditionalMeans string    `json:"conditional_means"`
	Persuader        Party     `json:"persuader"`
	Persuadee        Party     `json:"persuadee"`
	Relationship     string    `json:"relationship"`
	Closeness        Closeness `json:"closeness"`
	Background       string    `json:"background"`
}

// Public returns the public view of s. It is the only scenario data the
// episode engine hands to a persuader.
func (s *Scenario) Public() Public {
	return Public{
		ID: s.ID, Domain: s.Domain, Family: s.Family, Proposal: s.Proposal,
		AcceptMeans: s.AcceptMeans, ConditionalMeans: s.ConditionalMeans,
		Persuader: s.Persuader, Persuadee: s.Persuadee,
		Relationship: s.Relationship, Closeness: s.Closeness, Background: s.Background,
	}
}

// Check reports the first semantic problem of s beyond what the JSON Schema
// enforces (duplicate concern ids, stance range). It returns a *FieldError.
func (s *Scenario) Check() error {
	seen := map[string]bool{}
	for i, c := range s.Hidden.Concerns {
		if seen[c.ID] {
			return &FieldError{Field: fmt.Sprintf("hidden.concerns[%d].id", i), Problem: fmt.Sprintf("duplicate concern id %q", c.ID)}
		}
		seen[c.ID] = true
		if c.Voiced != "" && ThirdPerson(c.Voiced) {
			return &FieldError{Field: fmt.Sprintf("hidden.concerns[%d].voiced", i),
				Problem: fmt.Sprintf("%q speaks of the persuadee in the third person (he/she/his/her); write it as the persuadee says it: \"I ...\"", c.Voiced)}
		}
	}
	if st := s.Hidden.InitialStance; st < -1 || st > 1 {
		return &FieldError{Field: "hidden.initial_stance", Problem: fmt.Sprintf("%g outside [-1, 1]", st)}
	}
	if !slices.Contains(Resistances, s.Hidden.Resistance) {
		return &FieldError{Field: "hidden.resistance", Problem: fmt.Sprintf("unknown resistance type %q (want EB, IT, AR or AA)", s.Hidden.Resistance)}
	}
	return nil
}

// FieldError is a validation problem in one field of one scenario.
type FieldError struct {
	// Field is a dotted JSON path such as "hidden.concerns[2].keywords".
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }
