package fidelity

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/persuarena/persuarena/p4g"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"
)

// userOf returns the persuadee's user id of sc: the P4G user recorded in
// its provenance (p4g.UserOf), or, for a scenario without one, its own id
// (every such scenario is then its own group).
func userOf(sc *scenario.Scenario) string {
	if u, ok := p4g.UserOf(sc); ok {
		return u
	}
	return "scenario:" + sc.ID
}

// groups indexes traces by user: users in sorted order, members[i] the
// trace indices of users[i].
type groups struct {
	users   []string
	members [][]int
}

func groupByUser(trs []*Trace) groups {
	keys := make([]string, len(trs))
	for i, tr := range trs {
		keys[i] = tr.User
	}
	return groupBy(keys)
}

// groupBy indexes items by their key (keys[i] is item i's): the distinct
// keys in sorted order, members[k] the item indices of keys[k].
func groupBy(keys []string) groups {
	at := map[string]int{}
	var g groups
	for _, k := range keys {
		if _, ok := at[k]; !ok {
			at[k] = 0
			g.users = append(g.users, k)
		}
	}
	slices.Sort(g.users)
	for i, u := range g.users {
		at[u] = i
	}
	g.members = make([][]int, len(g.users))
	for i, k := range keys {
		g.members[at[k]] = append(g.members[at[k]], i)
	}
	return g
}

// groupedReplicates draws resamples user-grouped bootstrap resamples
// (Field & Welsh 2007, the "cluster bootstrap": users are drawn with
// replacement, and each drawn user brings all of its dialogues) from a
// PCG seeded with seed, and evaluates every stat on each; replicate r of
// stat k is out[k][r] (NaN where the stat is undefined on that resample).
// The same seed gives the same resamples for every stat, so differences
// of stats are paired.
func groupedReplicates(g groups, resamples int, seed uint64, statFns ...func(idx []int) float64) [][]float64 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	out := make([][]float64, len(statFns))
	for k := range out {
		out[k] = make([]float64, 0, resamples)
	}
	var idx []int
	for range resamples {
		idx = idx[:0]
		for range g.users {
			idx = append(idx, g.members[r.IntN(len(g.users))]...)
		}
		for k, f := range statFns {
			out[k] = append(out[k], f(idx))
		}
	}
	return out
}

// percentile returns the (1-level)/2 and (1+level)/2 quantiles of the
// finite values of reps (stats.Quantile), or nil, nil when there are none.
func percentile(reps []float64, level float64) (lo, hi *float64) {
	var fin []float64
	for _, v := range reps {
		if !math.IsNaN(v) {
			fin = append(fin, v)
		}
	}
	if len(fin) == 0 {
		return nil, nil
	}
	slices.Sort(fin)
	a := (1 - level) / 2
	return ptr(stats.Quantile(fin, a)), ptr(stats.Quantile(fin, 1-a))
}

// aucOn returns the AUC of score over the traces trs[idx[i]] with a
// readable score (NaN when a class is empty).
func aucOn(trs []*Trace, idx []int, score func(*Trace) *float64) float64 {
	scores := make([]float64, 0, len(idx))
	labels := make([]bool, 0, len(idx))
	for _, i := range idx {
		if b := score(trs[i]); b != nil {
			scores, labels = append(scores, *b), append(labels, trs[i].Donated)
		}
	}
	a, err := stats.AUC(scores, labels)
	if err != nil {
		return math.NaN()
	}
	return a
}

// withinAUCOn is aucOn's type-stratified AUC (stats.StratifiedAUC, strata
// the traces' resistance types): NaN when no type has both classes.
func withinAUCOn(trs []*Trace, idx []int, score func(*Trace) *float64) float64 {
	scores := make([]float64, 0, len(idx))
	labels := make([]bool, 0, len(idx))
	strata := make([]string, 0, len(idx))
	for _, i := range idx {
		if b := score(trs[i]); b != nil {
			scores, labels = append(scores, *b), append(labels, trs[i].Donated)
			strata = append(strata, string(trs[i].Resistance))
		}
	}
	a, err := stats.StratifiedAUC(scores, labels, strata)
	if err != nil {
		return math.NaN()
	}
	return a
}

