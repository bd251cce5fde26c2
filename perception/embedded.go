package perception

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"strings"
	"sync"

	"github.com/persuarena/persuarena/episode"
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
type Embedded struct{}

// Name returns EmbeddedName.
func (Embedded) Name() string { return EmbeddedName }

// Start returns a session on sc, whose derived vocabulary is computed once
// per scenario content and cached. Errors: a nil scenario.
func (Embedded) Start(_ context.Context, sc *scenario.Scenario) (Session, error) {
	if sc == nil {
		return nil, errors.New("perception: nil scenario")
	}
	s := &embSession{sc: sceneOf(sc)}
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
	name   string // the persuadee's first name, lower-case
	public string // the public scenario text, lower-case
	// dict orders the scene's spelling words (keywords, their lexicon
	// relatives) by when they were added; the one-letter deletions of
	// them all live in the process-wide spellIndex, so a scene holds no
	// deletion strings of its own.
	dict map[string]int32
}

type kwPhrase struct {
	words []string
	mask  uint64
}

var (
	scenes   sync.Map // content key -> *scene
	nScenes  int
	nPtrs    int
	scenesMu sync.Mutex
)

// clearSceneMemos empties the text memo of every cached scene
// (memoBudget).
func clearSceneMemos() {
	scenes.Range(func(_, v any) bool {
		v.(*scene).memo.clear()
		return true
	})
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

// byPtr caches a scenario's scene by its address, with the strings it was
// derived from: a hit compares them (cheap: the same strings), so an
// edited scenario never gets its old scene.
var byPtr sync.Map // *scenario.Scenario -> *ptrEntry

type ptrEntry struct {
	sc     *scene
	fields []string
}

func sceneOf(sc *scenario.Scenario) *scene {
	var buf [64]string
	fields := sceneFields(buf[:0], sc)
	if v, ok := byPtr.Load(sc); ok {
		if e := v.(*ptrEntry); slices.Equal(e.fields, fields) {
			return e.sc
		}
	}
	k := sceneKey(sc)
	var s *scene
	if v, ok := scenes.Load(k); ok {
		s = v.(*scene)
	} else {
		s = newScene(sc)
		scenesMu.Lock()
		if nScenes++; nScenes > int(maxScenes.Load()) {
			scenes.Clear()
			byPtr.Clear()
			nScenes = 1
		}
		scenesMu.Unlock()
		scenes.Store(k, s)
	}
	scenesMu.Lock()
	if nPtrs++; nPtrs > int(maxScenes.Load()) {
		byPtr.Clear() // scenarios made afresh per episode: keep the map bounded
		nPtrs = 1
	}
	scenesMu.Unlock()
	byPtr.Store(sc, &ptrEntry{sc: s, fields: slices.Clone(fields)})
	return s
}

func newScene(sc *scenario.Scenario) *scene {
	l := theLexicon()
	s := &scene{
		n: min(len(sc.Hidden.Concerns), 64), vocab: map[int32]uint64{}, seeds: map[int32]uint64{}, exact: map[string]uint64{},
		topic: map[int32]bool{}, topicW: map[string]bool{}, pubStem: map[string]bool{}, kwStem: map[string]bool{}, dict: map[string]int32{},
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
	var spell []string
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
				spell = append(spell, w)
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
						spell = append(spell, l.words[id])
					}
				}
			}
		}
		var rel []int32
		for _, id := range seeds {
			rel = l.related(rel[:0], id, maxHypo)
			for _, r := range rel {
				w := l.words[r]
				if len(w) < 3 || stopWords[w] || ackWords[w] || s.topic[r] || l.senseCount(r) > maxSenses {
					continue
				}
				s.vocab[r] |= bit
				spell = append(spell, w)
			}
		}
	}
	for _, w := range spell {
		s.addSpelling(w)
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
	return t.num || len(t.w) >= 3 && !stopWords[t.w] && !ackWords[t.w]
}

var (
	stopWords = setOf(stopText)
	ackWords  = setOf(ackText)
	linkWords = setOf(linkText)
	negators  = setOf("not no never don't won't can't cannot isn't aren't doesn't didn't wouldn't shouldn't couldn't nobody nothing without hardly dont wont cant isnt doesnt didnt")
)

// basesCache maps a word to its lexicon base ids (perception reads the
// same words over and over).
var (
	basesCache sync.Map
	nBases     int
	basesMu    sync.Mutex
)

func basesOf(w string) []int32 {
	if v, ok := basesCache.Load(w); ok {
		return v.([]int32)
	}
	ids := theLexicon().bases(w)
	basesMu.Lock()
	if nBases++; nBases > 200000 {
		basesCache.Clear()
		nBases = 1
	}
	basesMu.Unlock()
	basesCache.Store(strings.Clone(w), ids)
	return ids
}

