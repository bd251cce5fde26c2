package perception

import (
	"strings"
	"sync"

	"github.com/persuarena/persuarena/internal/spellbloom"
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
// lexicon and global word and each of its one-letter deletions (package
// internal/spellbloom, 2 MB: the lexicon's part made at generation time
// and embedded with the lexicon, the global words' bits added once per
// process) tells almost every word that has no neighbour one edit
// away (a name, a made-up word) from one that may have, so only the
// latter pay for the candidates (about 450 look-ups for an 8-letter
// word).

var (
	spellOnce  sync.Once
	spellBloom *spellbloom.Filter
	globalDict map[string]bool
)

// globalWords returns the global spelling words: the tagger's table and
// the words of this package's lists (built once, with spellBloom).
func globalWords() map[string]bool {
	spellOnce.Do(buildSpelling)
	return globalDict
}

// buildSpelling sets up globalDict and spellBloom: the lexicon's filter
// (every lexicon word and its deletions, made by internal/wordnetgen)
// with the global words added.
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
	// the lexicon's filter holds every lexicon word already
	// (internal/wordnetgen adds them all; TestLexiconInvariants checks it)
	l := theLexicon()
	var global []string
	for w := range globalDict {
		if _, ok := l.id(w); !ok {
			global = append(global, w)
		}
	}
	spellBloom = spellbloom.Extend(l.bloom, global)
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

// pruneCandidates is whether correction skips the candidates the filter
// rules out before trying them: false only in the test that it changes
// no correction, which does not run in parallel with other tests.
var pruneCandidates = true

// correction returns the word one edit from w that spelling picks (see
// above), or "".
func (sc *scene) correction(w string) string {
	globalWords()
	// longer than any dictionary word plus one edit: nothing to correct
	// (and MayHaveNeighbour's cost grows with the square of the length)
	if len(w) >= maxCorrected || !spellBloom.MayHaveNeighbour(w) {
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
		if !spellBloom.Has(prose.HashBytes(c)) {
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
	// A dictionary word's one-letter deletions are all in the filter, so
	// a candidate none of whose deletions is there is no dictionary word
	// and try would refuse it: w without byte i is a deletion of every
	// candidate that changes byte i, and of the one that deletes it; w
	// without i and without i+1 are deletions of the one that swaps them;
	// w itself is a deletion of every insertion. Only a keyword outside
	// the lexicon (exact) is not in the filter: then every candidate is
	// tried.
	all := exact || !pruneCandidates
	var delBuf [maxCorrected]bool
	del := delBuf[:n]
	for i := range n {
		del[i] = all || spellBloom.Has(spellbloom.DelHash(w, i))
	}
	self := all || spellBloom.Has(prose.Hash(w))
	for i := range n { // a letter deleted
		c := append(append(buf[:0], w[:i]...), w[i+1:]...)
		if del[i] && try(c) {
			return string(c)
		}
	}
	for i := 0; i+1 < n; i++ { // two neighbours swapped
		if !del[i] || !del[i+1] {
			continue
		}
		c := append(buf[:0], w...)
		c[i], c[i+1] = c[i+1], c[i]
		if c[i] != c[i+1] && try(c) {
			return string(c)
		}
	}
	for i := range n { // a letter changed
		if !del[i] {
			continue
		}
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
	for i := 0; i <= n && self; i++ { // a letter inserted
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
	return tokenize(sc.own, b.String()), true
}
