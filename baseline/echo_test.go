package baseline

import (
	"context"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// stockEchoes runs the script against the default simulator for n
// episodes over scs (episode k: scenario k*7919 mod len, seed k) and
// returns how many episodes had a reply from which the script could echo
// a word that is not the persuadee's own concern wording (the words of
// the concern's voiced text, description and keywords), and examples.
func stockEchoes(t *testing.T, scs []scenario.Scenario, n int) (int, []string) {
	t.Helper()
	per, _ := New("script")
	pee := sim.New(sim.DefaultConfig())
	bad := 0
	var ex []string
	for k := 0; k < n; k++ {
		sc := &scs[k*7919%len(scs)]
		own := map[string]bool{}
		for _, c := range sc.Hidden.Concerns {
			for _, s := range append([]string{c.Voice(sc.Persuadee.Name), c.Description}, c.Keywords...) {
				for _, w := range words(s) {
					own[strings.TrimSuffix(w, "'s")] = true
				}
			}
		}
		ep, err := episode.Run(context.Background(), episode.Config{}, sc, per, pee, uint64(k))
		if err != nil {
			t.Fatal(err)
		}
		stop := stopSet{words: stopWords(sc.Public())}
		hit := false
		for _, tr := range ep.Turns {
			for _, p := range extract(tr.Persuadee, nil, stop, 8) {
				for _, w := range strings.Fields(p.key) {
					if !own[w] && !connector(w) {
						hit = true
						if len(ex) < 400 {
							ex = append(ex, p.key+" <- "+tr.Persuadee)
						}
					}
				}
			}
		}
		if hit {
			bad++
		}
	}
	return bad, ex
}

// The script echoes only the persuadee's own concern words: no content
// phrase of a simulator reply comes from the simulator's stock wording.
func TestScriptEchoesNoStockWords(t *testing.T) {
	cidata.Slow(t, "plays the script on every scenario")
	for _, name := range []string{"arena", "p4g"} {
		all, err := scenario.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		scs := append(scenario.Filter(all, scenario.Heldout), scenario.Filter(all, scenario.Train)...)
		bad, ex := stockEchoes(t, scs, 1000)
		t.Logf("%s: %d of 1000 script episodes could echo a stock word", name, bad)
		if bad != 0 {
			t.Errorf("%s: %d of 1000 episodes:\n%s", name, bad, strings.Join(ex, "\n"))
		}
	}
}
