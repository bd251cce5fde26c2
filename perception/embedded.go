package perception

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/prose"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// Embedded is the model-free reader (docs/simulator.md, "The embedded
// reader"): the tagger's acts, pressure and strategies on the message
// after spelling correction, and rule-based concern engagement, claims,
// cues, relevance, echo and repetition. Concern words are widened with
// the embedded WordNet 3.0 lexicon: a concern's keywords and the content
// words of its description are seeds, and their synonyms, derivations,
// hypernyms, hyponyms, similar and opposite words count as the concern's
// words too. It is deterministic, needs no model and is safe for
// concurrent use.
//
// An Embedded made by NewEmbedded keeps what it derives from scenarios
// and texts in caches of its own, bounded (maxScenes scenarios, memoBudget
// texts), so a run that makes one reader holds a bounded cache that ends
// with the run; the zero Embedded caches nothing between episodes (each
// Start derives its scenario afresh). Caches never change a reading.
type Embedded struct{ c *embCache }

// NewEmbedded returns an embedded reader with empty caches of its own.
func NewEmbedded() Embedded { return Embedded{c: newEmbCache()} }

// Name returns EmbeddedName.
func (Embedded) Name() string { return EmbeddedName }

// Start returns a session on sc, whose derived vocabulary is computed once
// per scenario content and cached by the reader. Errors: a nil scenario.
func (e Embedded) Start(_ context.Context, sc *scenario.Scenario) (Session, error) {
	if sc == nil {
		return nil, errors.New("perception: nil scenario")
	}
	c := e.c
	if c == nil {
		c = newEmbCache()
	}
	s := &embSession{sc: c.sceneOf(sc)}
	s.reset()
	return s, nil
}

// Limits of the vocabulary expansion.
const (
	// maxHypo is the most hyponyms taken per sense of a seed.
	maxHypo = 15
	// maxSenses is the most senses (all parts of speech, as kept by the
	// lexicon) a related word may have to count as a concern's word: more
	// general words ("set", "run") would tie every concern to everything.
	maxSenses = 8
	// minContent is the number of content words, beyond the persuadee's
	// own, that a sentence needs to answer a concern.
	minContent = 3
)

// scene is what a reader derives from a scenario alone.
type scene struct {
	n       int
	vocab   map[int32]uint64  // lexicon word id -> concerns (bit i = concern i)
	seeds   map[int32]uint64  // the seeds alone (keywords, description words)
	exact   map[string]uint64 // keyword words not in the lexicon -> concerns
	phrases []kwPhrase
	topic   map[int32]bool
	topicW  map[string]bool
	pubStem map[string]bool // stems (stem) of the public text's content words
	kwStem  map[string]bool // stems of the concerns' own keyword words
	// quoted are the proposal's words that are also one-word manipulation
	// or dismissal phrases ("stupid" in "Social media are making people
	// stupid"): quoting the proposition is its topic, not contempt, so
	// they are masked when cues and dismissals are matched (cueDoc).
	quoted map[string]bool
	memo   textMemo
	own    *embCache // the reader's caches the scene belongs to
	name   string    // the persuadee's first name, lower-case
	public string    // the public scenario text, lower-case
}

type kwPhrase struct {
	words []string
	mask  uint64
}

// Bounds of an embedded reader's caches.
const (
	// maxScenes is the most scenarios whose vocabularies a reader keeps;
	// past it they are all dropped (the next episode on each derives it
	// again, about 0.1 ms).
	maxScenes = 512
	// maxExpand is the most seed words whose lexicon neighbourhoods
	// (expand) a reader keeps.
	maxExpand = 1 << 14
	// maxBases is the most words whose base forms a reader keeps.
	maxBases = 1 << 16
)

// embCache is what one embedded reader keeps between episodes: scenes by
// content and by address, the lexicon neighbourhoods of seed words, the
// base forms of words read, and the budget of the scenes' text memos. Each is bounded; a cache never changes a reading.
type embCache struct {
	mu     sync.Mutex
	scenes map[string]*scene // content key -> scene
	byPtr  map[*scenario.Scenario]*ptrEntry
	expand map[int32][]int32 // seed word id -> its filtered lexicon neighbours

	basesMu sync.RWMutex
	bases   map[string][]int32

	memoTotal atomic.Int64 // texts stored in the scenes' memos since the last clearing
}