// withinStat is aucStat with the type-stratified AUC as the point.
func withinStat(trs []*Trace, score func(*Trace) *float64, reps []float64, level float64) AUCStat {
	st := aucStat(trs, score, reps, level)
	st.AUC = nil
	if a := withinAUCOn(trs, allIdx(len(trs)), score); !math.IsNaN(a) {
		st.AUC = ptr(a)
	} else {
		st.Lo, st.Hi = nil, nil
	}
	return st
}

// typeAUCs returns each resistance type's AUCs of b0 and bt on its own
// traces, in scenario.Resistances order (types without a trace left out).
func typeAUCs(trs []*Trace, b0, bt func(*Trace) *float64) []TypeAUC {
	var out []TypeAUC
	byType(trs, func(r scenario.Resistance, in []*Trace) {
		ta := TypeAUC{Type: r, N: len(in)}
		for _, tr := range in {
			if tr.Donated {
				ta.Positives++
			}
		}
		all := allIdx(len(in))
		if a := aucOn(in, all, b0); !math.IsNaN(a) {
			ta.B0 = ptr(a)
		}
		if a := aucOn(in, all, bt); !math.IsNaN(a) {
			ta.BT = ptr(a)
		}
		out = append(out, ta)
	})
	return out
}

// byType calls f with each resistance type's traces, in
// scenario.Resistances order, skipping types without a trace.
func byType(trs []*Trace, f func(scenario.Resistance, []*Trace)) {
	for _, r := range scenario.Resistances {
		var in []*Trace
		for _, tr := range trs {
			if tr.Resistance == r {
				in = append(in, tr)
			}
		}
		if len(in) > 0 {
			f(r, in)
		}
	}
}

// probeScore returns the score "probe id's P(Yes) in the readings of
// at(tr)" (nil when absent or unreadable).
func probeScore(id string, at func(*Trace) []probe.Reading) func(*Trace) *float64 {
	return func(tr *Trace) *float64 {
		for _, r := range at(tr) {
			if r.Probe == id && r.OK {
				return ptr(r.P)
			}
		}
		return nil
	}
}

