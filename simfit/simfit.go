// Package simfit fits the embedded simulator's free parameters to real
// persuadees: PersuasionForGood (Wang et al., ACL 2019) dialogues are
// replayed open-loop (package fidelity) and a named subset of sim.Config
// is chosen to make the replayed final beliefs predict the real donations
// and the replayed per-turn reactions predict the annotated ones, under
// closed-loop limits (ClosedLoop, Limits) that keep the simulator usable
// as a training target. It is the library behind `persuarena sim fit
// p4g` and `persuarena sim fit people`; docs/simulator/fit.md documents
// the objectives and the shipped fit, which is the default simulator
// (sim.Fitted).
package simfit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/fidelity"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/p4g"
	"github.com/persuarena/persuarena/persuasiontrace"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/stats"
	"gonum.org/v1/gonum/optimize"
)

// Param is one fitted parameter: a sim.ParamNames name and the closed
// interval [Lo, Hi] (Lo < Hi) its value is kept in.
type Param struct {
	Name   string
	Lo, Hi float64
}

// WideParams are the eighteen fitted parameters with wide bounds (each
// within [0, a few times the hand-set value]; trait multipliers in
// [-0.5, 1]; the P4G strategy reactions in the whole range Validate
// accepts).
//
// Choice: eighteen parameters that the open-loop P4G replay can identify:
// the decision threshold (Accept), the per-turn noise, the cost of
// content-free turns, the reactance leak, the gain of addressing concerns,
// the read-out's barrier weight (ACBlock), the two trait multipliers of
// positive and evidence gains (TraitAgree, TraitRational), and each
// resistance type's characteristic misstep (the type effects), and the
// reactions to the P4G strategies that real persuaders use most or whose
// effect was measured (donation information, credibility, emotional and
// logical appeal: openness gains; self-modelling and amount requests:
// move scores; sim.StrategyParams). The personal-story gain is not
// fitted: the tagger reads off-topic small talk ("I had pasta for lunch")
// as a personal story, and any reaction to it would make such a turn
// raise the belief through noise. Fitted open-loop alone, the first twelve
// with these bounds switched the dynamics off (docs/simulator/fit.md, "Why
// the fit is constrained").
var WideParams = []Param{
	{"Accept", 0, 0.8},
	{"NoiseSD", 0, 0.15},
	{"IdleCost", 0, 0.05},
	{"ReactLeak", 0, 0.2},
	{"AddressTotal", 0, 2.5},
	{"ACBlock", 0, 1},
	{"TraitAgree", -0.5, 1},
	{"TraitRational", -0.5, 1},
	{"EB.BadMove", 0, 0.3},
	{"IT.BadMove", 0, 0.3},
	{"AR.BadMove", 0, 0.3},
	{"AA.BadMove", 0, 0.3},
	{"Strategy.DonationInfo", -0.2, 0.2},
	{"Strategy.Credibility", -0.2, 0.2},
	{"Strategy.Emotion", -0.2, 0.2},
	{"Strategy.Logical", -0.2, 0.2},
	{"Strategy.MoveSelfModel", -1, 1},
	{"Strategy.MoveAskAmount", -1, 1},
}

// NarrowParams are the same eighteen parameters with every dynamics
// parameter and measured strategy reaction kept between half and twice
// its hand-set value (Accept in [0.15, 0.6]: the soft and twice the
// default threshold), the reactions measured as null within ±0.03 (the
// size of a plan-detail gain), and the trait multipliers in [-0.5, 1] as
// in WideParams.
//
// Choice: a mechanism the closed-loop behaviour rests on (noise, the cost
// of content-free turns, reactance, the barrier weight, the missteps)
// can be weakened or strengthened by the fit but never switched off or
// blown up; the trait multipliers only say how much a person's survey
// scales a gain, so they keep their sign-free range.
var NarrowParams = slices.Concat([]Param{
	{"Accept", 0.15, 0.6},
	{"NoiseSD", 0.02, 0.08},
	{"IdleCost", 0.005, 0.02},
	{"ReactLeak", 0.03, 0.12},
	{"AddressTotal", 0.6, 2.4},
	{"ACBlock", 0.15, 0.6},
	{"TraitAgree", -0.5, 1},
	{"TraitRational", -0.5, 1},
	{"EB.BadMove", 0.04, 0.16},
	{"IT.BadMove", 0.075, 0.3},
	{"AR.BadMove", 0.025, 0.1},
	{"AA.BadMove", 0.015, 0.06},
}, narrowReactions)

