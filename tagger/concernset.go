package tagger

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/persuarena/persuarena/scenario"
)

// ConcernSet is a list of concerns whose keywords are split into words
// once, for callers that test many utterances against the same concerns
// (the simulator checks every persuader turn against the scenario's hidden
// concerns). Its AppendMentions gives exactly Mentions' result; it only
// avoids re-splitting the keywords and scans the utterance's words once
// for all keywords instead of once per keyword. A ConcernSet is read-only
// after Compile and safe for concurrent use.
type ConcernSet struct {
	n     int      // number of concerns
	words []string // all keyword words, ASCII lower-case, keyword by keyword
	kws   []ckw    // keywords with at least one word, sorted by first byte
	// off[b]..off[b+1] are the keywords whose first word starts with byte b.
	off  [257]int32
	live int // concerns with at least one matchable keyword
	// salt is the set's number, mixed into its TagMentions cache slots.
	salt uint64
}

// ckw is one compiled keyword: its concern index and its words
// words[w0:w1].
type ckw struct {
	concern int32
	w0, w1  int32
	// b1 is the first word's second byte, 0 for a one-byte word: a text
	// word can only match when its own second byte (0 when it has one
	// byte) is the same, since inflection keeps the first two bytes (an
	// inflected match needs both words of 3 bytes or more, sharing all but
	// the shorter's last byte).
	b1 byte
	// n is the first word's length (capped at 255) and b2 its third byte
	// (0 when shorter): further necessary conditions of wordMatch, which
	// scan checks before comparing words (see mayMatch).
	n  uint8
	b2 byte
}

// mayMatch reports whether a text word of length l whose third byte is
// c2 (0 when l < 3) can match k's first word under wordMatch: equal
// lengths when either is under 3 bytes (short words match only
// exactly), lengths within 3 bytes (the longest inflection suffix,
// "ing"), and, when both have 4 bytes or more, the same third byte
// (inflection keeps all but the shorter word's last byte).
func (k *ckw) mayMatch(l int, c2 byte) bool {
	kn := int(k.n)
	if kn == 255 {
		return true // a very long keyword word: leave it to wordMatch
	}
	d := l - kn
	switch short := min(l, kn); {
	case d < -3 || d > 3:
		return false
	case short < 3:
		return d == 0
	case short >= 4:
		return c2 == k.b2
	}
	return true
}

// second returns the second byte of w, or 0 when w has fewer than 2.
func second[T string | []byte](w T) byte {
	if len(w) < 2 {
		return 0
	}
	return w[1]
}

// Compile splits the keywords of concerns into words by the tokenizer's
// rules (the same split Mentions uses). The set keeps no reference to
// concerns. It never fails: a keyword with no word characters is dropped,
// since it never matches.
func Compile(concerns []scenario.Concern) *ConcernSet {
	cs := &ConcernSet{n: len(concerns), salt: setSalt.Add(1)}
	nkw := 0
	for _, c := range concerns {
		nkw += len(c.Keywords)
	}
	cs.kws = make([]ckw, 0, nkw)
	hasKw := make([]bool, len(concerns))
	for ci, c := range concerns {
		for _, kw := range c.Keywords {
			w0 := int32(len(cs.words))
			for pos := 0; ; {
				s, e, ok := kwNext(kw, pos)
				if !ok {
					break
				}
				cs.words = append(cs.words, lowerASCII(kw[s:e]))
				pos = e
			}
			if w1 := int32(len(cs.words)); w1 > w0 {
				fw := cs.words[w0]
				k := ckw{concern: int32(ci), w0: w0, w1: w1, b1: second(fw), n: uint8(min(len(fw), 255))}
				if len(fw) >= 3 {
					k.b2 = fw[2]
				}
				cs.kws = append(cs.kws, k)
				hasKw[ci] = true
			}
		}
	}
	for _, h := range hasKw {
		if h {
			cs.live++
		}
	}
	// Stable sort keeps keyword order within a first byte; order does not
	// change the result (a concern is hit when any keyword matches) but
	// keeps the set deterministic.
	slices.SortStableFunc(cs.kws, func(a, b ckw) int {
		return int(cs.words[a.w0][0]) - int(cs.words[b.w0][0])
	})
	k := 0
	for b := 0; b < 256; b++ {
		cs.off[b] = int32(k)
		for k < len(cs.kws) && int(cs.words[cs.kws[k].w0][0]) == b {
			k++
		}
	}
	cs.off[256] = int32(k)
	return cs
}

