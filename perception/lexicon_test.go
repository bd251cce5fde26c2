package perception

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/persuarena/persuarena/internal/spellbloom"
	"github.com/persuarena/persuarena/internal/wordnetgen"
	"github.com/persuarena/persuarena/prose"
)

// BenchmarkLoadLexicon measures loading the embedded lexicon (views and
// the check of every offset and id) and setting up spelling (the global
// words added to the lexicon's filter): the one-time start-up cost of the
// embedded reader, warm (a cold process adds the first touch of the
// pages, about 2 ms on a 2-core VM).
func BenchmarkLoadLexicon(b *testing.B) {
	theLexicon()
	b.Run("lexicon", func(b *testing.B) {
		for b.Loop() {
			if _, err := loadLexicon(lexiconBin); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("spelling", func(b *testing.B) {
		for b.Loop() {
			buildSpelling()
		}
	})
}

// The embedded lexicon is viewed in place on a little-endian host, and a
// copy (bytes not aligned) loads to the same arrays.
func TestLexiconViewAndCopy(t *testing.T) {
	l := theLexicon()
	inside := func(p unsafe.Pointer, s string) bool {
		start := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return uintptr(p) >= start && uintptr(p) < start+uintptr(len(s))
	}
	aligned := uintptr(unsafe.Pointer(unsafe.StringData(lexiconBin)))%8 == 0
	if littleEndian && aligned && (!inside(unsafe.Pointer(unsafe.SliceData(l.link)), lexiconBin) || !inside(unsafe.Pointer(unsafe.SliceData(l.bloom)), lexiconBin)) {
		t.Error("the embedded lexicon was copied, not viewed in place")
	}
	odd := ("x" + lexiconBin)[1:] // one byte off the allocation's alignment
	c, err := loadLexicon(odd)
	if err != nil {
		t.Fatal(err)
	}
	if inside(unsafe.Pointer(unsafe.SliceData(c.link)), odd) {
		t.Error("a misaligned file was viewed in place")
	}
	same := slices.Equal(c.wordOff, l.wordOff) && c.wordText == l.wordText && slices.Equal(c.slots, l.slots) &&
		slices.Equal(c.senseOff, l.senseOff) && slices.Equal(c.senses, l.senses) && c.pos == l.pos &&
		slices.Equal(c.memOff, l.memOff) && slices.Equal(c.mem, l.mem) && slices.Equal(c.linkOff, l.linkOff) &&
		slices.Equal(c.link, l.link) && slices.Equal(c.excOff, l.excOff) && c.excText == l.excText &&
		slices.Equal(c.excBase, l.excBase) && slices.Equal(c.bloom, l.bloom)
	if !same {
		t.Error("the copy of a misaligned lexicon differs from the in-place view")
	}
}

// What the rest of the package relies on in the embedded lexicon: the
// hash table finds every word, hyponyms are exactly the inverse of
// hypernyms and instance hypernyms, and the spelling filter holds every
// word and its deletions (buildSpelling adds only the global words
// outside the lexicon).
func TestLexiconInvariants(t *testing.T) {
	l := theLexicon()
	for id := range int32(l.numWords()) {
		w := l.word(id)
		if got, ok := l.id(w); !ok || got != id {
			t.Fatalf("id(%q) = %d, %v; want %d", w, got, ok, id)
		}
		if got, ok := l.idBytes([]byte(w)); !ok || got != id {
			t.Fatalf("idBytes(%q) = %d, %v; want %d", w, got, ok, id)
		}
		if !spellbloom.Has(l.bloom, prose.Hash(w)) {
			t.Fatalf("%q not in the spelling filter", w)
		}
		for i := range len(w) {
			if !spellbloom.Has(l.bloom, spellbloom.DelHash(w, i)) {
				t.Fatalf("%q less letter %d not in the spelling filter", w, i)
			}
		}
	}
	if id, ok := l.id("qzxv"); ok {
		t.Errorf("id(qzxv) = %d, want none", id)
	}
	ns := int32(len(l.pos))
	hyper, hypo := 0, 0
	for s := range ns {
		seenHypo := false
		for _, r := range l.links(s) {
			k, tgt := r>>linkKindShift, r&linkTarget
			switch k {
			case relHypernym, relInstance:
				hyper++
				want := relHyponym<<linkKindShift | s
				if !slices.Contains(l.links(tgt), want) {
					t.Fatalf("synset %d: hypernym %d lacks it as a hyponym", s, tgt)
				}
			case relHyponym:
				hypo++
				seenHypo = true
			default:
				if seenHypo {
					t.Fatalf("synset %d: a relation after its hyponyms", s)
				}
			}
		}
	}
	if hyper != hypo || hyper == 0 {
		t.Errorf("%d hypernym links, %d hyponym links: want as many, some", hyper, hypo)
	}
	if id, ok := l.exc("children"); !ok || l.word(id) != "child" {
		t.Errorf("exc(children) = %d, %v; want child", id, ok)
	}
	if _, ok := l.exc("childs"); ok {
		t.Error("exc(childs): want none")
	}
}

// setU32 returns raw with the uint32 at byte offset off set to v.
func setU32(raw string, off int, v uint32) string {
	b := []byte(raw)
	binary.LittleEndian.PutUint32(b[off:], v)
	return string(b)
}

// A truncated or corrupted lexicon is refused with an error wrapping
// errLexicon, never a panic; and whatever corruption loading accepts (a
// changed letter, a relation to another synset) leaves every lookup in
// range.
func TestLexiconRefusesCorrupt(t *testing.T) {
	raw := lexiconBin
	n, at, err := lexLayout(raw)
	if err != nil {
		t.Fatal(err)
	}
	refused := func(name, bad string) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panic %v", name, r)
			}
		}()
		if _, err := loadLexicon(bad); !errors.Is(err, errLexicon) {
			t.Errorf("%s: error %v, want errLexicon", name, err)
		}
	}
	for _, cut := range []int{0, 3, 8, 20, at[sWordText], at[sSlots] + 5, at[sLink], at[sBloom], len(raw) - 1} {
		refused("truncated", raw[:cut])
	}
	for range 40 {
		refused("truncated", raw[:rand.N(len(raw))])
	}
	refused("PLEX1", "PLEX1"+raw[5:])
	refused("trailing byte", raw+"\x00")
	header := len(lexMagic)
	for c := range numCounts {
		refused("count too large", setU32(raw, header+4*c, uint32(len(raw))))
		refused("count off by one", setU32(raw, header+4*c, uint32(n[c]+1)))
	}
	refused("slots not a power of two", setU32(raw, header+4*cSlots, uint32(n[cSlots]-1)))
	nw, ns := uint32(n[cWords]), uint32(n[cSynsets])
	refused("word offset past the text", setU32(raw, at[sWordOff]+4*10, uint32(n[cWordBytes]+1)))
	refused("word offsets decreasing", setU32(raw, at[sWordOff]+4*10, 0))
	refused("sense offset", setU32(raw, at[sSenseOff]+4*100, 1<<30))
	refused("member offset", setU32(raw, at[sMemOff]+4*7, 1<<31))
	refused("link offset", setU32(raw, at[sLinkOff]+4*n[cSynsets], uint32(n[cLinks]-1)))
	refused("exception offset", setU32(raw, at[sExcOff], 1))
	refused("slot past the words", setU32(raw, at[sSlots]+4*3, nw+1))
	full := []byte(raw)
	for i := range n[cSlots] {
		binary.LittleEndian.PutUint32(full[at[sSlots]+4*i:], 1)
	}
	refused("no empty slot", string(full))
	refused("sense past the synsets", setU32(raw, at[sSenses]+4*5, ns))
	refused("negative sense", setU32(raw, at[sSenses]+4*5, 1<<31))
	refused("member past the words", setU32(raw, at[sMem]+4*5, nw))
	refused("link kind", setU32(raw, at[sLink]+4*5, numLinkKinds<<linkKindShift))
	refused("link target", setU32(raw, at[sLink]+4*5, relSimilar<<linkKindShift|ns))
	refused("exception base", setU32(raw, at[sExcBase]+4*5, nw))
	pos := []byte(raw)
	pos[at[sPos]+9] = 'x'
	refused("part of speech", string(pos))
	exc := []byte(raw)
	exc[at[sExcText]] = 'z' // the first form sorts after the second
	refused("exceptions out of order", string(exc))

	// random corruption of the checked sections: an error or a lexicon
	// whose lookups stay in range
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"expensive", "children", "studies", "stopped", "garden", "cost"}
	for range 300 {
		b := []byte(raw)
		sec := rng.IntN(sBloom)
		lo, hi := at[sec], at[sec+1]
		if hi <= lo {
			continue
		}
		for range 1 + rng.IntN(3) {
			b[lo+rng.IntN(hi-lo)] ^= byte(1 << rng.IntN(8))
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("section %d corrupted: panic %v", sec, r)
				}
			}()
			l, err := loadLexicon(string(b))
			if err != nil {
				if !errors.Is(err, errLexicon) {
					t.Fatalf("section %d corrupted: error %v, want errLexicon", sec, err)
				}
				return
			}
			for _, w := range words {
				for _, id := range l.bases(nil, w) {
					l.related(nil, id, maxHypo)
					l.nounish(id)
					l.canVerb(id)
				}
			}
		}()
	}
}

