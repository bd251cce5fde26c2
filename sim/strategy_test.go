package sim_test

import (
	"testing"

	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

// social are greeting, praise and thanks turns: the tagger reads P4G
// strategies in them but no act, pressure or concern.
var social = []string{"Hello, how are you today?", "Thank you so much!", "That is very kind of you.", "You are a generous person."}

// TestSocialTurnsNeverRaiseBelief extends the content-free battery
// (TestContentFreeNeverRaisesBelief) to greeting, praise and thanks: every
// resistance type, the three settings, 100 seeds, from the start and after
// 1-3 real turns, every such turn's dense reward is <= 0.
func TestSocialTurnsNeverRaiseBelief(t *testing.T) {
	for _, line := range social {
		tg := tagger.Tag(line)
		if tg.Acts != 0 || tg.Pressure != 0 || tg.Strategies == 0 || tg.Strategies&^tagger.ContentFree != 0 {
			t.Fatalf("%q tagged %v %v pressure %d: not a social-only line", line, tg.Acts.Strings(), tg.Strategies.Strings(), tg.Pressure)
		}
	}
	scs := fixtures()
	checked := 0
	for _, name := range sim.Names {
		cfg, _ := sim.ByName(name)
		pee := sim.New(cfg)
		for _, filler := range social {
			for seed := uint64(0); seed < 100; seed++ {
				sc := scs[int(seed)%len(scs)]
				k := int(seed % 4)
				pre := informerLike.lines
				if seed%8 >= 4 {
					pre = asker.lines
				}
				ep := run(t, &prefixThen{pre: pre, k: k, filler: filler}, pee, sc, seed)
				for i, tr := range ep.Turns {
					if i < k {
						continue
					}
					checked++
					if tr.Dense == nil || *tr.Dense > 0 {
						t.Fatalf("%s %s seed %d turn %d %q: dense reward %v", name, sc.ID, seed, tr.T, filler, tr.Dense)
					}
				}
			}
		}
	}
	if checked < 8000 {
		t.Fatalf("checked %d social turns; too few", checked)
	}
}
