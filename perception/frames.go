package perception

import (
	"slices"
	"strings"

	"github.com/persuarena/persuarena/prose"
)

// Sentence frames: what the embedded reader recognises by meaning rather
// than by a fixed phrase. A frame is a sequence of items matched against
// the words of one sentence:
//
//	word        the word, or an inflection of it (prose.WordMatch:
//	            "sacrifice" matches "sacrificed", "cost" matches "costs")
//	a/b/c       any of the alternatives; an alternative of several
//	            words joins them with "_" ("don't/do_not")
//	@field      any word of a lexical field (cueFields), or an inflection
//	*           any one word
//	..          a gap of zero to four words (frameGap)
//
// A frame matches when its items match in order within one sentence; it
// does not count when its first word is negated (prose.Doc.Negated: "I'm
// not saying you're selfish"), unless it starts with "!" (a frame that
// carries its own negation, "don't expect").
//
// Choice: a gap of at most four words, so a frame holds across the
// modifiers of ordinary phrasing ("you're being such a baby", "after all
// the times I've been there", "every single one of our friends")
// without reaching across a whole sentence.
const frameGap = 4

type frameItem struct {
	alts  [][]string // word sequences; empty for a field, "*" or ".."
	keys  []string   // frameKey of each alternative's first word
	field uint8      // a lexical field's number + 1 (0: none)
	any   bool       // "*"
	gap   bool       // ".."
}

type frame struct {
	items  []frameItem
	negOK  bool  // "!": counts when negated
	set    uint8 // the frame set it belongs to (frameSets)
	source string
	// needKeys has, per word item after the first, the keyBits of its
	// alternatives' first words, and needFields the fields of its field
	// items: a sentence lacking one of them cannot match (mayMatch).
	needKeys   []sig256
	needFields uint64
}

// keyBit is the bit of a word key (frameKey) in a sentence's or an
// item's set of keys (a sig256).
func keyBit(k string) uint8 { return bit256(prose.Hash(k)) }

// mayMatch reports false when a sentence whose words' keys are keys and
// whose words' fields are fields certainly does not match f.
func (f *frame) mayMatch(keys *sig256, fields uint64) bool {
	if f.needFields&^fields != 0 {
		return false
	}
	for i := range f.needKeys {
		if !f.needKeys[i].meets(keys) {
			return false
		}
	}
	return true
}

// The frame sets: every list of frames the reader matches, numbered so
// that one pass over a sentence matches them all (frameBank.match).
const (
	fsGuilt = iota
	fsThreat
	fsRefusal
	fsSanction
	fsUrgency
	fsContempt
	fsContemptYou
	fsSocial
	fsFlattery
	fsPraise
	fsExpect
	fsDismissal
	fsConsensus
	fsAutonomy
	fsDismiss
	fsAck
	fsRetract
	fsAdmit
	fsWish
	fsDismissHead
	numFrameSets
)

// frameBank holds every frame of every set, indexed by the key of the
// words that can match its first item.
type frameBank struct {
	byKey map[string][]*frame
}