// lowerASCII folds ASCII upper-case letters only (as the tokenizer does),
// leaving other bytes alone.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = lower(b[j])
			}
			return string(b)
		}
	}
	return s
}

// Len returns the number of concerns the set was compiled from.
func (cs *ConcernSet) Len() int { return cs.n }

// AppendMentions appends, for each concern in order, whether text touches
// it, and returns dst: exactly what the package-level AppendMentions gives
// for the concerns cs was compiled from (see Mentions for the matching
// rule). It allocates nothing when dst has room for Len more entries.
func (cs *ConcernSet) AppendMentions(dst []bool, text string) []bool {
	base := len(dst)
	for range cs.n {
		dst = append(dst, false)
	}
	if cs.live == 0 {
		return dst
	}
	sc := getScratch(false)
	sc.tokenize(text)
	cs.scan(sc, dst[base:])
	putScratch(sc)
	return dst
}

// TagMentions returns Tag(text) and cs.AppendMentions(dst, text), exactly,
// from one tokenisation of text (the simulator reads every persuader
// utterance both ways). When dst has room for Len more entries it
// allocates nothing but the cache entry of a repeated text's second
// reading.
//
// Results are kept in a process-wide cache of recent (set, text) pairs
// (tagMemo) from a text's second reading on (memoSet.repeats): rule-based
// persuaders repeat their template sentences across the rollouts of a
// scenario, and a repeated text then costs one hash and one string
// comparison instead of the tagging. A cached result is the one computed
// for exactly this set and text, so the cache never changes what
// TagMentions returns.
func (cs *ConcernSet) TagMentions(dst []bool, text string) (Tags, []bool) {
	base := len(dst)
	for range cs.n {
		dst = append(dst, false)
	}
	memoOK := cs.n <= 64 && len(text) <= maxMemoText
	var h uint64
	if memoOK {
		h = memoHash(cs, text)
		if e := memoSetOf(h).lookup(h, cs, text); e != nil {
			for c := range cs.n {
				dst[base+c] = e.hits&(1<<c) != 0
			}
			return e.tags, dst
		}
	}
	sc := getScratch(true)
	sc.tokenize(text)
	sc.match()
	t := sc.resolve()
	t.Strategies = sc.strategies(t.Acts)
	if cs.live > 0 {
		// The word table lookup of Tag sets only the tokens' entries and
		// flags, which mention matching never reads.
		cs.scan(sc, dst[base:])
	}
	putScratch(sc)
	if ms := memoSetOf(h); memoOK && ms.repeats(h) {
		// A copy: text may be a slice of a larger buffer, which the entry
		// would keep alive.
		e := &memoEntry{salt: cs.salt, text: strings.Clone(text), tags: t}
		for c, hit := range dst[base:] {
			if hit {
				e.hits |= 1 << c
			}
		}
		ms.store(h, e)
	}
	return t, dst
}

// tagMemo caches TagMentions results, two-way set-associative: a
// (set, text) pair's hash picks one memoSet, whose two ways hold the
// latest repeated texts that map to it. Entries are immutable once
// stored, so readers need no lock, and a way's hash and entry are
// checked together (a reader that sees one of them changed finds no
// match). The cache holds at most 2 × memoSets entries, each a copy of
// its text (at most maxMemoText bytes) and its tags, keyed by the set's
// number rather than the set, so a dropped set is not kept alive: under
// 20 MB in the worst case, a few MB for the template sentences of the
// built-in persuaders.
var (
	tagMemo  [memoSets]memoSet
	memoSeed = maphash.MakeSeed()
	setSalt  atomic.Uint64 // numbers the compiled sets for memoHash
)

