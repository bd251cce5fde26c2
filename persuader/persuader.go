// Package persuader holds the built-in rule-based persuaders: baselines
// that need no language model and write natural-language turns from
// template banks filled with the scenario's public fields only.
//
//   - pushy: asks for commitment every turn, often with pressure; a
//     deliberately bad baseline (it shows what pressure costs).
//   - informer: states evidence every turn and nothing else.
//   - script: diagnose, address voiced concerns with evidence, give a
//     concrete plan, then leave the choice open and ask.
//   - random: each turn a random non-empty subset of the five acts.
//
// Every utterance is checked with tagger.Tag before it is returned: the
// acts the tagger finds are exactly the acts the persuader intended (and
// pressure markers appear only where pushy intends them), so a persuadee
// that reads turns through the tagger sees what the persuader meant. A
// session is a pure function of its seed and the visible transcript: the
// same seed and transcript give the same utterance. docs/persuaders.md
// describes each baseline.
package persuader

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// constructors maps each built-in name to its constructor.
var constructors = map[string]func() episode.Persuader{
	"pushy":    func() episode.Persuader { return pushy{} },
	"informer": func() episode.Persuader { return informer{} },
	"script":   func() episode.Persuader { return script{} },
	"random":   func() episode.Persuader { return random{} },
}

// Names returns the built-in persuader names, sorted.
func Names() []string {
	out := make([]string, 0, len(constructors))
	for n := range constructors {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// New returns the built-in persuader called name (see Names). An unknown
// name yields an error listing the known names.
func New(name string) (episode.Persuader, error) {
	c, ok := constructors[name]
	if !ok {
		return nil, fmt.Errorf("unknown persuader %q (built-in persuaders: %s)", name, strings.Join(Names(), ", "))
	}
	return c(), nil
}

// fill holds the public scenario strings templates use. Each is cleaned so
// that it cannot add sentence or clause breaks of its own.
type fill struct {
	name     string // how the persuadee is addressed (scenario.AddressName), or ""
	proposal string // the proposal as a verb phrase after "to" ("donate part of your payment")
	// proposal3 is proposal in the third person ("donate part of their payment").
	proposal3 string
	// stop holds lower-case words the script never echoes back as voiced
	// concerns: the proposal's and the names' words.
	// nil in sessions that never echo (newBase with echo false).
	stop map[string]bool
}

// safeProposal is the verb phrase used when the proposal's own words
// would change what an utterance is tagged as.
const safeProposal = "take this step"

func newFill(pub scenario.Public) fill {
	f := newSlotFill(pub)
	f.stop = stopWords(pub)
	return f
}

// newSlotFill is newFill without the stop words, for the persuaders that
// never echo the persuadee (only script and Realise read fill.stop).
func newSlotFill(pub scenario.Public) fill {
	f := fill{proposal: verbPhrase(pub.Proposal)}
	f.name = scenario.AddressName(cleanSlot(pub.Persuadee.Name))
	if f.proposal == "" {
		f.proposal = safeProposal
	}
	f.proposal3 = cleanSlot(scenario.ProposalPhrase(pub.Proposal, scenario.PersonThird))
	if f.proposal3 == "" {
		f.proposal3 = safeProposal
	}
	return f
}

// slotKey is what newSlotFill reads of a public scenario.
type slotKey struct{ proposal, persuadee string }

// slotFills caches newSlotFill by its inputs (slotKey -> fill, all
// strings, shared read-only), so starting an episode on a scenario seen
// before costs one map lookup; it is emptied past maxSlotFills entries.
var (
	slotFills  sync.Map
	nSlotFills atomic.Int64
)

const maxSlotFills = 8192

// slotFillOf returns newSlotFill(pub), cached.
func slotFillOf(pub scenario.Public) fill {
	k := slotKey{pub.Proposal, pub.Persuadee.Name}
	if v, ok := slotFills.Load(k); ok {
		return v.(fill)
	}
	f := newSlotFill(pub)
	if nSlotFills.Add(1) > maxSlotFills {
		slotFills.Clear()
		nSlotFills.Store(1)
	}
	slotFills.Store(k, f)
	return f
}

// stopWords returns fill.stop for pub: the lower-case words of the
// proposal and both names.
func stopWords(pub scenario.Public) map[string]bool {
	stop := map[string]bool{}
	for _, s := range []string{pub.Proposal, pub.Persuadee.Name, pub.Persuader.Name} {
		for _, w := range words(s) {
			stop[w] = true
			stop[strings.TrimSuffix(w, "'s")] = true // extract reads "team's" as "team"
		}
	}
	return stop
}

// verbPhrase is the proposal in the persuader's words
// (scenario.ProposalPhrase, PersonSecond) with cleanSlot applied, so that
// it reads after "to" and never changes how the template around it is
// tagged; "" when nothing is left.
func verbPhrase(p string) string {
	return cleanSlot(scenario.ProposalPhrase(p, scenario.PersonSecond))
}

// cleanSlot replaces characters that end sentences or clauses for the
// tagger (. ! ? ; : , quotes, brackets, dashes, line breaks) with spaces
// and collapses runs of spaces, so a slot value never changes how the
// template around it is read.
func cleanSlot(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch r {
		case '.', '!', '?', ';', ':', ',', '"', '(', ')', '\n', '\r', '\t', '\u2013', '\u2014', '\u201c', '\u201d', '\u2026':
			r = ' '
		}
		if r == ' ' {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return strings.TrimRight(b.String(), " ")
}

// words returns the lower-case ASCII words (letters and inner apostrophes)
// of s.
func words(s string) []string {
	out := make([]string, 0, len(s)/5+1)
	start := -1
	for i := 0; i <= len(s); i++ {
		c := byte(' ')
		if i < len(s) {
			c = s[i]
		}
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || (c == '\'' && start >= 0)
		if letter && start < 0 {
			start = i
		} else if !letter && start >= 0 {
			out = append(out, strings.Trim(strings.ToLower(s[start:i]), "'"))
			start = -1
		}
	}
	return out
}

// deck is a seeded permutation of a template bank; the k-th use of the
// bank in a session takes deck[k % len]. Consecutive uses therefore never
// repeat a template, and a whole bank is used before any repeats.
type deck []int

func newDeck(r *rand.Rand, n int) deck {
	return deck(r.Perm(n))
}

func (d deck) at(k int) int { return d[k%len(d)] }

// turnIndex returns the number of persuader messages in transcript: the
// 0-based index of the turn about to be said.
func turnIndex(transcript []episode.Message) int {
	n := 0
	for _, m := range transcript {
		if m.Speaker == episode.PersuaderSpeaker {
			n++
		}
	}
	return n
}

// lastReply returns the last persuadee message of transcript, or "".
func lastReply(transcript []episode.Message) string {
	for i := len(transcript) - 1; i >= 0; i-- {
		if transcript[i].Speaker == episode.PersuadeeSpeaker {
			return transcript[i].Text
		}
	}
	return ""
}

// ok reports whether reading t is exactly want, with pressure markers
// present exactly when pressure is set.
func ok(t tagger.Tags, want tagger.ActSet, pressure bool) bool {
	return t.Acts == want && (t.Pressure > 0) == pressure
}

// utterance packages text and the intended acts.
func utterance(text string, acts tagger.ActSet) episode.Utterance {
	return episode.Utterance{Text: text, Acts: acts.Strings()}
}
