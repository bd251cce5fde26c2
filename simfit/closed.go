package simfit

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// ClosedLoop is the fixed, seeded closed-loop eval whose simulated moments
// constrain the fit (docs/simulator/fit.md, "Fitting to P4G"): the
// four built-in persuaders (script, random, informer, pushy) play one
// episode each on every scenario of Sets, and a content-free battery
// (informer or pushy for 0-3 turns, then one of ContentFree for the rest)
// plays on every Battery-th scenario. The open-loop P4G objective cannot
// see any of this: it only replays other people's conversations.
type ClosedLoop struct {
	// Sets are named scenario sets (train splits only), e.g. "arena" and
	// "p4g"; the sanity moments are computed per set, calibration and the
	// moved share over all of them.
	Sets []NamedSet
	// Seed is the run seed of every episode (episode.Seed(Seed, id, 0)).
	Seed uint64
	// Battery plays the content-free battery on every Battery-th scenario
	// of each set (0: 4).
	Battery int
	// Workers play at once (0: GOMAXPROCS; the result does not depend on
	// it).
	Workers int
}

// NamedSet is a named list of scenarios.
type NamedSet struct {
	Name      string
	Scenarios []*scenario.Scenario
}

// ContentFree are the content-free persuader lines of the battery: filler,
// a keyboard mash and off-topic small talk (the same lines as the
// simulator's own content-free test).
var ContentFree = []string{"ok", "Hmm.", "asdf qwer zxcv", "The weather is lovely today.", "I had pasta for lunch."}

// Persuaders are the built-in persuaders of the closed-loop eval.
var Persuaders = []string{"script", "random", "informer", "pushy"}

// SetMoments are the simulated moments of one scenario set: per
// persuader, the share (in [0, 1]) of episodes ending in each terminal
// state, and script's belief shape.
type SetMoments struct {
	Name string `json:"name"`
	// Episodes per persuader.
	Episodes int `json:"episodes"`
	// Accept, Conditional, Pending, Reject map a persuader to its share of
	// episodes ending so.
	Accept      map[string]float64 `json:"accept"`
	Conditional map[string]float64 `json:"conditional"`
	Pending     map[string]float64 `json:"pending"`
	Reject      map[string]float64 `json:"reject"`
	// ScriptNonMono is the share of script's episodes whose belief both
	// rises and falls by more than 0.02.
	ScriptNonMono float64 `json:"script_nonmono"`
	// ScriptBT maps a terminal state ("accept", "conditional", "pending")
	// to script's mean final belief in it (NaN when none ended so).
	ScriptBT map[string]float64 `json:"script_bt"`
	// BestPerType is the number of distinct persuaders that are best on
	// acceptance for at least one resistance type (ties: the first in
	// Persuaders order). Reported, not a limit: of the four baselines only
	// script answers concerns, so the count says which baselines are any
	// good, not whether the types need different strategies (the
	// fixed-sequence study measures that; docs/simulator/types.md).
	BestPerType int `json:"best_per_type"`
}

// Moments are the closed-loop figures of one configuration and the
// penalty they earn.
type Moments struct {
	// ECE is the expected calibration error (ten bins) of the belief just
	// before a commitment ask against the ask's answer, over the asks of
	// script and random on every set; Asks counts them.
	ECE  float64 `json:"ece"`
	Asks int     `json:"asks"`
	// ScriptMoved is the share of script's episodes ending with B_T > 0.5.
	ScriptMoved float64 `json:"script_moved"`
	// ContentFreeMax is the largest dense reward r_t of a content-free turn
	// in the battery (<= 0 is faithful); ContentFreeTurns counts them.
	ContentFreeMax   float64 `json:"content_free_max"`
	ContentFreeTurns int     `json:"content_free_turns"`
	// Sets are the per-set moments.
	Sets []SetMoments `json:"sets"`
	// Penalty is Weight times the summed violations of Limits (0 when
	// every limit holds); Violations names the violated limits.
	Penalty    float64  `json:"penalty"`
	Violations []string `json:"violations,omitempty"`
}