// writeWordNet writes a small WordNet database to dir: a noun taxonomy
// (entity > thing/object > child, gadget as an instance of thing), a
// verb, and the exception "children".
func writeWordNet(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"data.noun": "  1 licence text\n" +
			"00001000 03 n 01 entity 0 001 ~ 00002000 n 0000 | that which exists\n" +
			"00002000 03 n 02 thing 0 object 0 003 @ 00001000 n 0000 ~ 00003000 n 0000 + 00005000 v 0101 | a thing\n" +
			"00003000 03 n 01 child 0 001 @ 00002000 n 0000 | a young person\n" +
			"00004000 03 n 01 gadget 0 001 @i 00002000 n 0000 | a device\n",
		"index.noun": "  1 licence text\n" +
			"child n 1 1 @ 1 0 00003000\n" +
			"entity n 1 1 ~ 1 0 00001000\n" +
			"gadget n 1 1 @i 1 0 00004000\n" +
			"object n 1 1 @ 1 0 00002000\n" +
			"thing n 1 2 @ ~ 1 0 00002000\n",
		"noun.exc":   "children child\n",
		"data.verb":  "00005000 29 v 01 thingify 0 001 + 00002000 n 0101 00 | make a thing\n",
		"index.verb": "thingify v 1 1 + 1 0 00005000\n",
		"verb.exc":   "",
		"data.adj":   "", "index.adj": "", "adj.exc": "",
		"data.adv": "", "index.adv": "", "adv.exc": "",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The generator's output for a small WordNet loads, and holds what the
// database says: the words sorted, the relations, the hyponyms as the
// inverse of (instance) hypernyms, the exceptions and the senses.
func TestLexiconGenerated(t *testing.T) {
	dir := t.TempDir()
	writeWordNet(t, dir)
	var b bytes.Buffer
	if err := wordnetgen.Generate(dir, &b); err != nil {
		t.Fatal(err)
	}
	l, err := loadLexicon(b.String())
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for id := range int32(l.numWords()) {
		words = append(words, l.word(id))
	}
	if want := []string{"child", "entity", "gadget", "object", "thing", "thingify"}; !slices.Equal(words, want) {
		t.Fatalf("words %v, want %v", words, want)
	}
	id := func(w string) int32 {
		i, ok := l.id(w)
		if !ok {
			t.Fatalf("id(%s): none", w)
		}
		return i
	}
	// synsets in key order: n00001000 entity, n00002000 thing, n00003000
	// child, n00004000 gadget, v00005000 thingify
	if l.pos != "nnnnv" {
		t.Errorf("parts of speech %q, want nnnnv", l.pos)
	}
	link := func(k, s int32) int32 { return k<<linkKindShift | s }
	for s, want := range [][]int32{
		{link(relHyponym, 1)},
		{link(relHypernym, 0), link(relDerivation, 4), link(relHyponym, 2), link(relHyponym, 3)},
		{link(relHypernym, 1)},
		{link(relInstance, 1)},
		{link(relDerivation, 1)},
	} {
		if got := l.links(int32(s)); !slices.Equal(got, want) {
			t.Errorf("synset %d: links %v, want %v", s, got, want)
		}
	}
	if got := l.synMembers(1); !slices.Equal(got, []int32{id("thing"), id("object")}) {
		t.Errorf("members of thing: %v", got)
	}
	if got := l.wordSenses(id("thing")); !slices.Equal(got, []int32{1}) {
		t.Errorf("senses of thing: %v", got)
	}
	if got := l.bases(nil, "children"); !slices.Contains(got, id("child")) {
		t.Errorf("bases(children) = %v, want child", got)
	}
	var rel []string
	for _, r := range l.related(nil, id("child"), maxHypo) {
		rel = append(rel, l.word(r))
	}
	// child's hypernym (thing, object) and itself; not thing's
	// derivation, which is two steps away
	if want := []string{"child", "object", "thing"}; !slices.Equal(rel, want) {
		t.Errorf("related(child) = %v, want %v", rel, want)
	}
	if !l.nounish(id("gadget")) || l.canVerb(id("gadget")) || !l.canVerb(id("thingify")) {
		t.Error("gadget: want a noun and no verb; thingify: want a verb")
	}
	for _, w := range words {
		if !spellbloom.Has(l.bloom, prose.Hash(w)) {
			t.Errorf("%s not in the spelling filter", w)
		}
	}
}
