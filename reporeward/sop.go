package reporeward

import (
	"regexp"
	"slices"
)

// Criteria say when a persuader utterance meets an SOP stage's entry or
// exit: any pattern matches (case-insensitive Go regexp) or any of the
// tagged persuasion acts (tagger.Act names) is present. Empty criteria
// never match.
type Criteria struct {
	Patterns []string `yaml:"patterns"`
	Acts     []string `yaml:"acts"`

	res []*regexp.Regexp
}

// Match reports whether text (tagged with acts) meets c.
func (c *Criteria) Match(text string, acts []string) bool {
	for _, re := range c.res {
		if re.MatchString(text) {
			return true
		}
	}
	for _, a := range c.Acts {
		if slices.Contains(acts, a) {
			return true
		}
	}
	return false
}

// Stage is one ordered stage of a standard operating procedure (SOP).
type Stage struct {
	Name  string   `yaml:"name"`
	Entry Criteria `yaml:"entry"`
	// Exit completes the stage; without exit criteria a stage is
	// complete once entered.
	Exit Criteria `yaml:"exit"`
}

// SOP is an ordered list of stages (REPO paper: the agent must follow a
// multi-stage SOP).
type SOP struct {
	Name   string  `yaml:"name"`
	Stages []Stage `yaml:"stages"`
}

// StageStep is what one utterance did to the SOP: the stage it is in
// after the utterance (0-based; -1 before any), the stages it entered and
// the earlier stages it skipped (entered a later stage while they were
// incomplete).
type StageStep struct {
	Stage   int
	Entered []int
	Skipped []int
}

// Tracker follows an SOP through an episode's persuader utterances, one
// Observe per turn. The zero value is not usable: NewTracker.
type Tracker struct {
	sop      *SOP
	cur      int
	entered  []bool
	complete []bool
	skipped  []bool
}

// NewTracker starts tracking sop before the first utterance.
func NewTracker(sop *SOP) *Tracker {
	n := len(sop.Stages)
	return &Tracker{sop: sop, cur: -1, entered: make([]bool, n), complete: make([]bool, n), skipped: make([]bool, n)}
}

// Observe records one utterance. Exits are checked first (the current
// stage's and any entered stage's), then entries in stage order: entering
// stage k while a stage before k is incomplete skips it. The current
// stage is the highest entered one.
//
// Choice: a skipped stage stays skipped even if the agent goes back to it
// later (the SOP was not followed in order), and re-entering an earlier
// stage never moves the current stage back.
func (t *Tracker) Observe(text string, acts []string) StageStep {
	st := StageStep{}
	for k := range t.sop.Stages {
		s := &t.sop.Stages[k]
		if t.entered[k] && !t.complete[k] && s.Exit.Match(text, acts) {
			t.complete[k] = true
		}
	}
	for k := range t.sop.Stages {
		s := &t.sop.Stages[k]
		if t.entered[k] || !s.Entry.Match(text, acts) {
			continue
		}
		for j := 0; j < k; j++ {
			if !t.complete[j] && !t.skipped[j] {
				t.skipped[j] = true
				st.Skipped = append(st.Skipped, j)
			}
		}
		t.entered[k] = true
		st.Entered = append(st.Entered, k)
		if len(s.Exit.res) == 0 && len(s.Exit.Acts) == 0 || s.Exit.Match(text, acts) {
			t.complete[k] = true
		}
		t.cur = max(t.cur, k)
	}
	st.Stage = t.cur
	return st
}

// Reached returns how many stages were entered.
func (t *Tracker) Reached() int {
	n := 0
	for _, e := range t.entered {
		if e {
			n++
		}
	}
	return n
}

// Skips returns how many stages were skipped.
func (t *Tracker) Skips() int {
	n := 0
	for _, s := range t.skipped {
		if s {
			n++
		}
	}
	return n
}

// compile compiles the criteria's patterns; errors name the pattern.
func (c *Criteria) compile() (int, error) {
	c.res = c.res[:0]
	for k, p := range c.Patterns {
		re, err := regexp.Compile("(?i)" + p)
		if err != nil {
			return k, err
		}
		c.res = append(c.res, re)
	}
	return 0, nil
}
