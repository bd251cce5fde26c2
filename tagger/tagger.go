// Package tagger is the rule-based move tagger: it reads a persuader
// utterance and finds the five persuasion acts of seed 000 Figure 5
// (diagnostic question, evidence, plan detail, commitment ask, autonomy),
// pressure markers, and mentions of a scenario's concerns.
package tagger

import (
	"strings"

	"github.com/persuarena/persuarena/scenario"
)

// Act is one of the five persuasion acts (SPEC §2, seed 000 Figure 5).
type Act uint8

// The five acts, as bit positions of an ActSet.
const (
	// Diagnostic is an open question eliciting concerns or constraints.
	Diagnostic Act = iota
	// Evidence is concrete figures, results or documented precedent.
	Evidence
	// Plan is plan detail: who does what, by when, under what conditions.
	Plan
	// Commitment is a commitment ask: a request for a decision or next step.
	Commitment
	// Autonomy leaves the choice to the persuadee or disclaims pressure.
	Autonomy
	// NumActs is the number of acts.
	NumActs = 5
)

var actNames = [NumActs]string{"diagnostic", "evidence", "plan", "commitment", "autonomy"}

// String returns the act's stable name, used in runs and reports.
func (a Act) String() string {
	if int(a) < NumActs {
		return actNames[a]
	}
	return "unknown"
}

// Acts lists the five acts in Figure 5 order.
var Acts = []Act{Diagnostic, Evidence, Plan, Commitment, Autonomy}

// ParseAct returns the Act named s (as printed by String); ok is false for
// an unknown name.
func ParseAct(s string) (Act, bool) {
	for i, n := range actNames {
		if strings.EqualFold(n, s) {
			return Act(i), true
		}
	}
	return 0, false
}

// ActSet is a set of acts (bit i = Act i); an utterance can hold several.
type ActSet uint8

// Has reports whether a is in s.
func (s ActSet) Has(a Act) bool { return s&(1<<a) != 0 }

// With returns s plus a.
func (s ActSet) With(a Act) ActSet { return s | 1<<a }

// Len returns the number of acts in s.
func (s ActSet) Len() int {
	n := 0
	for a := Act(0); a < NumActs; a++ {
		if s.Has(a) {
			n++
		}
	}
	return n
}

// Strings returns the act names in s in Figure 5 order (never nil).
func (s ActSet) Strings() []string {
	out := make([]string, 0, s.Len())
	for a := Act(0); a < NumActs; a++ {
		if s.Has(a) {
			out = append(out, a.String())
		}
	}
	return out
}

// Tags is what the tagger reads from one persuader utterance.
type Tags struct {
	// Acts are the persuasion acts found.
	Acts ActSet
	// Pressure counts pressure markers (urgency, guilt, ultimatums,
	// "you have to"), 0 or more.
	Pressure int
}

// Tag reads the acts and pressure markers of a persuader utterance.
func Tag(text string) Tags {
	_ = text
	return Tags{} // TODO(tagger): implemented in tagger rules
}

// Mentions returns, for each concern in order, whether text touches it (any
// of its keywords appears as a word or phrase, case-insensitive). The
// result has len(concerns) entries.
func Mentions(text string, concerns []scenario.Concern) []bool {
	out := make([]bool, len(concerns))
	_ = text
	return out // TODO(tagger)
}
