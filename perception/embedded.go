package perception

import (
	"context"
	"errors"
	"maps"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/prose"
	"github.com/persuarena/persuarena/scenario"
)

// Embedded is the model-free reader (docs/simulator/reader.md, "The embedded
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
	vocab   idTable[uint64]   // lexicon word id -> concerns (bit i = concern i)
	matter  idTable[uint8]    // the public scenario's things and their lexicon neighbours: matterNear, matterFar bits
	seeds   map[int32]uint64  // the seeds alone (keywords, description words)
	exact   map[string]uint64 // keyword words not in the lexicon -> concerns
	phrases []kwPhrase
	// phraseHead is a filter over the phrases' first words and their
	// base forms (bit256 of the word's hash or of the base id): a token
	// in neither starts no phrase.
	phraseHead sig256
	topicW     map[string]bool
	pubStem    map[string]bool // stems (stem) of the public text's content words
	kwStem     map[string]bool // stems of the concerns' own keyword words
	// quoted are the proposal's words that are also one-word manipulation
	// or dismissal phrases ("stupid" in "Social media are making people
	// stupid"): quoting the proposition is its topic, not contempt, so
	// they are masked when cues and dismissals are matched (cueDoc).
	quoted map[string]bool
	own    *embCache // the reader's caches the scene belongs to
	id     uint64    // the scene's number in its reader (memo hashing)
	name   string    // the persuadee's first name, lower-case
	public string    // the public scenario text, lower-case
}

type kwPhrase struct {
	words []string
	bases [][]int32 // per word, its base forms
	mask  uint64
}

// Bounds of an embedded reader's caches.
const (
	// maxScenes is the most scenarios whose vocabularies a reader keeps
	// (about 30 KB each; scenario.Cache: past it one is dropped for each
	// new one, and the next episode on it derives it again, about 0.3
	// ms). Choice: 256, above the 240 held-out scenarios of the default
	// eval; a run plays a scenario's episodes together (eval.Plan), so a
	// larger run derives each scene about once.
	maxScenes = 256
	// maxExpand is the most seed words whose lexicon neighbourhoods
	// (expand) a reader keeps.
	maxExpand = 1 << 14
	// maxWords is the most words whose wordInfo a reader keeps.
	maxWords = 1 << 16
)

// embCache is what one embedded reader keeps between episodes: scenes by
// content, the lexicon neighbourhoods of seed words, the
// base forms of words read, and the budget of the scenes' text memos. Each is bounded; a cache never changes a reading.
type embCache struct {
	scenes *scenario.Cache[*scene] // maxScenes at most
	mu     sync.Mutex              // guards expand
	expand map[int32][]int32       // seed word id -> its filtered lexicon neighbours

	words [wordShards]wordShard
	// unknown holds the wordInfo of recent words the reader has nothing
	// on, one per slot (by hash): bounded, so new words cost no memory.
	unknown [1 << 10]atomic.Pointer[unknownWord]

	memo *prose.Memo[memoKey, *textInfo] // text analyses, memoBudget at most
	// seen holds the hashes of texts analysed once: a text is memoised
	// from its second analysis on, so texts that never repeat (a language
	// model's) cost the memo nothing.
	seen [1 << 12]atomic.Uint64
	// nScenes numbers the scenes derived (scene.id).
	nScenes atomic.Uint64
	// gather is the gatherer kept between scene derivations (1.2 MB).
	gather atomic.Pointer[gatherer]
}

// memoBudget bounds the text analyses a reader memoises: texts of at
// most recentLong bytes, so at most about 30 KB each (30 MB in all).
const memoBudget = 1 << 10

func newEmbCache() *embCache {
	return &embCache{scenes: scenario.NewCache[*scene](maxScenes),
		expand: map[int32][]int32{}, memo: prose.NewMemo[memoKey, *textInfo](memoBudget)}
}

// sceneFields returns, in a fixed order, every scenario string a scene is
// derived from (appended to dst), each keyword list after its length, so
// that no two scenarios share the fields.
func sceneFields(dst []string, sc *scenario.Scenario) []string {
	dst = append(dst, sc.Proposal, sc.Background, sc.Domain, sc.AcceptMeans, sc.ConditionalMeans, sc.Persuadee.Name)
	for _, c := range sc.Hidden.Concerns {
		dst = append(dst, c.Description, c.Voiced, strconv.Itoa(len(c.Keywords)))
		dst = append(dst, c.Keywords...)
	}
	return dst
}

