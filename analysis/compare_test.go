package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

var (
	acc  = decision.TermAccept
	cond = decision.TermConditional
	pend = decision.TermPending
	rej  = decision.TermReject
	fail = decision.TermFailed
)

func side(per string, terms map[string]decision.Terminal) []*episode.Episode {
	var out []*episode.Episode
	for i := range 11 {
		sc := fmt.Sprintf("s%02d", i)
		if term, ok := terms[sc]; ok {
			ep := mk(per, "sim", sc, 0, EB, hc, term, same(0.5), tt(same(0.6)))
			ep.RunID = "run-" + per
			out = append(out, ep)
		}
	}
	return out
}

// Two hand-built sides on s00..s09 (R_goal: accept +3, conditional +1,
// pending -1, reject -3):
//
//	sc   A     B     d = R_A - R_B
//	s00  acc   rej   +6  win
//	s01  acc   pend  +4  win
//	s02  acc   cond  +2  win
//	s03  acc   pend  +4  win
//	s04  acc   rej   +6  win
//	s05  rej   acc   -6  loss
//	s06  acc   acc    0
//	s07  pend  pend   0
//	s08  cond  pend  +2
//	s09  fail  acc       dropped (failed side)
//
// N = 9 pairs; A accepts 6/9 = 66.67%, B 2/9 = 22.22%, Δ = +44.44 pp;
// wins 5, losses 1: McNemar exact p = 2 (C(6,0) + C(6,1)) / 2^6 = 0.21875.
// Mean R_goal A = 15/9 = +1.667, B = -3/9 = -0.333, difference +2.
// Wilcoxon (zeros dropped, n = 7): |d| = 2,2,4,4,6,6,6 get ranks 1.5,
// 1.5, 3.5, 3.5, 6, 6, 6; W- = 6 (the -6), W+ = 22; ties force the normal
// approximation: mu = 7·8/4 = 14, sigma² = 7·8·15/24 - (6+6+24)/48 =
// 34.25, z = (22 - 14 - 0.5)/5.8523 = 1.2815, p = 2(1 - Phi(z)) = 0.20001.
func compareSides() (a, b []*episode.Episode) {
	a = side("A", map[string]decision.Terminal{"s00": acc, "s01": acc, "s02": acc, "s03": acc, "s04": acc,
		"s05": rej, "s06": acc, "s07": pend, "s08": cond, "s09": fail})
	b = side("B", map[string]decision.Terminal{"s00": rej, "s01": pend, "s02": cond, "s03": pend, "s04": rej,
		"s05": acc, "s06": acc, "s07": pend, "s08": pend, "s09": acc})
	return a, b
}

func TestCompare(t *testing.T) {
	a, b := compareSides()
	c, err := Compare(a, b, CompareOptions{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if c.N != 9 || c.DroppedFailed != 1 || c.Wins != 5 || c.Losses != 1 {
		t.Fatalf("N %d dropped %d win/loss %d/%d; want 9, 1, 5/1", c.N, c.DroppedFailed, c.Wins, c.Losses)
	}
	checks := []struct {
		name            string
		got, want, tolr float64
	}{
		{"A accept", c.A.AcceptRate, 6.0 / 9, 1e-12},
		{"B accept", c.B.AcceptRate, 2.0 / 9, 1e-12},
		{"Δ pp", c.DeltaPP, 400.0 / 9, 1e-9},
		{"McNemar p", c.McNemarP, 0.21875, 1e-12},
		{"mean R_goal A", c.A.MeanRGoal, 15.0 / 9, 1e-12},
		{"mean R_goal B", c.B.MeanRGoal, -3.0 / 9, 1e-12},
		{"R_goal diff", c.MeanRGoalDiff, 2, 1e-12},
		{"Wilcoxon p", c.Wilcoxon.P, 0.200005, 1e-5},
		{"Δ CI estimate", c.DeltaCI.Estimate, 400.0 / 9, 1e-9},
		{"R_goal CI estimate", c.RGoalDiffCI.Estimate, 2, 1e-12},
	}
	for _, x := range checks {
		if !near(x.got, x.want, x.tolr) {
			t.Errorf("%s = %v, want %v", x.name, x.got, x.want)
		}
	}
	if c.Wilcoxon.Method != "approx" || c.Wilcoxon.N != 7 || c.Wilcoxon.Statistic != 6 {
		t.Errorf("Wilcoxon %+v; want approx, N 7, statistic min(W+, W-) = 6", c.Wilcoxon)
	}
	if c.DeltaCI.Resamples != DefaultResamples || c.DeltaCI.Method != "percentile" || c.DeltaCI.Level != 0.95 {
		t.Errorf("Δ CI settings %+v", c.DeltaCI)
	}
	// A bootstrap mean of 9 pairs lies on the grid k·100/9; the interval
	// holds the estimate and stays inside the range of pair differences.
	if !(c.DeltaCI.Lo <= c.DeltaPP && c.DeltaPP <= c.DeltaCI.Hi) || c.DeltaCI.Lo < -100 || c.DeltaCI.Hi > 100 || c.DeltaCI.Lo >= c.DeltaCI.Hi {
		t.Errorf("Δ CI [%v, %v] around %v", c.DeltaCI.Lo, c.DeltaCI.Hi, c.DeltaPP)
	}
	if !(c.RGoalDiffCI.Lo <= 2 && 2 <= c.RGoalDiffCI.Hi) || c.RGoalDiffCI.Lo < -6 || c.RGoalDiffCI.Hi > 6 {
		t.Errorf("R_goal CI [%v, %v]", c.RGoalDiffCI.Lo, c.RGoalDiffCI.Hi)
	}
	// Same seed, same intervals (with 10,000 resamples the quantiles of
	// this discrete statistic barely depend on the seed at all).
	c2, _ := Compare(a, b, CompareOptions{Seed: 7})
	if c2.DeltaCI != c.DeltaCI || c2.RGoalDiffCI != c.RGoalDiffCI {
		t.Error("same seed gave different intervals")
	}
	var buf bytes.Buffer
	c.Table().WriteText(&buf)
	for _, s := range []string{"9 paired on (scenario, rollout); 1 dropped for a failed side", "full acceptance A       66.7%",
		"+44.4 pp, 95% CI [", "win / loss              5 / 1", "McNemar exact p         0.22",
		"Wilcoxon signed-rank p  0.2 (normal approximation with continuity correction and tie correction, 7 nonzero differences)"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, buf.String())
		}
	}
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	json.Unmarshal(raw, &back)
	if back["wins"] != 5.0 || !near(back["mcnemar_exact_p"].(float64), 0.21875, 1e-12) || back["pairs"] != 9.0 {
		t.Errorf("json %s", raw)
	}
}

