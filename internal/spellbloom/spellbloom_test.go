package spellbloom

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/persuarena/persuarena/prose"
)

// words returns n made-up words of 2 to 11 letters.
func words(rng *rand.Rand, n int) []string {
	ws := make([]string, n)
	for i := range ws {
		b := make([]byte, 2+rng.IntN(10))
		for k := range b {
			b[k] = byte('a' + rng.IntN(26))
		}
		ws[i] = string(b)
	}
	return ws
}

// A Filter answers bit for bit as the filter that adding its words to a
// copy of the base makes, and never writes the base.
func TestExtendIsTheUnion(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	base := New()
	for _, w := range words(rng, 20000) {
		AddWord(base, w)
	}
	before := slices.Clone(base)
	added := words(rng, 500)
	union := slices.Clone(base)
	for _, w := range added {
		AddWord(union, w)
	}
	f := Extend(base, added)
	if !slices.Equal(base, before) {
		t.Fatal("Extend wrote the base")
	}
	for _, w := range added {
		if !f.Has(prose.Hash(w)) || !f.MayHaveNeighbour(w) {
			t.Fatalf("added word %q: Has or MayHaveNeighbour false", w)
		}
	}
	differ := 0
	for range 200000 {
		h := rng.Uint64()
		if f.Has(h) != Has(union, h) {
			differ++
		}
	}
	pos := 0
	for _, w := range words(rng, 20000) {
		if f.MayHaveNeighbour(w) != mayHaveNeighbour(union, w) {
			differ++
		}
		if f.Has(prose.Hash(w)) {
			pos++
		}
	}
	if differ > 0 {
		t.Errorf("%d answers differ from the union filter's", differ)
	}
	if pos == 0 {
		t.Error("no random word passes: the test says nothing about false positives")
	}
}

// mayHaveNeighbour is Filter.MayHaveNeighbour over a plain filter.
func mayHaveNeighbour(b []uint64, w string) bool {
	if Has(b, prose.Hash(w)) {
		return true
	}
	for i := range len(w) {
		if Has(b, DelHash(w, i)) {
			return true
		}
	}
	return false
}

// Every word one edit from an added word is told it may have a
// neighbour; DelHash is the hash of the word less one letter.
func TestNeighbours(t *testing.T) {
	f := Extend(New(), []string{"garden"})
	for _, w := range []string{"garden", "gardn", "gardens", "gadren", "garten", "agarden"} {
		if !f.MayHaveNeighbour(w) {
			t.Errorf("%s: MayHaveNeighbour false, one edit from garden", w)
		}
	}
	for i := range len("garden") {
		if got, want := DelHash("garden", i), prose.Hash("garden"[:i]+"garden"[i+1:]); got != want {
			t.Errorf("DelHash(garden, %d) = %x, want %x", i, got, want)
		}
	}
}

func ExampleExtend() {
	base := New()
	AddWord(base, "garden")
	f := Extend(base, []string{"would"})
	fmt.Println(f.MayHaveNeighbour("gardn"), f.MayHaveNeighbour("woudl"), f.Has(prose.Hash("would")))
	// Output: true true true
}
