package perception

import (
	"math/rand/v2"
	"testing"

	"github.com/persuarena/persuarena/scenario"
)

// TestCorrectionPruningChangesNothing checks that skipping the candidates
// the spelling filter rules out (pruneCandidates) changes no correction:
// one-edit typos of lexicon words and made-up words, on scenes with and
// without keywords outside the lexicon, corrected with and without it.
func TestCorrectionPruningChangesNothing(t *testing.T) {
	all, err := scenario.Resolve("arena")
	if err != nil {
		t.Fatal(err)
	}
	c := newEmbCache()
	scenes := []*scene{c.newScene(testScenario())}
	for i := 0; i < len(all) && len(scenes) < 6; i += 97 {
		scenes = append(scenes, c.newScene(&all[i]))
	}
	noExact := 0
	for _, sc := range scenes {
		if len(sc.exact) == 0 {
			noExact++
		}
	}
	if noExact == 0 {
		t.Fatal("no scene without keywords outside the lexicon: the pruning is never used")
	}
	l := theLexicon()
	r := rand.New(rand.NewPCG(1, 2))
	// the scenes' concern words (which corrections prefer) and a sample
	// of the lexicon, each with one edit
	var sources []int32
	for _, sc := range scenes {
		for k := 0; k < len(sc.vocab.ids); k += 7 {
			sources = append(sources, sc.vocab.ids[k])
		}
	}
	for id := 0; id < l.numWords(); id += 61 {
		sources = append(sources, int32(id))
	}
	var words []string
	for _, id := range sources {
		w := []byte(l.word(id))
		if len(w) < 4 || len(w) > 12 {
			continue
		}
		i := r.IntN(len(w))
		x := byte('a' + r.IntN(26))
		switch r.IntN(4) {
		case 0:
			w = append(w[:i:i], w[i+1:]...)
		case 1:
			if i+1 < len(w) {
				w[i], w[i+1] = w[i+1], w[i]
			}
		case 2:
			w[i] = x
		default:
			w = append(w[:i:i], append([]byte{x}, w[i:]...)...)
		}
		words = append(words, string(w))
	}
	for range 200 {
		w := make([]byte, 4+r.IntN(6))
		for i := range w {
			w[i] = byte('a' + r.IntN(26))
		}
		words = append(words, string(w))
	}
	words = append(words, "therpy", "affored", "afofrd", "affird", "aford", "sesions")
	defer func() { pruneCandidates = true }()
	corrected := 0
	for _, sc := range scenes {
		for _, w := range words {
			pruneCandidates = true
			got := sc.correction(w)
			pruneCandidates = false
			want := sc.correction(w)
			if got != want {
				t.Fatalf("%q: %q with pruning, %q without", w, got, want)
			}
			if got != "" {
				corrected++
			}
		}
	}
	// most lexicon typos name no concern and no global word, and stay
	if corrected < 500 {
		t.Fatalf("only %d of %d words corrected: too few to compare", corrected, len(words)*len(scenes))
	}
	// one typo of each kind, each corrected by the opposite edit
	for typo, want := range map[string]string{"affored": "afford", "afofrd": "afford", "affird": "afford", "aford": "afford"} {
		if got := scenes[0].correction(typo); got != want {
			t.Errorf("correction(%q) = %q, want %q (a concern's keyword)", typo, got, want)
		}
	}
}
