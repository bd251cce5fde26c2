package masp

import (
	"math"
	"testing"

	"github.com/persuarena/persuarena/stats"
)

// The RCSR edge cases and hand-computed SR, AT, RCSR.
func TestRCSREdgeCases(t *testing.T) {
	const T, tq = 8, DefaultTauQ
	for _, c := range []struct {
		name    string
		tr      Trace
		sr, rc  bool
		turns   int
		qbarNaN bool
		qbar    float64
	}{
		{"success at turn 1, q = 0", Trace{SuccessTurn: 1, Q: []int{0}}, true, false, 1, false, 0},
		{"success at turn 1, q = 1", Trace{SuccessTurn: 1, Q: []int{1}}, true, true, 1, false, 1},
		{"unparseable counts 0: 2/3 < 0.7", Trace{SuccessTurn: 3, Q: []int{1, 0, 1}}, true, false, 3, false, 2.0 / 3},
		{"one unparseable of four: 0.75", Trace{SuccessTurn: 4, Q: []int{1, 1, 0, 1}}, true, true, 4, false, 0.75},
		{"one NOT_RATIONAL of eight: 6/8", Trace{SuccessTurn: 8, Q: []int{1, 1, 1, 1, 1, 1, -1, 1}}, true, true, 8, false, 0.75},
		{"success after T fails", Trace{SuccessTurn: 9, Q: []int{1, 1, 1, 1, 1, 1, 1, 1, 1}}, false, false, 8, false, 1},
		{"failure", Trace{Q: []int{1, 1}}, false, false, 8, true, 0},
		{"missing judgements count 0", Trace{SuccessTurn: 2, Q: []int{1}}, true, false, 2, false, 0.5},
	} {
		if got := c.tr.Success(T); got != c.sr {
			t.Errorf("%s: Success %v", c.name, got)
		}
		if got := c.tr.RCSuccess(T, tq); got != c.rc {
			t.Errorf("%s: RCSuccess %v", c.name, got)
		}
		if got := c.tr.Turns(T); got != c.turns {
			t.Errorf("%s: Turns %d, want %d", c.name, got, c.turns)
		}
		if q := c.tr.QBar(); math.IsNaN(q) != c.qbarNaN || (!c.qbarNaN && math.Abs(q-c.qbar) > 1e-15) {
			t.Errorf("%s: QBar %v, want %v", c.name, q, c.qbar)
		}
	}
	trs := []Trace{
		{SuccessTurn: 2, Q: []int{1, 1}},
		{Q: []int{1, 1, 1, 1, 1, 1, 1, 1}},
		{SuccessTurn: 5, Q: []int{1, 0, 1, 1, 1}}, // q-bar 0.8
		{SuccessTurn: 3, Q: []int{1, -1, 1}},      // q-bar 1/3
		{SuccessTurn: 10, Q: make([]int, 10)},     // after T
		{SuccessTurn: 1, Q: []int{0}},             // q-bar 0
	}
	near(t, "SR@8", SR(trs, 8), 4.0/6, 1e-15)
	near(t, "AT", AT(trs, 8), (2+8+5+3+8+1)/6.0, 1e-15)
	near(t, "RCSR@8", RCSR(trs, 8, tq), 2.0/6, 1e-15)
	curve := RCSRCurve(trs, 8, tq)
	want := []float64{0, 1.0 / 6, 1.0 / 6, 1.0 / 6, 2.0 / 6, 2.0 / 6, 2.0 / 6, 2.0 / 6}
	for i := range want {
		near(t, "RCSR@t", curve[i], want[i], 1e-15)
	}
	near(t, "SR@4", SR(trs, 4), 3.0/6, 1e-15)
	near(t, "mean q", MeanQ(trs), 15.0/29, 1e-15)
	if !math.IsNaN(SR(nil, 8)) {
		t.Error("SR of nothing is not NaN")
	}
}

func TestWorstAndCIs(t *testing.T) {
	soft := []Trace{{SuccessTurn: 1, Q: []int{1}}, {SuccessTurn: 2, Q: []int{1, 1}}, {SuccessTurn: 3, Q: []int{0, 0, 1}}, {}}
	hard := []Trace{{SuccessTurn: 4, Q: []int{1, 1, 1, 1}}, {}, {}, {}}
	by := [][]Trace{soft, hard}
	w, at := WorstSR(by, 8)
	near(t, "WorstSR", w, 0.25, 0)
	if at != 1 {
		t.Errorf("worst SR user %d", at)
	}
	w, at = WorstRCSR(by, 8, DefaultTauQ)
	near(t, "WorstRCSR", w, 0.25, 0) // soft 2/4, hard 1/4
	if at != 1 {
		t.Errorf("worst RCSR user %d", at)
	}
	o := stats.BootstrapOptions{Resamples: 2000, Seed: 3}
	ci, err := WorstCI(by, MetricSR, 8, DefaultTauQ, o)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "WorstCI estimate", ci.Estimate, 0.25, 0)
	if !(ci.Lo <= ci.Estimate && ci.Estimate <= ci.Hi && ci.Lo >= 0 && ci.Hi <= 0.75) {
		t.Errorf("WorstCI %+v", ci)
	}
	// Each replicate is the min over users on the same resample, so it
	// never exceeds either user's own replicate: hi <= each user's hi.
	hs, _ := CI(hard, MetricSR, 8, DefaultTauQ, o)
	if ci.Hi > hs.Hi+1e-12 {
		t.Errorf("worst hi %v above hard's hi %v", ci.Hi, hs.Hi)
	}
	again, _ := WorstCI(by, MetricSR, 8, DefaultTauQ, o)
	if again != ci {
		t.Error("same seed, different interval")
	}
	at1, _ := CI(soft, MetricAT, 8, DefaultTauQ, o)
	near(t, "AT estimate", at1.Estimate, (1+2+3+8)/4.0, 1e-15)
	d, err := PairedDiffCI(soft, hard, MetricSR, 8, DefaultTauQ, o)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "paired dSR", d.Estimate, 0.5, 1e-15)
	if _, err := WorstCI([][]Trace{soft, hard[:2]}, MetricSR, 8, DefaultTauQ, o); err == nil {
		t.Error("unaligned users accepted")
	}
	if _, err := PairedDiffCI(soft, hard[:3], MetricSR, 8, DefaultTauQ, o); err == nil {
		t.Error("unpaired accepted")
	}
	// A constant sample gives a degenerate interval at the estimate.
	all := []Trace{{SuccessTurn: 1, Q: []int{1}}, {SuccessTurn: 1, Q: []int{1}}}
	c1, _ := CI(all, MetricRCSR, 8, DefaultTauQ, o)
	if c1.Estimate != 1 || c1.Lo != 1 || c1.Hi != 1 {
		t.Errorf("constant CI %+v", c1)
	}
}
