package perception

import (
	"strings"
	"sync"

	"github.com/persuarena/persuarena/prose"
	"github.com/persuarena/persuarena/tagger"
)

// Spelling: a word of four letters or more, without an apostrophe, that
// is neither in the lexicon (by base form) nor a global word (the
// tagger's tables and this package's lists) nor a keyword word of the
// scenario nor the persuadee's first name is corrected to a word one edit away. The candidates are
// tried in a fixed order (a letter deleted, two neighbours swapped, a
// letter changed, a letter inserted; position by position from the
// left; letters a to z): the first that names one of the scenario's
// concerns wins, else the first global word, else the word stays.
//
// Choice: no per-scenario spelling table. A Bloom filter over every
// lexicon and global word and each of its one-letter deletions (built
// once per process from the embedded data, 2 MB) tells almost every
// word that has no neighbour one edit away (a name, a made-up word) from
// one that may have, so only the latter pay for the candidates (about
// 450 look-ups for an 8-letter word).

// spellBloomBits is the size of the spelling Bloom filter in bits (a
// power of two), spellProbes its probes per hash.
const (
	spellBloomBits = 1 << 24
	spellProbes    = 3
)

var (
	spellOnce  sync.Once
	spellBloom []uint64
	globalDict map[string]bool
)

// globalWords returns the global spelling words: the tagger's table and
// the words of this package's lists (built once).
func globalWords() map[string]bool {
	spellOnce.Do(buildSpelling)
	return globalDict
}

func buildSpelling() {
	globalDict = map[string]bool{}
	ws := tagger.Vocabulary()
	for _, list := range []string{prose.StopWords, ackText, linkText} {
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
		if len(w) >= 4 && !strings.ContainsAny(w, "'*") {
			globalDict[w] = true
		}
	}
	spellBloom = make([]uint64, spellBloomBits/64)
	add := func(w string) {
		bloomSet(spellBloom, wordHash(w))
		for i := range len(w) {
			bloomSet(spellBloom, delHash(w, i))
		}
	}
	for _, w := range theLexicon().words {
		add(w)
	}
	for w := range globalDict {
		add(w)
	}
}

// delHash is wordHash of w without its byte i.
func delHash(w string, i int) uint64 {
	h := uint64(14695981039346656037)
	for k := 0; k < len(w); k++ {
		if k != i {
			h = (h ^ uint64(w[k])) * 1099511628211
		}
	}
	return h
}

// mix spreads h's bits (the MurmurHash3 finaliser): FNV-1a's low bits
// hardly depend on a word's first letters, and words share endings.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

func bloomSet(b []uint64, h uint64) {
	h = mix(h)
	x, y := h, h>>32|1
	for range spellProbes {
		i := x & (spellBloomBits - 1)
		b[i>>6] |= 1 << (i & 63)
		x += y
	}
}

func bloomHas(b []uint64, h uint64) bool {
	h = mix(h)
	x, y := h, h>>32|1
	for range spellProbes {
		i := x & (spellBloomBits - 1)
		if b[i>>6]&(1<<(i&63)) == 0 {
			return false
		}
		x += y
	}
	return true
}

// mayHaveNeighbour reports false when no lexicon or global word is
// certainly one edit from w.
func mayHaveNeighbour(w string) bool {
	if bloomHas(spellBloom, wordHash(w)) {
		return true
	}
	for i := range len(w) {
		if bloomHas(spellBloom, delHash(w, i)) {
			return true
		}
	}
	return false
}

// known reports whether w needs no correction: too short, a number, with
// an apostrophe, the persuadee's first name, a lexicon word by base form,
// a global word or a keyword word of the scene.
func (sc *scene) known(t token) bool {
	return t.num || len(t.w) < 4 || len(t.wi.bases) > 0 || t.wi.cls != 0 || strings.ContainsRune(t.w, '\'') ||
		t.w == sc.name || globalWords()[t.w] || sc.exact[t.w] != 0
}

// maxCorrected bounds the words spelling corrects, in bytes (a word one
// insertion from w must fit in correction's buffer).
const maxCorrected = 80

// correction returns the word one edit from w that spelling picks (see
// above), or "".
func (sc *scene) correction(w string) string {
	globalWords()
	// longer than any dictionary word plus one edit: nothing to correct
	// (and mayHaveNeighbour's cost grows with the square of the length)
	if len(w) >= maxCorrected || !mayHaveNeighbour(w) {
		return ""
	}
	l := theLexicon()
	fallback := ""
	var buf [maxCorrected]byte
	exact := len(sc.exact) > 0
	try := func(c []byte) bool {
		if len(c) < 4 {
			return false // the dictionaries hold words of four letters or more
		}
		if !bloomHas(spellBloom, prose.HashBytes(c)) {
			// no lexicon or global word: only a keyword outside the lexicon
			return exact && sc.exact[string(c)] != 0
		}
		if fallback == "" && globalDict[string(c)] {
			fallback = string(c)
		}
		if sc.exact[string(c)] != 0 {
			return true
		}
		if id, ok := l.idBytes(c); ok && sc.vocab.get(id) != 0 {
			return true
		}
		return false
	}
	n := len(w)
	for i := range n { // a letter deleted
		c := append(append(buf[:0], w[:i]...), w[i+1:]...)
		if try(c) {
			return string(c)
		}
	}
	for i := 0; i+1 < n; i++ { // two neighbours swapped
		c := append(buf[:0], w...)
		c[i], c[i+1] = c[i+1], c[i]
		if c[i] != c[i+1] && try(c) {
			return string(c)
		}
	}
	for i := range n { // a letter changed
		c := append(buf[:0], w...)
		for x := byte('a'); x <= 'z'; x++ {
			if x == w[i] {
				continue
			}
			c[i] = x
			if try(c) {
				return string(c)
			}
		}
	}
	for i := 0; i <= n; i++ { // a letter inserted
		c := append(append(append(buf[:0], w[:i]...), 'a'), w[i:]...)
		for x := byte('a'); x <= 'z'; x++ {
			c[i] = x
			if try(c) {
				return string(c)
			}
		}
	}
	return fallback
}

// correct fixes one-edit misspellings (see correction); it returns the
// document of the corrected text and whether anything changed (then its
// pd is pooled: see release).
func (sc *scene) correct(d doc) (doc, bool) {
	var b strings.Builder
	last, changed := int32(0), false
	for _, t := range d.toks {
		if sc.known(t) {
			continue
		}
		c := sc.correction(t.w)
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
	return tokenizeTemp(sc.own, b.String()), true
}