// allIdx returns 0, 1, …, n-1.
func allIdx(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// DiffStat is a paired difference of two AUCs on the same dialogues, with
// a user-grouped bootstrap interval (both AUCs computed on each resample).
type DiffStat struct {
	// A and B name the two scores; Diff = AUC(A) - AUC(B).
	A string `json:"a"`
	B string `json:"b"`
	// N dialogues (of Users users) where both scores are readable.
	N     int `json:"n"`
	Users int `json:"users"`
	// Diff with its interval [Lo, Hi]; nil when undefined.
	Diff *float64 `json:"diff"`
	Lo   *float64 `json:"lo"`
	Hi   *float64 `json:"hi"`
}

// BaselineFeatures are the profile fields the profile-only baseline reads
// from hidden.traits, in order: every P4G survey trait (p4g.TraitKeys) and
// the coded ideology and religiosity (p4g.CodedTraitKeys). The resistance
// type enters as three indicators (IT, AR, AA; EB is the reference).
//
// Choice: the baseline sees the whole survey profile the scenario carries
// (what the simulator itself is given), not initial_stance, which is a
// fixed function of the same survey (docs/p4g.md).
var BaselineFeatures = append(append([]string{}, p4g.TraitKeys...), p4g.CodedTraitKeys...)

// Baseline settings. Choice: BaselineFolds = 5 user-grouped folds, a user
// in fold p4g.SplitHash(user) mod 5; BaselineL2 = 1, the ridge penalty
// (lambda/2)·||w||² on the standardised coefficients (intercept free),
// i.e. the MAP estimate under independent N(0, 1) priors: with 27 traits
// and about 800 training dialogues it shrinks little, but keeps the fit
// finite when a fold happens to separate.
const (
	BaselineFolds = 5
	BaselineL2    = 1.0
)

// profileFeatures returns tr's raw baseline feature vector (NaN for an
// absent trait) followed by the three type indicators.
func profileFeatures(sc *scenario.Scenario) []float64 {
	x := make([]float64, 0, len(BaselineFeatures)+3)
	for _, k := range BaselineFeatures {
		v, ok := sc.Hidden.Traits[k]
		if !ok {
			v = math.NaN()
		}
		x = append(x, v)
	}
	for _, r := range []scenario.Resistance{scenario.IdentityThreat, scenario.AutonomyResistance, scenario.AmbivalentAvoidance} {
		if sc.Hidden.Resistance == r {
			x = append(x, 1)
		} else {
			x = append(x, 0)
		}
	}
	return x
}

// FitLogistic fits an L2-penalised logistic regression of y on the rows of
// x (each of the same length d; no intercept column: one is added and not
// penalised), minimising
//
//	sum_i [log(1 + exp(eta_i)) - y_i eta_i] + (l2/2) sum_j w_j^2,  eta_i = b + x_i·w
//
// with gonum/optimize's BFGS from w = 0 (deterministic) to a gradient norm
// of 1e-7 (on the objective divided by the number of rows). It returns the
// intercept and the d weights. Errors: no rows, ragged rows, a non-finite
// value, or the optimiser failing.
func FitLogistic(x [][]float64, y []bool, l2 float64) (b float64, w []float64, err error) {
	if len(x) == 0 || len(x) != len(y) {
		return 0, nil, fmt.Errorf("fidelity: logistic fit on %d rows and %d labels", len(x), len(y))
	}
	d := len(x[0])
	for i, r := range x {
		if len(r) != d {
			return 0, nil, fmt.Errorf("fidelity: logistic fit: row %d has %d features, want %d", i, len(r), d)
		}
		for _, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, nil, fmt.Errorf("fidelity: logistic fit: row %d has a non-finite feature", i)
			}
		}
	}
	// The objective is divided by n (same minimum) so that the gradient
	// threshold does not depend on the sample size.
	n := float64(len(x))
	eta := func(p []float64, r []float64) float64 {
		e := p[0]
		for j, v := range r {
			e += p[j+1] * v
		}
		return e
	}
	prob := optimize.Problem{
		Func: func(p []float64) float64 {
			f := 0.0
			for i, r := range x {
				e := eta(p, r)
				// log(1 + e^e) computed stably.
				f += math.Max(e, 0) + math.Log1p(math.Exp(-math.Abs(e)))
				if y[i] {
					f -= e
				}
			}
			for _, v := range p[1:] {
				f += l2 / 2 * v * v
			}
			return f / n
		},
		Grad: func(g, p []float64) {
			clear(g)
			for i, r := range x {
				res := 1 / (1 + math.Exp(-eta(p, r)))
				if y[i] {
					res--
				}
				g[0] += res
				for j, v := range r {
					g[j+1] += res * v
				}
			}
			for j, v := range p[1:] {
				g[j+1] += l2 * v
			}
			for j := range g {
				g[j] /= n
			}
		},
	}
	res, err := optimize.Minimize(prob, make([]float64, d+1), &optimize.Settings{GradientThreshold: 1e-7}, &optimize.BFGS{})
	if err != nil && (res == nil || res.Status != optimize.GradientThreshold) {
		return 0, nil, fmt.Errorf("fidelity: logistic fit: %w", err)
	}
	return res.X[0], res.X[1:], nil
}