// Spelling: a word not in the lexicon or the tagger's tables, four
// letters or more, is corrected to a dictionary word one edit away
// (insertion, deletion, substitution or transposition), found through
// the words' single-deletion variants.
var (
	globalSpellOnce sync.Once
	globalDict      map[string]bool
	globalDels      map[string]string
)

func globalSpelling() (map[string]bool, map[string]string) {
	globalSpellOnce.Do(func() {
		globalDict, globalDels = map[string]bool{}, map[string]string{}
		ws := tagger.Vocabulary()
		for _, list := range []string{stopText, ackText, linkText} {
			ws = append(ws, strings.Fields(list)...)
		}
		for _, ps := range [][]string{dismissPhrases, guiltPhrases, urgencyPhrases, socialPhrases, threatPhrases, autonomyPhrases, ackPhrases} {
			for _, p := range ps {
				for _, w := range strings.Fields(p) {
					ws = append(ws, strings.Split(w, "/")...)
				}
			}
		}
		for _, w := range ws {
			addSpelling(globalDict, globalDels, w)
		}
	})
	return globalDict, globalDels
}

// speller is a spelling dictionary: has reports a word of it, deleted the
// first-added word that d is one letter short of.
type speller interface {
	has(w string) bool
	deleted(d string) (string, bool)
}

// mapSpeller is a dictionary with its own deletion table (addSpelling).
type mapSpeller struct {
	dict map[string]bool
	dels map[string]string
}

func (m mapSpeller) has(w string) bool { return m.dict[w] }
func (m mapSpeller) deleted(d string) (string, bool) {
	c, ok := m.dels[d]
	return c, ok
}

// spellIndex maps each one-letter deletion of every word a scene has added
// to those words (each once): shared by all scenes, it is bounded by the
// vocabulary rather than by the number of scenarios seen.
var spellIndex struct {
	sync.RWMutex
	added map[string]bool
	dels  map[string][]string
}

func indexSpelling(w string) {
	spellIndex.RLock()
	done := spellIndex.added[w]
	spellIndex.RUnlock()
	if done {
		return
	}
	spellIndex.Lock()
	defer spellIndex.Unlock()
	if spellIndex.added == nil {
		spellIndex.added, spellIndex.dels = map[string]bool{}, map[string][]string{}
	}
	if spellIndex.added[w] {
		return
	}
	spellIndex.added[w] = true
	for i := 0; i < len(w); i++ {
		d := w[:i] + w[i+1:]
		if !slices.Contains(spellIndex.dels[d], w) {
			spellIndex.dels[d] = append(spellIndex.dels[d], w)
		}
	}
}

// addSpelling adds w to the scene's dictionary (as addSpelling does to a
// map pair) and its deletions to spellIndex.
func (s *scene) addSpelling(w string) {
	if len(w) < 4 || strings.ContainsAny(w, "'*") {
		return
	}
	if _, ok := s.dict[w]; ok {
		return
	}
	s.dict[w] = int32(len(s.dict))
	indexSpelling(w)
}

func (s *scene) has(w string) bool {
	_, ok := s.dict[w]
	return ok
}

// deleted returns the scene word first added among those d is one letter
// short of: what a per-scene deletion table filled in the same order
// (addSpelling's "first word kept") would hold.
func (s *scene) deleted(d string) (string, bool) {
	spellIndex.RLock()
	defer spellIndex.RUnlock()
	best, bw := int32(-1), ""
	for _, w := range spellIndex.dels[d] {
		if o, ok := s.dict[w]; ok && (best < 0 || o < best) {
			best, bw = o, w
		}
	}
	return bw, best >= 0
}

func addSpelling(dict map[string]bool, dels map[string]string, w string) {
	if len(w) < 4 || dict[w] || strings.ContainsAny(w, "'*") {
		return
	}
	dict[w] = true
	for i := 0; i < len(w); i++ {
		d := w[:i] + w[i+1:]
		if _, ok := dels[d]; !ok {
			dels[d] = w
		}
	}
}