// Weight is the penalty per unit of violation (a share, an ECE or a
// belief difference of 1.0 costs 10 nats).
//
// Choice: a linear (exact) penalty, large against the objective's scale
// (J moves by a few hundredths between configurations), so that the fit
// treats the limits as constraints rather than trading them against
// likelihood.
const Weight = 10

// Limits are the closed-loop limits of the fit, each a margin inside the
// acceptance test it mirrors (sim/belief_test.go, sim/sanity_test.go), so
// that a fit that meets them on train scenarios also passes those tests on
// the held-out ones.
//
// Choice: margins of 0.01-0.05 on shares and beliefs (0.02 on script's
// moved share), none on the ECE: with the perception dynamics (simulator
// version 4) the hand-set parameters, where the fit starts, read ECE 0.098
// and script moved 63.4% on this eval (0.086-0.089 and about 69% before),
// and the held-out acceptance tests pass at ECE <= 0.10 and moved >= 60%
// (20 %: the types' optima conflict, docs/simulator/types.md). A standard error of a share on the
// eval's 160 episodes per set and persuader is up to 0.04, so a margin
// cannot make a held-out pass certain: the acceptance tests are the judge.
// With the reader of simulator version 7, which reads what a sentence
// asserts, script's template line after an echoed worry ("That point
// about X matters. The records from people in your position show it
// rarely ends up being the obstacle it seems.") acknowledges the worry
// and answers nothing, whatever the fitted parameters: script moves
// about 24 % of the train eval (the test's lower limit is 20 %, a margin
// of 0.02 here) and accepts about 8 % of the arena train eval, so the
// script - pushy accept gap's limit is 0.07, below the held-out test's
// 0.10, which the held-out scenarios meet (sim/sanity_test.go).
var Limits = struct {
	ECE                        float64 // ECE <= (test 0.10)
	MovedLo, MovedHi           float64 // script moved share in (test [0.20, 0.85])
	ContentFree                float64 // content-free r_t <= (test 0)
	AcceptMax                  float64 // every persuader's accept share <= (test 0.90)
	RejectGap                  float64 // pushy's reject share - any other's >= (test > 0)
	ScriptPushy                float64 // script - pushy accept >= (test 0.10)
	PushyAccept, PushyReject   float64 // pushy accept <=, reject >= (tests < 0.15, > 0.40)
	InformerPending            float64 // informer pending >= (test 0.50)
	RandomGap                  float64 // script - random accept >= (test > 0); random >= pushy
	NonMono                    float64 // script non-monotonic share >= (test 0.10)
	BTGap, BTAcceptMax, BTPend float64 // script B_T accept - cond, cond - pend >= ; accept <= ; pending <= (tests > 0, < 0.95, < 0.5)
}{
	ECE: 0.0985, MovedLo: 0.22, MovedHi: 0.81, ContentFree: 0,
	AcceptMax: 0.87, RejectGap: 0.03, ScriptPushy: 0.07, PushyAccept: 0.12, PushyReject: 0.45,
	InformerPending: 0.55, RandomGap: 0.03, NonMono: 0.12, BTGap: 0.02, BTAcceptMax: 0.93, BTPend: 0.47,
}

// DefaultEvals and DefaultClosedN are the shipped fit's objective
// evaluations per Nelder-Mead fit and closed-loop scenarios per set (the
// defaults of `persuarena sim fit p4g`).
//
// PeopleEvals is the evaluations of the shipped joint fit (`persuarena sim
// fit people --max-evals 120`), which keeps its reproduction in CI near a
// minute on two cores.
const (
	PeopleEvals    = 120
	DefaultEvals   = 200
	DefaultClosedN = 160
)

