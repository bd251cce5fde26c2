// Package tagger is the rule-based move tagger: it reads a persuader
// utterance and finds the five persuasion acts of the Probe-RPO paper's
// Figure 5 (diagnostic question, evidence, plan detail, commitment ask,
// autonomy), pressure markers and the PersuasionForGood strategies. Its
// words, sentences, questions and negation are package prose's reading
// of the text, which the persuadee's perception shares.
package tagger

import (
	"strings"

	"github.com/persuarena/persuarena/prose"
)

// Act is one of the five persuasion acts (Probe-RPO paper, Figure 5).
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

// Names returns the act names in s in Figure 5 order, equal to
// s.Strings(), without allocating: for a set of the five acts the slice
// comes from a table built once and is shared, so it must never be
// written (its capacity is its length, so an append by a caller copies).
// A set with bits beyond the five acts gets a fresh s.Strings().
func (s ActSet) Names() []string {
	if int(s) < len(actSetNames) {
		return actSetNames[s]
	}
	return s.Strings()
}

// actSetNames[s] is s.Strings() for every set of the five acts.
var actSetNames = func() (t [1 << NumActs][]string) {
	for s := range t {
		n := ActSet(s).Strings()
		t[s] = n[:len(n):len(n)]
	}
	return t
}()

// Tags is what the tagger reads from one persuader utterance.
type Tags struct {
	// Acts are the persuasion acts found.
	Acts ActSet
	// Strategies are the PersuasionForGood persuader strategies found
	// (Wang et al. 2019, Persuasion for Good; see Strategy). They are a
	// second reading of the same text and never change Acts or Pressure.
	// (Declared before Pressure so that Tags stays 16 bytes.)
	Strategies StrategySet
	// Pressure counts pressure markers (urgency, guilt, ultimatums,
	// "you have to"), 0 or more.
	Pressure int
}

// Tag reads the acts and pressure markers of a persuader utterance (Probe-RPO
// paper, Figure 5). It is a pure function of text, safe for concurrent use,
// and allocates nothing in steady state (scratch space is pooled).
//
// The rules, in brief (docs/tagger.md has the full list and its limits):
// package prose splits the text into words, sentences (. ! ? ; line
// break) and clauses (, : dashes brackets quotes) and reads which
// sentences ask and which words a negator scopes over (prose.Doc.Negated:
// "not", "don't", "won't", "never", ... anywhere before it in its
// clause); phrase tables raise cues; a negated evidence or plan
// cue does not count ("there is no evidence", "I won't set anything up").
// A question clause headed by a request for leave to speak ("can I share",
// "may I suggest") asks for nothing. Commitment, autonomy and elicitation phrases count unless negated.
// "pressure you"/"rush you" count as autonomy when negated ("I won't
// pressure you") and as pressure otherwise. A question clause (its
// sentence ends in '?') is classified by its head word after discourse
// markers: a wh-head (what, how, why, ...) is a diagnostic question when
// the clause addresses the persuadee or names a concern, except that
// "when", "how much", "how about" and "why not" heads followed by a
// decision term ("start", "sign", "willing", ...) ask for commitment; a
// yes/no head (will, would, can, are, do, ...) with a decision term is a
// commitment ask, and with a concern word ("worries", "concerns", "feel")
// a diagnostic question. Pressure counts non-overlapping marker phrases.
// Strategies come from a second phrase table (strategyRules) matched in the
// same pass: a phrase raises its strategy anywhere, only in a question
// sentence (the inquiries), only in a question clause with a decision term
// or modal verb (the amount request), or only in a clause without a
// second-person word (self-modelling's "I will donate").
func Tag(text string) Tags {
	sc := getScratch()
	sc.own.Reset(text)
	t := sc.tag(&sc.own)
	putScratch(sc)
	return t
}

// TagDoc is Tag of the text d was read from (d.Text), for a reader that
// has already read it with package prose: TagDoc(prose.Parse(s)) ==
// Tag(s). It does not change d.
func TagDoc(d *prose.Doc) Tags {
	sc := getScratch()
	t := sc.tag(d)
	putScratch(sc)
	return t
}

func (sc *scratch) tag(d *prose.Doc) Tags {
	sc.fromDoc(d)
	sc.match()
	t := sc.resolve()
	t.Strategies = sc.strategies(t.Acts)
	return t
}

// Per-clause cue bits collected before question classification.
const (
	cbDecision uint16 = 1 << iota
	cbFocus
	cbWhFocus
	cbWhDecide
	cbQCommit
	cbQCommitHead
	cbElicit
	cbAmount
	cbSmallTalk
	cbPermission
	cbPressure
)

