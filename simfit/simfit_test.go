package simfit

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/fidelity"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

func b(x float64) *float64 { return &x }

func TestFitLinkAndEvaluate(t *testing.T) {
	// Beliefs that go against the outcome: the link's slope is clamped at
	// 0 and A is the smoothed logit of the base rate (2.5/5).
	against := []*fidelity.Trace{
		{BT: b(0.9), Donated: false}, {BT: b(0.8), Donated: false},
		{BT: b(0.2), Donated: true}, {BT: b(0.1), Donated: true},
	}
	l := FitLink(against)
	if l.B != 0 || math.Abs(l.A) > 1e-12 {
		t.Errorf("inverted beliefs: link %+v, want B 0, A 0", l)
	}
	s := Evaluate(against, l)
	if math.Abs(s.Outcome-math.Log(2)) > 1e-9 || s.AUC != 0 {
		t.Errorf("outcome NLL %v (want log 2), AUC %v (want 0)", s.Outcome, s.AUC)
	}
	// Beliefs that go with it: a positive slope and a lower NLL.
	with := []*fidelity.Trace{
		{BT: b(0.1), Donated: false}, {BT: b(0.3), Donated: true}, {BT: b(0.2), Donated: false},
		{BT: b(0.4), Donated: true}, {BT: b(0.25), Donated: true}, {BT: b(0.15), Donated: false},
		{BT: b(0.35), Donated: false},
	}
	lw := FitLink(with)
	if !(lw.B > 0) || !(Evaluate(with, lw).Outcome < math.Log(2)) {
		t.Errorf("link %+v, outcome %v", lw, Evaluate(with, lw).Outcome)
	}
	// Reaction table: real + on 3 of 4 sim-negative turns and 1 of 2
	// sim-positive ones: (3.5/5 = 0.7) > (1.5/3 = 0.5) violates the order
	// and is pooled to (3.5+1.5)/(5+3) = 0.625; no sim-neutral turn gives
	// 0.5 there, also a violator, pooled into one block of 5.5/9.
	tr := &fidelity.Trace{Annotated: true, BT: b(0.5),
		RealByTurn: []fidelity.Polarity{1, 1, 1, -1, 1, -1},
		Turns: []fidelity.TurnTrace{{Turn: 0, Sim: -1}, {Turn: 1, Sim: -1}, {Turn: 2, Sim: -1}, {Turn: 3, Sim: -1},
			{Turn: 4, Sim: 1}, {Turn: 5, Sim: 1}}}
	lr := FitLink([]*fidelity.Trace{tr})
	for k, p := range lr.React {
		if math.Abs(p-5.5/9) > 1e-12 {
			t.Errorf("React[%d] = %v, want %v", k, p, 5.5/9)
		}
	}
	if s := Evaluate([]*fidelity.Trace{tr}, lr); s.Turns != 6 || math.Abs(s.Reaction-(-(4*math.Log(5.5/9)+2*math.Log(3.5/9))/6)) > 1e-12 {
		t.Errorf("reaction %+v", s)
	}
}

func trainSubset(t *testing.T, n int) (fit, val []*scenario.Scenario) {
	t.Helper()
	ss, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	for i := range ss {
		switch {
		case ss[i].Split == scenario.Train && len(fit) < n:
			fit = append(fit, &ss[i])
		case ss[i].Split == scenario.Val && len(val) < n/2:
			val = append(val, &ss[i])
		}
	}
	return fit, val
}

func TestFitIsDeterministicAndNoWorse(t *testing.T) {
	fit, val := trainSubset(t, 60)
	opt := Options{Seed: 4, MaxEvals: 25, Folds: 2, Workers: 2}
	r1, err := Fit(context.Background(), fit, val, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Workers = 1
	r2, err := Fit(context.Background(), fit, val, opt)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r1.Values {
		if r2.Values[k] != v {
			t.Errorf("%s: %v then %v with another worker count", k, v, r2.Values[k])
		}
	}
	if r1.Train.J != r2.Train.J || r1.Validation.J != r2.Validation.J || r1.CV.J != r2.CV.J {
		t.Error("objective values differ between runs")
	}
	// Nelder-Mead starts at the base values and keeps its best point.
	if !(r1.Train.J <= r1.TrainDefault.J+1e-9) {
		t.Errorf("train J fitted %v > base %v", r1.Train.J, r1.TrainDefault.J)
	}
	if r1.Dialogues != 60 || r1.Evaluations < 25 || r1.Train.Dialogues != 60 || r1.Validation.Dialogues != 30 {
		t.Errorf("result %+v", r1)
	}
	f := r1.File("sim", "test", "sha256:x", opt)
	c, err := roundTrip(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range DefaultParams {
		if v, _ := c.Param(p.Name); math.Abs(v-r1.Values[p.Name]) > 1e-6 || v < p.Lo || v > p.Hi {
			t.Errorf("%s = %v in the file, fitted %v, bounds [%v, %v]", p.Name, v, r1.Values[p.Name], p.Lo, p.Hi)
		}
	}
}

// roundTrip round-trips f through its JSON encoding and sim.ParseFile.
func roundTrip(f *sim.File) (sim.Config, error) {
	dir, err := os.MkdirTemp("", "simfit")
	if err != nil {
		return sim.Config{}, err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "f.json")
	w, err := os.Create(p)
	if err != nil {
		return sim.Config{}, err
	}
	if err := f.Encode(w); err != nil {
		return sim.Config{}, err
	}
	w.Close()
	c, _, err := sim.LoadFile(p)
	return c, err
}

// TestFitAtTheCapKeepsTheStart: a fit stopped by its evaluation cap before
// Nelder-Mead's first iteration returns the best point it evaluated, the
// start (the hand-set values), not an unevaluated one.
func TestFitAtTheCapKeepsTheStart(t *testing.T) {
	fit, _ := trainSubset(t, 20)
	r, err := Fit(context.Background(), fit, nil, Options{Seed: 1, MaxEvals: 1})
	if err != nil {
		t.Fatal(err)
	}
	hand := sim.HandConfig()
	for _, p := range DefaultParams {
		v, _ := hand.Param(p.Name)
		if math.Abs(r.Values[p.Name]-v) > 1e-9 {
			t.Errorf("%s = %v after one evaluation, want the start %v", p.Name, r.Values[p.Name], v)
		}
	}
	if r.Train.J != r.TrainDefault.J {
		t.Errorf("train J %v, start %v", r.Train.J, r.TrainDefault.J)
	}
}

// An integer parameter (sim.IntParamNames) is refused before any
// evaluation: the optimiser moves continuously.
func TestFitRefusesIntParams(t *testing.T) {
	fit, _ := trainSubset(t, 20)
	_, err := Fit(context.Background(), fit, nil, Options{Seed: 1, MaxEvals: 1, Params: []Param{{Name: "AA.PlanSpread", Lo: 0, Hi: 1}}})
	if err == nil || !strings.Contains(err.Error(), "simfit: parameter AA.PlanSpread is an integer") {
		t.Errorf("err %v, want one naming AA.PlanSpread as an integer", err)
	}
}