// DefaultClosedLoop returns the closed-loop eval of the shipped fit: the
// train splits of the arena and P4G sets, every stride-th scenario (so
// that each set gives about n), run seed 7.
//
// Choice: DefaultClosedN (160) scenarios per set keeps one evaluation
// near 0.1 s of CPU (about 1,400 short episodes) so that the whole fit stays within a
// few minutes; the seed differs from the acceptance tests' (1 and 2024)
// and the scenarios are train ones, so the tests are not fitted to.
func DefaultClosedLoop(arena, p4g []*scenario.Scenario, n int) *ClosedLoop {
	pick := func(ss []*scenario.Scenario) []*scenario.Scenario {
		var out []*scenario.Scenario
		for _, sc := range ss {
			if sc.Split == scenario.Train {
				out = append(out, sc)
			}
		}
		if n <= 0 || len(out) <= n {
			return out
		}
		stride := float64(len(out)) / float64(n)
		var sub []*scenario.Scenario
		for i := range n {
			sub = append(sub, out[int(float64(i)*stride)])
		}
		return sub
	}
	return &ClosedLoop{Sets: []NamedSet{{"arena", pick(arena)}, {"p4g", pick(p4g)}}, Seed: 7}
}

// thenFiller plays inner for k turns, then says filler for ever.
type thenFiller struct {
	inner  episode.Persuader
	k      int
	filler string
}

func (p *thenFiller) Name() string { return "then-filler" }
func (p *thenFiller) Start(ctx context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	s, err := p.inner.Start(ctx, pub, seed)
	if err != nil {
		return nil, err
	}
	return &thenFillerSession{p: p, inner: s}, nil
}

type thenFillerSession struct {
	p     *thenFiller
	inner episode.PersuaderSession
	i     int
}

func (s *thenFillerSession) Say(ctx context.Context, tr []episode.Message) (episode.Utterance, error) {
	s.i++
	if s.i <= s.p.k {
		return s.inner.Say(ctx, tr)
	}
	return episode.Utterance{Text: s.p.filler}, nil
}

// job is one closed-loop episode.
type job struct {
	set, per int // per: index into Persuaders, or -1 for the battery
	sc       *scenario.Scenario
	p        episode.Persuader
	k        int // battery: real turns before the filler
	seed     uint64
}

// Evaluate plays the closed-loop eval against cfg and returns its
// moments and penalty. Same ClosedLoop and cfg, same Moments. Errors: an
// unknown built-in persuader or a failed episode.
func (cl *ClosedLoop) Evaluate(ctx context.Context, cfg sim.Config) (*Moments, error) {
	pee := sim.New(cfg)
	var pers []episode.Persuader
	for _, name := range Persuaders {
		p, err := baseline.New(name)
		if err != nil {
			return nil, err
		}
		pers = append(pers, p)
	}
	battery := cl.Battery
	if battery <= 0 {
		battery = 4
	}
	var jobs []job
	for si, set := range cl.Sets {
		for i, sc := range set.Scenarios {
			for pi, p := range pers {
				jobs = append(jobs, job{set: si, per: pi, sc: sc, p: p, seed: episode.Seed(cl.Seed, sc.ID, 0)})
			}
			if i%battery == 0 {
				// informer-like or pushy lines for 0-3 turns, then filler
				j := i / battery
				inner := pers[2]
				if j%8 >= 4 {
					inner = pers[3]
				}
				k := j % 4
				f := ContentFree[j%len(ContentFree)]
				jobs = append(jobs, job{set: si, per: -1, sc: sc, p: &thenFiller{inner: inner, k: k, filler: f}, k: k,
					seed: episode.Seed(cl.Seed, sc.ID, 1)})
			}
		}
	}
	workers := cl.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Each episode runs on the caller's ctx, not the pool's: a failure
	// only stops further dispatch, so an earlier job still running
	// completes and the error reported (the lowest failed job's) never
	// depends on what another job's failure interrupted.
	eps, err := parallel.Map(ctx, len(jobs), workers, func(_ context.Context, i int) (*episode.Episode, error) {
		j := jobs[i]
		ep, err := episode.Run(ctx, episode.Config{}, j.sc, j.p, pee, j.seed)
		if err == nil && ep.Terminal == decision.TermFailed {
			err = fmt.Errorf("simfit: closed-loop %s on %s failed: %s", j.p.Name(), j.sc.ID, ep.Error)
		}
		return ep, err
	})
	if err != nil {
		return nil, err
	}
	return cl.moments(jobs, eps)
}

