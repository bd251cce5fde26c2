package perception

import (
	"context"
	"slices"

	"github.com/persuarena/persuarena/prose"
	"github.com/persuarena/persuarena/tagger"
)

// textInfo is everything the reader derives from one text on one scene
// alone, memoised by the reader (persuaders and the persuadee repeat their
// texts across turns and episodes); the history-dependent readings (echo,
// newness, repetition, relevance, what answers the last reply) are
// computed per Read from it.
type textInfo struct {
	d         doc
	corrected bool
	tags      tagger.Tags // of the corrected text, when corrected
	rawTags   tagger.Tags // tagger.Tag of the text as written
	tokHit    []uint64    // per token: the concerns it names
	grams     []uint64    // per token i with i+4 <= len: the hash of tokens i..i+3
	// tokFlags holds, per token, tfContent, tfBrings, tfSpecific, tfSeed
	// and tfListed (assert.go).
	tokFlags  []uint8
	sentHit   []uint64 // per sentence: the concerns it names
	sentFlags []uint8  // per sentence: sfDismiss, sfAck, sfLink, sfCue, sfClaim, sfList
	// admitted and takenBack are the concerns (bit i = concern i) the
	// message admits having no answer to, and those named where it takes
	// an answer back (assertions): both conceded.
	admitted, takenBack uint64
	cues                CueSet
	claims              int
	// onTopic reports whether the message names the proposal or a
	// concern: a content word of the public proposal text or of a
	// concern's keywords (by stem). Only then can it answer a concern
	// (engage): an argument about something else answers no worry about
	// this proposal, however generic the worry's words.
	onTopic bool
	set     []uint64 // hashes of the content words' base forms, sorted, unique (repetition)
	// words holds the hashes of the tokens' words and their base forms;
	// wordSet the same as a set (replies only: later reads search them).
	words    []uint64
	wordSet  hset
	gramSet  hset         // grams (replies only)
	baseHash []uint64     // per content token: the hash of its first base form (or the word)
	said     *saidFilters // replies only
}

func wordHash(w string) uint64 { return prose.Hash(w) }

// saidFilters are the Bloom filters of a persuadee reply's words and
// 4-word runs (over textInfo.wordSet and gramSet), which a session ORs
// into what the persuadee has said.
type saidFilters struct{ words, grams bloom }

// Per-sentence flags.
const (
	sfDismiss uint8 = 1 << iota
	sfAck
	sfLink
	// sfCue: the sentence carries a manipulation cue (cuesOf).
	sfCue
	// sfClaim: the sentence makes an unsupported specific claim (claims):
	// a fabricated figure is no reason, so its words bring nothing.
	sfClaim
	// sfList: a bare list (assertions): it names words without saying
	// anything about them, so it mentions what it names and no more.
	sfList
)

// memoKey keys a text's analysis on one scene in the reader's memo;
// reply marks the light analysis of a persuadee reply (analyseReply).
type memoKey struct {
	scene uint64 // the scene's id: a pointer would keep scenes the cache dropped alive
	text  string
	reply bool
}

// info returns the analysis of text on sc, from the reader's memo when
// the text was analysed before.
func (sc *scene) info(text string, reply bool) *textInfo {
	if len(text) > recentLong {
		// an analysis holds about 30 times its text: a reader's memo of
		// long texts would hold hundreds of MB (the session keeps the
		// latest one, recentInfo)
		return sc.analyseText(text, reply)
	}
	k := memoKey{sc.id, text, reply}
	h := prose.Hash(text) ^ sc.id*0x9e3779b97f4a7c15
	if reply {
		h = ^h
	}
	slot := &sc.own.seen[h&(uint64(len(sc.own.seen))-1)]
	again := slot.Load() == h
	if again {
		if ti, ok := sc.own.memo.Get(k); ok {
			return ti
		}
	}
	ti := sc.analyseText(text, reply)
	if again {
		sc.own.memo.Put(k, ti)
	} else {
		slot.Store(h)
	}
	return ti
}