func newEmbCache() *embCache {
	return &embCache{scenes: map[string]*scene{}, byPtr: map[*scenario.Scenario]*ptrEntry{},
		expand: map[int32][]int32{}, bases: map[string][]int32{}}
}

// clearMemos empties the text memo of every scene of c (memoBudget).
func (c *embCache) clearMemos() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.scenes {
		s.memo.clear()
	}
}

func sceneKey(sc *scenario.Scenario) string {
	var b strings.Builder
	for _, s := range []string{sc.Proposal, sc.Background, sc.Domain, sc.AcceptMeans, sc.ConditionalMeans, sc.Persuadee.Name} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	for _, c := range sc.Hidden.Concerns {
		b.WriteString(c.Description)
		b.WriteByte(1)
		b.WriteString(c.Voiced)
		for _, k := range c.Keywords {
			b.WriteByte(2)
			b.WriteString(k)
		}
		b.WriteByte(3)
	}
	return b.String()
}

// sceneFields returns, in a fixed order, every scenario string a scene is
// derived from (appended to dst).
func sceneFields(dst []string, sc *scenario.Scenario) []string {
	dst = append(dst, sc.Proposal, sc.Background, sc.Domain, sc.AcceptMeans, sc.ConditionalMeans, sc.Persuadee.Name)
	for _, c := range sc.Hidden.Concerns {
		dst = append(dst, "\x01", c.Description, c.Voiced)
		dst = append(dst, c.Keywords...)
	}
	return dst
}

// ptrEntry is a scene found by a scenario's address, with the strings it
// was derived from: a hit compares them (cheap: the same strings), so an
// edited scenario never gets its old scene.
type ptrEntry struct {
	sc     *scene
	fields []string
}