func (cl *ClosedLoop) moments(jobs []job, eps []*episode.Episode) (*Moments, error) {
	m := &Moments{ContentFreeMax: math.Inf(-1)}
	var asks, script []*episode.Episode
	type acc struct {
		n, accept, cond, pend, reject, nonmono int
		bt                                     map[decision.Terminal][2]float64
		byType                                 map[scenario.Resistance][2]int
	}
	per := make([][]acc, len(cl.Sets))
	for si := range per {
		per[si] = make([]acc, len(Persuaders))
		for pi := range per[si] {
			per[si][pi] = acc{bt: map[decision.Terminal][2]float64{}, byType: map[scenario.Resistance][2]int{}}
		}
	}
	for i, j := range jobs {
		ep := eps[i]
		if j.per < 0 {
			for ti, tr := range ep.Turns {
				if ti < j.k || tr.Dense == nil {
					continue
				}
				m.ContentFreeTurns++
				m.ContentFreeMax = math.Max(m.ContentFreeMax, *tr.Dense)
			}
			continue
		}
		name := Persuaders[j.per]
		if name == "script" || name == "random" {
			asks = append(asks, ep)
		}
		if name == "script" {
			script = append(script, ep)
		}
		a := &per[j.set][j.per]
		a.n++
		switch ep.Terminal {
		case decision.TermAccept:
			a.accept++
		case decision.TermConditional:
			a.cond++
		case decision.TermPending:
			a.pend++
		case decision.TermReject:
			a.reject++
		}
		t := a.byType[j.sc.Hidden.Resistance]
		t[1]++
		if ep.Terminal == decision.TermAccept {
			t[0]++
		}
		a.byType[j.sc.Hidden.Resistance] = t
		if episode.RisesAndFalls(ep.Beliefs(), episode.RiseFallStep) {
			a.nonmono++
		}
		if b, ok := ep.FinalBelief(); ok { // the simulator always reads one
			x := a.bt[ep.Terminal]
			a.bt[ep.Terminal] = [2]float64{x[0] + b, x[1] + 1}
		}
	}
	r, err := analysis.AskReliabilityOf(asks, 10)
	if err != nil {
		return nil, err
	}
	m.ECE, m.Asks = r.ECE, r.N
	m.ScriptMoved = movedShare(script)
	if m.ContentFreeTurns == 0 {
		m.ContentFreeMax = 0
	}
	for si, set := range cl.Sets {
		sm := SetMoments{Name: set.Name, Accept: map[string]float64{}, Conditional: map[string]float64{}, Pending: map[string]float64{},
			Reject: map[string]float64{}, ScriptBT: map[string]float64{}}
		for pi, name := range Persuaders {
			a := per[si][pi]
			sm.Episodes = a.n
			f := func(k int) float64 { return float64(k) / math.Max(1, float64(a.n)) }
			sm.Accept[name], sm.Conditional[name], sm.Pending[name], sm.Reject[name] = f(a.accept), f(a.cond), f(a.pend), f(a.reject)
			if name == "script" {
				sm.ScriptNonMono = f(a.nonmono)
				for _, term := range []decision.Terminal{decision.TermAccept, decision.TermConditional, decision.TermPending} {
					x := a.bt[term]
					sm.ScriptBT[string(term)] = math.NaN()
					if x[1] > 0 {
						sm.ScriptBT[string(term)] = x[0] / x[1]
					}
				}
			}
		}
		best := map[string]bool{}
		for _, typ := range scenario.Resistances {
			top, topv := "", -1.0
			for pi, name := range Persuaders {
				x := per[si][pi].byType[typ]
				v := float64(x[0]) / math.Max(1, float64(x[1]))
				if v > topv {
					top, topv = name, v
				}
			}
			best[top] = true
		}
		sm.BestPerType = len(best)
		m.Sets = append(m.Sets, sm)
	}
	m.penalise()
	return m, nil
}