// analyseText is analyseReply(text) when reply, else analyse(text).
func (sc *scene) analyseText(text string, reply bool) *textInfo {
	if reply {
		return sc.analyseReply(text)
	}
	return sc.analyse(text)
}

// analyseReply is the analysis of a persuadee reply: what the reader uses
// of one (its words for newness, echo and relevance, the concerns it
// names), without tags, cues, claims or assertions.
func (sc *scene) analyseReply(text string) *textInfo {
	ti := &textInfo{d: tokenize(sc.own, text)}
	sc.lexical(ti, false)
	release(&ti.d) // read only while analysing; the memo keeps the rest
	return ti
}

// lexical fills the history-facing part of ti: the word hashes (with
// their base forms), 4-word runs, the content words' base forms and the
// concerns each token and sentence names; when full (a persuader's
// message) its content set, else (a persuadee reply) the set of its
// 4-word runs and the Bloom filters that later reads search (peeSaid).
// Its slices share one allocation.
func (sc *scene) lexical(ti *textInfo, full bool) {
	d := ti.d
	n, ns := len(d.toks), len(d.sents)
	nw := 0
	for i := range d.toks {
		nw += len(d.toks[i].wi.hashes)
	}
	grams := max(n-3, 0)
	size := 2*n + nw + grams + ns
	if full {
		size += n
	} else {
		size += hsetSize(nw) + hsetSize(grams)
	}
	arena := make([]uint64, size)
	cut := func(k int) []uint64 {
		out := arena[:k:k]
		arena = arena[k:]
		return out
	}
	ti.tokHit = cut(n)
	ti.baseHash = cut(n)[:0]
	words := cut(nw)[:0]
	ti.grams = cut(grams)
	ti.sentHit = cut(ns)
	ti.tokFlags = make([]uint8, n)
	for i := range d.toks {
		t := &d.toks[i]
		ti.tokHit[i] = sc.hits(d, i)
		words = append(words, t.hash)
		words = append(words, t.wi.hashes[1:]...)
		if i+4 <= n {
			ti.grams[i] = gram(d.toks[i : i+4])
		}
		if content(*t) {
			ti.tokFlags[i] |= tfContent
			ti.baseHash = append(ti.baseHash, t.wi.baseHash)
		}
	}
	ti.words = words
	if full {
		ti.set = append(cut(n)[:0], ti.baseHash...)
		slices.Sort(ti.set)
		ti.set = slices.Compact(ti.set)
	} else {
		// what the persuadee said, looked up by later reads (peeSaid)
		ti.wordSet = makeHset(cut(hsetSize(len(words))), words)
		ti.gramSet = makeHset(cut(hsetSize(len(ti.grams))), ti.grams)
		ti.said = new(saidFilters)
		for _, h := range words {
			ti.said.words.add(h)
		}
		for _, h := range ti.grams {
			ti.said.grams.add(h)
		}
	}
	for si, st := range d.sents {
		for i := st.first; i < st.end; i++ {
			ti.sentHit[si] |= ti.tokHit[i]
		}
	}
}

func (sc *scene) analyse(text string) *textInfo {
	ti := &textInfo{}
	raw := tokenize(sc.own, text)
	ti.d, ti.corrected = sc.correct(raw)
	ti.rawTags = tagger.TagDoc(raw.pd)
	ti.tags = ti.rawTags
	if ti.corrected {
		ti.tags = tagger.TagDoc(ti.d.pd)
	}
	d := ti.d
	sc.lexical(ti, true)
	ti.sentFlags = make([]uint8, len(d.sents))
	// most messages have few sentences: their frame matches on the stack
	var setsBuf [8]uint32
	var atsBuf [8][numFrameSets]int32
	sets, ats := setsBuf[:0], atsBuf[:0]
	if len(d.sents) > len(setsBuf) {
		sets, ats = make([]uint32, 0, len(d.sents)), make([][numFrameSets]int32, 0, len(d.sents))
	}
	sets, ats = sets[:len(d.sents)], ats[:len(d.sents)]
	cd := sc.cueDoc(d)
	for si, st := range d.sents {
		sets[si], ats[si] = frames.match(cd, cd.toks[st.first:st.end], sentenceFrames)
		var f uint8
		if sets[si]&(1<<fsDismiss) != 0 {
			f |= sfDismiss
		}
		if sets[si]&(1<<fsAck) != 0 {
			f |= sfAck
		}
		if sc.linked(d, st, ti.tokHit) {
			f |= sfLink
		}
		ti.sentFlags[si] |= f
	}
	for si := range d.sents {
		ti.cues |= cuesOf(cd, si, sets[si], &ats[si], ti.sentFlags)
	}
	ti.claims = sc.claims(d, ti.sentFlags)
	sc.assertions(ti, sets, ats)
	for _, t := range d.toks {
		if content(t) && (sc.pubStem[stem(t.w)] || sc.kwStem[stem(t.w)]) {
			ti.onTopic = true
			break
		}
	}
	// read only while analysing; the memo keeps the rest
	if ti.corrected {
		release(&raw)
	}
	release(&ti.d)
	return ti
}