// resolve turns the matched cues into Tags.
func (sc *scratch) resolve() Tags {
	var acts ActSet
	pressure := 0
	lastPressEnd := int32(-1)
	if cap(sc.cflags) < len(sc.clauses) {
		sc.cflags = make([]uint16, len(sc.clauses))
	}
	cf := sc.cflags[:len(sc.clauses)]
	clear(cf)
	sc.cflags = cf // strategies reads them too
	for _, c := range sc.cues {
		switch c.kind {
		case kEvidence:
			if !sc.negated(c.start) { // "there is no evidence that ..."
				acts = acts.With(Evidence)
			}
		case kPlan:
			if !sc.negated(c.start) { // "I won't be setting anything up"
				acts = acts.With(Plan)
			}
		case kCommit:
			if !sc.negated(c.start) {
				acts = acts.With(Commitment)
			}
		case kAutonomy:
			if !sc.negated(c.start) {
				acts = acts.With(Autonomy)
			}
		case kPolarAsk:
			if sc.negated(c.start) {
				acts = acts.With(Autonomy)
			} else {
				acts = acts.With(Commitment)
			}
		case kBlock:
			if c.start >= lastPressEnd {
				lastPressEnd = c.end
			}
		case kPolar, kPressure:
			if sc.negated(c.start) {
				if c.kind == kPolar {
					acts = acts.With(Autonomy)
				}
				continue
			}
			if c.start < lastPressEnd {
				continue // overlaps a marker already counted ("don't be selfish")
			}
			pressure++
			lastPressEnd = c.end
			cf[c.clause] |= cbPressure
		case kElicit:
			if !sc.negated(c.start) {
				acts = acts.With(Diagnostic)
				cf[c.clause] |= cbElicit
			}
		case kQCommit:
			cf[c.clause] |= cbQCommit
			if c.start == sc.head(sc.clauses[c.clause]) {
				cf[c.clause] |= cbQCommitHead
			}
		case kAmountHead:
			if c.start == sc.head(sc.clauses[c.clause]) {
				cf[c.clause] |= cbAmount
			}
		case kSmallTalk:
			cf[c.clause] |= cbSmallTalk
		case kPermission:
			if c.start == sc.head(sc.clauses[c.clause]) {
				cf[c.clause] |= cbPermission
			}
		case kDecision:
			cf[c.clause] |= cbDecision
		case kFocus:
			cf[c.clause] |= cbFocus
		case kWhFocus:
			cf[c.clause] |= cbWhFocus
		case kWhDecide:
			if c.start == sc.head(sc.clauses[c.clause]) {
				cf[c.clause] |= cbWhDecide
			}
		}
	}
	for _, s := range sc.sents {
		if !s.question {
			continue
		}
		for ci := s.firstClause; ci < s.endClause; ci++ {
			f := cf[ci]
			if f&(cbElicit|cbPermission) != 0 {
				continue // "can I share one fact?" asks leave to speak, not for a decision
			}
			cl := sc.clauses[ci]
			h := sc.head(cl)
			if h < 0 {
				continue
			}
			hf := sc.toks[h].flags
			switch {
			case hf&fWH != 0:
				switch {
				case f&cbQCommitHead != 0:
					acts = acts.With(Commitment) // "what do you say?"
				case f&cbWhDecide != 0 && f&cbDecision != 0:
					acts = acts.With(Commitment) // "when can we start?"
				case f&cbAmount != 0 && (f&cbDecision != 0 || sc.hasFlag(cl, fModal)):
					acts = acts.With(Commitment) // "how much would you like to give?"
				case f&(cbSmallTalk|cbPressure) != 0:
					// "how are you?", "what are you waiting for?"
				case f&(cbFocus|cbWhFocus) != 0 || sc.hasFlag(cl, fYou):
					acts = acts.With(Diagnostic)
				}
			case f&cbQCommit != 0:
				acts = acts.With(Commitment)
			case hf&fAuxAsk != 0 && f&cbDecision != 0:
				acts = acts.With(Commitment)
			case hf&fNegAux != 0 || f&(cbSmallTalk|cbPressure) != 0:
				// "don't you think...?": rhetorical, not an open question.
			case f&cbFocus != 0:
				// A yes/no or headless question about worries or
				// feelings ("do you have any concerns?").
				acts = acts.With(Diagnostic)
			case hf&fAux == 0 && f&cbDecision != 0 && cl.end-cl.first <= 3:
				// A bare "ready?" / "ready to start?".
				acts = acts.With(Commitment)
			}
		}
	}
	return Tags{Acts: acts, Pressure: pressure}
}

// hasFlag reports whether any token of c carries flag f.
func (sc *scratch) hasFlag(c clause, f uint16) bool {
	for t := c.first; t < c.end; t++ {
		if sc.toks[t].flags&f != 0 {
			return true
		}
	}
	return false
}