// penalise sets Penalty and Violations from Limits.
func (m *Moments) penalise() {
	m.Penalty, m.Violations = 0, nil
	hinge := func(name string, v float64) {
		if math.IsNaN(v) {
			v = 1
		}
		if v > 0 {
			m.Penalty += Weight * v
			m.Violations = append(m.Violations, fmt.Sprintf("%s by %.3f", name, v))
		}
	}
	L := Limits
	hinge("ECE above limit", m.ECE-L.ECE)
	hinge("script moved below limit", L.MovedLo-m.ScriptMoved)
	hinge("script moved above limit", m.ScriptMoved-L.MovedHi)
	hinge("content-free turn raised the belief", m.ContentFreeMax-L.ContentFree)
	for _, s := range m.Sets {
		p := func(what string) string { return s.Name + ": " + what }
		for _, name := range Persuaders {
			hinge(p(name+" accept above limit"), s.Accept[name]-L.AcceptMax)
			if name != "pushy" {
				hinge(p(name+" reject not below pushy's"), s.Reject[name]-(s.Reject["pushy"]-L.RejectGap))
			}
		}
		hinge(p("script - pushy accept gap"), L.ScriptPushy-(s.Accept["script"]-s.Accept["pushy"]))
		hinge(p("pushy accept above limit"), s.Accept["pushy"]-L.PushyAccept)
		hinge(p("pushy reject below limit"), L.PushyReject-s.Reject["pushy"])
		hinge(p("informer pending below limit"), L.InformerPending-s.Pending["informer"])
		hinge(p("random accept not below script's"), s.Accept["random"]-(s.Accept["script"]-L.RandomGap))
		hinge(p("random accept below pushy's"), s.Accept["pushy"]-s.Accept["random"])
		hinge(p("script non-monotonic share below limit"), L.NonMono-s.ScriptNonMono)
		acc, cond, pend := s.ScriptBT["accept"], s.ScriptBT["conditional"], s.ScriptBT["pending"]
		hinge(p("script B_T accept - conditional gap"), L.BTGap-(acc-cond))
		hinge(p("script B_T conditional - pending gap"), L.BTGap-(cond-pend))
		hinge(p("script B_T accept above limit"), acc-L.BTAcceptMax)
		hinge(p("script B_T pending above limit"), pend-L.BTPend)
	}
}

// String renders the moments on a few lines.
func (m *Moments) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "closed loop: ECE %.3f (%d asks), script moved %.1f%%, content-free max r %+.4f (%d turns), penalty %.4f\n",
		m.ECE, m.Asks, 100*m.ScriptMoved, m.ContentFreeMax, m.ContentFreeTurns, m.Penalty)
	for _, s := range m.Sets {
		fmt.Fprintf(&b, "  %-5s", s.Name)
		for _, name := range Persuaders {
			fmt.Fprintf(&b, " %s acc %.0f%% rej %.0f%% pend %.0f%%;", name, 100*s.Accept[name], 100*s.Reject[name], 100*s.Pending[name])
		}
		fmt.Fprintf(&b, " script nonmono %.0f%%, B_T acc %.2f cond %.2f pend %.2f, best on types %d\n", 100*s.ScriptNonMono,
			s.ScriptBT["accept"], s.ScriptBT["conditional"], s.ScriptBT["pending"], s.BestPerType)
	}
	for _, v := range m.Violations {
		fmt.Fprintf(&b, "  violated: %s\n", v)
	}
	return b.String()
}

func movedShare(eps []*episode.Episode) float64 {
	n := 0
	for _, ep := range eps {
		if b, ok := ep.FinalBelief(); ok && b > 0.5 {
			n++
		}
	}
	return float64(n) / math.Max(1, float64(len(eps)))
}

// Describe is a one-line description of the eval for provenance.
func (cl *ClosedLoop) Describe() string {
	var parts []string
	for _, s := range cl.Sets {
		parts = append(parts, fmt.Sprintf("%s %d", s.Name, len(s.Scenarios)))
	}
	battery := cl.Battery
	if battery <= 0 {
		battery = 4
	}
	return fmt.Sprintf("%s on train scenarios (%s), run seed %d, one episode each; content-free battery on every %dth; limits simfit.Limits, weight %d",
		strings.Join(Persuaders, ", "), strings.Join(parts, ", "), cl.Seed, battery, Weight)
}
