package grpo

import (
	"math"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

func TestGroupsKeepFirstAppearanceOrder(t *testing.T) {
	ep := func(per, sc string, ro int) *episode.Episode {
		return &episode.Episode{Persuader: per, Persuadee: "sim", ScenarioID: sc, Rollout: ro}
	}
	eps := []*episode.Episode{ep("b", "s2", 0), ep("a", "s1", 0), ep("b", "s2", 1), ep("a", "s1", 1), ep("b", "s1", 0)}
	var g Groups[int]
	for i, e := range eps {
		g.Add(KeyOf(e, 3), i)
	}
	want := []Key{{"b", "sim", "s2", 3, 0}, {"a", "sim", "s1", 3, 0}, {"b", "sim", "s1", 3, 0}}
	keys := g.Keys()
	if len(keys) != len(want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	members := [][]int{{0, 2}, {1, 3}, {4}}
	for i, k := range want {
		if keys[i] != k {
			t.Errorf("key %d = %v, want %v", i, keys[i], k)
		}
		if m := g.Members(k); len(m) != len(members[i]) || m[0] != members[i][0] || m[len(m)-1] != members[i][len(m)-1] {
			t.Errorf("members of %v = %v, want %v", k, m, members[i])
		}
	}
	g.Reset()
	if len(g.Keys()) != 0 || g.Members(want[0]) != nil {
		t.Errorf("after Reset: %v", g.Keys())
	}
}

func TestInputsAndOutcome(t *testing.T) {
	d := 0.25
	ok := &episode.Episode{RGoal: 1, Terminal: decision.TermAccept,
		Turns: []episode.Turn{{Dense: &d}, {}}}
	failed := &episode.Episode{RGoal: 0, Terminal: decision.TermFailed}
	rOut, dense := Inputs([]*episode.Episode{ok, failed}, func(ep *episode.Episode) float64 { return Outcome(ep, 1) })
	if rOut[0] != 1 || !math.IsNaN(rOut[1]) {
		t.Errorf("rOut = %v, want [1 NaN]", rOut)
	}
	if len(dense[0]) != 2 || dense[0][0] != 0.25 || !math.IsNaN(dense[0][1]) || len(dense[1]) != 0 {
		t.Errorf("dense = %v, want [[0.25 NaN] []]", dense)
	}
}

func TestDeadTally(t *testing.T) {
	var c DeadTally
	c.Add(GroupStats{Dead: true, Separated: true, Mixed: true, ShortestTop: true, LengthCorr: -0.5, MeanAbsOut: 0, MeanAbsDense: 0.2}, 4)
	c.Add(GroupStats{Dead: true, Mixed: true, LengthCorr: math.NaN(), MeanAbsDense: 0.1}, 6)
	c.Add(GroupStats{LengthCorr: 0.9, MeanAbsOut: 1, MeanAbsDense: 0.3}, 10)
	if c.Groups != 3 || c.Dead != 2 || c.Separated != 1 || c.Mixed != 2 || c.ShortestTop != 1 || c.CorrN != 1 || c.Turns != 20 {
		t.Fatalf("tally %+v", c)
	}
	if got := c.DeadShare(); math.Abs(got-2.0/3) > 1e-15 {
		t.Errorf("DeadShare = %v, want 2/3", got)
	}
	if c.SeparatedShare() != 0.5 || c.ShortestTopShare() != 0.5 || c.LengthCorr() != -0.5 {
		t.Errorf("shares %v %v %v, want 0.5 0.5 -0.5", c.SeparatedShare(), c.ShortestTopShare(), c.LengthCorr())
	}
	// |A_out|: (0·4 + 0·6 + 1·10)/20; |λA_dense|: (0.8 + 0.6 + 3)/20.
	if c.MeanAbsOut() != 0.5 || math.Abs(c.MeanAbsDense()-0.22) > 1e-15 {
		t.Errorf("means %v %v, want 0.5 0.22", c.MeanAbsOut(), c.MeanAbsDense())
	}
	var all DeadTally
	all.Merge(c)
	all.Merge(c)
	if all.Groups != 6 || all.Turns != 40 || all.MeanAbsOut() != 0.5 {
		t.Errorf("merged %+v", all)
	}
	var empty DeadTally
	if !math.IsNaN(empty.DeadShare()) || !math.IsNaN(empty.MeanAbsOut()) || !math.IsNaN(empty.LengthCorr()) {
		t.Errorf("empty tally shares should be NaN")
	}
}