// memoSets is the number of cache sets (a power of two); maxMemoText the
// longest text cached.
//
// Choice: 32768 entries hold the 256 one- and two-sentence turns of the
// informer persuader on more than a hundred scenarios; texts over 512
// bytes (long free-form turns of a language model, which rarely repeat)
// are not cached.
const (
	memoSets    = 1 << 14
	maxMemoText = 512
)

// memoSet is one set of the cache: two ways (each a hash and an entry)
// and seen, the hash of the latest text that missed here and was not
// stored (see repeats).
type memoSet struct {
	seen atomic.Uint64
	h    [2]atomic.Uint64
	e    [2]atomic.Pointer[memoEntry]
}

// memoEntry is one cached TagMentions result: hits bit c is concern c's
// mention.
type memoEntry struct {
	salt uint64 // the set's (ConcernSet.salt)
	text string
	tags Tags
	hits uint64
}

// memoSetOf returns the set of hash h.
func memoSetOf(h uint64) *memoSet { return &tagMemo[h&(memoSets-1)] }

// lookup returns the entry for (cs, text) of hash h, or nil.
func (m *memoSet) lookup(h uint64, cs *ConcernSet, text string) *memoEntry {
	for w := range m.h {
		if m.h[w].Load() == h {
			if e := m.e[w].Load(); e != nil && e.salt == cs.salt && e.text == text {
				return e
			}
		}
	}
	return nil
}

// repeats reports whether the text of hash h missed here before (so it
// repeats and is worth an entry), and otherwise notes it. A text that
// never repeats (a language model's turns) thus costs no entry, no
// allocation and no garbage-collector work, and evicts nothing. Two
// texts of one hash only make the second look repeated, which is
// harmless.
func (m *memoSet) repeats(h uint64) bool {
	if m.seen.Load() == h {
		return true
	}
	m.seen.Store(h)
	return false
}

// store puts e (of hash h) in an empty way, else in the one a hash bit
// picks.
func (m *memoSet) store(h uint64, e *memoEntry) {
	w := 0
	if m.e[0].Load() != nil && (m.e[1].Load() == nil || h>>63 != 0) {
		w = 1
	}
	m.e[w].Store(e)
	m.h[w].Store(h)
}

// memoHash returns the cache hash of (cs, text): its low bits pick the
// set.
func memoHash(cs *ConcernSet, text string) uint64 {
	return maphash.String(memoSeed, text) ^ cs.salt*0x9E3779B97F4A7C15
}

// scan sets hit[c] for every concern c one of whose keywords matches the
// tokenized text in sc.
func (cs *ConcernSet) scan(sc *scratch, hit []bool) {
	left := cs.live
	for i := 0; i < len(sc.toks) && left > 0; i++ {
		t := sc.toks[i]
		w := sc.buf[t.s:t.e]
		c := w[0]
		b1, b2 := second(w), byte(0)
		if len(w) >= 3 {
			b2 = w[2]
		}
		for ki := range cs.kws[cs.off[c]:cs.off[int(c)+1]] {
			k := &cs.kws[int(cs.off[c])+ki]
			if k.b1 != b1 || hit[k.concern] || !k.mayMatch(len(w), b2) || !sc.matchWords(i, cs.words[k.w0:k.w1]) {
				continue
			}
			hit[k.concern] = true
			left--
		}
	}
}

// matchWords reports whether the keyword words kw (lower-case) match the
// tokens from i on, all in token i's sentence, under wordMatch.
func (sc *scratch) matchWords(i int, kw []string) bool {
	if !wordMatch(sc.word(sc.toks[i]), kw[0]) {
		return false
	}
	sent := sc.clauses[sc.toks[i].clause].sent
	for k, w := range kw[1:] {
		j := i + 1 + k
		if j >= len(sc.toks) || sc.clauses[sc.toks[j].clause].sent != sent || !wordMatch(sc.word(sc.toks[j]), w) {
			return false
		}
	}
	return true
}
