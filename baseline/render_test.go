package baseline

import (
	"math/rand/v2"
	"testing"

	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// TestRenderTagsAsWhole checks that render's part-by-part reading (init
// table for fixed templates, per-part Tag otherwise) equals tagger.Tag of
// the whole rendered text: every template alone and 40 random
// combinations of one to four parts per scenario, under the full and the
// neutral fill of every arena and p4g held-out scenario plus the hand-made
// publics, with echo texts that include negators and pressure words.
func TestRenderTagsAsWhole(t *testing.T) {
	pubs := append([]scenario.Public(nil), publics...)
	for _, set := range []string{"arena", "p4g"} {
		all, err := scenario.Resolve(set)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range scenario.Filter(all, scenario.Heldout) {
			pubs = append(pubs, sc.Public())
		}
	}
	if len(pubs) < 100 {
		t.Fatalf("only %d publics", len(pubs))
	}
	xs := []string{"", "the cost", "your schedule and the kids", "not having time", "pressure and the deadline", "what you would need"}
	r := rand.New(rand.NewPCG(7, 11))
	cmp := func(b *base, parts []part, v slots, shift int) {
		text, got := b.render(parts, v, shift)
		// render composes acts and pressure only (what the persuader
		// checks); the P4G strategies of the whole text are read by
		// episode.Run's own tagger.Tag, so they are not compared.
		if want := tagger.Tag(text); got.Acts != want.Acts || got.Pressure != want.Pressure {
			t.Fatalf("%q: part-by-part %+v, whole %+v", text, got, want)
		}
	}
	checked := 0
	for i, pub := range pubs {
		b := newBase(pub, uint64(i), true)
		for _, x := range xs[:2] {
			for _, v := range []slots{
				{name: b.f.name, proposal: b.f.proposal, proposal3: b.f.proposal3, x: x},
				{proposal: safeProposal, proposal3: safeProposal, x: x},
			} {
				for bk := range banks {
					for k := range banks[bk] {
						cmp(&b, []part{{bankID(bk), k}}, v, 0)
						checked++
					}
				}
			}
		}
		for range 40 {
			parts := make([]part, 1+r.IntN(4))
			for j := range parts {
				parts[j] = part{bankID(r.IntN(int(numBanks))), r.IntN(20)}
			}
			x := xs[r.IntN(len(xs))]
			v := slots{name: b.f.name, proposal: b.f.proposal, proposal3: b.f.proposal3, x: x}
			if r.IntN(2) == 0 {
				v = slots{proposal: safeProposal, proposal3: safeProposal, x: x}
			}
			cmp(&b, parts, v, r.IntN(12))
			checked++
		}
	}
	t.Logf("%d renderings checked", checked)
}