// Every pair A accepts and B rejects: Δ = +100 pp with a degenerate
// interval [100, 100], mean R_goal difference +6 with [6, 6], McNemar p =
// 2 / 2^4 = 0.125 on 4 / 0; four tied |d| = 6 give the normal approximation
// with W+ = 10: sigma² = 4·5·9/24 - (64-4)/48 = 6.25, z = (10 - 5 - 0.5)/2.5
// = 1.8, p = 0.0719. Identical sides give Δ 0, p 1 and "none".
func TestCompareExtremes(t *testing.T) {
	terms := func(term decision.Terminal) map[string]decision.Terminal {
		return map[string]decision.Terminal{"s00": term, "s01": term, "s02": term, "s03": term}
	}
	c, err := Compare(side("A", terms(acc)), side("B", terms(rej)), CompareOptions{Seed: 1, Resamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	if c.DeltaCI.Lo != 100 || c.DeltaCI.Hi != 100 || c.RGoalDiffCI.Lo != 6 || c.RGoalDiffCI.Hi != 6 || c.DeltaCI.Resamples != 500 {
		t.Errorf("intervals %+v %+v", c.DeltaCI, c.RGoalDiffCI)
	}
	if c.McNemarP != 0.125 || !near(c.Wilcoxon.P, 2*(1-0.5*math.Erfc(-1.8/math.Sqrt2)), 1e-12) {
		t.Errorf("McNemar %v Wilcoxon %v", c.McNemarP, c.Wilcoxon.P)
	}
	c, err = Compare(side("A", terms(pend)), side("B", terms(pend)), CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.DeltaPP != 0 || c.McNemarP != 1 || c.Wilcoxon.P != 1 || c.Wilcoxon.Method != "none" {
		t.Errorf("identical sides: Δ %v McNemar %v Wilcoxon %+v", c.DeltaPP, c.McNemarP, c.Wilcoxon)
	}
}

// B lacks s08 and holds an extra s10: Compare refuses with the counts (9
// shared keys, 1 only in A, 1 only in B) unless Intersection is set; then
// s00..s07 pair (s09 still dropped as failed): N = 8, A 6/8 = 75%, B 2/8
// = 25%, Δ = +50 pp, win/loss still 5/1.
func TestCompareIntersection(t *testing.T) {
	a, b := compareSides()
	var b2 []*episode.Episode
	for _, ep := range b {
		if ep.ScenarioID != "s08" {
			b2 = append(b2, ep)
		}
	}
	b2 = append(b2, side("B", map[string]decision.Terminal{"s10": acc})...)
	_, err := Compare(a, b2, CompareOptions{})
	var me *SetMismatchError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want *SetMismatchError", err)
	}
	if me.Common != 9 || me.OnlyA != 1 || me.OnlyB != 1 || me.ExamplesA[0] != "s08#0" || me.ExamplesB[0] != "s10#0" {
		t.Errorf("mismatch %+v", me)
	}
	for _, s := range []string{"9 (scenario, rollout) keys in both, 1 only in A (e.g. s08#0), 1 only in B (e.g. s10#0)", "--intersection"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %q", err, s)
		}
	}
	c, err := Compare(a, b2, CompareOptions{Intersection: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.N != 8 || c.OnlyA != 1 || c.OnlyB != 1 || c.DroppedFailed != 1 || c.DeltaPP != 50 || c.Wins != 5 || c.Losses != 1 {
		t.Errorf("intersection: N %d only %d/%d dropped %d Δ %v w/l %d/%d", c.N, c.OnlyA, c.OnlyB, c.DroppedFailed, c.DeltaPP, c.Wins, c.Losses)
	}
}

func TestCompareErrors(t *testing.T) {
	a, b := compareSides()
	if _, err := Compare(append(a, b[0]), b, CompareOptions{}); err == nil || !strings.Contains(err.Error(), "mixes arms") {
		t.Errorf("mixed arms: %v", err)
	}
	if _, err := Compare(append(a, a[0]), b, CompareOptions{}); err == nil || !strings.Contains(err.Error(), "s00#0 twice") {
		t.Errorf("duplicate key: %v", err)
	}
	if _, err := Compare(nil, b, CompareOptions{}); err == nil {
		t.Error("empty side: want an error")
	}
	if _, err := Compare(a[9:], b[9:], CompareOptions{}); err == nil || !strings.Contains(err.Error(), "no pair left") {
		t.Errorf("only failed pairs: %v", err)
	}
}