// TraitParams are the nine trait multipliers (each in [-0.5, 1]) and the
// six strategy reactions of NarrowParams, with every dynamics parameter
// left at its hand-set value.
//
// Choice: a trait multiplier says how much a person's survey scales a
// gain or the noise, so it moves P4G persuadees (who have surveys) and
// leaves the arena scenarios (most without traits) as they are; the
// strategy reactions are the ones measured on P4G.
var TraitParams = slices.Concat([]Param{
	{"TraitAgree", -0.5, 1},
	{"TraitOpen", -0.5, 1},
	{"TraitRational", -0.5, 1},
	{"TraitIntuitive", -0.5, 1},
	{"TraitConscientious", -0.5, 1},
	{"TraitSelfDirection", -0.5, 1},
	{"TraitConform", -0.5, 1},
	{"TraitNeuroticNoise", 0, 1},
	{"TraitNeuroticAccept", -0.2, 0.2},
}, narrowReactions)

// CoreParams are seven parameters of NarrowParams, with their bounds: the
// threshold, the gain of addressing concerns, the two trait multipliers
// of gains, and the three strategy reactions measured on P4G (donation
// information, self-modelling, amount requests).
//
// Choice: fewer parameters, fitted on the same data, vary less between
// folds (the eighteen of NarrowParams overfit one fold).
var CoreParams = slices.Concat([]Param{
	{"Accept", 0.15, 0.6},
	{"AddressTotal", 0.6, 2.4},
	{"TraitAgree", -0.5, 1},
	{"TraitRational", -0.5, 1},
}, StrategyOnlyParams)

// StrategyOnlyParams are the three strategy reactions measured on P4G
// (donation information, self-modelling, amount requests), with the
// narrow bounds; everything else stays hand-set.
var StrategyOnlyParams = []Param{
	{"Strategy.DonationInfo", 0.015, 0.06},
	{"Strategy.MoveSelfModel", 0.06, 0.24},
	{"Strategy.MoveAskAmount", -0.68, -0.17},
}

// narrowReactions are the six strategy reactions of NarrowParams and
// TraitParams: the three measured on P4G between half and twice their
// hand-set values, the null ones within ±0.03.
var narrowReactions = []Param{
	{"Strategy.DonationInfo", 0.015, 0.06},
	{"Strategy.Credibility", -0.03, 0.03},
	{"Strategy.Emotion", -0.03, 0.03},
	{"Strategy.Logical", -0.03, 0.03},
	{"Strategy.MoveSelfModel", 0.06, 0.24},
	{"Strategy.MoveAskAmount", -0.68, -0.17},
}

// PeopleParams are the parameters of the joint fit to PersuasionTrace and
// P4G (`persuarena sim fit people`): the gain of an argument that bears
// on a worry (ArgueGain, the movement natural persuasion text gives) and
// the three strategy reactions of StrategyOnlyParams with their bounds.
//
// Choice: ArgueGain in [0, 0.6] (0 is the hand-set simulator; 0.6 moves
// openness by more than the people's mean first-report jump, +0.34 on o's
// scale); everything else hand-set, so the closed-loop behaviour the
// limits protect rests on the same mechanisms. The reaction noise is not
// fitted: fitted with it (NoiseSD 0.021), the held-out ask calibration
// (TestAskCalibration) read ECE 0.105, above its 0.10.
var PeopleParams = slices.Concat([]Param{
	{"ArgueGain", 0, 0.6},
}, StrategyOnlyParams)

// ParamSets names the parameter sets `sim fit --bounds` accepts.
var ParamSets = map[string][]Param{"wide": WideParams, "narrow": NarrowParams, "traits": TraitParams, "core": CoreParams,
	"strategy": StrategyOnlyParams, "people": PeopleParams}

// DefaultParams are the parameters `sim fit` fits by default, with their
// bounds: StrategyOnlyParams (see DefaultBounds). A parameter added to
// sim.Config later is fitted by adding its name to a set.
var DefaultParams = StrategyOnlyParams

// DefaultBounds names DefaultParams in ParamSets.
//
// Choice: decided on the validation users only (docs/simulator/fit.md,
// History): every set meets every closed-loop limit on train, and the
// strategy set scores the lowest validation J of the fitted sets (none
// beats the hand-set values there; the larger sets overfit).
const DefaultBounds = "strategy"

// PeopleBounds names PeopleParams in ParamSets: the default of `sim fit
// people`.
const PeopleBounds = "people"

// Link maps replayed figures to probabilities of the real ones; it is
// fitted on the fit set and carried unchanged to validation data.
type Link struct {
	// A and B give P(donated) = sigmoid(A + B logit(B_T)); B >= 0
	// (Choice: a simulator whose belief goes the wrong way gains nothing).
	A float64 `json:"a"`
	B float64 `json:"b"`
	// React[s+1] is P(real polarity positive | simulated polarity s) for
	// s = -1, 0, +1 (0: no simulated call, or the turn was not replayed),
	// add-1/2 smoothed and pooled to be non-decreasing in s.
	React [3]float64 `json:"react"`
}