// sceneOf returns sc's scene, from c when a scenario of the same content
// was seen.
func (c *embCache) sceneOf(sc *scenario.Scenario) *scene {
	var buf [64]string
	return c.scenes.Get(sceneFields(buf[:0], sc), func() *scene { return c.newScene(sc) })
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
		w := l.word(r)
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

// wordInfo is what the reader looks up about a word once per reader:
// its frame key, classes, lexical fields and lexicon base forms.
type wordInfo struct {
	key    string
	keyBit uint8 // keyBit(key)
	cls    wclass
	fields uint64
	bases  []int32
	// hashes are wordHash of the word and of each of its base forms;
	// baseHash that of its first base form (the word when it has none).
	hashes   []uint64
	baseHash uint64
	// frames are the frames whose first word the word can be
	// (frameBank.byKey of its key).
	frames []*frame
}

// newWordInfo derives w's wordInfo.
func newWordInfo(w string) *wordInfo {
	k := frameKey(w)
	l := theLexicon()
	wi := &wordInfo{key: k, keyBit: keyBit(k), cls: wordClasses[w], fields: fieldsOf(w, k), bases: slices.Clip(l.bases(nil, w)), frames: frames.byKey[k]}
	wi.hashes = make([]uint64, 1, 1+len(wi.bases))
	wi.hashes[0] = wordHash(w)
	wi.baseHash = wi.hashes[0]
	for i, id := range wi.bases {
		h := wordHash(l.word(id))
		wi.hashes = append(wi.hashes, h)
		if i == 0 {
			wi.baseHash = h
		}
	}
	return wi
}

// word returns the wordInfo (read only) of w, whose hash is h, from c. A
// word the reader has nothing on (no base form, class or field: a name,
// a typo, a made-up word) is kept only in a fixed-size table (unknown),
// so texts that never repeat grow no cache. Reads take no lock: each
// shard of c.words is a published map, replaced (never written) once the
// words added since are as many as a quarter of it.
func (c *embCache) word(w string, h uint64) *wordInfo {
	sh := &c.words[h&(wordShards-1)]
	if m := sh.read.Load(); m != nil {
		if wi, ok := (*m)[w]; ok {
			return wi
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if wi, ok := sh.dirty[w]; ok {
		return wi
	}
	u := &c.unknown[h&(uint64(len(c.unknown))-1)]
	if e := u.Load(); e != nil && e.w == w {
		return e.wi
	}
	wi := newWordInfo(w)
	if wi.cls == 0 && wi.fields == 0 && len(wi.bases) == 0 && len(wi.frames) == 0 {
		// kept only in a small table of recent words (names recur)
		u.Store(&unknownWord{w: strings.Clone(w), wi: wi})
		return wi
	}
	old := sh.read.Load()
	n := 0
	if old != nil {
		n = len(*old)
	}
	if n+len(sh.dirty) >= maxWords/wordShards {
		sh.read.Store(nil)
		clear(sh.dirty)
		n, old = 0, nil
	}
	if sh.dirty == nil {
		sh.dirty = map[string]*wordInfo{}
	}
	sh.dirty[strings.Clone(w)] = wi
	if len(sh.dirty) >= max(16, n/4) {
		m := make(map[string]*wordInfo, n+len(sh.dirty))
		if old != nil {
			maps.Copy(m, *old)
		}
		maps.Copy(m, sh.dirty)
		sh.read.Store(&m)
		clear(sh.dirty)
	}
	return wi
}

// unknownWord is an entry of embCache.unknown.
type unknownWord struct {
	w  string
	wi *wordInfo
}

// wordShards is the number of shards of a reader's word cache (a power
// of two).
const wordShards = 16

// wordShard is one shard of the word cache (embCache.word).
type wordShard struct {
	mu    sync.Mutex
	read  atomic.Pointer[map[string]*wordInfo] // published, read without a lock
	dirty map[string]*wordInfo                 // added since, under mu
}

// tokens returns the tokens of text, read with c's word cache.
func (c *embCache) tokens(text string) []token {
	d := tokenize(c, text)
	release(&d)
	return d.toks
}

// basesOf returns the lexicon base ids of w (read only), from c.
func (c *embCache) basesOf(w string) []int32 { return c.word(w, prose.Hash(w)).bases }

func (own *embCache) newScene(sc *scenario.Scenario) *scene {
	l := theLexicon()
	s := &scene{
		own: own, id: own.nScenes.Add(1),
		n: min(len(sc.Hidden.Concerns), 64), seeds: map[int32]uint64{}, exact: map[string]uint64{},
		topicW: map[string]bool{}, pubStem: map[string]bool{}, kwStem: map[string]bool{},
		public: strings.ToLower(strings.Join([]string{sc.Proposal, sc.Background, sc.Domain, sc.AcceptMeans, sc.ConditionalMeans}, " ")),
	}
	if f := strings.Fields(sc.Persuadee.Name); len(f) > 0 {
		s.name = strings.ToLower(f[0])
	}
	// put back at the end, not deferred: a gatherer a panic left half
	// filled must not serve the next scene
	g := own.gatherer()
	for _, t := range own.tokens(sc.Proposal) {
		if oneWordCue(t.w) {
			if s.quoted == nil {
				s.quoted = map[string]bool{}
			}
			s.quoted[t.w] = true
		}
		if content(t) {
			s.topicW[t.w] = true
			for _, id := range t.wi.bases {
				g.markTopic(id)
			}
		}
	}
	// the proposal's own words, not the background's names and places
	for _, t := range own.tokens(strings.Join([]string{sc.Proposal, sc.Domain, sc.AcceptMeans, sc.ConditionalMeans}, " ")) {
		if content(t) {
			s.pubStem[stem(t.w)] = true
		}
	}
	for ci := 0; ci < s.n; ci++ {
		c := &sc.Hidden.Concerns[ci]
		bit := uint64(1) << ci
		var seeds []int32
		for _, kw := range c.Keywords {
			ws := own.tokens(kw)
			for _, t := range ws {
				if content(t) {
					s.kwStem[stem(t.w)] = true
				}
			}
			switch {
			case len(ws) == 1:
				w := ws[0].w
				ids := ws[0].wi.bases
				if len(ids) == 0 {
					s.exact[w] |= bit
				}
				for _, id := range ids {
					g.add(id, bit)
					s.seeds[id] |= bit
				}
				seeds = append(seeds, ids...)
			case len(ws) > 1:
				p := kwPhrase{mask: bit}
				for _, t := range ws {
					p.words = append(p.words, t.w)
					p.bases = append(p.bases, t.wi.bases)
				}
				s.phrases = append(s.phrases, p)
				s.phraseHead.add(bit256(wordHash(p.words[0])))
				for _, id := range p.bases[0] {
					s.phraseHead.add(bit256(uint64(id)))
				}
			}
		}
		for _, text := range []string{c.Description, c.Voiced} {
			for _, t := range own.tokens(text) {
				if !content(t) || s.topicW[t.w] {
					continue
				}
				for _, id := range t.wi.bases {
					if !g.isTopic(id) && l.senseCount(id) <= maxSenses {
						g.add(id, bit)
						s.seeds[id] |= bit
						seeds = append(seeds, id)
					}
				}
			}
		}
		// a seed reached twice (a keyword's word in the description)
		// adds nothing the second time
		slices.Sort(seeds)
		for _, id := range slices.Compact(seeds) {
			for _, r := range own.expansion(id) {
				if !g.isTopic(r) {
					g.add(r, bit)
				}
			}
		}
	}
	g.clearTopic()
	s.vocab = idTableOf[uint64](g)
	// the matter at hand: the public scenario's things (nounish content
	// words) and their lexicon neighbours (onMatter); matterNear marks
	// those of its specific things (at most specificSenses senses)
	for _, t := range own.tokens(s.public) {
		if !content(t) || t.wi.cls&(wGeneric|wWorry) != 0 || len(t.wi.bases) == 0 ||
			!l.nounish(t.wi.bases[0]) {
			continue
		}
		bit := matterFar
		if l.senseCount(t.wi.bases[0]) <= specificSenses {
			bit |= matterNear
		}
		for _, id := range t.wi.bases {
			g.add(id, uint64(bit))
			for _, r := range own.expansion(id) {
				g.add(r, uint64(bit))
			}
		}
	}
	s.matter = idTableOf[uint8](g)
	own.putGatherer(g)
	return s
}

// idTable maps lexicon word ids to bit sets: the ids sorted, their sets
// beside them (a scene holds two of about 1,400 words each, and a reader
// keeps up to maxScenes scenes: sorted arrays take a third of a map's
// memory, at about the same look-up cost).
type idTable[B uint8 | uint64] struct {
	ids  []int32
	bits []B
	// filter has bit idFilterBit(id) set for each id: most look-ups are
	// of words not in the table, and the filter answers those.
	filter *[idFilterBits / 64]uint64
}

// gatherer collects bits per lexicon word id, in time linear in the
// additions (a scene's lists reach each word about ten times): bits
// indexed by word id and a bitmap of the ids added, all zero between
// uses. The bitmap yields the ids in order without sorting them (a
// sort of the scene's few thousand ids was a third of a scene's cost).
type gatherer struct {
	bits  []uint64
	marks []uint64 // bit id%64 of word id/64: id was added
	n     int      // ids added
	// topic marks the proposal's words (bit id%64 of word id/64), which
	// widen no concern; topicIDs lists them for clearTopic.
	topic    []uint64
	topicIDs []int32
}

func (g *gatherer) markTopic(id int32) {
	g.topic[id>>6] |= 1 << (id & 63)
	g.topicIDs = append(g.topicIDs, id)
}

func (g *gatherer) isTopic(id int32) bool { return g.topic[id>>6]&(1<<(id&63)) != 0 }

// clearTopic unmarks every topic word.
func (g *gatherer) clearTopic() {
	for _, id := range g.topicIDs {
		g.topic[id>>6] = 0
	}
	g.topicIDs = g.topicIDs[:0]
}

func (g *gatherer) add(id int32, b uint64) {
	if w, m := &g.marks[id>>6], uint64(1)<<(id&63); *w&m == 0 {
		*w |= m
		g.n++
	}
	g.bits[id] |= b
}

// idTableOf returns the table of g's ids and bits and empties g.
func idTableOf[B uint8 | uint64](g *gatherer) idTable[B] {
	t := idTable[B]{ids: make([]int32, 0, g.n), bits: make([]B, 0, g.n), filter: new([idFilterBits / 64]uint64)}
	for wi, w := range g.marks {
		if w == 0 {
			continue
		}
		g.marks[wi] = 0
		for ; w != 0; w &= w - 1 {
			id := int32(wi<<6 + bits.TrailingZeros64(w))
			t.ids = append(t.ids, id)
			t.bits = append(t.bits, B(g.bits[id]))
			f := idFilterBit(id)
			t.filter[f>>6] |= 1 << (f & 63)
			g.bits[id] = 0
		}
	}
	g.n = 0
	return t
}

// gatherer returns an empty gatherer of c's (one is kept between scenes;
// concurrent derivations make their own).
func (c *embCache) gatherer() *gatherer {
	if g := c.gather.Swap(nil); g != nil {
		return g
	}
	n := theLexicon().numWords()
	return &gatherer{bits: make([]uint64, n), marks: make([]uint64, (n+63)/64), topic: make([]uint64, (n+63)/64)}
}

func (c *embCache) putGatherer(g *gatherer) { c.gather.Store(g) }

// get returns id's bits (0 when absent).
func (t idTable[B]) get(id int32) B {
	if f := idFilterBit(id); t.filter == nil || t.filter[f>>6]&(1<<(f&63)) == 0 {
		return 0
	}
	if i, ok := slices.BinarySearch(t.ids, id); ok {
		return t.bits[i]
	}
	return 0
}

// idFilterLog is log2 of the size in bits of an idTable's filter.
// Choice: 2^14 bits (2 KB a table): a scene's table of about 1,400 ids
// sets under a tenth of them, so nine words in ten that are not in the
// table are told so without a search.
const (
	idFilterLog  = 14
	idFilterBits = 1 << idFilterLog
)

// idFilterBit is id's bit in an idTable's filter (Fibonacci hashing).
func idFilterBit(id int32) uint32 {
	return uint32(uint64(uint32(id)) * 0x9e3779b97f4a7c15 >> (64 - idFilterLog))
}

// len returns the number of ids.
func (t idTable[B]) len() int { return len(t.ids) }

// stem is the first five letters of w (all of a shorter word): a crude
// stem that ties "apprentices" to "apprenticeship".
func stem(w string) string { return w[:min(len(w), 5)] }

// content reports whether t is a content word: a number, or a word of
// three letters or more that is neither a stop word nor a word of
// acknowledging.
func content(t token) bool {
	return t.num || len(t.w) >= 3 && t.wi.cls&(wStop|wAck) == 0
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
	lastHash []uint64    // hashes of the base forms of the persuadee's last reply's content words (read only)
	lastMask uint64      // concerns the last reply touches
	hasLast  bool
	earlier  [][]uint64 // earlier persuader messages' content-word sets (textInfo.set)
	recent   [16]recentInfo
	nRecent  int
	cov      []bool       // Read's echo marks, reused
	conc     []Engagement // free room for Read's Perception.Concerns

	// Backing arrays, so an episode of typical length allocates none of
	// the above.
	peesArr    [16]*textInfo
	earlierArr [16][]uint64
	covArr     [128]bool
	concArr    [64]Engagement
}

// recentInfo is one of the texts a session looked up last: a turn's text
// is looked up up to three times (tagged, read, taken in as history), and
// a scripted persuader repeats its lines within an episode, so the session
// keeps its last 16 texts rather than asking the scene's memo each time;
// of texts over recentLong bytes only the latest is kept.
//
// Choice: an analysis holds about 30 times its text (500 KB for a 16 KiB
// message), so a session that kept its last 16 long messages' would hold
// megabytes; the latest long one is what the next turns ask for again,
// and long texts rarely repeat.
type recentInfo struct {
	text  string
	reply bool
	ti    *textInfo
}

func (s *embSession) reset() {
	s.seen, s.lastHash, s.lastMask, s.hasLast = 0, nil, 0, false
	s.pees, s.said, s.saidGram = s.peesArr[:0], bloom{}, bloom{}
	s.earlier = s.earlierArr[:0]
	s.cov = s.covArr[:0]
	if s.conc == nil {
		s.conc = s.concArr[:]
	}
}

// info returns the scene's analysis of text (a persuadee reply's when
// reply), from the session's recent texts when it is one of them.
func (s *embSession) info(text string, reply bool) *textInfo {
	for i := range s.recent {
		if r := &s.recent[i]; r.ti != nil && r.reply == reply && r.text == text {
			return r.ti
		}
	}
	ti := s.sc.info(text, reply)
	if len(text) > recentLong {
		for i := range s.recent {
			if len(s.recent[i].text) > recentLong {
				s.recent[i] = recentInfo{}
			}
		}
	}
	s.recent[s.nRecent%len(s.recent)] = recentInfo{text: text, reply: reply, ti: ti}
	s.nRecent++
	return ti
}

// recentLong is the length over which a session keeps only its latest
// text's analysis (recentInfo).
const recentLong = 1024

// absorb takes in the messages before the one being read.
func (s *embSession) absorb(ms []episode.Message) {
	if len(ms) < s.seen {
		s.reset()
	}
	for _, m := range ms[s.seen:] {
		ti := s.info(m.Text, m.Speaker != episode.PersuaderSpeaker)
		if m.Speaker == episode.PersuaderSpeaker {
			s.earlier = append(s.earlier, ti.set)
			continue
		}
		s.lastMask, s.hasLast = 0, true
		s.pees = append(s.pees, ti)
		s.said.or(&ti.said.words)
		s.saidGram.or(&ti.said.grams)
		// by base form, as relevance compares them
		s.lastHash = ti.baseHash
		for _, m := range ti.tokHit {
			s.lastMask |= m
		}
	}
	s.seen = len(ms)
}

// gram is the hash of the run of words ts, from the words' hashes (so a
// run costs four mixes, not a pass over its bytes).
func gram(ts []token) uint64 {
	var h uint64
	for i := range ts {
		h = prose.Mix(h ^ ts[i].hash)
	}
	return h
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
	t := &d.toks[i]
	m := sc.exact[t.w]
	for _, id := range t.wi.bases {
		m |= sc.vocab.get(id)
	}
	if !sc.mayStartPhrase(t) {
		return m
	}
	for pi := range sc.phrases {
		p := &sc.phrases[pi]
		if i+len(p.words) > len(d.toks) || d.toks[i+len(p.words)-1].sent != d.toks[i].sent || !sameTok(&d.toks[i], p.words[0], p.bases[0]) {
			continue
		}
		ok := true
		for k := 1; k < len(p.words); k++ {
			if !sameTok(&d.toks[i+k], p.words[k], p.bases[k]) {
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

// mayStartPhrase reports false when token t is certainly neither the
// first word of one of sc's phrases nor shares a base form with one.
func (sc *scene) mayStartPhrase(t *token) bool {
	if len(sc.phrases) == 0 {
		return false
	}
	if sc.phraseHead.has(bit256(t.hash)) {
		return true
	}
	for _, id := range t.wi.bases {
		if sc.phraseHead.has(bit256(uint64(id))) {
			return true
		}
	}
	return false
}

// sameTok reports whether token t is word w (base forms bs) or shares a
// base form with it.
func sameTok(t *token, w string, bs []int32) bool {
	if t.w == w {
		return true
	}
	for _, x := range t.wi.bases {
		if slices.Contains(bs, x) {
			return true
		}
	}
	return false
}

// seedHitTok is seedHit of token t, by its base forms.
func (sc *scene) seedHitTok(t *token) bool {
	if sc.exact[t.w] != 0 {
		return true
	}
	for _, id := range t.wi.bases {
		if sc.seeds[id] != 0 {
			return true
		}
	}
	return false
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
		if set.has(h) {
			return true
		}
	}
	return false
}

// oneWordCue reports whether w is a one-word phrase of a manipulation
// cue's or dismissal's list.
func oneWordCue(w string) bool {
	for _, ps := range [][]string{dismissPhrases, guiltPhrases, urgencyPhrases, socialPhrases, threatPhrases, cueFields["negtrait"]} {
		if slices.Contains(ps, w) {
			return true
		}
	}
	return false
}

// maskedWord is the wordInfo of a masked token (cueDoc).
var maskedWord = wordInfo{key: "\x00", keyBit: keyBit("\x00")}

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
			m.toks[i].w, m.toks[i].wi = "\x00", &maskedWord
		}
	}
	return m
}

// claims counts the specific figures and named sources of d that the
// public scenario text does not contain, and sets sfClaim in flags[si]
// for each sentence si that makes one.
func (sc *scene) claims(d doc, flags []uint8) int {
	var seenArr [8]claimSeen
	seen := claimSet(seenArr[:0])
	for si, st := range d.sents {
		ts := d.toks[st.first:st.end]
		study := false
		for _, t := range ts {
			if t.wi.cls&wStudy != 0 {
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
			case t.num || t.wi.cls&wNumber != 0:
				switch {
				case nx(1) == "percent" || nx(1) == "per" && nx(2) == "cent":
					claim = t.w + "%"
				case nx(1) == "out" && nx(2) == "of", nx(1) == "in" && (ts[min(i+2, len(ts)-1)].num || numberWords[nx(2)]):
					claim = t.w + " in " + nx(2)
				case nx(1) == "times" && (nx(2) == "more" || nx(2) == "less" || nx(2) == "as" || nx(2) == "likelier" || nx(2) == "higher" || nx(2) == "lower" || nx(2) == "likely"):
					claim = t.w + " times"
				case t.num && (len(t.w) >= 3 || strings.ContainsRune(t.w, ',')) && (wordClasses[nx(1)]&wFigureNoun != 0 || wordClasses[nx(2)]&wFigureNoun != 0):
					claim = t.w
				case t.num && len(t.w) == 4 && (t.w[:2] == "19" || t.w[:2] == "20") && study:
					claim = t.w
				}
			case t.upper && t.wi.cls&wSourceName != 0:
				claim = t.w
			case t.upper && t.wi.cls&wSourceNoun != 0 && i > 0 && ts[i-1].upper:
				claim = ts[i-1].w + " " + t.w
			}
			if claim == "" || seen.has(claim) {
				continue
			}
			key := strings.TrimSuffix(strings.Fields(claim)[0], "%")
			supported := strings.Contains(sc.public, key)
			seen = append(seen, claimSeen{claim, !supported})
			if !supported {
				flags[si] |= sfClaim
			}
		}
	}
	n := 0
	for _, c := range seen {
		if c.unsupported {
			n++
		}
	}
	return n
}

// claimSeen is a claim a message makes and whether the public scenario
// leaves it unsupported.
type claimSeen struct {
	claim       string
	unsupported bool
}

type claimSet []claimSeen

func (s claimSet) has(c string) bool {
	for _, x := range s {
		if x.claim == c {
			return true
		}
	}
	return false
}

var numberWords = setOf("one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million half third quarter")

// relevance is how far d takes up the persuadee's last reply: 1 with no
// reply yet or one with no content, or when d engages a concern the reply
// touched; else the share of up to three of the reply's content words d
// shares (by base form).
func (s *embSession) relevance(ti *textInfo, hitMask uint64) float64 {
	if !s.hasLast || len(s.lastHash) == 0 || s.lastMask&hitMask != 0 {
		return 1
	}
	shared := 0
	for _, h := range s.lastHash {
		// ti.words holds the hash of every word of ti and of its base
		// forms (64-bit hashes: a collision is not worth a check); a
		// scan of a message's few dozen beats building a set per text
		if slices.Contains(ti.words, h) {
			shared++
		}
	}
	return min(1, float64(shared)/float64(min(3, len(s.lastHash))))
}
