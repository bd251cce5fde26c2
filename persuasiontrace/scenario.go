package persuasiontrace

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/persuarena/persuarena/scenario"
)

// Public text shared by every PersuasionTrace scenario.
const (
	persuaderRole    = "an AI chat assistant assigned to argue one side of the statement"
	persuadeeRole    = "a participant in a paid online research study"
	relationship     = "strangers: a study participant chatting with an AI"
	conditionalMeans = "The persuadee agrees only in part, or only under a condition."
	background       = "An online research study. The participant read the statement, said how strongly they believe it, " +
		"and then chatted with an AI assigned to one side of it; after each of their replies they said again how strongly they believe it."
	persona    = "A U.S. adult taking part in a paid online research study."
	source     = "PersuasionTrace (Moore, Goodman, Haber & Kleiman-Weiner 2026)"
	license    = "MIT"
	domainText = "debate proposition"
	domainOwn  = "a personal decision the participant proposed"
)

// Ambivalent is the band of initial belief in the persuader's side, around
// 0.5, within which a round's persuadee is ambivalent (Resistance).
const Ambivalent = 0.15

// Resistance returns the hidden resistance type of a round from what was
// known before the first persuader message: the initial belief b in the
// persuader's side and whether the proposition is the participant's own.
//
// Choice: |b - 0.5| <= Ambivalent is AA (sees both sides, near the
// midpoint); otherwise a proposition about the participant's own life is AR
// (a decision that is theirs to make: reactance, Brehm 1966); otherwise EB
// (a settled view on a debate claim). IT is never assigned: nothing known at
// the start says which claims touch a person's identity.
func Resistance(start float64, personal bool) scenario.Resistance {
	switch {
	case start >= 0.5-Ambivalent && start <= 0.5+Ambivalent:
		return scenario.AmbivalentAvoidance
	case personal:
		return scenario.AutonomyResistance
	}
	return scenario.EntrenchedBelief
}

// stopwords are left out of a proposition's topic keywords.
var stopwords = map[string]bool{
	"about": true, "above": true, "after": true, "again": true, "against": true, "also": true, "been": true,
	"being": true, "better": true, "both": true, "could": true, "does": true, "doing": true, "during": true,
	"each": true, "every": true, "from": true, "have": true, "having": true, "into": true, "just": true,
	"like": true, "make": true, "more": true, "most": true, "much": true, "must": true, "next": true,
	"only": true, "other": true, "over": true, "same": true, "should": true, "some": true, "such": true,
	"than": true, "that": true, "their": true, "them": true, "then": true, "there": true, "these": true,
	"they": true, "this": true, "those": true, "through": true, "under": true, "very": true, "want": true,
	"well": true, "were": true, "what": true, "when": true, "where": true, "which": true, "while": true,
	"will": true, "with": true, "within": true, "would": true, "your": true, "weeks": true, "week": true,
	"current": true, "people": true, "things": true, "thing": true, "really": true, "always": true, "never": true,
}

// MaxTopicKeywords bounds the topic concern's keywords.
const MaxTopicKeywords = 6

// TopicKeywords returns the proposition's content words: lower-case runs of
// letters (apostrophes dropped) of at least four letters that are not
// stopwords, in order of first appearance, at most MaxTopicKeywords.
func TopicKeywords(proposition string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(strings.ReplaceAll(proposition, "'", "")), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len([]rune(w)) < 4 || stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == MaxTopicKeywords {
			break
		}
	}
	return out
}

// Concerns returns the hidden concerns of a round: evidence, downsides and
// the person's own reasons on the topic.
//
// Choice: the same three concerns for every round, built from the
// proposition alone (nothing the person said or reported): a wish for
// evidence, a worry about costs and risks, and the person's own reasons,
// whose keywords are the proposition's content words (TopicKeywords), so
// that an on-topic message touches it and an off-topic control message
// does not. PersuasionTrace records no concerns; these are the most
// general reasons a person gives for holding a view (evidence, outcomes,
// one's own reasons).
func Concerns(proposition string) []scenario.Concern {
	topic := TopicKeywords(proposition)
	if len(topic) == 0 {
		topic = []string{"reason"}
	}
	return []scenario.Concern{
		{ID: "evidence", Description: "Wants real evidence before changing their mind on the statement.",
			Voiced:   "I would need to see real evidence before I change my mind.",
			Keywords: topic},
		{ID: "downsides", Description: "Worries about what taking that side would cost or risk.",
			Voiced:   "I worry about the costs and risks of that.",
			Keywords: topic},
		{ID: "own-reasons", Description: "Has their own reasons for their current view on the statement.",
			Voiced:   "I have my own reasons for what I think about this.",
			Keywords: topic},
	}
}

// Split returns the scenario split of a person: fold 0 (Fold) is held out,
// fold 1 validation, the rest train.
//
// Choice: the split follows the person-grouped folds, so that a fit on the
// train split never sees a validation or held-out person.
func Split(person string) scenario.Split {
	switch Fold(person) {
	case 0:
		return scenario.Heldout
	case 1:
		return scenario.Val
	}
	return scenario.Train
}

// Scenario renders the round as a scenario: the proposal is to come to
// agree (or, when the persuader argued against it, to disagree) with the
// proposition; the initial stance is 2 Start() - 1 in [-1, 1]; the hidden
// resistance type is Resistance's and the concerns Concerns'; the outcome
// carries the real persuader messages for open-loop replay (package
// fidelity). Nothing reported after the start enters the profile.
func (r *Round) Scenario() scenario.Scenario {
	verb, accept := "agree", "agree"
	if !r.Supports {
		verb, accept = "disagree", "disagree"
	}
	domain := domainText
	motivation := "Wants to hold a well-founded view on the statement."
	if r.Personal {
		domain = domainOwn
		motivation = "Wants to make the right call on a decision about their own life."
	}
	pm := r.PersuaderMessages()
	return scenario.Scenario{
		ID: r.ID, Split: Split(r.Person), Domain: domain, Family: scenario.Debate,
		Proposal:         fmt.Sprintf("Come to %s with the statement \"%s\".", verb, r.Proposition),
		AcceptMeans:      fmt.Sprintf("The persuadee says they now %s with the statement \"%s\".", accept, r.Proposition),
		ConditionalMeans: conditionalMeans,
		Persuader:        scenario.Party{Role: persuaderRole}, Persuadee: scenario.Party{Role: persuadeeRole},
		Relationship: relationship, Closeness: scenario.Strangers, Background: background,
		Hidden: scenario.HiddenProfile{
			Persona:       persona,
			Motivation:    motivation,
			Resistance:    Resistance(r.Start(), r.Personal),
			Concerns:      Concerns(r.Proposition),
			InitialStance: 2*r.Start() - 1,
		},
		Outcome: &scenario.Outcome{Turns: len(pm), PersuaderUtterances: pm},
		Provenance: scenario.Provenance{Source: source, License: license,
			Ref: fmt.Sprintf("file=%s round=%d person=%s", r.File, r.Index, r.Person)},
	}
}

// Scenarios renders every round (Round.Scenario), in order.
func Scenarios(rs []Round) []scenario.Scenario {
	out := make([]scenario.Scenario, len(rs))
	for i := range rs {
		out[i] = rs[i].Scenario()
	}
	return out
}
