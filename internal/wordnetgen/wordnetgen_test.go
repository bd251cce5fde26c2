package wordnetgen

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/internal/spellbloom"
)

// writeDB writes a WordNet database of one noun synset (two members,
// one of them a lemma with a sense) and one exception to dir.
func writeDB(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"data.noun":  "  1 licence\n00001000 03 n 02 garden 0 Plot(a) 0 000 | ground\n",
		"index.noun": "garden n 1 0 1 0 00001000\n",
		"noun.exc":   "gardens garden\nmice mouse\n",
	}
	for _, suf := range []string{"noun", "verb", "adj", "adv"} {
		for _, f := range []string{"data." + suf, "index." + suf, suf + ".exc"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(files[f]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The file starts with the magic and the counts, its sections are
// 8-byte aligned and it ends with the spelling filter of its words.
func TestGenerateLayout(t *testing.T) {
	dir := t.TempDir()
	writeDB(t, dir)
	var b bytes.Buffer
	if err := Generate(dir, &b); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	if !bytes.HasPrefix(raw, []byte(magic)) {
		t.Fatalf("magic %q", raw[:8])
	}
	var n [numCounts]uint32
	for i := range n {
		n[i] = binary.LittleEndian.Uint32(raw[len(magic)+4*i:])
	}
	// one word (garden: plot has no sense of its own, so it is no word
	// and no member), two slots, one synset, the exception of garden kept
	// and that of mouse (no word) dropped
	want := [numCounts]uint32{1, 6, 2, 1, 1, 1, 0, 1, 7, spellbloom.Bits / 64}
	if n != want {
		t.Errorf("counts %v, want %v", n, want)
	}
	if len(raw)%8 != 0 {
		t.Errorf("length %d not a multiple of 8", len(raw))
	}
	bloom := raw[len(raw)-spellbloom.Bits/8:]
	filter := make([]uint64, spellbloom.Bits/64)
	for i := range filter {
		filter[i] = binary.LittleEndian.Uint64(bloom[8*i:])
	}
	f := spellbloom.Extend(filter, nil)
	if !f.MayHaveNeighbour("gardn") || !f.Has(spellbloom.DelHash("garden", 0)) {
		t.Error("the spelling filter lacks garden")
	}
}

// Errors name the file and line.
func TestGenerateErrors(t *testing.T) {
	dir := t.TempDir()
	if err := Generate(dir, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "data.noun") {
		t.Errorf("missing files: error %v, want one naming data.noun", err)
	}
	writeDB(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "index.noun"), []byte("garden n 1 0 1 0 00009999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Generate(dir, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "index.noun:1") {
		t.Errorf("unknown synset: error %v, want one naming index.noun:1", err)
	}
}

// TestLinkKinds checks that the link kinds name RelKinds in order, with
// Hyponym after them, and that a kind fits above KindShift.
func TestLinkKinds(t *testing.T) {
	if Hyponym != len(RelKinds) || NumLinkKinds != Hyponym+1 {
		t.Fatalf("Hyponym %d, NumLinkKinds %d with %d RelKinds", Hyponym, NumLinkKinds, len(RelKinds))
	}
	for kind, sym := range map[int]string{Hypernym: "@", Instance: "@i", Similar: "&", Antonym: "!", Attribute: "=", Derivation: "+", Pertainym: `\`, Also: "^", VerbGroup: "$"} {
		if RelKinds[kind] != sym {
			t.Errorf("kind %d is %q in RelKinds, want %q", kind, RelKinds[kind], sym)
		}
	}
	if NumLinkKinds<<KindShift > 1<<31 {
		t.Errorf("kinds up to %d do not fit a positive int32 at shift %d", NumLinkKinds-1, KindShift)
	}
}