// crossFitBaseline sets every trace's Baseline to an out-of-fold
// prediction of the profile-only logistic regression: users are split
// into BaselineFolds folds by p4g.SplitHash, and each fold is predicted
// by a model fitted on the other folds only (features standardised with
// the training folds' mean and SD; an absent trait is set to that mean).
// No dialogue is ever predicted by a model that saw its user. Traces of a
// fold whose training set lacks a class, or whose fit fails, keep a nil
// Baseline.
func crossFitBaseline(trs []*Trace, scs []*scenario.Scenario) {
	fold := make([]int, len(trs))
	raw := make([][]float64, len(trs))
	for i, tr := range trs {
		fold[i] = int(p4g.SplitHash(tr.User) % BaselineFolds)
		raw[i] = profileFeatures(scs[i])
	}
	if len(raw) == 0 {
		return
	}
	d := len(raw[0])
	for k := range BaselineFolds {
		var train []int
		for i := range trs {
			if fold[i] != k {
				train = append(train, i)
			}
		}
		mean, sd := make([]float64, d), make([]float64, d)
		for j := range d {
			var col []float64
			for _, i := range train {
				if v := raw[i][j]; !math.IsNaN(v) {
					col = append(col, v)
				}
			}
			if len(col) > 1 {
				mean[j], sd[j] = stat.MeanStdDev(col, nil)
			}
			if !(sd[j] > 0) {
				sd[j] = 1
			}
		}
		std := func(i int) []float64 {
			z := make([]float64, d)
			for j, v := range raw[i] {
				if !math.IsNaN(v) {
					z[j] = (v - mean[j]) / sd[j]
				}
			}
			return z
		}
		x := make([][]float64, len(train))
		y := make([]bool, len(train))
		pos := 0
		for n, i := range train {
			x[n], y[n] = std(i), trs[i].Donated
			if y[n] {
				pos++
			}
		}
		if pos == 0 || pos == len(train) {
			continue
		}
		b, w, err := FitLogistic(x, y, BaselineL2)
		if err != nil {
			continue
		}
		for i := range trs {
			if fold[i] != k {
				continue
			}
			e := b
			for j, v := range std(i) {
				e += w[j] * v
			}
			trs[i].Baseline = ptr(1 / (1 + math.Exp(-e)))
		}
	}
}

// CalRow is one row of a calibration table: the dialogues of one group
// (a resistance type, or a trait tertile), their real donor rate and the
// mean simulated beliefs.
type CalRow struct {
	// Group names the row: a resistance type, or "low", "mid", "high".
	Group string `json:"group"`
	// Min and Max are the smallest and largest trait value in the row
	// (trait tables only).
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// N dialogues, Donors of them donated, RealRate = Donors / N.
	N        int     `json:"n"`
	Donors   int     `json:"donors"`
	RealRate float64 `json:"real_rate"`
	// MeanBT and MeanB0 are the mean final and initial simulated beliefs
	// (over readable ones; nil if none).
	MeanBT *float64 `json:"mean_bt"`
	MeanB0 *float64 `json:"mean_b0"`
}

// TypeCalibration compares real donor rates and simulated final beliefs
// by resistance type.
type TypeCalibration struct {
	// Rows in scenario.Resistances order (types with no dialogue left out).
	Rows []CalRow `json:"rows"`
	// RealOrder and SimOrder are the types sorted by ascending real donor
	// rate and ascending mean B_T; OrderEqual reports they are the same.
	RealOrder  []scenario.Resistance `json:"real_order"`
	SimOrder   []scenario.Resistance `json:"sim_order"`
	OrderEqual bool                  `json:"order_equal"`
}

// TraitCalibration compares real donor rates and simulated final beliefs
// across the tertiles of one trait.
type TraitCalibration struct {
	// Trait is the hidden.traits key; N the dialogues carrying it.
	Trait string `json:"trait"`
	N     int    `json:"n"`
	// Rows are the low, mid and high tertiles: cut points at the 1/3 and
	// 2/3 empirical quantiles of the trait over those dialogues, a value
	// at or below the first cut low, at or below the second mid, else
	// high (Choice: on discrete scales with ties the tertiles are unequal,
	// and an empty tertile is left out).
	Rows []CalRow `json:"rows"`
	// RealSlope and SimSlope are high minus low: donor rate, and mean B_T.
	// SameDirection reports they have the same sign.
	RealSlope     float64 `json:"real_slope"`
	SimSlope      float64 `json:"sim_slope"`
	SameDirection bool    `json:"same_direction"`
}