// unlistedHit returns the concerns sentence si names by words that are
// no list items (tfListed).
func (ti *textInfo) unlistedHit(si int) uint64 {
	var m uint64
	st := ti.d.sents[si]
	for i := st.first; i < st.end; i++ {
		if ti.tokFlags[i]&tfListed == 0 {
			m |= ti.tokHit[i]
		}
	}
	return m
}

// Tags returns tagger.Tag(text), from the reader's analysis of text (see
// Tagger).
func (s *embSession) Tags(text string) tagger.Tags { return s.info(text, false).rawTags }

// Read perceives the last message of in.Transcript (see Embedded).
// Errors: ErrNoMessage.
func (s *embSession) Read(_ context.Context, in Input) (Perception, error) {
	msg, err := in.last()
	if err != nil {
		return Perception{}, err
	}
	s.absorb(in.Transcript[:len(in.Transcript)-1])
	ti := s.info(msg.Text, false)
	d := ti.d
	var p Perception
	p.Acts, p.Strategies, p.Pressure = ti.tags.Acts, ti.tags.Strategies, ti.tags.Pressure
	// each Read's Concerns its own memory, carved from a block
	if len(s.conc) < s.sc.n {
		s.conc = make([]Engagement, max(64, s.sc.n))
	}
	p.Concerns, s.conc = s.conc[:s.sc.n:s.sc.n], s.conc[s.sc.n:]
	hit := ti.sentHit
	covered := s.echoed(ti)
	var unlinked int // specific new words of asserted sentences on the matter, for the worry just voiced
	for si, st := range d.sents {
		if f := ti.sentFlags[si]; s.hasLast && s.lastMask != 0 && f&(sfLink|sfCue|sfClaim|sfList) == sfLink && !st.question &&
			s.sc.onMatter(ti, st, s.lastMask, 0, matterFar) {
			unlinked += s.newWords(ti, st.first, st.end, covered, tfSpecific)
		}
		if hit[si] == 0 || ti.sentFlags[si]&(sfCue|sfDismiss) == sfCue {
			continue // manipulation is no way of listening: a cue's sentence engages no concern
		}
		// the sentence, and the next one when it names no other concern,
		// asks nothing and carries no manipulation cue ("You mentioned
		// the cost. In similar cases, ...")
		end := st.end
		if si+1 < len(d.sents) && hit[si+1]&^hit[si] == 0 && !d.sents[si+1].question && ti.sentFlags[si+1]&sfCue == 0 {
			end = d.sents[si+1].end
		}
		e := s.engage(ti, si, end, covered)
		named := ti.unlistedHit(si)
		for ci := 0; ci < s.sc.n; ci++ {
			if hit[si]&(1<<ci) == 0 {
				continue
			}
			e := e
			if e == Answered && named&(1<<ci) == 0 {
				// named only as a list item: the sentence takes the
				// worry up but does not answer it, whatever content
				// follows ("Your money and cent and payment matter.
				// You'd love the new bakery ...": the red team's mixed
				// family, docs/redteam.md)
				e = Acknowledged
			}
			if cur := p.Concerns[ci]; e == Dismissed || cur != Dismissed && e > cur {
				p.Concerns[ci] = e
			}
		}
	}
	// An answer to the worry just voiced: asserted sentences (no list)
	// that do not name it but bring specific new content (not even the
	// proposal's words), right after a reply that voiced it, each on the
	// matter of this scenario (a thing of that worry's vocabulary or of
	// the scenario's matter, onMatter).
	// Choice: a reply is answered where it is answered, by what follows
	// it (relevance: an answer need not repeat the worry's words), but
	// only with content of its own, so a generic line after every worry
	// answers none, and only on the matter at hand, so chat about
	// something else answers nothing.
	if unlinked >= minContent && ti.admitted|ti.takenBack == 0 && ti.cues == 0 {
		for ci := 0; ci < s.sc.n; ci++ {
			if bit := uint64(1) << ci; s.lastMask&bit != 0 && p.Concerns[ci] < Answered {
				p.Concerns[ci] = Answered
			}
		}
	}
	// conceded: admitted, or taken back and not answered elsewhere
	for ci := 0; ci < s.sc.n; ci++ {
		bit, g := uint64(1)<<ci, p.Concerns[ci]
		if g != Dismissed && (ti.admitted&bit != 0 || ti.takenBack&bit != 0 && g != Answered) {
			p.Concerns[ci] = Conceded
		}
	}
	p.Cues = ti.cues
	p.Unsupported = ti.claims
	nEcho := 0
	for _, c := range covered {
		if c {
			nEcho++
		}
	}
	if len(d.toks) > 0 {
		p.Echo = float64(nEcho) / float64(len(d.toks))
	}
	for _, set := range s.earlier {
		if jaccard(ti.set, set) >= RepeatOverlap {
			p.Repeat++
		}
	}
	var engaged uint64
	for ci, g := range p.Concerns {
		if g.Touches() {
			engaged |= 1 << ci
		}
	}
	p.Relevance = s.relevance(ti, engaged)
	return p, nil
}