// sceneOf returns sc's scene, from c when a scenario of the same content
// was seen.
func (c *embCache) sceneOf(sc *scenario.Scenario) *scene {
	var buf [64]string
	fields := sceneFields(buf[:0], sc)
	c.mu.Lock()
	if e := c.byPtr[sc]; e != nil && slices.Equal(e.fields, fields) {
		c.mu.Unlock()
		return e.sc
	}
	k := sceneKey(sc)
	s := c.scenes[k]
	c.mu.Unlock()
	if s == nil {
		s = c.newScene(sc)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.scenes[k]; t != nil {
		s = t // another episode derived it meanwhile
	} else {
		if len(c.scenes) >= maxScenes {
			clear(c.scenes)
			clear(c.byPtr)
		}
		c.scenes[k] = s
	}
	if len(c.byPtr) >= maxScenes {
		clear(c.byPtr) // scenarios made afresh per episode: keep the map bounded
	}
	c.byPtr[sc] = &ptrEntry{sc: s, fields: slices.Clone(fields)}
	return s
}

// expansion returns the lexicon neighbours of seed word id that may count
// as a concern's words (related, minus words too short, stop and
// acknowledging words, and words of more than maxSenses senses), from c.
func (c *embCache) expansion(id int32) []int32 {
	c.mu.Lock()
	rel, ok := c.expand[id]
	c.mu.Unlock()
	if ok {
		return rel
	}
	l := theLexicon()
	all := l.related(nil, id, maxHypo)
	rel = all[:0]
	for _, r := range all {
		w := l.words[r]
		if len(w) < 3 || stopWords.has(w) || ackWords[w] || l.senseCount(r) > maxSenses {
			continue
		}
		rel = append(rel, r)
	}
	rel = slices.Clip(rel)
	c.mu.Lock()
	if len(c.expand) >= maxExpand {
		clear(c.expand)
	}
	c.expand[id] = rel
	c.mu.Unlock()
	return rel
}

// basesOf returns the lexicon base ids of w (read only), from c.
func (c *embCache) basesOf(w string) []int32 {
	c.basesMu.RLock()
	ids, ok := c.bases[w]
	c.basesMu.RUnlock()
	if ok {
		return ids
	}
	ids = slices.Clip(theLexicon().bases(nil, w))
	c.basesMu.Lock()
	if len(c.bases) >= maxBases {
		clear(c.bases)
	}
	c.bases[strings.Clone(w)] = ids
	c.basesMu.Unlock()
	return ids
}

func (own *embCache) newScene(sc *scenario.Scenario) *scene {
	l := theLexicon()
	basesOf := own.basesOf
	s := &scene{
		own: own,
		n:   min(len(sc.Hidden.Concerns), 64), vocab: map[int32]uint64{}, seeds: map[int32]uint64{}, exact: map[string]uint64{},
		topic: map[int32]bool{}, topicW: map[string]bool{}, pubStem: map[string]bool{}, kwStem: map[string]bool{},
		public: strings.ToLower(strings.Join([]string{sc.Proposal, sc.Background, sc.Domain, sc.AcceptMeans, sc.ConditionalMeans}, " ")),
	}
	if f := strings.Fields(sc.Persuadee.Name); len(f) > 0 {
		s.name = strings.ToLower(f[0])
	}
	for _, t := range tokenize(sc.Proposal).toks {
		if oneWordCue(t.w) {
			if s.quoted == nil {
				s.quoted = map[string]bool{}
			}
			s.quoted[t.w] = true
		}
		if content(t) {
			s.topicW[t.w] = true
			for _, id := range basesOf(t.w) {
				s.topic[id] = true
			}
		}
	}
	// the proposal's own words, not the background's names and places
	for _, t := range tokenize(strings.Join([]string{sc.Proposal, sc.Domain, sc.AcceptMeans, sc.ConditionalMeans}, " ")).toks {
		if content(t) {
			s.pubStem[stem(t.w)] = true
		}
	}
	for ci := 0; ci < s.n; ci++ {
		c := &sc.Hidden.Concerns[ci]
		bit := uint64(1) << ci
		var seeds []int32
		for _, kw := range c.Keywords {
			ws := tokenize(kw).toks
			for _, t := range ws {
				if content(t) {
					s.kwStem[stem(t.w)] = true
				}
			}
			switch {
			case len(ws) == 1:
				w := ws[0].w
				ids := basesOf(w)
				if len(ids) == 0 {
					s.exact[w] |= bit
				}
				for _, id := range ids {
					s.vocab[id] |= bit
					s.seeds[id] |= bit
				}
				seeds = append(seeds, ids...)
			case len(ws) > 1:
				p := kwPhrase{mask: bit}
				for _, t := range ws {
					p.words = append(p.words, t.w)
				}
				s.phrases = append(s.phrases, p)
			}
		}
		for _, text := range []string{c.Description, c.Voiced} {
			for _, t := range tokenize(text).toks {
				if !content(t) || s.topicW[t.w] {
					continue
				}
				for _, id := range basesOf(t.w) {
					if !s.topic[id] && l.senseCount(id) <= maxSenses {
						s.vocab[id] |= bit
						s.seeds[id] |= bit
						seeds = append(seeds, id)
					}
				}
			}
		}
		for _, id := range seeds {
			for _, r := range own.expansion(id) {
				if s.topic[r] {
					continue
				}
				s.vocab[r] |= bit
			}
		}
	}
	return s
}

// stem is the first five letters of w (all of a shorter word): a crude
// stem that ties "apprentices" to "apprenticeship".
func stem(w string) string { return w[:min(len(w), 5)] }

// content reports whether t is a content word: a number, or a word of
// three letters or more that is neither a stop word nor a word of
// acknowledging.
func content(t token) bool {
	return t.num || len(t.w) >= 3 && !stopWords.has(t.w) && !ackWords[t.w]
}

var (
	ackWords  = setOf(ackText)
	linkWords = setOf(linkText)
)

// stopWords reports a stop word (prose.StopWords).
var stopWords = stopSet{}

type stopSet struct{}

func (stopSet) has(w string) bool { return prose.IsStop(w) }

// embSession is one episode of the embedded reader; it keeps what it has
// learnt of the transcript so far.
type embSession struct {
	sc       *scene
	seen     int
	pees     []*textInfo // the persuadee's replies so far
	said     bloom       // over their wordSets
	saidGram bloom       // over their gramSets
	last     []string    // content words of the persuadee's last reply (its textInfo's; read only)
	lastHash []uint64    // their hashes (wordHash)
	lastMask uint64      // concerns the last reply touches
	hasLast  bool
	earlier  []*textInfo // earlier persuader messages
	recent   [16]recentInfo
	nRecent  int
	cov      []bool       // Read's echo marks, reused
	conc     []Engagement // free room for Read's Perception.Concerns

	// Backing arrays, so an episode of typical length allocates none of
	// the above.
	peesArr    [16]*textInfo
	earlierArr [16]*textInfo
	covArr     [128]bool
	concArr    [64]Engagement
}

// recentInfo is one of the texts a session looked up last: a turn's text
// is looked up up to three times (tagged, read, taken in as history), and
// a scripted persuader repeats its lines within an episode, so the session
// keeps its last 16 texts rather than asking the scene's memo each time.
type recentInfo struct {
	text string
	ti   *textInfo
}

func (s *embSession) reset() {
	s.seen, s.last, s.lastHash, s.lastMask, s.hasLast = 0, nil, nil, 0, false
	s.pees, s.said, s.saidGram = s.peesArr[:0], bloom{}, bloom{}
	s.earlier = s.earlierArr[:0]
	s.cov = s.covArr[:0]
	if s.conc == nil {
		s.conc = s.concArr[:]
	}
}

// info returns the scene's analysis of text, from the session's recent
// texts when it is one of them.
func (s *embSession) info(text string) *textInfo {
	for i := range s.recent {
		if r := &s.recent[i]; r.ti != nil && r.text == text {
			return r.ti
		}
	}
	ti := s.sc.info(text)
	s.recent[s.nRecent%len(s.recent)] = recentInfo{text: text, ti: ti}
	s.nRecent++
	return ti
}

// absorb takes in the messages before the one being read.
func (s *embSession) absorb(ms []episode.Message) {
	if len(ms) < s.seen {
		s.reset()
	}
	for _, m := range ms[s.seen:] {
		ti := s.info(m.Text)
		if m.Speaker == episode.PersuaderSpeaker {
			s.earlier = append(s.earlier, ti)
			continue
		}
		s.lastMask, s.hasLast = 0, true
		s.pees = append(s.pees, ti)
		s.said.or(&ti.wordBloom)
		s.saidGram.or(&ti.gramBloom)
		// by base form, as relevance compares them
		s.last, s.lastHash = ti.baseWords, ti.baseHash
		for _, m := range ti.tokHit {
			s.lastMask |= m
		}
	}
	s.seen = len(ms)
}

func gram(ts []token) uint64 {
	h := fnv.New64a()
	for _, t := range ts {
		h.Write([]byte(t.w))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

func (sc *scene) contentSet(d doc) []uint64 {
	var out []uint64
	for _, t := range d.toks {
		if content(t) {
			h := fnv.New64a()
			w := t.w
			if ids := sc.own.basesOf(w); len(ids) > 0 {
				w = theLexicon().words[ids[0]]
			}
			h.Write([]byte(w))
			out = append(out, h.Sum64())
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func jaccard(a, b []uint64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(a) == len(b) && &a[0] == &b[0] {
		return 1 // one set (a text repeated verbatim)
	}
	i, j, inter := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// hits returns the concerns token i of d belongs to: a concern word (by
// base form), a keyword word outside the lexicon, or the first word of a
// keyword phrase that matches from i.
func (sc *scene) hits(d doc, i int) uint64 {
	w := d.toks[i].w
	m := sc.exact[w]
	for _, id := range sc.own.basesOf(w) {
		m |= sc.vocab[id]
	}
	for _, p := range sc.phrases {
		if i+len(p.words) > len(d.toks) || d.toks[i+len(p.words)-1].sent != d.toks[i].sent {
			continue
		}
		ok := true
		for k, pw := range p.words {
			if !sc.sameWord(d.toks[i+k].w, pw) {
				ok = false
				break
			}
		}
		if ok {
			m |= p.mask
		}
	}
	return m
}

// seedHit reports whether w is a seed of some concern (by base form).
func (sc *scene) seedHit(w string) bool {
	if sc.exact[w] != 0 {
		return true
	}
	for _, id := range sc.own.basesOf(w) {
		if sc.seeds[id] != 0 {
			return true
		}
	}
	return false
}

// sameWord reports whether two words are equal or share a base form.
func (sc *scene) sameWord(a, b string) bool {
	if a == b {
		return true
	}
	for _, x := range sc.own.basesOf(a) {
		for _, y := range sc.own.basesOf(b) {
			if x == y {
				return true
			}
		}
	}
	return false
}

// textInfo is everything the reader derives from one text on one scene
// alone, memoised per scene (persuaders and the persuadee repeat their
// texts across turns and episodes); the history-dependent readings (echo,
// newness, repetition, relevance) are computed per Read from it.
type textInfo struct {
	d         doc
	corrected bool
	tags      tagger.Tags // of the corrected text, when corrected
	rawTags   tagger.Tags // tagger.Tag of the text as written
	tokHit    []uint64    // per token: the concerns it names
	grams     []uint64    // per token i with i+4 <= len: the hash of tokens i..i+3
	content   []bool      // per token: a content word
	sentHit   []uint64    // per sentence: the concerns it names
	sentFlags []uint8     // per sentence: sfDismiss, sfAck, sfLink, sfCue
	cues      CueSet
	claims    int
	// onTopic reports whether the message names the proposal or a
	// concern: a content word of the public proposal text or of a
	// concern's keywords (by stem). Only then can it answer a concern
	// (engage): an argument about something else answers no worry about
	// this proposal, however generic the worry's words.
	onTopic   bool
	set       []uint64 // content-word hashes, sorted
	words     []string // the tokens' words and their base forms
	wordSet   []uint64 // hashes of words, sorted, unique
	tokHash   []uint64 // per token: the hash of its word
	gramSet   []uint64 // grams, sorted, unique
	baseWords []string // per content token: its first base form (or the word)
	baseHash  []uint64 // per baseWords entry: its hash
	wordBloom bloom    // over wordSet
	gramBloom bloom    // over gramSet
}

func wordHash(w string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(w); i++ {
		h = (h ^ uint64(w[i])) * 1099511628211
	}
	return h
}

const (
	sfDismiss uint8 = 1 << iota
	sfAck
	sfLink
	// sfCue: the sentence carries a manipulation cue (cuesOf).
	sfCue
)

// maxMemo bounds a scene's text memo; past it the memo is emptied.
const maxMemo = 4096

func (sc *scene) info(text string) *textInfo {
	if ti := sc.memo.load(text); ti != nil {
		return ti
	}
	ti := sc.analyse(text)
	sc.memo.store(sc.own, text, ti)
	return ti
}

func (sc *scene) analyse(text string) *textInfo {
	ti := &textInfo{}
	raw := tokenize(text)
	ti.d, ti.corrected = sc.correct(raw)
	ti.rawTags = tagger.TagDoc(raw.pd)
	ti.tags = ti.rawTags
	if ti.corrected {
		ti.tags = tagger.TagDoc(ti.d.pd)
	}
	d := ti.d
	l := theLexicon()
	ti.tokHit = make([]uint64, len(d.toks))
	ti.content = make([]bool, len(d.toks))
	for i, t := range d.toks {
		ti.tokHit[i] = sc.hits(d, i)
		ti.content[i] = content(t)
		ti.words = append(ti.words, t.w)
		for _, id := range sc.own.basesOf(t.w) {
			ti.words = append(ti.words, l.words[id])
		}
		if i+4 <= len(d.toks) {
			ti.grams = append(ti.grams, gram(d.toks[i:i+4]))
		}
	}
	ti.sentHit = make([]uint64, len(d.sents))
	ti.sentFlags = make([]uint8, len(d.sents))
	cd := sc.cueDoc(d)
	for si, st := range d.sents {
		for i := st.first; i < st.end; i++ {
			ti.sentHit[si] |= ti.tokHit[i]
		}
		ts := d.toks[st.first:st.end]
		var f uint8
		if matchAny(cd, cd.toks[st.first:st.end], dismissPhrases) {
			f |= sfDismiss
		}
		if matchAny(d, ts, ackPhrases) {
			f |= sfAck
		}
		if sc.linked(d, st, ti.tokHit) {
			f |= sfLink
		}
		ti.sentFlags[si] = f
	}
	ti.cues = cuesOf(cd, ti.sentFlags)
	for _, t := range d.toks {
		if content(t) && (sc.pubStem[stem(t.w)] || sc.kwStem[stem(t.w)]) {
			ti.onTopic = true
			break
		}
	}
	ti.claims = sc.claims(d)
	ti.set = sc.contentSet(d)
	for _, w := range ti.words {
		ti.wordSet = append(ti.wordSet, wordHash(w))
	}
	slices.Sort(ti.wordSet)
	ti.wordSet = slices.Compact(ti.wordSet)
	ti.tokHash = make([]uint64, len(d.toks))
	for i, t := range d.toks {
		ti.tokHash[i] = wordHash(t.w)
	}
	for i, t := range d.toks {
		if ti.content[i] {
			w := t.w
			if ids := sc.own.basesOf(w); len(ids) > 0 {
				w = l.words[ids[0]]
			}
			ti.baseWords = append(ti.baseWords, w)
		}
	}
	sg := slices.Clone(ti.grams)
	slices.Sort(sg)
	ti.gramSet = slices.Compact(sg)
	ti.baseHash = make([]uint64, len(ti.baseWords))
	for i, w := range ti.baseWords {
		ti.baseHash[i] = wordHash(w)
	}
	for _, h := range ti.wordSet {
		ti.wordBloom.add(h)
	}
	for _, h := range ti.gramSet {
		ti.gramBloom.add(h)
	}
	return ti
}

// peeSaid reports whether the persuadee's replies hold word hash h (or,
// with gram, the 4-word run hash h).
func (s *embSession) peeSaid(h uint64, gram bool) bool {
	if gram && !s.saidGram.mayHave(h) || !gram && !s.said.mayHave(h) {
		return false
	}
	for _, ti := range s.pees {
		set := ti.wordSet
		if gram {
			set = ti.gramSet
		}
		if _, ok := slices.BinarySearch(set, h); ok {
			return true
		}
	}
	return false
}

// Tags returns tagger.Tag(text) from the scene's memo (see Tagger).
func (s *embSession) Tags(text string) tagger.Tags { return s.info(text).rawTags }

// Read perceives the last message of in.Transcript (see Embedded).
// Errors: ErrNoMessage.
func (s *embSession) Read(_ context.Context, in Input) (Perception, error) {
	msg, err := in.last()
	if err != nil {
		return Perception{}, err
	}
	s.absorb(in.Transcript[:len(in.Transcript)-1])
	ti := s.info(msg.Text)
	d := ti.d
	var p Perception
	tg := ti.tags
	p.Acts, p.Strategies, p.Pressure = tg.Acts, tg.Strategies, tg.Pressure
	// each Read's Concerns its own memory, carved from a block
	if len(s.conc) < s.sc.n {
		s.conc = make([]Engagement, max(64, s.sc.n))
	}
	p.Concerns, s.conc = s.conc[:s.sc.n:s.sc.n], s.conc[s.sc.n:]
	hit := ti.sentHit
	covered := s.echoed(ti)
	for si, st := range d.sents {
		if hit[si] == 0 {
			continue
		}
		// the sentence, and the next one when it names no other concern,
		// asks nothing and carries no manipulation cue ("You mentioned
		// the cost. In similar cases, ...")
		end := st.end
		if si+1 < len(d.sents) && hit[si+1]&^hit[si] == 0 && !d.sents[si+1].question && ti.sentFlags[si+1]&sfCue == 0 {
			end = d.sents[si+1].end
		}
		e := s.engage(ti, si, end, covered)
		for ci := 0; ci < s.sc.n; ci++ {
			if hit[si]&(1<<ci) == 0 {
				continue
			}
			if cur := p.Concerns[ci]; e == Dismissed || cur != Dismissed && e > cur {
				p.Concerns[ci] = e
			}
		}
	}
	p.Cues = ti.cues
	p.Unsupported = ti.claims
	n := 0
	for _, c := range covered {
		if c {
			n++
		}
	}
	if len(d.toks) > 0 {
		p.Echo = float64(n) / float64(len(d.toks))
	}
	for _, e := range s.earlier {
		if jaccard(ti.set, e.set) >= RepeatOverlap {
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

// engage classifies how the sentence st (with its content window up to
// token end) engages the concerns it names. The words of a sentence that
// carries a manipulation cue bring nothing to an answer: pressure is no
// reason, so a cue can never turn an acknowledgement into an answer.
func (s *embSession) engage(ti *textInfo, si, end int, covered []bool) Engagement {
	st, f := ti.d.sents[si], ti.sentFlags[si]
	if f&sfDismiss != 0 {
		return Dismissed
	}
	newC, echoC, contentN := 0, 0, 0
	for i := st.first; i < end; i++ {
		if !ti.content[i] || ti.sentFlags[ti.d.toks[i].sent]&sfCue != 0 {
			continue
		}
		contentN++
		if covered[i] {
			echoC++
			continue
		}
		if !s.peeSaid(ti.tokHash[i], false) {
			newC++
		}
	}
	switch {
	case f&(sfLink|sfAck) == 0:
		return Mentioned
	case st.question:
		return Acknowledged
	case newC >= minContent && 2*echoC < contentN && ti.onTopic:
		return Answered
	}
	return Acknowledged
}

// linked reports whether sentence st ties itself to the persuadee or the
// proposal: a second-person or first-person-plural word, the persuadee's
// name, a content word of the proposal (by stem), outside the concern's
// own words ("your share" is no link), or three words that are concerns'
// keywords or description words (not merely related to them).
func (sc *scene) linked(d doc, st sentence, tokHit []uint64) bool {
	words := 0
	for i := st.first; i < st.end; i++ {
		t := d.toks[i]
		if content(t) && sc.seedHit(t.w) {
			words++
		}
		if tokHit[i] != 0 || i > st.first && tokHit[i-1] != 0 && !content(t) {
			continue
		}
		if linkWords[t.w] || t.w == sc.name || content(t) && sc.pubStem[stem(t.w)] {
			return true
		}
	}
	return words >= 3
}

// oneWordCue reports whether w is a one-word phrase of a manipulation
// cue's or dismissal's list.
func oneWordCue(w string) bool {
	for _, ps := range [][]string{dismissPhrases, guiltPhrases, urgencyPhrases, socialPhrases, threatPhrases} {
		if slices.Contains(ps, w) {
			return true
		}
	}
	return false
}

// cueDoc returns d with the scene's quoted proposal words (scene.quoted)
// masked, for matching cues and dismissals; d itself when there are none
// (almost every scenario).
func (sc *scene) cueDoc(d doc) doc {
	if len(sc.quoted) == 0 {
		return d
	}
	m := d
	m.toks = slices.Clone(d.toks)
	for i := range m.toks {
		if sc.quoted[m.toks[i].w] {
			m.toks[i].w = "\x00"
		}
	}
	return m
}

// cuesOf finds the manipulation cues of d and sets sfCue in flags[si]
// for each sentence si that carries one (flags has one entry per
// sentence).
func cuesOf(d doc, flags []uint8) CueSet {
	var c CueSet
	for si, st := range d.sents {
		var sc CueSet
		ts := d.toks[st.first:st.end]
		if matchAny(d, ts, guiltPhrases) {
			sc = sc.With(Guilt)
		}
		if matchAny(d, ts, urgencyPhrases) {
			sc = sc.With(Urgency)
		}
		if matchAny(d, ts, dismissPhrases) {
			sc = sc.With(Contempt)
		}
		if matchAny(d, ts, socialPhrases) {
			sc = sc.With(SocialProof)
		}
		if matchAny(d, ts, threatPhrases) {
			sc = sc.With(Threat)
		}
		if at := firstMatch(d, ts, autonomyPhrases); at >= 0 {
			but, next := false, false
			for _, t := range ts[at:] {
				if t.w == "but" || t.w == "however" {
					but = true
				}
			}
			if !but && si+1 < len(d.sents) {
				nx := d.toks[d.sents[si+1].first]
				but = nx.w == "but" || nx.w == "however"
				next = but
			}
			if but {
				sc = sc.With(AutonomyBut)
			}
			if next {
				// "It's your choice. But ...": the taking back too
				flags[si+1] |= sfCue
			}
		}
		if sc != 0 {
			flags[si] |= sfCue
		}
		c |= sc
	}
	return c
}

// claims counts the specific figures and named sources of d that the
// public scenario text does not contain.
func (sc *scene) claims(d doc) int {
	seen := map[string]bool{}
	for _, st := range d.sents {
		ts := d.toks[st.first:st.end]
		study := false
		for _, t := range ts {
			if studyWords[t.w] {
				study = true
			}
		}
		for i, t := range ts {
			var claim string
			nx := func(k int) string {
				if i+k < len(ts) {
					return ts[i+k].w
				}
				return ""
			}
			switch {
			case t.num || numberWords[t.w]:
				switch {
				case nx(1) == "percent" || nx(1) == "per" && nx(2) == "cent":
					claim = t.w + "%"
				case nx(1) == "out" && nx(2) == "of", nx(1) == "in" && (ts[min(i+2, len(ts)-1)].num || numberWords[nx(2)]):
					claim = t.w + " in " + nx(2)
				case nx(1) == "times" && (nx(2) == "more" || nx(2) == "less" || nx(2) == "as" || nx(2) == "likelier" || nx(2) == "higher" || nx(2) == "lower" || nx(2) == "likely"):
					claim = t.w + " times"
				case t.num && (len(t.w) >= 3 || strings.ContainsRune(t.w, ',')) && (figureNouns[nx(1)] || figureNouns[nx(2)]):
					claim = t.w
				case t.num && len(t.w) == 4 && (t.w[:2] == "19" || t.w[:2] == "20") && study:
					claim = t.w
				}
			case t.upper && sourceNames[t.w]:
				claim = t.w
			case t.upper && sourceNouns[t.w] && i > 0 && ts[i-1].upper:
				claim = ts[i-1].w + " " + t.w
			}
			if claim == "" || seen[claim] {
				continue
			}
			seen[claim] = true
			key := strings.TrimSuffix(strings.Fields(claim)[0], "%")
			if !strings.Contains(sc.public, key) {
				continue
			}
			seen[claim] = false // supported: not counted
		}
	}
	n := 0
	for _, v := range seen {
		if v {
			n++
		}
	}
	return n
}

var numberWords = setOf("one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million half third quarter")

// relevance is how far d takes up the persuadee's last reply: 1 with no
// reply yet or one with no content, or when d engages a concern the reply
// touched; else the share of up to three of the reply's content words d
// shares (by base form).
func (s *embSession) relevance(ti *textInfo, hitMask uint64) float64 {
	if !s.hasLast || len(s.last) == 0 || s.lastMask&hitMask != 0 {
		return 1
	}
	shared := 0
	for i, w := range s.last {
		// ti.wordSet holds the hash of every word of ti.words: a hash not
		// in it is a word not in them
		if _, ok := slices.BinarySearch(ti.wordSet, s.lastHash[i]); ok && slices.Contains(ti.words, w) {
			shared++
		}
	}
	return min(1, float64(shared)/float64(min(3, len(s.last))))
}

// Phrase matching over tokens: each list is compiled once, indexed by
// its phrases' first words.
type phrase [][]string

type phraseIndex struct {
	byFirst map[string][]phrase
	any     []phrase // phrases whose first word is "*"
}

var phraseCache sync.Map // *string (the list's first element) -> *phraseIndex

func compiled(ps []string) *phraseIndex {
	if v, ok := phraseCache.Load(&ps[0]); ok {
		return v.(*phraseIndex)
	}
	ix := &phraseIndex{byFirst: map[string][]phrase{}}
	for _, p := range ps {
		var ph phrase
		for _, w := range strings.Fields(strings.ReplaceAll(p, "-", " ")) {
			ph = append(ph, strings.Split(w, "/"))
		}
		if ph[0][0] == "*" {
			ix.any = append(ix.any, ph)
			continue
		}
		for _, w := range ph[0] {
			ix.byFirst[w] = append(ix.byFirst[w], ph)
		}
	}
	phraseCache.Store(&ps[0], ix)
	return ix
}

func matchAny(d doc, ts []token, ps []string) bool { return firstMatch(d, ts, ps) >= 0 }

// firstMatch returns the index in ts (tokens of d) where one of ps first
// matches without being negated (prose.Doc.Negated), or -1.
func firstMatch(d doc, ts []token, ps []string) int {
	ix := compiled(ps)
	for i := range ts {
		for _, list := range [2][]phrase{ix.byFirst[ts[i].w], ix.any} {
			for _, p := range list {
				if i+len(p) > len(ts) {
					continue
				}
				ok := true
				for k := 1; k < len(p); k++ {
					if p[k][0] != "*" && !slices.Contains(p[k], ts[i+k].w) {
						ok = false
						break
					}
				}
				if ok && !d.pd.Negated(ts[i].i) {
					return i
				}
			}
		}
	}
	return -1
}