// CalibrationTraits are the traits of the calibration tables (Choice: the
// ones the P4G data shows going with giving, or that the simulator's dynamics
// read): agreeableness, care, benevolence, rational decision style,
// loyalty, purity, age, conservatism (coded ideology) and religiosity.
var CalibrationTraits = []string{"agreeable", "care", "benevolence", "rational", "loyalty", "purity", "age", p4g.TraitIdeology, p4g.TraitReligiosity}

func calRow(name string, trs []*Trace) CalRow {
	row := CalRow{Group: name, N: len(trs)}
	var sbt, sb0 float64
	var nbt, nb0 int
	for _, tr := range trs {
		if tr.Donated {
			row.Donors++
		}
		if tr.BT != nil {
			sbt += *tr.BT
			nbt++
		}
		if tr.B0 != nil {
			sb0 += *tr.B0
			nb0++
		}
	}
	if row.N > 0 {
		row.RealRate = float64(row.Donors) / float64(row.N)
	}
	if nbt > 0 {
		row.MeanBT = ptr(sbt / float64(nbt))
	}
	if nb0 > 0 {
		row.MeanB0 = ptr(sb0 / float64(nb0))
	}
	return row
}

func typeCalibration(trs []*Trace) TypeCalibration {
	var tc TypeCalibration
	byType(trs, func(r scenario.Resistance, in []*Trace) {
		tc.Rows = append(tc.Rows, calRow(string(r), in))
	})
	order := func(key func(CalRow) float64) []scenario.Resistance {
		rows := slices.Clone(tc.Rows)
		slices.SortStableFunc(rows, func(a, b CalRow) int { return cmp.Compare(key(a), key(b)) })
		out := make([]scenario.Resistance, len(rows))
		for i, r := range rows {
			out[i] = scenario.Resistance(r.Group)
		}
		return out
	}
	tc.RealOrder = order(func(r CalRow) float64 { return r.RealRate })
	tc.SimOrder = order(func(r CalRow) float64 {
		if r.MeanBT == nil {
			return math.Inf(-1)
		}
		return *r.MeanBT
	})
	tc.OrderEqual = slices.Equal(tc.RealOrder, tc.SimOrder)
	return tc
}

func traitCalibration(trs []*Trace, trait string) TraitCalibration {
	tc := TraitCalibration{Trait: trait}
	var in []*Trace
	var vals []float64
	for _, tr := range trs {
		if v, ok := tr.Traits[trait]; ok && !math.IsNaN(v) {
			in, vals = append(in, tr), append(vals, v)
		}
	}
	tc.N = len(in)
	if tc.N == 0 {
		return tc
	}
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	c1, c2 := stat.Quantile(1.0/3, stat.Empirical, sorted, nil), stat.Quantile(2.0/3, stat.Empirical, sorted, nil)
	parts := make([][]*Trace, 3)
	lo, hi := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}, [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i, tr := range in {
		k := 2
		switch v := vals[i]; {
		case v <= c1:
			k = 0
		case v <= c2:
			k = 1
		}
		parts[k] = append(parts[k], tr)
		lo[k], hi[k] = math.Min(lo[k], vals[i]), math.Max(hi[k], vals[i])
	}
	for k, name := range []string{"low", "mid", "high"} {
		if len(parts[k]) == 0 {
			continue
		}
		row := calRow(name, parts[k])
		row.Min, row.Max = ptr(lo[k]), ptr(hi[k])
		tc.Rows = append(tc.Rows, row)
	}
	if len(tc.Rows) >= 2 {
		first, last := tc.Rows[0], tc.Rows[len(tc.Rows)-1]
		tc.RealSlope = last.RealRate - first.RealRate
		if first.MeanBT != nil && last.MeanBT != nil {
			tc.SimSlope = *last.MeanBT - *first.MeanBT
		}
		tc.SameDirection = tc.RealSlope*tc.SimSlope > 0
	}
	return tc
}