// correction returns the dictionary word one edit from w, or "".
func correction(w string, sp speller) string {
	if c, ok := sp.deleted(w); ok {
		return c // a letter dropped
	}
	buf := make([]byte, 0, len(w))
	for i := 0; i < len(w); i++ {
		buf = append(buf[:0], w[:i]...)
		buf = append(buf, w[i+1:]...)
		if sp.has(string(buf)) {
			return string(buf) // a letter added
		}
		if c, ok := sp.deleted(string(buf)); ok && len(c) == len(w) {
			return c // a letter changed or two swapped
		}
	}
	return ""
}

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
	if len(text) > recentLong {
		for i := range s.recent {
			if len(s.recent[i].text) > recentLong {
				s.recent[i] = recentInfo{}
			}
		}
	}
	s.recent[s.nRecent%len(s.recent)] = recentInfo{text: text, ti: ti}
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
		ti := s.info(m.Text)
		if m.Speaker == episode.PersuaderSpeaker {
			s.earlier = append(s.earlier, ti.set)
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

func contentSet(d doc) []uint64 {
	var out []uint64
	for _, t := range d.toks {
		if content(t) {
			h := fnv.New64a()
			w := t.w
			if ids := basesOf(w); len(ids) > 0 {
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
	for _, id := range basesOf(w) {
		m |= sc.vocab[id]
	}
	for _, p := range sc.phrases {
		if i+len(p.words) > len(d.toks) || d.toks[i+len(p.words)-1].sent != d.toks[i].sent {
			continue
		}
		ok := true
		for k, pw := range p.words {
			if !sameWord(d.toks[i+k].w, pw) {
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
	for _, id := range basesOf(w) {
		if sc.seeds[id] != 0 {
			return true
		}
	}
	return false
}

// sameWord reports whether two words are equal or share a base form.
func sameWord(a, b string) bool {
	if a == b {
		return true
	}
	for _, x := range basesOf(a) {
		for _, y := range basesOf(b) {
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
	sc.memo.store(text, ti)
	return ti
}

func (sc *scene) analyse(text string) *textInfo {
	ti := &textInfo{}
	ti.d, ti.corrected = sc.correct(tokenize(text))
	ti.rawTags = tagger.Tag(text)
	ti.tags = ti.rawTags
	if ti.corrected {
		ti.tags = tagger.Tag(ti.d.text)
	}
	d := ti.d
	l := theLexicon()
	ti.tokHit = make([]uint64, len(d.toks))
	ti.content = make([]bool, len(d.toks))
	for i, t := range d.toks {
		ti.tokHit[i] = sc.hits(d, i)
		ti.content[i] = content(t)
		ti.words = append(ti.words, t.w)
		for _, id := range basesOf(t.w) {
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
		if matchAny(cd.toks[st.first:st.end], dismissPhrases) {
			f |= sfDismiss
		}
		if matchAny(ts, ackPhrases) {
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
	ti.set = contentSet(d)
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
			if ids := basesOf(w); len(ids) > 0 {
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
	tg := msg.TagsOf()
	if ti.corrected {
		tg = ti.tags
	}
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

// correct fixes one-edit misspellings (see correction); it returns the
// document of the corrected text and whether anything changed.
func (sc *scene) correct(d doc) (doc, bool) {
	gd, gdel := globalSpelling()
	global := mapSpeller{gd, gdel}
	var b strings.Builder
	last, changed := 0, false
	for _, t := range d.toks {
		if t.num || len(t.w) < 4 || len(basesOf(t.w)) > 0 || gd[t.w] || sc.has(t.w) || strings.ContainsRune(t.w, '\'') {
			continue
		}
		c := correction(t.w, sc)
		if c == "" {
			c = correction(t.w, global)
		}
		if c == "" {
			continue
		}
		b.WriteString(d.text[last:t.start])
		b.WriteString(c)
		last, changed = t.end, true
	}
	if !changed {
		return d, false
	}
	b.WriteString(d.text[last:])
	return tokenize(b.String()), true
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
		if matchAny(ts, guiltPhrases) {
			sc = sc.With(Guilt)
		}
		if matchAny(ts, urgencyPhrases) {
			sc = sc.With(Urgency)
		}
		if matchAny(ts, dismissPhrases) {
			sc = sc.With(Contempt)
		}
		if matchAny(ts, socialPhrases) {
			sc = sc.With(SocialProof)
		}
		if matchAny(ts, threatPhrases) {
			sc = sc.With(Threat)
		}
		if at := firstMatch(ts, autonomyPhrases); at >= 0 {
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

func matchAny(ts []token, ps []string) bool { return firstMatch(ts, ps) >= 0 }

// firstMatch returns the token index where one of ps first matches in ts
// without a negator before it in its clause (negatedAt), or -1.
func firstMatch(ts []token, ps []string) int {
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
				if ok && !negatedAt(ts, i) {
					return i
				}
			}
		}
	}
	return -1
}

// negatedAt reports whether a negator stands before token i in its clause
// (clause-level scope: "I don't think your worry is silly"), except a
// negative imperative right before it ("don't be ridiculous").
func negatedAt(ts []token, i int) bool {
	if i >= 2 && ts[i-1].w == "be" && (ts[i-2].w == "don't" || ts[i-2].w == "dont") && ts[i-2].clause == ts[i].clause {
		return false
	}
	for k := i - 1; k >= 0; k-- {
		if ts[k].clause != ts[i].clause {
			return false
		}
		if negators[ts[k].w] {
			return true
		}
	}
	return false
}