// echoed marks the tokens of d inside a run of four or more words that
// the persuadee said.
func (s *embSession) echoed(ti *textInfo) []bool {
	n := len(ti.d.toks)
	if cap(s.cov) < n {
		s.cov = make([]bool, n)
	}
	s.cov = s.cov[:n]
	cov := s.cov
	clear(cov)
	for i, g := range ti.grams {
		if s.peeSaid(g, true) {
			for k := i; k < i+4; k++ {
				cov[k] = true
			}
		}
	}
	return cov
}

// newWords counts the tokens first..end-1 of ti that carry flag f (see
// assert.go: tfBrings, what an answer may bring, or tfSpecific), and at
// most one concern word (tfSeed) per sentence with tfBrings, that the
// persuadee has not said, neither as a word nor inside an echoed run.
func (s *embSession) newWords(ti *textInfo, first, end int, covered []bool, f uint8) int {
	n, seedSent := 0, int32(-1)
	for i := first; i < end; i++ {
		tf := ti.tokFlags[i]
		if tf&(f|tfSeed) == 0 || covered[i] || s.peeSaid(ti.d.toks[i].hash, false) {
			continue
		}
		if tf&f == 0 {
			if f != tfBrings || ti.d.toks[i].sent == seedSent {
				continue
			}
			seedSent = ti.d.toks[i].sent
		}
		n++
	}
	return n
}

