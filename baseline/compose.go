package baseline

import (
	"math/rand/v2"
	"strings"
	"sync/atomic"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// base is the state every built-in session shares: the public fill, the
// seed and one seeded template deck per bank.
type base struct {
	f    fill
	seed uint64
	deck deck
	// tags are the cached template readings under f (filled.tags).
	tags []atomic.Uint64
}

// newBase builds the shared session state from pub's cached fill
// (filledOf). echo says whether the session echoes the persuadee (reads
// the fill's stop words); every fill carries them, so it changes nothing
// and documents the caller.
func newBase(pub scenario.Public, seed uint64, echo bool) base {
	_ = echo
	c := filledOf(pub)
	return base{f: c.f, seed: seed, tags: c.tags, deck: newDeck(seed)}
}

// part is one sentence of an utterance: the k-th use of bank.
type part struct {
	bank bankID
	k    int
}

// echoFallback maps an echo bank to its generic counterpart.
var echoFallback = [numBanks]bankID{
	bDiag: bDiag, bDiagEcho: bDiag, bEvid: bEvid, bEvidEcho: bEvid, bPlan: bPlan, bPlanEcho: bPlan,
	bCommit: bCommit, bAuton: bAuton, bPushAsk: bPushAsk, bPressure: bPressure,
}

// intended returns the acts and whether pressure markers are meant.
func intended(parts []part) (tagger.ActSet, bool) {
	var a tagger.ActSet
	press := false
	for _, p := range parts {
		a |= bankAct[p.bank]
		press = press || p.bank == bPressure
	}
	return a, press
}

// compose renders parts (space-separated sentences) and returns the first
// rendering that tagger.Tag reads as exactly the intended acts (and
// pressure exactly when a pressure part is included). It tries, in order:
// the full public fill; the fill without the persuadee's name and with a
// neutral proposal phrase ("take this step"); the same with echo banks
// replaced by their generic counterparts; then later templates of the same
// banks. Every template passes with the neutral fill (TestBanksTagExactly),
// so the first two steps nearly always suffice.
func (b *base) compose(parts []part, x string) episode.Utterance {
	want, press := intended(parts)
	full := slots{name: b.f.name, proposal: b.f.proposal, proposal3: b.f.proposal3, x: x}
	first, tg := b.render(parts, full, 0)
	if ok(tg, want, press) {
		return utterance(first, want)
	}
	safe := slots{proposal: safeProposal, proposal3: safeProposal, x: x}
	if t, tg := b.render(parts, safe, 0); ok(tg, want, press) {
		return utterance(t, want)
	}
	generic := make([]part, len(parts))
	for i, p := range parts {
		generic[i] = part{bank: echoFallback[p.bank], k: p.k}
	}
	for shift := 0; shift < 12; shift++ {
		if t, tg := b.render(generic, safe, shift); ok(tg, want, press) {
			return utterance(t, want)
		}
	}
	return utterance(first, want)
}

// render writes parts with slot values v (shift moves every deck
// position) and returns the text with its tagger.Tag reading.
//
// The reading is assembled part by part: a template's reading is taken
// from the table computed at init when its rendering does not depend on
// v (no slots, or only {n} with no name), else the part's text is tagged.
// This equals tagger.Tag of the whole text because every part is whole
// sentences ending in '.' or '?' (checked at init) and the tagger's cues,
// negation window and question rules all stay inside one clause or one
// sentence, so Tag of sentences joined by spaces is the union of their
// acts and the sum of their pressure markers (TestRenderTagsAsWhole
// checks it on every template and many combinations and fills). The
// reading's Strategies are left empty: the P4G strategy family has an
// utterance-level rule (docs/tagger.md), and episode.Run tags the whole
// text itself.
func (b *base) render(parts []part, v slots, shift int) (string, tagger.Tags) {
	n := 0
	for _, p := range parts {
		n += banks[p.bank][0].bytes + 2*len(v.proposal) + 2*len(v.x) + len(v.name) + 4
	}
	// the cached readings that apply to v, if any (see partTags)
	var memo []atomic.Uint64
	switch {
	case v.name == b.f.name && v.proposal == b.f.proposal && v.proposal3 == b.f.proposal3:
		memo = b.tags
	case v.name == "" && v.proposal == safeProposal && v.proposal3 == safeProposal:
		memo = safeTags
	}
	var sb strings.Builder
	sb.Grow(n)
	var tg tagger.Tags
	for i, p := range parts {
		if i > 0 {
			sb.WriteByte(' ')
		}
		tp := &banks[p.bank][b.deck.at(p.bank, p.k+shift)]
		start := sb.Len()
		tp.render(&sb, v)
		pt := tp.partTags(sb.String()[start:], v, memo)
		tg.Acts |= pt.Acts
		tg.Pressure += pt.Pressure
	}
	return sb.String(), tg
}

// partTags returns the reading (acts and pressure) of tp rendered as text
// under slot values v: the init table when the rendering does not depend
// on v (tmpl.cached), else memo's entry when memo holds the readings for
// v's slots and tp has no {x} slot (computed and stored on first use),
// else tagger.Tag(text).
func (tp *tmpl) partTags(text string, v slots, memo []atomic.Uint64) tagger.Tags {
	if c, ok := tp.cached(v); ok {
		return c
	}
	if memo == nil || tp.hasX {
		return tagger.Tag(text)
	}
	if w := memo[tp.idx].Load(); w != 0 {
		return unpackTags(w)
	}
	t := tagger.Tag(text)
	if w, ok := packTags(t); ok {
		memo[tp.idx].Store(w)
	}
	return t
}

// turnSource is a per-turn random stream (see turnRand) without the
// allocations of rand.Rand; n-way choices use the high bits modulo n,
// whose bias is below 1e-15 for the small n used here.
type turnSource struct{ p rand.PCG }

func newTurnSource(seed uint64, t int) *turnSource {
	s := &turnSource{}
	s.p.Seed(seed, episode.Mix(uint64(t)+0x5a17))
	return s
}

func (s *turnSource) intn(n int) int { return int(s.p.Uint64() % uint64(n)) }

// chance returns true with probability num/den.
func (s *turnSource) chance(num, den int) bool { return s.intn(den) < num }
