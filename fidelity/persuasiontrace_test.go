package fidelity

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/persuasiontrace"
)

// msgs returns n persuader messages with a person's reply between each two.
func msgs(n int) []persuasiontrace.Message {
	var out []persuasiontrace.Message
	for i := range n {
		if i > 0 {
			out = append(out, persuasiontrace.Message{Role: persuasiontrace.RoleTarget, Content: "hm"})
		}
		out = append(out, persuasiontrace.Message{Role: persuasiontrace.RolePersuader, Content: "argument " + string(rune('a'+i))})
	}
	return out
}

func TestRunTrace(t *testing.T) {
	// People 1 (fold 2: rounds a, c), 2 (fold 1: b) and 3 (control d).
	rounds := []persuasiontrace.Round{
		{ID: "a", Person: "1", Proposition: "P a.", Supports: true, Initial: 0.2, Serial: []float64{0.7, 0.7, 0.7}, Final: 0.6, Messages: msgs(4)},
		{ID: "b", Person: "2", Proposition: "P b.", Supports: true, Initial: 0.6, Serial: []float64{0.6}, Final: 0.65, Messages: msgs(2)},
		{ID: "c", Person: "1", Proposition: "P c.", Supports: true, Initial: 0.5, Serial: []float64{0.4}, Final: 0.4, Messages: msgs(2)},
		{ID: "d", Person: "3", Proposition: "P d.", Supports: true, Initial: 0.5, Serial: []float64{0.9}, Final: 0.55, Messages: msgs(2), Control: true},
	}
	if persuasiontrace.Fold("1") != 2 || persuasiontrace.Fold("2") != 1 {
		t.Fatalf("folds %d %d, want 2 1", persuasiontrace.Fold("1"), persuasiontrace.Fold("2"))
	}
	// c accepts at its first reply and then refuses to go on: its final
	// position reads the belief at the decision.
	f := &fake{beliefs: map[string][]float64{
		"a": {0.25, 0.45, 0.45, 0.45, 0.7}, "b": {0.55, 0.55, 0.6}, "c": {0.5, 0.5}, "d": {0.5, 0.5, 0.52},
	}, decisions: map[string][]decision.Decision{"c": {decision.Accept}}}
	rep, err := RunTrace(context.Background(), rounds, nil, f, Options{Seed: 3, Resamples: 500, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, c := rep.Persuasion, rep.Control
	if p.Rounds != 3 || p.People != 2 || p.Reports != 8 || c.Rounds != 1 || c.Reports != 1 || rep.Failed != 0 {
		t.Fatalf("persuasion %d rounds %d people %d reports; control %d rounds %d reports; %d failed (%s)",
			p.Rounds, p.People, p.Reports, c.Rounds, c.Reports, rep.Failed, rep.FirstError)
	}
	// Per round (hand-computed):
	//   a: sim 0.45 0.45 0.45 0.7 vs 0.7 0.7 0.7 0.6: MAE 0.85/4; constant
	//      0.2: (3·0.5 + 0.4)/4 = 0.475.
	//   b: sim 0.55 0.6 vs 0.6 0.65: 0.05; constant 0.6: 0.025.
	//   c: sim 0.5 0.5 (closed) vs 0.4 0.4: 0.1; constant 0.1.
	// Mean-shift predictor: a, c (fold 2) get b's mean change 0.025:
	//   a predicted 0.225: (3·0.475 + 0.375)/4 = 0.45; c 0.525: 0.125; b
	//   (fold 1) gets the mean of a's 0.475 and c's -0.1, 0.1875: 0.7875,
	//   errors 0.1875 and 0.1375: 0.1625.
	eq := func(name string, e Estimate, want float64) {
		t.Helper()
		if e.Value == nil || math.Abs(*e.Value-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, e.Value, want)
			return
		}
		if e.Lo == nil || e.Hi == nil || *e.Lo > *e.Value+1e-12 || *e.Hi < *e.Value-1e-12 {
			t.Errorf("%s: interval [%v, %v] misses %v", name, e.Lo, e.Hi, want)
		}
	}
	eq("MAE sim", p.MAESim, (0.2125+0.05+0.1)/3)
	eq("MAE const", p.MAEConst, (0.475+0.025+0.1)/3)
	eq("MAE shift", p.MAEShift, (0.45+0.1625+0.125)/3)
	// Other people's changes (out of fold): a and c take b's (0 at its
	// serial report, +0.05 at the end): a 0.2 0.2 0.2 0.25, errors
	// 0.5 0.5 0.5 0.35, 0.4625; c 0.5 0.55, 0.125. b takes a's (+0.5,
	// +0.4: both clipped to 1, errors 0.4 and 0.35) and c's (-0.1, -0.1:
	// 0.5 0.5, errors 0.1 and 0.15): (0.375 + 0.125)/2 = 0.25.
	eq("MAE others", p.MAEOthers, (0.4625+0.25+0.125)/3)
	eq("MAE sim - const", p.MAEDiffConst, (0.2125+0.05+0.1-0.6)/3)
	eq("moved", p.Moved, 1.0/3)
	eq("sim moved", p.SimMoved, 1.0/3)
	eq("shift", p.Shift, (0.4+0.05-0.1)/3)
	eq("sim shift", p.SimShift, (0.45+0.05+0)/3)
	// Pearson of (0.45, 0.05, 0) with (0.4, 0.05, -0.1) (Python
	// statistics.correlation: 0.981027760725469).
	eq("shift correlation", p.ShiftCorr, 0.981027760725469)
	// B_0 (0.25, 0.55, 0.5) and start (0.2, 0.6, 0.5) rank alike.
	eq("B0 Spearman", p.B0Spearman, 1)
	// People: a [0.5, 0, 0] moves, b [0] and c [-0.1] do not; the
	// persuadee's a [0.2, 0, 0] does not either.
	// Rising and falling by more than 0.02: a's people (0.2 0.7 0.7 0.7
	// 0.6) alone; the persuadee's a (0.25 0.45 0.45 0.45 0.7) only rises.
	eq("mixed", p.Mixed, 1.0/3)
	eq("sim mixed", p.SimMixed, 0)
	eq("moving", p.Moving, 1.0/3)
	eq("sim moving", p.SimMoving, 0)
	if p.PaperMoving.N != 0 || p.PaperMoving.Value != nil {
		t.Errorf("paper sample %+v, want empty", p.PaperMoving)
	}
	wantShift := []float64{0.4 / 3, 0.1875, 0.025, 0.4 / 3, 0.4 / 3}
	for k, d := range p.FittedShift {
		if math.Abs(d-wantShift[k]) > 1e-9 {
			t.Errorf("fitted shifts %v, want %v", p.FittedShift, wantShift)
			break
		}
	}
	if p.Decisions[decision.Accept] != 1 || p.Decisions[decision.Continue] != 2 || p.Closed != 1 {
		t.Errorf("decisions %v closed %d", p.Decisions, p.Closed)
	}
	// Control d: only the final report (0.55) counts, at position 2.
	eq("control MAE sim", c.MAESim, 0.03)
	eq("control MAE const", c.MAEConst, 0.05)
	eq("control MAE others", c.MAEOthers, 0.05) // no other-fold control round
	eq("control sim shift", c.SimShift, 0.02)
	if c.Mixed.N != 0 || c.SimMixed.N != 0 {
		t.Errorf("control rounds with a trajectory: %+v, %+v", c.Mixed, c.SimMixed)
	}
	if len(rep.Rounds) != 4 || rep.Rounds[3].ID != "d" || len(rep.Rounds[3].Reports) != 1 || rep.Rounds[3].Cluster != ClusterNone {
		t.Errorf("control round %+v", rep.Rounds[3])
	}
	met := map[string]bool{}
	for _, tg := range rep.Checks {
		met[tg.Name] = tg.Met
	}
	if !met["per-report MAE below constant-belief predictor"] || !met["moved > 0.1 within 10 pp of people"] ||
		!met["control shift <= 1/3 of persuasion shift"] || !met["Spearman(B_0, initial belief) >= 0.8"] || len(rep.Checks) != 7 {
		t.Errorf("targets %+v", rep.Checks)
	}
	tab := rep.Table()
	for _, want := range []string{"persuasion rounds: 3 of 2 people, 8 reports", "per-report MAE, constant belief", "0.200",
		"persuasion: people moved > 0.1                         0.412   0.333"} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
	// Without control rounds the control figures are undefined, and the
	// report still encodes as JSON (no NaN).
	only, err := RunTrace(context.Background(), rounds[:3], nil, f, Options{Seed: 3, Resamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(only); err != nil || only.Control.Rounds != 0 || only.References[5].Ours != nil {
		t.Errorf("no control rounds: %v, %+v", err, only.References[5])
	}
	// Same seed, same report, whatever the workers.
	again, err := RunTrace(context.Background(), rounds, nil, f, Options{Seed: 3, Resamples: 500, Workers: 1})
	if err != nil || *again.Persuasion.ShiftCorr.Lo != *p.ShiftCorr.Lo || *again.Persuasion.MAESim.Hi != *p.MAESim.Hi {
		t.Errorf("rerun differs: %v", err)
	}
}

// TrajectoryCluster against a Python port of the upstream classifier
// (classify_updates in src/simulation/human_trajectory_clusters.py of
// github.com/jlcmoore/persuasiontrace, commit d05007f, with its k2 model);
// squared distances to the two centres in the comments.
func TestTrajectoryCluster(t *testing.T) {
	for _, c := range []struct {
		u    []float64
		want int
	}{
		{[]float64{0.5, 0, 0}, ClusterMoving},           // 58.21, 0.70
		{[]float64{0, 0, 0}, ClusterStill},              // 0.20, 49.46
		{[]float64{0.2, 0, 0}, ClusterStill},            // 9.59, 16.14
		{[]float64{0.25, 0, 0}, ClusterMoving},          // 14.82, 10.69
		{[]float64{0.1, 0.1, 0.1}, ClusterStill},        // 7.86, 21.18
		{[]float64{0.02, 0.3, 0.1, 0.2}, ClusterMoving}, // 48.47, 37.21
		{[]float64{0.3}, ClusterStill},                  // 74.44, 89.07
		{nil, ClusterNone},
		{[]float64{math.NaN()}, ClusterNone},
	} {
		if got := TrajectoryCluster(c.u); got != c.want {
			t.Errorf("TrajectoryCluster(%v) = %d, want %d", c.u, got, c.want)
		}
	}
}

// The paired MAE differences compare the persuadee and a predictor on the
// same reports: where the persuadee's belief is unreadable at a report,
// the predictor's error there is left out too. Round: start 0.2, reports
// 0.7, 0.9 and the final 0.6 at positions 1-3; the persuadee's belief is
// unreadable after message 1, then 0.5 and 0.6. Persuadee MAE (0.4 + 0)/2
// = 0.2; constant belief on the same two reports (0.7 + 0.4)/2 = 0.55, so
// the difference is -0.35 (not 0.2 minus the all-report 1.6/3). The lone
// person's fold trains on nobody, so the mean-shift predictor is the
// constant one here.
func TestTraceDiffOnReadableReports(t *testing.T) {
	r := persuasiontrace.Round{ID: "u", Person: "9", Proposition: "P u.", Supports: true, Initial: 0.2,
		Serial: []float64{0.7, 0.9}, Final: 0.6, Messages: msgs(3)}
	tr := &Trace{B0: ptr(0.2), Turns: []TurnTrace{{Turn: 0}, {Turn: 1, Belief: ptr(0.5)}, {Turn: 2, Belief: ptr(0.6)}}}
	rt := traceRound(&r, tr)
	if rt.Sim[0] != nil || rt.MAESim == nil || math.Abs(*rt.MAESim-0.2) > 1e-12 || math.Abs(rt.MAEConst-1.6/3) > 1e-12 {
		t.Fatalf("round: sim %v, MAE sim %v, const %v", rt.Sim, rt.MAESim, rt.MAEConst)
	}
	// people 0.2 0.7 0.9 0.6 rise and fall; the persuadee's readable 0.2
	// 0.5 0.6 only rise, and with 0.3 at the end it falls too
	if !rt.Mixed || rt.SimMixed == nil || *rt.SimMixed {
		t.Errorf("mixed %v, sim mixed %v; want true, false", rt.Mixed, rt.SimMixed)
	}
	tr.Turns[2].Belief = ptr(0.3)
	if m := traceRound(&r, tr).SimMixed; m == nil || !*m {
		t.Errorf("sim 0.2 0.5 0.3: mixed %v, want true", m)
	}
	a := arm("persuasion", []*TraceRound{rt}, Options{Resamples: 20, Level: 0.95}, 1)
	for name, e := range map[string]Estimate{"const": a.MAEDiffConst, "shift": a.MAEDiffShift} {
		if e.Value == nil || math.Abs(*e.Value+0.35) > 1e-12 {
			t.Errorf("persuadee - %s = %v, want -0.35", name, valueOf(e))
		}
	}
}

// beliefAt reads the belief after persuader message pos (turn pos-1): nil
// where that turn's belief is unreadable, B_0 at pos 0, and for a message
// the replay has no turn for (an empty message skipped, or after the
// session stopped) the last readable belief before it, not B_0.
func TestBeliefAt(t *testing.T) {
	tr := &Trace{B0: ptr(0.1), Turns: []TurnTrace{{Turn: 0, Belief: ptr(0.3)}, {Turn: 1}, {Turn: 3, Belief: ptr(0.6)}}}
	for _, c := range []struct {
		pos  int
		want *float64
	}{{0, ptr(0.1)}, {1, ptr(0.3)}, {2, nil}, {3, ptr(0.3)}, {4, ptr(0.6)}, {6, ptr(0.6)}} {
		got := beliefAt(tr, c.pos)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("beliefAt(%d) = %v, want %v", c.pos, valueOf(Estimate{Value: got}), valueOf(Estimate{Value: c.want}))
		}
	}
}

// fitOthers on rounds with a final report alone (control rounds): each
// takes the other folds' final changes. u and w (fold 0) take v's -0.1:
// u 0.5 - 0.1 = 0.4 against 0.6, error 0.2; w 0.8 against 0.95, 0.15.
func TestFitOthersFinalOnly(t *testing.T) {
	final := func(b float64) []persuasiontrace.Report {
		return []persuasiontrace.Report{{Position: 2, Belief: b, Final: true}}
	}
	rs := []*TraceRound{
		{ID: "u", Fold: 0, Control: true, Start: 0.5, Reports: final(0.6), MAEConst: 0.1},
		{ID: "v", Fold: 1, Control: true, Start: 0.4, Reports: final(0.3), MAEConst: 0.1},
		{ID: "w", Fold: 0, Control: true, Start: 0.9, Reports: final(0.95), MAEConst: 0.05},
	}
	fitOthers(rs)
	// v takes u's +0.1 (0.5, error 0.2) and w's +0.05 (0.45, error 0.15)
	for i, want := range []float64{0.2, 0.175, 0.15} {
		if math.Abs(rs[i].MAEOthers-want) > 1e-12 {
			t.Errorf("%s: MAE others %v, want %v", rs[i].ID, rs[i].MAEOthers, want)
		}
	}
}