// engage classifies how the sentence si (with its content window up to
// token end) engages the concerns it names (docs/simulator/reader.md, "The
// embedded reader"): dismissed, mentioned (no link to the persuadee or
// the proposal), acknowledged (a question; or nothing new asserted), or
// answered (minContent words or more that the persuadee has not said,
// in asserted clauses: no question, list, denied or retracted clause, no
// manipulation cue; not the concern's own words, acknowledging,
// worry or generic words; in a message on the proposal's topic).
func (s *embSession) engage(ti *textInfo, si, end int, covered []bool) Engagement {
	st, f := ti.d.sents[si], ti.sentFlags[si]
	if f&sfDismiss != 0 {
		return Dismissed
	}
	if end > st.end && ti.sentFlags[si+1]&sfLink != 0 {
		f |= sfLink // the content window links it
	}
	// a statement about the matter at hand ("the club gives each new
	// member a buddy") links itself and is on the topic
	onM := f&sfList == 0 && s.sc.onMatter(ti, st, 0, ti.sentHit[si], matterNear)
	if onM {
		f |= sfLink
	}
	switch {
	case f&(sfLink|sfAck) == 0 || f&sfList != 0:
		return Mentioned
	case st.question:
		return Acknowledged
	}
	newC, echoC, contentN := 0, 0, 0
	for i := st.first; i < end; i++ {
		if ti.tokFlags[i]&tfContent == 0 || ti.sentFlags[ti.d.toks[i].sent]&sfCue != 0 {
			continue
		}
		contentN++
		if covered[i] {
			echoC++
		}
	}
	newC = s.newWords(ti, st.first, end, covered, tfBrings)
	if newC >= minContent && 2*echoC < contentN && (ti.onTopic || onM) {
		return Answered
	}
	return Acknowledged
}

// onMatter reports whether sentence st names the matter at hand by a
// thing (a content word most of whose senses are nouns; not a number, a
// quality or an act): a word of the public scenario itself, or a
// specific one (at most specificSenses senses by its first base form)
// among the scene's matter words marked with a bit of bits (matterNear:
// neighbours of the public scenario's specific things; matterFar: of
// all its things) or, when concerns is set, among the words of the
// concerns in mask. "lives" ties nothing to a worry about where to live,
// "council" ties a message to home care, "club" to joining a walking
// club, "bakery" to nothing but a scenario about bread. Words of the
// concerns in own tie nothing (a concern's word cannot make its own
// mention a statement about the matter).
func (sc *scene) onMatter(ti *textInfo, st sentence, mask, own uint64, bits uint8) bool {
	l := theLexicon()
	for i := st.first; i < st.end; i++ {
		t := &ti.d.toks[i]
		if ti.tokFlags[i]&tfContent == 0 || ti.tokHit[i]&own != 0 || t.num || t.wi.cls&(wGeneric|wWorry|wPredicate|wNumber) != 0 || len(t.wi.bases) == 0 {
			continue
		}
		b := t.wi.bases[0]
		thing := l.nounish(b)
		if thing && sc.pubStem[stem(t.w)] {
			return true
		}
		if l.senseCount(b) > specificSenses {
			continue
		}
		if ti.tokHit[i]&mask != 0 && (thing || l.canVerb(b)) {
			return true
		}
		for _, id := range t.wi.bases {
			if thing && sc.matter.get(id)&bits != 0 {
				return true
			}
		}
	}
	return false
}

// The matter bits of scene.matter.
const (
	matterNear uint8 = 1 << iota // neighbours of the public scenario's specific things
	matterFar                    // neighbours of any of its things
)

// specificSenses is the most senses a word may have to tie a message to a
// worry by itself.
//
// Choice: 4 of the lexicon's at most 12 (three per part of speech):
// "income", "tablet" and "council" qualify, "live", "move" and "set" do
// not.
const specificSenses = 4

// linked reports whether sentence st ties itself to the persuadee or the
// proposal: a second-person or first-person-plural word, the persuadee's
// name, a content word of the proposal (by stem), outside the concern's
// own words ("your share" is no link), or three words that are concerns'
// keywords or description words (not merely related to them).
func (sc *scene) linked(d doc, st sentence, tokHit []uint64) bool {
	words := 0
	for i := st.first; i < st.end; i++ {
		t := d.toks[i]
		if content(t) && sc.seedHitTok(&t) {
			words++
		}
		if tokHit[i] != 0 || i > st.first && tokHit[i-1] != 0 && !content(t) {
			continue
		}
		if t.wi.cls&wLink != 0 || t.w == sc.name || content(t) && sc.pubStem[stem(t.w)] {
			return true
		}
	}
	return words >= 3
}