// Score is the objective on a set of replays.
type Score struct {
	// J = Outcome + Reaction (nats, lower is better).
	J float64 `json:"j"`
	// Outcome is the mean Bernoulli negative log-likelihood of donated > 0
	// over the Dialogues; Reaction the mean negative log-likelihood of the
	// annotated polarity over the Turns with one (0 when there are none).
	Outcome   float64 `json:"outcome"`
	Reaction  float64 `json:"reaction"`
	Dialogues int     `json:"dialogues"`
	Turns     int     `json:"turns"`
	// AUC is the AUC of B_T against donated > 0 (NaN if a class is
	// empty); Kappa Cohen's kappa of the simulated against the annotated
	// polarity on turns where both have one (NaN if undefined).
	AUC   float64 `json:"auc"`
	Kappa float64 `json:"kappa"`
}

const clampB = 1e-6

func logit(p float64) float64 {
	p = math.Min(math.Max(p, clampB), 1-clampB)
	return math.Log(p / (1 - p))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// bernoulliNLL is -log P(y) under probability p of y = true.
func bernoulliNLL(p float64, y bool) float64 {
	p = math.Min(math.Max(p, 1e-12), 1-1e-12)
	if y {
		return -math.Log(p)
	}
	return -math.Log1p(-p)
}

// final returns tr's final belief, or 0.5 when unreadable.
func final(tr *fidelity.Trace) float64 {
	if tr.BT == nil {
		return 0.5
	}
	return *tr.BT
}

// reactions returns, per replayed annotated turn with a real polarity,
// the simulated polarity (turns the persuadee did not reply to count 0)
// and whether the real one is positive.
func reactions(trs []*fidelity.Trace) (sims []int, pos []bool) {
	for _, tr := range trs {
		if !tr.Annotated {
			continue
		}
		sim := map[int]int{}
		for _, tt := range tr.Turns {
			sim[tt.Turn] = int(tt.Sim)
		}
		for t, p := range tr.RealByTurn {
			if p == fidelity.Neutral {
				continue
			}
			sims, pos = append(sims, sim[t]), append(pos, p == fidelity.Positive)
		}
	}
	return sims, pos
}

// FitLink fits the Link on replays trs by maximum likelihood: the
// logistic link of the outcome with fidelity.FitLogistic (l2 1e-6, on
// logit(B_T) standardised), B clamped at 0 (then A is the logit of the
// base rate); the reaction table from the cell frequencies.
func FitLink(trs []*fidelity.Trace) Link {
	var l Link
	xs := make([]float64, len(trs))
	ys := make([]bool, len(trs))
	var m, pos float64
	for i, tr := range trs {
		xs[i], ys[i] = logit(final(tr)), tr.Donated
		m += xs[i]
		if ys[i] {
			pos++
		}
	}
	n := float64(len(trs))
	rate := (pos + 0.5) / (n + 1)
	l.A = math.Log(rate / (1 - rate))
	if n > 0 {
		m /= n
		var v float64
		for _, x := range xs {
			v += (x - m) * (x - m)
		}
		sd := math.Sqrt(v / n)
		if sd > 0 {
			rows := make([][]float64, len(xs))
			for i, x := range xs {
				rows[i] = []float64{(x - m) / sd}
			}
			if a, w, err := fidelity.FitLogistic(rows, ys, 1e-6); err == nil && w[0] > 0 {
				l.B = w[0] / sd
				l.A = a - l.B*m
			}
		}
	}
	sims, real := reactions(trs)
	var np, nn [3]float64
	for i, s := range sims {
		if real[i] {
			np[s+1]++
		} else {
			nn[s+1]++
		}
	}
	// pool adjacent violators of a non-decreasing P(+ | s)
	type block struct{ p, n float64 }
	var bs []block
	var size []int
	for k := range 3 {
		bs, size = append(bs, block{np[k] + 0.5, nn[k] + 0.5}), append(size, 1)
		for len(bs) > 1 {
			a, b := bs[len(bs)-2], bs[len(bs)-1]
			if a.p/(a.p+a.n) <= b.p/(b.p+b.n) {
				break
			}
			bs = append(bs[:len(bs)-2], block{a.p + b.p, a.n + b.n})
			size = append(size[:len(size)-2], size[len(size)-2]+size[len(size)-1])
		}
	}
	k := 0
	for i, b := range bs {
		for range size[i] {
			l.React[k] = b.p / (b.p + b.n)
			k++
		}
	}
	return l
}

// Evaluate scores replays trs under link l.
func Evaluate(trs []*fidelity.Trace, l Link) Score {
	var s Score
	s.Dialogues = len(trs)
	scores := make([]float64, len(trs))
	labels := make([]bool, len(trs))
	for i, tr := range trs {
		s.Outcome += bernoulliNLL(sigmoid(l.A+l.B*logit(final(tr))), tr.Donated)
		scores[i], labels[i] = final(tr), tr.Donated
	}
	if s.Dialogues > 0 {
		s.Outcome /= float64(s.Dialogues)
	}
	sims, real := reactions(trs)
	s.Turns = len(sims)
	var a, b []int
	for i, sm := range sims {
		s.Reaction += bernoulliNLL(l.React[sm+1], real[i])
		if sm != 0 {
			r := -1
			if real[i] {
				r = 1
			}
			a, b = append(a, r), append(b, sm)
		}
	}
	if s.Turns > 0 {
		s.Reaction /= float64(s.Turns)
	}
	s.J = s.Outcome + s.Reaction
	s.AUC, s.Kappa = math.NaN(), math.NaN()
	if v, err := stats.AUC(scores, labels); err == nil {
		s.AUC = v
	}
	if k, err := stats.Kappa(a, b); err == nil {
		s.Kappa = k
	}
	return s
}

// Replay replays every scenario of ss against the simulator with cfg,
// with the seeds fidelity.Run uses (so the objective is deterministic for
// a seed), workers at a time (0: GOMAXPROCS; the result does not depend
// on it). Errors: a scenario without persuader utterances, or a replay
// failure.
func Replay(ctx context.Context, ss []*scenario.Scenario, cfg sim.Config, seed uint64, workers int) ([]*fidelity.Trace, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pee := sim.New(cfg)
	out, err := parallel.Map(ctx, len(ss), workers, func(ctx context.Context, i int) (*fidelity.Trace, error) {
		sc := ss[i]
		return fidelity.Replay(ctx, sc, pee, nil, episode.Mix(episode.Seed(seed, sc.ID, 0)^2))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Options configures Fit.
type Options struct {
	// Base is the configuration the fit starts from and leaves unchanged
	// outside Params (nil: sim.HandConfig(), the hand-set parameters the
	// shipped fit starts from).
	Base *sim.Config
	// Params are the fitted parameters (nil: DefaultParams).
	Params []Param
	// Seed is the replay seed.
	Seed uint64
	// MaxEvals caps the objective evaluations of each Nelder-Mead fit
	// (0: 300).
	MaxEvals int
	// Folds is the number of user-grouped cross-validation folds within
	// the fit set (a user in fold p4g.SplitHash(user) mod Folds); 0 or 1
	// skips cross-validation.
	Folds int
	// Workers replay at once (0: GOMAXPROCS).
	Workers int
	// Closed is the closed-loop eval whose penalty (Moments.Penalty) is
	// added to J in every fit, the cross-validation folds' included (nil:
	// none, the open-loop objective alone; docs/simulator/fit.md).
	Closed *ClosedLoop
	// Trace are the PersuasionTrace rounds of the fit (train people only),
	// whose term (traceTerm, TraceScore.NLL) is added to J in every fit
	// (nil: the P4G objective alone); TraceVal the validation people's
	// rounds, scored with the fit and never fitted on.
	Trace, TraceVal []persuasiontrace.Round
	// Progress, if set, is told about each finished fit.
	Progress func(msg string)
}

// Result is a finished fit.
type Result struct {
	// Values are the fitted parameter values, by name; Config the fitted
	// configuration (Base with Values set).
	Values map[string]float64
	Config sim.Config
	// Link is fitted with the final values on the fit set.
	Link Link
	// Train and TrainDefault score the fitted and the base configuration
	// on the fit set (each with its own link); Evaluations counts the
	// final fit's objective evaluations.
	Train, TrainDefault Score
	Evaluations         int
	// CV and CVDefault are the mean over folds of the held-out fold's
	// score of a fit on the other folds, and of the base configuration
	// (links fitted on the other folds); nil without cross-validation.
	CV, CVDefault *Score
	// Validation and ValidationDefault score the fitted and the base
	// configuration on the validation scenarios with the links fitted on
	// the fit set; nil without validation scenarios.
	Validation, ValidationDefault *Score
	// Objective and ObjectiveDefault are the minimised value (train J plus
	// the closed-loop penalty; J alone without Options.Closed) of the
	// fitted and the base configuration.
	Objective, ObjectiveDefault float64
	// Moments and MomentsDefault are the closed-loop moments of the fitted
	// and the base configuration (nil without Options.Closed).
	Moments, MomentsDefault *Moments
	// Users and Dialogues of the fit set.
	Users, Dialogues int
	// TraceTrain and TraceTrainDefault score the fitted and the base
	// configuration on Options.Trace, TraceVal and TraceValDefault on
	// Options.TraceVal (nil without those rounds). Objective includes
	// TraceTrain.NLL.
	TraceTrain, TraceTrainDefault, TraceVal, TraceValDefault *TraceScore
}

// bounded maps an unconstrained z to [lo, hi] by a logistic transform.
func bounded(p Param, z float64) float64 { return p.Lo + (p.Hi-p.Lo)*sigmoid(z) }

// unbounded is bounded's inverse, with v kept 1e-3 of the range inside.
func unbounded(p Param, v float64) float64 {
	u := (v - p.Lo) / (p.Hi - p.Lo)
	u = math.Min(math.Max(u, 1e-3), 1-1e-3)
	return math.Log(u / (1 - u))
}

// objective returns the minimised value of the configuration base with z
// applied (J on ss, plus the PersuasionTrace term on pt when it has
// rounds, plus, with a closed-loop eval cl, its penalty), the
// configuration, the replays and the closed-loop moments (nil without
// cl); an invalid configuration scores +Inf with no replays.
//
// Choice: the P4G and PersuasionTrace terms are added with equal weight,
// each a mean negative log-likelihood per unit (dialogue, turn, report).
func objective(ctx context.Context, ss []*scenario.Scenario, pt []persuasiontrace.Round, base sim.Config, ps []Param, z []float64, seed uint64, workers int, cl *ClosedLoop) (float64, sim.Config, []*fidelity.Trace, *Moments, error) {
	c := base
	for i, p := range ps {
		if err := c.SetParam(p.Name, bounded(p, z[i])); err != nil {
			return 0, c, nil, nil, err
		}
	}
	if c.Validate() != nil {
		return math.Inf(1), c, nil, nil, nil
	}
	trs, err := Replay(ctx, ss, c, seed, workers)
	if err != nil {
		return 0, c, nil, nil, err
	}
	j := Evaluate(trs, FitLink(trs)).J
	if len(pt) > 0 {
		ts, err := traceTerm(ctx, pt, c, seed, workers)
		if err != nil {
			return 0, c, nil, nil, err
		}
		j += ts.NLL
	}
	var m *Moments
	if cl != nil {
		if m, err = cl.Evaluate(ctx, c); err != nil {
			return 0, c, nil, nil, err
		}
		j += m.Penalty
	}
	return j, c, trs, m, nil
}

// fitOnce minimises J over the parameters on ss with Nelder-Mead from the
// base values (gonum/optimize; SimplexSize 1 in the transformed space),
// deterministic for a seed.
func fitOnce(ctx context.Context, ss []*scenario.Scenario, base sim.Config, ps []Param, opt Options) ([]float64, int, error) {
	z0 := make([]float64, len(ps))
	for i, p := range ps {
		v, err := base.Param(p.Name)
		if err != nil {
			return nil, 0, err
		}
		z0[i] = unbounded(p, v)
	}
	var ferr error
	// best is the best point evaluated (the first of equals), kept because a
	// run stopped at the evaluation cap during Nelder-Mead's initialisation
	// does not report it in res.X.
	var best []float64
	bestJ := math.Inf(1)
	prob := optimize.Problem{Func: func(z []float64) float64 {
		if ferr != nil {
			return math.Inf(1)
		}
		j, _, _, _, err := objective(ctx, ss, opt.Trace, base, ps, z, opt.Seed, opt.Workers, opt.Closed)
		if err != nil {
			ferr = err
			return math.Inf(1)
		}
		if j < bestJ {
			best, bestJ = append(best[:0], z...), j
		}
		return j
	}}
	res, err := optimize.Minimize(prob, z0, &optimize.Settings{FuncEvaluations: opt.MaxEvals,
		Converger: &optimize.FunctionConverge{Absolute: 1e-6, Iterations: 50}}, &optimize.NelderMead{SimplexSize: 1})
	if ferr != nil {
		return nil, 0, ferr
	}
	if res == nil {
		return nil, 0, fmt.Errorf("simfit: Nelder-Mead: %w", err)
	}
	// res.X is Nelder-Mead's result. Choice: only when it is worse than a
	// point already evaluated by more than the converger's tolerance (1e-6;
	// a cap reached during initialisation reports an unevaluated point) is
	// that point used instead.
	if best != nil && !(res.F <= bestJ+1e-6) {
		return best, res.FuncEvaluations, nil
	}
	return res.X, res.FuncEvaluations, nil
}

// Fit fits opt.Params on the fit scenarios (their users only), reports
// user-grouped cross-validation within them and, if val is non-empty, the
// score on those (user-disjoint) scenarios. Same inputs and Seed, same
// Result.
func Fit(ctx context.Context, fit, val []*scenario.Scenario, opt Options) (*Result, error) {
	base := sim.HandConfig()
	if opt.Base != nil {
		base = *opt.Base
	}
	if opt.Params == nil {
		opt.Params = DefaultParams
	}
	if opt.MaxEvals <= 0 {
		opt.MaxEvals = 300
	}
	if len(fit) == 0 {
		return nil, fmt.Errorf("simfit: nothing to fit on")
	}
	for _, p := range opt.Params {
		if !(p.Lo < p.Hi) {
			return nil, fmt.Errorf("simfit: parameter %s: bounds [%g, %g]", p.Name, p.Lo, p.Hi)
		}
		if _, err := base.Param(p.Name); err != nil {
			return nil, err
		}
		if slices.Contains(sim.IntParamNames(), p.Name) {
			return nil, fmt.Errorf("simfit: parameter %s is an integer; the fit takes float64 parameters only (sim.ParamNames)", p.Name)
		}
	}
	say := func(format string, a ...any) {
		if opt.Progress != nil {
			opt.Progress(fmt.Sprintf(format, a...))
		}
	}
	users := map[string]bool{}
	for _, sc := range fit {
		users[userOf(sc)] = true
	}
	res := &Result{Users: len(users), Dialogues: len(fit)}

	if opt.Folds > 1 {
		var cv, cvd Score
		done := 0
		for k := range opt.Folds {
			var in, out []*scenario.Scenario
			for _, sc := range fit {
				if int(p4g.SplitHash(userOf(sc))%uint64(opt.Folds)) == k {
					out = append(out, sc)
				} else {
					in = append(in, sc)
				}
			}
			if len(in) == 0 || len(out) == 0 {
				continue
			}
			z, _, err := fitOnce(ctx, in, base, opt.Params, opt)
			if err != nil {
				return nil, err
			}
			fs, fd, err := heldOut(ctx, in, out, base, opt.Params, z, opt)
			if err != nil {
				return nil, err
			}
			say("fold %d/%d: held-out J fitted %.4f, default %.4f", k+1, opt.Folds, fs.J, fd.J)
			add(&cv, fs)
			add(&cvd, fd)
			done++
		}
		if done > 0 {
			scale(&cv, done)
			scale(&cvd, done)
			res.CV, res.CVDefault = &cv, &cvd
		}
	}

	z, evals, err := fitOnce(ctx, fit, base, opt.Params, opt)
	if err != nil {
		return nil, err
	}
	res.Evaluations = evals
	total, cfg, trs, mom, err := objective(ctx, fit, opt.Trace, base, opt.Params, z, opt.Seed, opt.Workers, opt.Closed)
	if err != nil {
		return nil, err
	}
	if trs == nil {
		return nil, fmt.Errorf("simfit: the fitted configuration is invalid")
	}
	res.Config = cfg
	res.Values = map[string]float64{}
	for i, p := range opt.Params {
		res.Values[p.Name] = bounded(p, z[i])
	}
	res.Link = FitLink(trs)
	res.Train = Evaluate(trs, res.Link)
	res.Objective = total
	res.Moments = mom
	dtrs, err := Replay(ctx, fit, base, opt.Seed, opt.Workers)
	if err != nil {
		return nil, err
	}
	dlink := FitLink(dtrs)
	res.TrainDefault = Evaluate(dtrs, dlink)
	res.ObjectiveDefault = res.TrainDefault.J
	score := func(rs []persuasiontrace.Round, c sim.Config) (*TraceScore, error) {
		if len(rs) == 0 {
			return nil, nil
		}
		ts, err := traceTerm(ctx, rs, c, opt.Seed, opt.Workers)
		return &ts, err
	}
	if res.TraceTrain, err = score(opt.Trace, cfg); err != nil {
		return nil, err
	}
	if res.TraceTrainDefault, err = score(opt.Trace, base); err != nil {
		return nil, err
	}
	if res.TraceVal, err = score(opt.TraceVal, cfg); err != nil {
		return nil, err
	}
	if res.TraceValDefault, err = score(opt.TraceVal, base); err != nil {
		return nil, err
	}
	if res.TraceTrainDefault != nil {
		res.ObjectiveDefault += res.TraceTrainDefault.NLL
	}
	if opt.Closed != nil {
		if res.MomentsDefault, err = opt.Closed.Evaluate(ctx, base); err != nil {
			return nil, err
		}
		res.ObjectiveDefault += res.MomentsDefault.Penalty
	}
	say("final fit: %d evaluations, train J %.4f (default %.4f), objective %.4f (default %.4f)", evals, res.Train.J, res.TrainDefault.J, res.Objective, res.ObjectiveDefault)
	if len(val) > 0 {
		vtrs, err := Replay(ctx, val, cfg, opt.Seed, opt.Workers)
		if err != nil {
			return nil, err
		}
		v := Evaluate(vtrs, res.Link)
		vdtrs, err := Replay(ctx, val, base, opt.Seed, opt.Workers)
		if err != nil {
			return nil, err
		}
		vd := Evaluate(vdtrs, dlink)
		res.Validation, res.ValidationDefault = &v, &vd
	}
	return res, nil
}

// heldOut scores the configuration z on out with the link fitted on in,
// and the base configuration likewise.
func heldOut(ctx context.Context, in, out []*scenario.Scenario, base sim.Config, ps []Param, z []float64, opt Options) (fitted, def Score, err error) {
	_, cfg, trs, _, err := objective(ctx, in, nil, base, ps, z, opt.Seed, opt.Workers, nil)
	if err != nil {
		return fitted, def, err
	}
	if trs == nil {
		return fitted, def, fmt.Errorf("simfit: a fold's fitted configuration is invalid")
	}
	otrs, err := Replay(ctx, out, cfg, opt.Seed, opt.Workers)
	if err != nil {
		return fitted, def, err
	}
	fitted = Evaluate(otrs, FitLink(trs))
	dtrs, err := Replay(ctx, in, base, opt.Seed, opt.Workers)
	if err != nil {
		return fitted, def, err
	}
	odtrs, err := Replay(ctx, out, base, opt.Seed, opt.Workers)
	if err != nil {
		return fitted, def, err
	}
	def = Evaluate(odtrs, FitLink(dtrs))
	return fitted, def, nil
}

func add(a *Score, b Score) {
	a.J += b.J
	a.Outcome += b.Outcome
	a.Reaction += b.Reaction
	a.Dialogues += b.Dialogues
	a.Turns += b.Turns
	a.AUC += b.AUC
	a.Kappa += b.Kappa
}

func scale(a *Score, n int) {
	f := float64(n)
	a.J /= f
	a.Outcome /= f
	a.Reaction /= f
	a.AUC /= f
	a.Kappa /= f
}

// userOf is the P4G user of sc, or its id when it records none.
func userOf(sc *scenario.Scenario) string {
	if u, ok := p4g.UserOf(sc); ok {
		return u
	}
	return "scenario:" + sc.ID
}

// DataHash is "sha256:" and the hex SHA-256 of ss as JSON lines (one
// json.Marshal per scenario, "\n" after each), in order: the scenarios a
// fit saw.
func DataHash(ss []scenario.Scenario) (string, error) {
	h := sha256.New()
	for i := range ss {
		b, err := json.Marshal(&ss[i])
		if err != nil {
			return "", err
		}
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// File returns the config file of the fit: base name, the fitted values
// and provenance (command, data hash, seed, objective values, bounds,
// validation metrics).
func (r *Result) File(baseName, command, data string, opt Options) *sim.File {
	ps := opt.Params
	if ps == nil {
		ps = DefaultParams
	}
	prov := &sim.FitProvenance{Command: command, Data: data, Seed: opt.Seed, Split: string(scenario.Train),
		Users: r.Users, Dialogues: r.Dialogues, Folds: opt.Folds, Optimiser: "gonum/optimize NelderMead (SimplexSize 1, logistic bounds transform)",
		Evaluations: r.Evaluations, Objective: map[string]float64{}, Bounds: map[string][2]float64{}, Metrics: map[string]float64{}}
	put := func(key string, s *Score) {
		if s == nil {
			return
		}
		prov.Objective[key] = round(s.J)
		prov.Metrics[key+"_auc"] = round(s.AUC)
		prov.Metrics[key+"_kappa"] = round(s.Kappa)
	}
	put("train", &r.Train)
	put("train_default", &r.TrainDefault)
	put("cv", r.CV)
	put("cv_default", r.CVDefault)
	put("validation", r.Validation)
	put("validation_default", r.ValidationDefault)
	tput := func(key string, s *TraceScore) {
		if s == nil {
			return
		}
		prov.Objective[key] = round(s.NLL)
		prov.Metrics[key+"_mae"] = round(s.MAE)
		prov.Metrics[key+"_sim_shift"] = round(s.SimShift)
		prov.Metrics[key+"_people_shift"] = round(s.Shift)
		prov.Metrics[key+"_control_shift"] = round(s.ControlShift)
		prov.Metrics[key+"_moved"] = round(s.Moved)
		prov.Metrics[key+"_rounds"] = float64(s.Rounds)
		prov.Metrics[key+"_people"] = float64(s.People)
	}
	tput("trace_train", r.TraceTrain)
	tput("trace_train_default", r.TraceTrainDefault)
	tput("trace_validation", r.TraceVal)
	tput("trace_validation_default", r.TraceValDefault)
	if r.Moments != nil {
		prov.Objective["train_penalised"] = round(r.Objective)
		prov.Objective["train_penalised_default"] = round(r.ObjectiveDefault)
		moments := func(key string, m *Moments) {
			prov.Metrics[key+"_penalty"] = round(m.Penalty)
			prov.Metrics[key+"_ece"] = round(m.ECE)
			prov.Metrics[key+"_script_moved"] = round(m.ScriptMoved)
			prov.Metrics[key+"_content_free_max"] = round(m.ContentFreeMax)
			for _, s := range m.Sets {
				for _, name := range Persuaders {
					prov.Metrics[key+"_"+s.Name+"_"+name+"_accept"] = round(s.Accept[name])
				}
			}
		}
		moments("closed", r.Moments)
		moments("closed_default", r.MomentsDefault)
		prov.ClosedLoop = opt.Closed.Describe()
	}
	for _, p := range ps {
		prov.Bounds[p.Name] = [2]float64{p.Lo, p.Hi}
	}
	vals := map[string]float64{}
	for k, v := range r.Values {
		vals[k] = round(v)
	}
	for k, v := range prov.Metrics {
		if math.IsNaN(v) {
			delete(prov.Metrics, k)
		}
	}
	return &sim.File{Schema: sim.FileSchema, Base: baseName, Params: vals, Provenance: prov}
}

// round keeps 6 significant decimals so that written files are stable
// and readable (Choice: the fit's own resolution is far coarser).
func round(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	return math.Round(v*1e6) / 1e6
}

// Summary renders a Result for a terminal: objective values and the
// fitted parameters beside their base values.
func Summary(r *Result, opt Options) string {
	var b strings.Builder
	base := sim.HandConfig()
	if opt.Base != nil {
		base = *opt.Base
	}
	ps := opt.Params
	if ps == nil {
		ps = DefaultParams
	}
	fmt.Fprintf(&b, "sim fit on %d train dialogues of %d users, seed %d, %d evaluations\n", r.Dialogues, r.Users, opt.Seed, r.Evaluations)
	fmt.Fprintf(&b, "  %-20s %8s %8s %8s %6s %6s %5s\n", "objective J (nats)", "J", "outcome", "react", "AUC", "kappa", "turns")
	row := func(name string, s *Score) {
		if s != nil {
			fmt.Fprintf(&b, "  %-20s %8.4f %8.4f %8.4f %6.3f %6.3f %5d\n", name, s.J, s.Outcome, s.Reaction, s.AUC, s.Kappa, s.Turns)
		}
	}
	row("train, fitted", &r.Train)
	row("train, base", &r.TrainDefault)
	row("cv, fitted", r.CV)
	row("cv, base", r.CVDefault)
	row("validation, fitted", r.Validation)
	row("validation, base", r.ValidationDefault)
	trow := func(name string, s *TraceScore) {
		if s != nil {
			fmt.Fprintf(&b, "  PersuasionTrace %-19s NLL %.4f, MAE %.4f, shift %+.3f (people %+.3f), moved %.1f%%, control shift %+.3f, %d rounds of %d people\n",
				name, s.NLL, s.MAE, s.SimShift, s.Shift, 100*s.Moved, s.ControlShift, s.Rounds, s.People)
		}
	}
	trow("train, fitted", r.TraceTrain)
	trow("train, base", r.TraceTrainDefault)
	trow("validation, fitted", r.TraceVal)
	trow("validation, base", r.TraceValDefault)
	if r.Moments != nil {
		fmt.Fprintf(&b, "  penalised train objective: fitted %.4f, base %.4f\n", r.Objective, r.ObjectiveDefault)
		b.WriteString("  fitted " + r.Moments.String())
		b.WriteString("  base " + r.MomentsDefault.String())
	}
	fmt.Fprintf(&b, "  %-16s %9s %9s %17s\n", "parameter", "base", "fitted", "bounds")
	for _, p := range ps {
		v0, _ := base.Param(p.Name)
		fmt.Fprintf(&b, "  %-16s %9.4f %9.4f   [%6.3f, %6.3f]\n", p.Name, v0, r.Values[p.Name], p.Lo, p.Hi)
	}
	return b.String()
}
