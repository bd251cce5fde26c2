// Package baseline holds the built-in rule-based persuaders: baselines
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
package baseline

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// builtin is one built-in persuader's name and constructor.
type builtin struct {
	name string
	new  func() episode.Persuader
}

// builtins are the built-in persuaders in the order commands list them
// (Listed): the bad baseline first, then evidence alone, the full script
// and the random mix.
var builtins = []builtin{
	{"pushy", func() episode.Persuader { return pushy{} }},
	{"informer", func() episode.Persuader { return informer{} }},
	{"script", func() episode.Persuader { return script{} }},
	{"random", func() episode.Persuader { return random{} }},
}

// Names returns the built-in persuader names, sorted.
func Names() []string {
	out := Listed()
	slices.Sort(out)
	return out
}

// Listed returns the built-in persuader names in the order commands show
// them by default: pushy, informer, script, random (a new slice).
func Listed() []string {
	out := make([]string, len(builtins))
	for i, b := range builtins {
		out[i] = b.name
	}
	return out
}

// Baseline is the built-in persuader that paired comparisons measure
// against (the full script: diagnose, address, plan, leave the choice
// open).
const Baseline = "script"

// BaselineFirst returns the built-in persuader names with Baseline first,
// then the others sorted (a new slice).
func BaselineFirst() []string {
	rest := slices.DeleteFunc(Names(), func(n string) bool { return n == Baseline })
	return append([]string{Baseline}, rest...)
}

// New returns the built-in persuader called name (see Names). An unknown
// name yields an error listing the known names.
func New(name string) (episode.Persuader, error) {
	i := slices.IndexFunc(builtins, func(b builtin) bool { return b.name == name })
	if i < 0 {
		return nil, fmt.Errorf("unknown persuader %q (built-in persuaders: %s)", name, strings.Join(Names(), ", "))
	}
	return builtins[i].new(), nil
}

// fill holds the public scenario strings templates use. Each is cleaned so
// that it cannot add sentence or clause breaks of its own.
type fill struct {
	name     string // how the persuadee is addressed (scenario.AddressName), or ""
	proposal string // the proposal as a verb phrase after "to" ("donate part of your payment")
	// proposal3 is proposal in the third person ("donate part of their payment").
	proposal3 string
	// stop holds lower-case words the script never echoes back as voiced
	// concerns: the proposal's and the names' words (shared, read-only).
	stop map[string]bool
}

// safeProposal is the verb phrase used when the proposal's own words
// would change what an utterance is tagged as.
const safeProposal = "take this step"

func newFill(pub scenario.Public) fill {
	f := fill{proposal: verbPhrase(pub.Proposal)}
	f.name = scenario.AddressName(cleanSlot(pub.Persuadee.Name))
	if f.proposal == "" {
		f.proposal = safeProposal
	}
	f.proposal3 = cleanSlot(scenario.ProposalPhrase(pub.Proposal, scenario.PersonThird))
	if f.proposal3 == "" {
		f.proposal3 = safeProposal
	}
	f.stop = stopWords(pub)
	return f
}

// filled is one public scenario's cached fill (with its stop words) and
// the tagger readings of its templates under that fill (see partTags).
// Everything in it is shared read-only except tags, whose entries are
// written once each, atomically.
type filled struct {
	f fill
	// tags[tmpl.idx] is the packed tagger.Tag reading (packTags) of the
	// template rendered with f's full slots and no {x}, or 0 when not yet
	// computed. Tag is a pure function of the text, so every goroutine
	// that computes an entry writes the same value.
	tags []atomic.Uint64
}

// fills caches newFill by its inputs (a scenario.Cache), so starting an
// episode on a scenario seen before costs one look-up and the template
// readings are computed once per scenario. Choice: one per process, not
// per persuader, because Realise, which planners call every turn, is a
// function of its arguments alone; it holds at most maxFills entries
// (a few KB each).
var fills = scenario.NewCache[*filled](maxFills)

const maxFills = 4096

// filledOf returns pub's cached fill entry.
func filledOf(pub scenario.Public) *filled {
	return fills.Get([]string{pub.Proposal, pub.Persuadee.Name, pub.Persuader.Name}, func() *filled {
		return &filled{f: newFill(pub), tags: make([]atomic.Uint64, numTemplates)}
	})
}

// safeTags are the readings of the templates under the neutral slots
// compose falls back to (no name, safeProposal), as filled.tags.
var safeTags = make([]atomic.Uint64, numTemplates)

// packTags packs the acts and pressure of t (render reads no more) into a
// non-zero word; ok is false when the pressure count does not fit.
func packTags(t tagger.Tags) (uint64, bool) {
	if t.Pressure < 0 || t.Pressure >= 1<<31 {
		return 0, false
	}
	return 1<<63 | uint64(t.Pressure)<<8 | uint64(t.Acts), true
}

// unpackTags inverts packTags.
func unpackTags(w uint64) tagger.Tags {
	return tagger.Tags{Acts: tagger.ActSet(w), Pressure: int(w >> 8 & (1<<31 - 1))}
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
	return appendWords(make([]string, 0, len(s)/5+1), s)
}

// appendWords appends the words of s (as words returns them) to dst.
func appendWords(dst []string, s string) []string {
	forWords(s, func(w string) bool {
		dst = append(dst, w)
		return true
	})
	return dst
}

// forWords calls fn with each word of s, as words returns them, until fn
// returns false.
func forWords(s string, fn func(w string) bool) {
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
			if !fn(strings.Trim(strings.ToLower(s[start:i]), "'")) {
				return
			}
			start = -1
		}
	}
}

// deck holds one seeded permutation per template bank; the k-th use of
// bank b in a session takes template at(b, k), the (k % len)-th entry of
// b's permutation. Consecutive uses therefore never repeat a template,
// and a whole bank is used before any repeats. The permutations are
// those of rand.Rand.Perm, drawn bank by bank, in bank order, from one
// stream; they are stored in one array (bankOff[b] is bank b's first
// entry), so a session start allocates none, and drawn when first used:
// a persuader that only uses the first banks never draws the others'.
type deck struct {
	order [maxTemplates]uint8
	src   rand.PCG // the stream, at the start of bank built
	built int      // banks drawn so far
}

// maxTemplates bounds the templates of all banks together (checked at
// init).
const maxTemplates = 256

func newDeck(seed uint64) deck {
	var d deck
	d.src.Seed(seed, 0xdec4)
	return d
}

// at returns the index in bank b of its k-th use.
func (d *deck) at(b bankID, k int) int {
	if int(b) >= d.built {
		d.draw(int(b))
	}
	o, n := bankOff[b], bankOff[b+1]-bankOff[b]
	return int(d.order[o+k%n])
}

// draw draws the permutations of banks d.built..b.
func (d *deck) draw(b int) {
	r := rand.New(&d.src)
	for ; d.built <= b; d.built++ {
		p := d.order[bankOff[d.built]:bankOff[d.built+1]]
		for i := range p {
			p[i] = uint8(i)
		}
		// as r.Perm(len(p)): the same swaps from the same draws
		r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	}
}

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
	return episode.Utterance{Text: text, Acts: acts.Names()}
}
