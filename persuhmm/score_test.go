package persuhmm

import (
	"math"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
)

func TestProgress(t *testing.T) {
	s := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for _, c := range []struct {
		a, b, want float64
		ok         bool
	}{
		{s(-2), s(-1), 0.5, true},  // half the way: logit -2 -> -1
		{s(-2), s(0), 1, true},     // to even odds
		{s(-2), s(1), 1.5, true},   // past it
		{s(-2), s(-3), -0.5, true}, // fell
		{0.5, 0.9, 0, false},       // already at even odds
		{0.7, 0.2, 0, false},
	} {
		got, ok := Progress(c.a, c.b)
		if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Progress(%.4f, %.4f) = %.6f, %v; want %.6f, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}

// The embedded goal evaluator scores by hand-computed shares of the way to
// even odds, and the same persuadee states read through a steeper or a
// shallower probe (p = σ(k·x), k 1, 2 or 6) get the same scores; a rise in
// p itself (with a target rise of 0.1) would score the first stage 3 at
// k 1 and 1 at k 6.
func TestScoreScaleFree(t *testing.T) {
	// x[probe][t]: the persuadee's state behind each probe at t = 0..4.
	x := map[string][]float64{
		"ca": {-2, -1.8, -1.625, -1.625, -1.625},
		"pe": {-4, -4, -4, -3.75, -3.75},
		"ac": {-1, -1, -1, 1, 0.5},
	}
	// Stages, DefaultTarget 0.25: ca over turns 1-2 (logit -2 -> -1.625:
	// 0.1875 of the way, 0.75 of the target, score 1 + round(3) = 4), pe
	// over turn 3 (-4 -> -3.75: 0.0625, 0.25 of the target, score 2), ac
	// over turn 4 (starts at +1, above even odds, ends at +0.5: 3).
	want := []int{4, 2, 3}
	plan := Plan{Stages: []Stage{{Probe: "ca"}, {Probe: "pe"}, {Probe: "ac"}}}
	for _, k := range []float64{1, 2, 6} {
		read := func(t int) []probe.Reading {
			var rs []probe.Reading
			for _, id := range []string{"ca", "pe", "ac"} {
				rs = append(rs, probe.Reading{Probe: id, P: 1 / (1 + math.Exp(-k*x[id][t])), OK: true})
			}
			return rs
		}
		ep := &episode.Episode{Initial: read(0)}
		for t := 1; t <= 4; t++ {
			ep.Turns = append(ep.Turns, episode.Turn{Probes: read(t)})
		}
		got, _, err := rules{target: DefaultTarget}.Score(ctx, Task{}, plan, Dialogue{Episode: ep, Stage: []int{0, 0, 1, 2}})
		if err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("k %g: scores %v, want %v", k, got, want)
				break
			}
		}
	}
}
