package tagger_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

// TestConcernSetMatchesMentions checks that a compiled ConcernSet gives
// exactly Mentions' result on every utterance (persuader turns and
// simulator replies) of the four built-in persuaders against the default
// simulator on the arena and p4g held-out scenarios: once against the
// scenario's own hidden concerns and once against every keyword of both
// sets as a concern of its own (so each keyword's match is compared).
// TagMentions must give the same mentions and Tag's result.
func TestConcernSetMatchesMentions(t *testing.T) {
	type item struct {
		sc   *scenario.Scenario
		text string
	}
	var items []item
	seen := map[string]bool{}
	var each []scenario.Concern
	pee := sim.New(sim.Config{})
	for _, set := range []string{"arena", "p4g"} {
		all, err := scenario.Resolve(set)
		if err != nil {
			t.Fatal(err)
		}
		held := scenario.Filter(all, scenario.Heldout)
		if len(held) == 0 {
			t.Skipf("%s has no held-out scenarios", set)
		}
		for i := range held {
			sc := &held[i]
			for _, c := range sc.Hidden.Concerns {
				for _, kw := range c.Keywords {
					if !seen[kw] {
						seen[kw] = true
						each = append(each, scenario.Concern{ID: kw, Keywords: []string{kw}})
					}
				}
			}
			for _, name := range []string{"script", "pushy", "informer", "random"} {
				per, err := baseline.New(name)
				if err != nil {
					t.Fatal(err)
				}
				ep, err := episode.Run(context.Background(), episode.Config{}, sc, per, pee, episode.Seed(2024, sc.ID, 0))
				if err != nil {
					t.Fatalf("%s/%s: %v", name, sc.ID, err)
				}
				for _, tu := range ep.Turns {
					items = append(items, item{sc, tu.Persuader}, item{sc, tu.Persuadee})
				}
			}
		}
	}
	if len(items) < 1000 || len(each) < 50 {
		t.Fatalf("corpus too small: %d utterances, %d keywords", len(items), len(each))
	}
	eachSet := tagger.Compile(each)
	sets := map[*scenario.Scenario]*tagger.ConcernSet{}
	hits := 0
	for _, it := range items {
		cs := sets[it.sc]
		if cs == nil {
			cs = tagger.Compile(it.sc.Hidden.Concerns)
			sets[it.sc] = cs
		}
		want := tagger.Mentions(it.text, it.sc.Hidden.Concerns)
		if got := cs.AppendMentions(nil, it.text); !slices.Equal(got, want) {
			t.Errorf("%s: %q: ConcernSet %v, Mentions %v", it.sc.ID, it.text, got, want)
		}
		if tg, got := cs.TagMentions(nil, it.text); !slices.Equal(got, want) || tg != tagger.Tag(it.text) {
			t.Errorf("%s: %q: TagMentions %v %v, Tag and Mentions %v %v", it.sc.ID, it.text, tg, got, tagger.Tag(it.text), want)
		}
		want = tagger.Mentions(it.text, each)
		if got := eachSet.AppendMentions(make([]bool, 0, len(each)), it.text); !slices.Equal(got, want) {
			t.Errorf("%q: per-keyword ConcernSet differs from Mentions", it.text)
		}
		if tg, got := eachSet.TagMentions(make([]bool, 0, len(each)), it.text); !slices.Equal(got, want) || tg != tagger.Tag(it.text) {
			t.Errorf("%q: per-keyword TagMentions differs from Tag and Mentions", it.text)
		}
		for _, h := range want {
			if h {
				hits++
			}
		}
	}
	// The comparison must cover matches, not only misses.
	if hits < len(items)/10 {
		t.Errorf("only %d keyword hits over %d utterances", hits, len(items))
	}
	t.Logf("%d utterances, %d keywords, %d keyword hits", len(items), len(each), hits)
}

// TestTagMentionsCache checks TagMentions through its result cache: each
// text read again (a cache hit) and read against a second set with other
// concerns (same text, another set: never the first set's result), from
// four goroutines at once, appending after existing entries of dst, must
// give exactly Tag and Mentions.
func TestTagMentionsCache(t *testing.T) {
	all, err := scenario.Resolve("arena")
	if err != nil {
		t.Fatal(err)
	}
	held := scenario.Filter(all, scenario.Heldout)
	pee := sim.New(sim.Config{})
	var texts []string
	var concerns [][]scenario.Concern
	for i := range held[:min(30, len(held))] {
		for _, name := range []string{"script", "informer"} {
			per, err := baseline.New(name)
			if err != nil {
				t.Fatal(err)
			}
			ep, err := episode.Run(context.Background(), episode.Config{}, &held[i], per, pee, uint64(i))
			if err != nil {
				t.Fatal(err)
			}
			for _, tu := range ep.Turns {
				texts = append(texts, tu.Persuader)
				concerns = append(concerns, held[i].Hidden.Concerns)
			}
		}
	}
	other := []scenario.Concern{
		{ID: "a", Keywords: []string{"evidence", "results"}}, {ID: "b", Keywords: []string{"week", "plan"}},
		{ID: "c", Keywords: []string{"decision"}},
	}
	otherSet := tagger.Compile(other)
	sets := make([]*tagger.ConcernSet, len(texts))
	for i := range texts {
		sets[i] = tagger.Compile(concerns[i])
	}
	errs := make(chan string, 4)
	for g := range 4 {
		go func() {
			msg := ""
			for round := range 3 {
				for k := range texts {
					i := (k*7 + g*13 + round) % len(texts)
					for _, c := range []struct {
						cs       *tagger.ConcernSet
						concerns []scenario.Concern
					}{{sets[i], concerns[i]}, {otherSet, other}} {
						tg, got := c.cs.TagMentions([]bool{true}, texts[i])
						want := append([]bool{true}, tagger.Mentions(texts[i], c.concerns)...)
						if msg == "" && (!slices.Equal(got, want) || tg != tagger.Tag(texts[i])) {
							msg = fmt.Sprintf("%q: TagMentions %v %v, want %v %v", texts[i], tg, got, tagger.Tag(texts[i]), want)
						}
					}
				}
			}
			errs <- msg
		}()
	}
	for range 4 {
		if msg := <-errs; msg != "" {
			t.Error(msg)
		}
	}
	if len(texts) < 300 {
		t.Fatalf("only %d texts", len(texts))
	}
}