// fieldNames numbers the lexical fields (cueFields), in sorted order.
var fieldNames = func() []string {
	var ns []string
	for n := range cueFields {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}()

// fieldByKey maps a word key (frameKey) to the fields (bit f = field
// fieldNames[f]) that have a word of that key, with the words.
var fieldByKey = func() map[string][]fieldWord {
	m := map[string][]fieldWord{}
	for f, n := range fieldNames {
		for _, w := range cueFields[n] {
			k := frameKey(w)
			m[k] = append(m[k], fieldWord{uint8(f), w})
		}
	}
	return m
}()

type fieldWord struct {
	field uint8
	word  string
}

// fieldsOf returns the fields word w (key k) belongs to, an inflection
// of a field word included (bit f = fieldNames[f]).
func fieldsOf(w, k string) uint64 {
	var m uint64
	for _, fw := range fieldByKey[k] {
		if fw.word == w || prose.WordMatch(w, fw.word) {
			m |= 1 << fw.field
		}
	}
	return m
}

// newFrameBank compiles sets[i], the frames of set i (see above). It
// panics on a malformed frame (a program error).
func newFrameBank(sets [numFrameSets][]string) *frameBank {
	b := &frameBank{byKey: map[string][]*frame{}}
	for set, frames := range sets {
		for _, src := range frames {
			f := compileFrame(src)
			f.set = uint8(set)
			first := f.items[0]
			var ws []string
			if first.field != 0 {
				ws = cueFields[fieldNames[first.field-1]]
			} else {
				for _, a := range first.alts {
					ws = append(ws, a[0])
				}
			}
			for _, w := range ws {
				k := frameKey(w)
				if !slices.Contains(b.byKey[k], f) {
					b.byKey[k] = append(b.byKey[k], f)
				}
			}
		}
	}
	return b
}

func compileFrame(src string) *frame {
	f := &frame{source: src}
	s := src
	if strings.HasPrefix(s, "!") {
		f.negOK, s = true, s[1:]
	}
	for _, w := range strings.Fields(strings.ReplaceAll(s, "-", " ")) {
		switch {
		case w == "..":
			f.items = append(f.items, frameItem{gap: true})
		case w == "*":
			f.items = append(f.items, frameItem{any: true})
		case strings.HasPrefix(w, "@"):
			i := slices.Index(fieldNames, w[1:])
			if i < 0 {
				panic("perception: frame " + src + ": no field " + w)
			}
			f.items = append(f.items, frameItem{field: uint8(i + 1)})
		default:
			var it frameItem
			for _, a := range strings.Split(w, "/") {
				ws := strings.Split(a, "_")
				it.alts = append(it.alts, ws)
				it.keys = append(it.keys, frameKey(ws[0]))
			}
			f.items = append(f.items, it)
		}
	}
	if len(f.items) == 0 || f.items[0].gap || f.items[0].any || f.items[len(f.items)-1].gap {
		panic("perception: frame " + src + ": empty, or starts with .. or *, or ends with ..")
	}
	for _, it := range f.items[1:] {
		switch {
		case it.field != 0:
			f.needFields |= 1 << (it.field - 1)
		case len(it.keys) > 0:
			var m sig256
			for _, k := range it.keys {
				m.add(keyBit(k))
			}
			f.needKeys = append(f.needKeys, m)
		}
	}
	return f
}

// frameKey is w without one inflection suffix and a final "e", so a word
// and its inflections (prose.WordMatch) share a key: "sacrifice",
// "sacrificed" and "sacrificing" are "sacrific"; "study" and "studies"
// "study".
func frameKey(w string) string {
	if len(w) > 4 && (strings.HasSuffix(w, "ies") || strings.HasSuffix(w, "ied")) {
		return w[:len(w)-3] + "y"
	}
	for _, s := range []string{"'s", "ing", "ed", "es", "s"} {
		if b, ok := strings.CutSuffix(w, s); ok && len(b) >= 3 {
			w = b
			break
		}
	}
	if len(w) >= 4 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

// wordIs reports whether token t is the frame word a (key k) or an
// inflection of it.
func wordIs(t *token, a, k string) bool { return a == t.w || k == t.wi.key && prose.WordMatch(t.w, a) }

// signature returns the keys (keyBit) and the fields of the words of ts,
// what mayMatch checks a frame against.
func signature(ts []token) (keys sig256, fields uint64) {
	for i := range ts {
		keys.add(ts[i].wi.keyBit)
		fields |= ts[i].wi.fields
	}
	return keys, fields
}

// match matches every frame of the sets in want (bit i = set i) against
// ts, one sentence of d, and returns the sets that match and, per set,
// the token index (in ts) where its first match starts.
func (b *frameBank) match(d doc, ts []token, want uint32) (hit uint32, at [numFrameSets]int32) {
	keys, fields := signature(ts)
	for i := range ts {
		for _, f := range ts[i].wi.frames {
			bit := uint32(1) << f.set
			if want&^hit&bit == 0 || !f.mayMatch(&keys, fields) || !matchItems(f.items, ts, i) || !f.negOK && d.pd.Negated(int(ts[i].i)) {
				continue
			}
			hit |= bit
			at[f.set] = int32(i)
		}
	}
	return hit, at
}

// matchAt reports whether a frame of set matches ts from token i.
func (b *frameBank) matchAt(d doc, ts []token, i, set int) bool {
	for _, f := range ts[i].wi.frames {
		if int(f.set) == set && matchItems(f.items, ts, i) && (f.negOK || !d.pd.Negated(int(ts[i].i))) {
			return true
		}
	}
	return false
}

func matchItems(items []frameItem, ts []token, i int) bool {
	if len(items) == 0 {
		return true
	}
	it := &items[0]
	if it.gap {
		for k := 0; k <= frameGap && i+k <= len(ts); k++ {
			if matchItems(items[1:], ts, i+k) {
				return true
			}
		}
		return false
	}
	if i >= len(ts) {
		return false
	}
	switch {
	case it.any:
		return matchItems(items[1:], ts, i+1)
	case it.field != 0:
		return ts[i].wi.fields&(1<<(it.field-1)) != 0 && matchItems(items[1:], ts, i+1)
	}
	for ai, a := range it.alts {
		if i+len(a) > len(ts) || !wordIs(&ts[i], a[0], it.keys[ai]) {
			continue
		}
		ok := true
		for k := 1; k < len(a); k++ {
			if !wordIs(&ts[i+k], a[k], frameKey(a[k])) {
				ok = false
				break
			}
		}
		if ok && matchItems(items[1:], ts, i+len(a)) {
			return true
		}
	}
	return false
}
