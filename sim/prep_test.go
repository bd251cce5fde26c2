package sim

import (
	"slices"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/tagger"
)

// The prep cache shares one prep (the reply strings) among scenarios of equal
// content, copies included, and never serves a scenario edited in place
// the prep of its old content.
func TestPrepCacheByContent(t *testing.T) {
	sim := New(Config{})
	prepOf := sim.prepOf
	sc := fixture("EB", -0.3)
	p1 := prepOf(sc)
	cp := *sc
	cp.Hidden.Concerns = slices.Clone(sc.Hidden.Concerns)
	if p2 := prepOf(&cp); p2 != p1 {
		t.Fatal("a copy of the scenario got a new prep")
	}
	sc.Hidden.Concerns[0].Keywords[0] = "clinic" // edited in place
	p3 := prepOf(sc)
	if p3 == p1 {
		t.Fatal("an edited scenario reused the prep of its old content")
	}
	sc.Proposal = "Book the shot online."
	if p4 := prepOf(sc); p4 == p3 || p4.fill.proposal != "book the shot online" {
		t.Fatalf("edited proposal: fill.proposal = %q", p4.fill.proposal)
	}
}

// TagUtterance then Reply gives the same replies and state as Reply alone
// (which tags and reads mentions itself), and Reply to a text other than
// the tagged one reads that text's own mentions.
func TestTagUtteranceThenReply(t *testing.T) {
	lines := []string{"What worries you most about the fever?", "The clinic hours run to 9pm now.", "Would you try it this week?"}
	a, b := start(t, quiet(), fixture("EB", -0.3)), start(t, quiet(), fixture("EB", -0.3))
	var ta, tb []episode.Message
	for i, l := range lines {
		ta = append(ta, episode.Message{Speaker: episode.PersuaderSpeaker, Text: l})
		if tg := a.TagUtterance(l); tg != tagger.Tag(l) {
			t.Errorf("TagUtterance(%q) = %+v, tagger.Tag %+v", l, tg, tagger.Tag(l))
		}
		if i == 1 {
			a.TagUtterance("nothing to see")
		}
		tb = append(tb, episode.Message{Speaker: episode.PersuaderSpeaker, Text: l})
		ra, err := a.Reply(t.Context(), ta)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Reply(t.Context(), tb)
		if err != nil {
			t.Fatal(err)
		}
		if ra != rb || a.o != b.o || a.u != b.u || !slices.Equal(a.state, b.state) {
			t.Fatalf("turn %d: %+v vs %+v (o %v vs %v)", i+1, ra, rb, a.o, b.o)
		}
		ta = append(ta, episode.Message{Speaker: episode.PersuadeeSpeaker, Text: ra.Text})
		tb = append(tb, episode.Message{Speaker: episode.PersuadeeSpeaker, Text: rb.Text})
	}
	if a.state[0] == hidden {
		t.Fatal("the fever concern was never voiced: the test checks nothing")
	}
}
