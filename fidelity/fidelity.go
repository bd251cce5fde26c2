// Package fidelity checks how faithfully a persuadee (by default the
// embedded simulator) reproduces real people, by open-loop replay of
// PersuasionForGood dialogues: the real persuader's utterances are fed turn
// by turn to the persuadee built from the real persuadee's survey, and its
// probed belief and reactions are compared with what the real person did
// (the donation made afterwards; the annotated dialogue acts). See
// docs/fidelity.md for the method and how to read the figures.
//
// RunTrace does the same on PersuasionTrace (package persuasiontrace),
// where real people reported their belief after every persuader message:
// the persuadee's belief is compared with theirs at each report.
package fidelity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
)

// Polarity is the direction of a reaction to the donation request: +1
// favourable, -1 unfavourable, 0 no call.
type Polarity int

// The polarities.
const (
	Negative Polarity = -1
	Neutral  Polarity = 0
	Positive Polarity = 1
)

// DenseNeutral is the band |r_t| <= DenseNeutral within which a belief
// change is read as no reaction.
//
// Choice: 0, so every turn whose belief moved at all gets a call. The
// embedded simulator's beliefs live on a compressed scale (B around 0.01
// to 0.05 on P4G), where a 0.01 band left 69 of about 4,800 annotated
// turns with a simulated polarity; what is compared is the direction of
// the reaction, not its size.
const DenseNeutral = 0.0

// ActPolarity maps one turn's annotated persuadee acts (P4G ee_label_*) to
// a polarity: agree-donation and positive-reaction-to-donation count +1,
// disagree-donation and negative-reaction-to-donation count -1, every other
// act is ignored.
//
// Choice: a turn holding both kinds is decided by the majority of its
// labels, and a tie is Neutral (no call).
func ActPolarity(acts []string) Polarity {
	n := 0
	for _, a := range acts {
		switch a {
		case "agree-donation", "positive-reaction-to-donation":
			n++
		case "disagree-donation", "negative-reaction-to-donation":
			n--
		}
	}
	switch {
	case n > 0:
		return Positive
	case n < 0:
		return Negative
	}
	return Neutral
}

// SimPolarity maps a simulated reply to a polarity: a decision of accept
// or conditional is Positive and reject Negative; otherwise the sign of the
// dense reward r_t = B_t - B_{t-1} (Probe-RPO), with |r_t| <= DenseNeutral
// (or r_t unknown) Neutral.
func SimPolarity(d decision.Decision, dense *float64) Polarity {
	switch d {
	case decision.Accept, decision.Conditional:
		return Positive
	case decision.Reject:
		return Negative
	}
	switch {
	case dense == nil:
		return Neutral
	case *dense > DenseNeutral:
		return Positive
	case *dense < -DenseNeutral:
		return Negative
	}
	return Neutral
}

// Reactor is implemented by persuadee sessions that can state the
// direction of their last reply towards the proposal (+1 favourable, -1
// unfavourable, 0 none), as a reader of the reply would annotate it; the
// embedded simulator's sessions do (sim: ReplyPolarity). It is the
// simulated counterpart of the annotated persuadee acts.
type Reactor interface {
	ReplyPolarity() int
}

// TurnTrace is one replayed turn.
type TurnTrace struct {
	// Turn is the turn index in the real dialogue (0-based).
	Turn int `json:"turn"`
	// Reply is the persuadee's reply; Decision its decision.
	Reply    string            `json:"reply"`
	Decision decision.Decision `json:"decision"`
	// Belief is B_t after the reply, nil when unreadable; Dense is r_t.
	Belief *float64 `json:"belief"`
	Dense  *float64 `json:"dense"`
	// Stated is the reply's own polarity (Reactor; Neutral for a session
	// that is not one). Sim is the simulated polarity compared: Stated
	// when it is not Neutral, else SimPolarity of the decision and r_t.
	// Real is ActPolarity of the real persuadee's annotated acts in the
	// same turn (Neutral when the dialogue is not annotated).
	//
	// Choice: the reply's stated reaction comes first because the
	// annotation is of the real persuadee's reply; the belief change
	// fills in only the turns whose reply states none, so every turn
	// whose belief moved gets a call.
	Stated Polarity `json:"stated"`
	Sim    Polarity `json:"sim"`
	Real   Polarity `json:"real"`
}

// Trace is the replay of one scenario.
type Trace struct {
	ScenarioID string         `json:"scenario_id"`
	Split      scenario.Split `json:"split"`
	// User is the real persuadee's user id (p4g.UserOf; "scenario:ID"
	// when the scenario records none): the unit of resampling and of the
	// baseline's cross-fitting folds.
	User string `json:"user"`
	// Resistance is the scenario's hidden resistance type and Traits its
	// hidden trait scores (for the calibration tables).
	Resistance scenario.Resistance `json:"resistance"`
	Traits     map[string]float64  `json:"-"`
	// Baseline is the out-of-fold prediction of the profile-only logistic
	// regression (set by Run; nil from Replay alone or when unfitted).
	Baseline *float64 `json:"baseline"`
	// Donation is the real donation (US$); Donated is Donation > 0.
	Donation  float64 `json:"donation"`
	Donated   bool    `json:"donated"`
	Annotated bool    `json:"annotated"`
	// Stance is the profile's initial_stance mapped to [0, 1] as
	// (1 + stance) / 2: the prior the scenario itself encodes.
	Stance float64 `json:"stance"`
	// B0 is the belief before the first turn and BT the last readable one
	// (B0 if no turn had one); nil when unreadable.
	B0 *float64 `json:"b0"`
	BT *float64 `json:"bt"`
	// Probes0 and ProbesT are the per-probe readings behind B0 and BT, in
	// basis order (nil when unread).
	Probes0 []probe.Reading `json:"probes_0,omitempty"`
	ProbesT []probe.Reading `json:"probes_t,omitempty"`
	// Decision is the persuadee's first terminal decision ("continue" if
	// none) and DecisionTurn its real turn index (-1 if none).
	Decision     decision.Decision `json:"decision"`
	DecisionTurn int               `json:"decision_turn"`
	// Closed is true when the persuadee refused further turns after its
	// terminal decision (the simulator does); the replay of its side then
	// stops there.
	Closed bool        `json:"closed"`
	Turns  []TurnTrace `json:"turns"`
	// Polarity of the real persuadee per real turn (annotated only).
	RealByTurn []Polarity `json:"-"`
}

// Replay feeds sc's real persuader utterances (sc.Outcome.PersuaderUtterances)
// to a fresh session of pee started with seed, through the turn engine
// episode.Run drives (episode.Env, with EnvOptions.PastTerminal): each
// utterance is tagged as in episode.Run and the probe basis is read at
// t = 0 and after every reply (pooled with probe.Belief). The persuadee's
// own replies form its side of the transcript.
//
// Choice: the replay runs through the whole real dialogue: a terminal
// decision is recorded (Trace.Decision) but does not stop it; empty
// persuader turns are skipped. A persuadee that returns an error after it
// has made a terminal decision (the simulator refuses to go on) is marked
// Closed and its side stops there; B_T is then its belief at the decision.
//
// Errors: sc has no persuader utterances; Start, Probe or Reply fail (other
// than after a terminal decision); a persuadee without Prober; a reply
// with an invalid decision. A cancelled ctx returns ctx.Err().
func Replay(ctx context.Context, sc *scenario.Scenario, pee episode.Persuadee, basis probe.Basis, seed uint64) (*Trace, error) {
	if basis == nil {
		basis = probe.Default
	}
	if sc.Outcome == nil || len(sc.Outcome.PersuaderUtterances) == 0 {
		return nil, fmt.Errorf("%s: no persuader utterances to replay", sc.ID)
	}
	tr := &Trace{ScenarioID: sc.ID, Split: sc.Split, User: userOf(sc), Resistance: sc.Hidden.Resistance, Traits: sc.Hidden.Traits,
		Decision: decision.Continue, DecisionTurn: -1,
		Annotated: sc.Outcome.PersuadeeActs != nil, Stance: (1 + sc.Hidden.InitialStance) / 2, Turns: []TurnTrace{}}
	if d := sc.Outcome.Donation; d != nil {
		tr.Donation, tr.Donated = *d, *d > 0
	}
	for _, acts := range sc.Outcome.PersuadeeActs {
		tr.RealByTurn = append(tr.RealByTurn, ActPolarity(acts))
	}
	utts := sc.Outcome.PersuaderUtterances
	env := episode.NewEnv(episode.Config{Tmax: len(utts), Basis: basis}, sc, pee, 0, episode.EnvOptions{
		PastTerminal: true,
		// seed is the persuadee's own (Run derives it as episode.Run does).
		Start: func(ctx context.Context, sc *scenario.Scenario, _ uint64) (episode.PersuadeeSession, error) {
			return pee.Start(ctx, sc, seed)
		},
	})
	err := env.Reset(ctx)
	if err != nil && !isProbe(err) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: start: %w", sc.ID, cause(err))
	}
	if _, ok := env.Session().(episode.Prober); !ok {
		return nil, fmt.Errorf("%s: persuadee %s cannot be probed (no episode.Prober)", sc.ID, pee.Name())
	}
	var r0 episode.StepResult
	if err == nil {
		r0, err = env.Settle(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: probe at t=0: %w", sc.ID, cause(err))
	}
	tr.B0 = r0.Turn.Belief
	tr.BT = tr.B0
	tr.Probes0 = r0.Turn.Probes
	tr.ProbesT = tr.Probes0
	re, _ := env.Session().(Reactor)
	for t, u := range utts {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if strings.TrimSpace(u) == "" {
			continue
		}
		// Each read-out is settled before the next utterance, so a Step
		// error is the reply's and a Settle error the probe's.
		_, err := env.Step(ctx, episode.Utterance{Text: u})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, episode.ErrInvalidDecision) {
				return nil, fmt.Errorf("%s: turn %d: %w", sc.ID, t, cause(err))
			}
			if tr.DecisionTurn >= 0 {
				tr.Closed = true
				break
			}
			return nil, fmt.Errorf("%s: turn %d reply: %w", sc.ID, t, cause(err))
		}
		res, err := env.Settle(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%s: turn %d probe: %w", sc.ID, t, cause(err))
		}
		d := res.Turn.Decision
		tt := TurnTrace{Turn: t, Reply: res.Turn.Persuadee, Decision: d, Belief: res.Turn.Belief, Dense: res.Turn.Dense}
		if tt.Belief != nil {
			tr.BT, tr.ProbesT = tt.Belief, res.Turn.Probes
		}
		if d.Terminal() && tr.DecisionTurn < 0 {
			tr.Decision, tr.DecisionTurn = d, t
		}
		tt.Sim = SimPolarity(d, tt.Dense)
		if re != nil {
			tt.Stated = Polarity(max(-1, min(1, re.ReplyPolarity())))
			if tt.Stated != Neutral {
				tt.Sim = tt.Stated
			}
		}
		if t < len(tr.RealByTurn) {
			tt.Real = tr.RealByTurn[t]
		}
		tr.Turns = append(tr.Turns, tt)
	}
	return tr, nil
}

// cause is the role's own error inside an episode.RoleError (the replay
// names the turn by its index in the real dialogue), else err.
func cause(err error) error {
	if re := (*episode.RoleError)(nil); errors.As(err, &re) {
		return re.Err
	}
	return err
}

// isProbe reports whether err is a failed probe read-out.
func isProbe(err error) bool {
	re := (*episode.RoleError)(nil)
	return errors.As(err, &re) && re.Role == episode.RoleProbe
}

// Options configures Run.
type Options struct {
	// Basis is the probe basis; nil means probe.Default.
	Basis probe.Basis
	// Seed is the run seed; scenario i's persuadee seed is
	// episode.Mix(episode.Seed(Seed, id, 0) ^ 2), as in episode.Run.
	Seed uint64
	// Resamples is the number of user-grouped bootstrap resamples (0
	// means 10,000).
	Resamples int
	// Level is the confidence level (0 means 0.95).
	Level float64
	// Workers is the number of scenarios replayed at once (0 means
	// GOMAXPROCS). Results do not depend on it.
	Workers int
	// Progress, if set, is called after each scenario with the number
	// done so far and the total (from several goroutines, serialised).
	Progress func(done, total int)
}

// fill sets the defaults of the zero fields (see Options).
func (o *Options) fill() {
	if o.Resamples <= 0 {
		o.Resamples = 10000
	}
	if o.Level <= 0 || o.Level >= 1 {
		o.Level = 0.95
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

// AUCStat is one discrimination figure: the AUC of a score (a belief, or
// the baseline's predicted probability) against the real outcome
// "donated > $0".
type AUCStat struct {
	// N scenarios with a readable score and an outcome, from Users
	// distinct users; Positives of them donated; BaseRate = Positives / N.
	N         int     `json:"n"`
	Users     int     `json:"users"`
	Positives int     `json:"positives"`
	BaseRate  float64 `json:"base_rate"`
	// AUC with its user-grouped bootstrap interval [Lo, Hi]; nil when a
	// class is empty.
	AUC *float64 `json:"auc"`
	Lo  *float64 `json:"lo"`
	Hi  *float64 `json:"hi"`
	// MeanPos and MeanNeg are the mean score of donors and non-donors.
	MeanPos *float64 `json:"mean_pos"`
	MeanNeg *float64 `json:"mean_neg"`
}

// Agreement compares per-turn polarities of the simulated and the real
// persuadee on the annotated dialogues.
type Agreement struct {
	// Scenarios is the number of annotated dialogues replayed.
	Scenarios int `json:"scenarios"`
	// RealPolar counts real turns with an annotated polarity, SimPolar
	// replayed turns with a simulated one, Both turns with both, Agree
	// those where they match.
	RealPolar int `json:"real_polar"`
	SimPolar  int `json:"sim_polar"`
	Both      int `json:"both"`
	Agree     int `json:"agree"`
	// Rate = Agree / Both with its Wilson interval [RateLo, RateHi]; nil
	// when Both is 0.
	Rate   *float64 `json:"rate"`
	RateLo *float64 `json:"rate_lo"`
	RateHi *float64 `json:"rate_hi"`
	// Kappa is Cohen's kappa over the Both turns; nil when undefined.
	Kappa *float64 `json:"kappa"`
	// Confusion[i][j] counts turns with real polarity i and simulated j,
	// index 0 positive, 1 negative.
	Confusion [2][2]int `json:"confusion"`
}

// Report is the result of a fidelity run.
type Report struct {
	Persuadee string `json:"persuadee"`
	// Basis holds the ids of the probes read, in basis order.
	Basis     []string `json:"basis"`
	Seed      uint64   `json:"seed"`
	Resamples int      `json:"resamples"`
	Level     float64  `json:"level"`
	// Scenarios replayed (from Users distinct users), and Failed
	// scenarios whose replay errored (FirstError says why).
	Scenarios  int    `json:"scenarios"`
	Users      int    `json:"users"`
	Failed     int    `json:"failed"`
	FirstError string `json:"first_error,omitempty"`
	// Final is B_T against donated > $0 over all replayed scenarios;
	// Initial is B_0 against the same (what the persuadee's profile alone
	// gives before any persuasion); Heldout is B_T within the held-out
	// split. Stance is the scenario's own initial_stance against the same
	// outcome. Baseline is the profile-only logistic regression
	// (BaselineFeatures), each dialogue predicted out of fold by a model
	// fitted on other users only (crossFitBaseline). Every interval is a
	// user-grouped percentile bootstrap.
	Final    AUCStat `json:"final"`
	Initial  AUCStat `json:"initial"`
	Heldout  AUCStat `json:"heldout"`
	Stance   AUCStat `json:"stance"`
	Baseline AUCStat `json:"baseline"`
	// Diffs are the paired AUC differences B_T - B_0 and B_T - baseline,
	// on the same user-grouped resamples.
	Diffs []DiffStat `json:"diffs"`
	// Decisions counts first terminal decisions ("continue" = none), and
	// Closed the sessions that stopped replying after one.
	Decisions map[decision.Decision]int `json:"decisions"`
	Closed    int                       `json:"closed"`
	// Agreement is the per-turn reaction agreement on annotated dialogues
	// (TurnTrace.Sim against Real); AgreementDense the same with the
	// simulated polarity read from the decision and the sign of r_t only
	// (SimPolarity), ignoring what the reply states.
	Agreement      Agreement `json:"agreement"`
	AgreementDense Agreement `json:"agreement_dense"`
	// Types and Traits are the calibration tables: real donor rate against
	// mean simulated belief per resistance type and per tertile of each of
	// CalibrationTraits.
	Types  TypeCalibration    `json:"types"`
	Traits []TraitCalibration `json:"traits"`
	// Sources says where B_T gains or loses the outcome signal: within
	// and between resistance types, and per probe (Sources).
	Sources Sources `json:"sources"`
	// Checks is Targets(), for the JSON form.
	Checks []Target `json:"targets"`
	// Traces holds every replay, in scenario order.
	Traces []*Trace `json:"-"`
}

// Sources splits the discrimination of the final belief by where it comes
// from (docs/fidelity.md, "(a2)"): an AUC of B_T below B_0's can be lost
// between the resistance types (the dialogue moves the types in an order
// the real donor rates do not share), within them (the dialogue's
// movement is unrelated to who donated), or in the pooling of the probes
// (one probe's read-out, flat at its floor, hides another's).
type Sources struct {
	// WithinB0 and WithinBT are the type-stratified AUCs of B_0 and B_T
	// (stats.StratifiedAUC, strata the resistance types): donor/non-donor
	// pairs are compared only within one type, so what separates the
	// types is set aside. WithinDiff is WithinBT - WithinB0. Intervals on
	// the report's user-grouped resamples, paired with its other figures.
	// Their N, Users, BaseRate, MeanPos and MeanNeg are the pooled
	// figures' (the same dialogues); a resistance outside
	// scenario.Resistances is a stratum of its own.
	WithinB0   AUCStat  `json:"within_b0"`
	WithinBT   AUCStat  `json:"within_bt"`
	WithinDiff DiffStat `json:"within_diff"`
	// Types are the AUCs of B_0 and B_T on each type's dialogues alone
	// (points), in scenario.Resistances order, types without a dialogue
	// left out; a type with one class has nil AUCs.
	Types []TypeAUC `json:"types"`
	// Probes are, for a basis of more than one probe, the AUCs of each
	// probe's P(Yes) at t = 0 (point) and at B_T's position (with its
	// interval), in basis order.
	Probes []ProbeAUC `json:"probes,omitempty"`
}

// TypeAUC is one resistance type's AUCs of B_0 and B_T against donated >
// $0, on its N dialogues (Positives donors).
type TypeAUC struct {
	Type      scenario.Resistance `json:"type"`
	N         int                 `json:"n"`
	Positives int                 `json:"positives"`
	B0        *float64            `json:"b0"`
	BT        *float64            `json:"bt"`
}

// ProbeAUC is the AUC of one probe's P(Yes) against donated > $0: Initial
// at t = 0 (nil when undefined), Final where B_T was read.
type ProbeAUC struct {
	Probe   string   `json:"probe"`
	Initial *float64 `json:"initial"`
	Final   AUCStat  `json:"final"`
}

// Run replays every scenario of ss that carries persuader utterances (see
// Replay) against pee and computes the Report. Scenarios whose replay
// fails are counted in Report.Failed and left out of the figures; if all
// fail, Run returns the first error. A cancelled ctx returns ctx.Err().
// Same inputs and Seed give the same Report, whatever opt.Workers.
func Run(ctx context.Context, ss []scenario.Scenario, pee episode.Persuadee, opt Options) (*Report, error) {
	opt.fill()
	if opt.Basis == nil {
		// set once, so the replays and the per-probe rows read one basis
		opt.Basis = probe.Default
	}
	var todo []*scenario.Scenario
	for i := range ss {
		if ss[i].Outcome != nil && len(ss[i].Outcome.PersuaderUtterances) > 0 {
			todo = append(todo, &ss[i])
		}
	}
	if len(todo) == 0 {
		return nil, fmt.Errorf("fidelity: no scenario carries real persuader utterances to replay")
	}
	traces, errs, err := replayAll(ctx, todo, pee, opt)
	if err != nil {
		return nil, err
	}
	rep := &Report{Persuadee: pee.Name(), Seed: opt.Seed, Resamples: opt.Resamples, Level: opt.Level,
		Decisions: map[decision.Decision]int{}}
	var ok []*Trace
	var okSc []*scenario.Scenario
	for i, tr := range traces {
		if errs[i] != nil {
			rep.Failed++
			if rep.FirstError == "" {
				rep.FirstError = errs[i].Error()
			}
			continue
		}
		ok, okSc = append(ok, tr), append(okSc, todo[i])
	}
	if len(ok) == 0 {
		return nil, fmt.Errorf("fidelity: every replay failed; first: %w", errs[0])
	}
	rep.Scenarios, rep.Traces = len(ok), ok
	for _, tr := range ok {
		rep.Decisions[tr.Decision]++
		if tr.Closed {
			rep.Closed++
		}
	}
	crossFitBaseline(ok, okSc)
	bt := func(tr *Trace) *float64 { return tr.BT }
	b0 := func(tr *Trace) *float64 { return tr.B0 }
	base := func(tr *Trace) *float64 { return tr.Baseline }
	stance := func(tr *Trace) *float64 { return &tr.Stance }
	both := func(a, b func(*Trace) *float64) func(*Trace) *float64 {
		return func(tr *Trace) *float64 {
			if a(tr) == nil || b(tr) == nil {
				return nil
			}
			return a(tr)
		}
	}
	// statistics of a resample, by AUC (aucOn, or withinAUCOn for the
	// type-stratified one)
	type aucFn = func([]*Trace, []int, func(*Trace) *float64) float64
	aucBy := func(on aucFn, score func(*Trace) *float64) func([]int) float64 {
		return func(idx []int) float64 { return on(ok, idx, score) }
	}
	diffBy := func(on aucFn, a, b func(*Trace) *float64) func([]int) float64 {
		return func(idx []int) float64 { return on(ok, idx, both(a, b)) - on(ok, idx, both(b, a)) }
	}
	auc := func(score func(*Trace) *float64) func([]int) float64 { return aucBy(aucOn, score) }
	basis := opt.Basis
	for _, p := range basis {
		rep.Basis = append(rep.Basis, p.ID)
	}
	var probeT []func(*Trace) *float64
	if len(basis) > 1 {
		for _, p := range basis {
			probeT = append(probeT, probeScore(p.ID, func(tr *Trace) []probe.Reading { return tr.ProbesT }))
		}
	}
	fns := []func([]int) float64{auc(bt), auc(b0), auc(base), auc(stance), diffBy(aucOn, bt, b0), diffBy(aucOn, bt, base),
		aucBy(withinAUCOn, bt), aucBy(withinAUCOn, b0), diffBy(withinAUCOn, bt, b0)}
	for _, sc := range probeT {
		fns = append(fns, auc(sc))
	}
	g := groupByUser(ok)
	rep.Users = len(g.users)
	// Choice: one set of user-grouped resamples for every figure on all
	// dialogues (seeded from the run seed), so the differences are paired.
	reps := groupedReplicates(g, opt.Resamples, episode.Mix(opt.Seed^0xf1), fns...)
	rep.Final = aucStat(ok, bt, reps[0], opt.Level)
	rep.Initial = aucStat(ok, b0, reps[1], opt.Level)
	rep.Baseline = aucStat(ok, base, reps[2], opt.Level)
	rep.Stance = aucStat(ok, stance, reps[3], opt.Level)
	rep.Diffs = []DiffStat{
		diffStat(ok, "B_T", "B_0", bt, b0, reps[4], opt.Level, aucOn),
		diffStat(ok, "B_T", "baseline", bt, base, reps[5], opt.Level, aucOn),
	}
	rep.Sources = Sources{
		WithinBT:   withinStat(ok, bt, reps[6], opt.Level),
		WithinB0:   withinStat(ok, b0, reps[7], opt.Level),
		WithinDiff: diffStat(ok, "B_T", "B_0", bt, b0, reps[8], opt.Level, withinAUCOn),
		Types:      typeAUCs(ok, b0, bt),
	}
	for k, sc := range probeT {
		p0 := probeScore(basis[k].ID, func(tr *Trace) []probe.Reading { return tr.Probes0 })
		pa := ProbeAUC{Probe: basis[k].ID, Final: aucStat(ok, sc, reps[9+k], opt.Level)}
		if a := aucOn(ok, allIdx(len(ok)), p0); !math.IsNaN(a) {
			pa.Initial = ptr(a)
		}
		rep.Sources.Probes = append(rep.Sources.Probes, pa)
	}
	var held []*Trace
	for _, tr := range ok {
		if tr.Split == scenario.Heldout {
			held = append(held, tr)
		}
	}
	if len(held) > 0 {
		hreps := groupedReplicates(groupByUser(held), opt.Resamples, episode.Mix(opt.Seed^0xf3),
			func(idx []int) float64 { return aucOn(held, idx, bt) })
		rep.Heldout = aucStat(held, bt, hreps[0], opt.Level)
	}
	rep.Agreement = agreement(ok, opt.Level, func(tt TurnTrace) Polarity { return tt.Sim })
	rep.AgreementDense = agreement(ok, opt.Level, func(tt TurnTrace) Polarity { return SimPolarity(tt.Decision, tt.Dense) })
	rep.Types = typeCalibration(ok)
	for _, t := range CalibrationTraits {
		if tc := traitCalibration(ok, t); tc.N > 0 {
			rep.Traits = append(rep.Traits, tc)
		}
	}
	rep.Checks = rep.Targets()
	return rep, nil
}

// replayAll replays every scenario of todo (Replay) on opt.Workers
// goroutines, scenario i with persuadee seed
// episode.Mix(episode.Seed(opt.Seed, id, 0) ^ 2), and returns each trace
// or its error, in todo's order; opt.Progress is called after each. The
// error is ctx.Err() when ctx is cancelled.
func replayAll(ctx context.Context, todo []*scenario.Scenario, pee episode.Persuadee, opt Options) ([]*Trace, []error, error) {
	// A replay's failure is the scenario's own (reported beside the
	// others), so fn never fails: only ctx's end stops the pool.
	type replayed struct {
		trace *Trace
		err   error
	}
	var (
		mu   sync.Mutex
		done int
	)
	res, err := parallel.Map(ctx, len(todo), opt.Workers, func(ctx context.Context, i int) (replayed, error) {
		sc := todo[i]
		seed := episode.Mix(episode.Seed(opt.Seed, sc.ID, 0) ^ 2)
		tr, err := Replay(ctx, sc, pee, opt.Basis, seed)
		if opt.Progress != nil {
			mu.Lock()
			done++
			opt.Progress(done, len(todo))
			mu.Unlock()
		}
		return replayed{tr, err}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	traces := make([]*Trace, len(todo))
	errs := make([]error, len(todo))
	for i, r := range res {
		traces[i], errs[i] = r.trace, r.err
	}
	return traces, errs, nil
}

func ptr(x float64) *float64 { return &x }

// aucStat computes the AUC of score(tr) against tr.Donated over the traces
// with a readable score; reps are its bootstrap replicates.
func aucStat(trs []*Trace, score func(*Trace) *float64, reps []float64, level float64) AUCStat {
	var scores []float64
	var labels []bool
	var sp, sn float64
	var st AUCStat
	users := map[string]bool{}
	for _, tr := range trs {
		b := score(tr)
		if b == nil {
			continue
		}
		users[tr.User] = true
		scores, labels = append(scores, *b), append(labels, tr.Donated)
		if tr.Donated {
			st.Positives++
			sp += *b
		} else {
			sn += *b
		}
	}
	st.N, st.Users = len(scores), len(users)
	if st.N == 0 {
		return st
	}
	st.BaseRate = float64(st.Positives) / float64(st.N)
	if st.Positives > 0 {
		st.MeanPos = ptr(sp / float64(st.Positives))
	}
	if neg := st.N - st.Positives; neg > 0 {
		st.MeanNeg = ptr(sn / float64(neg))
	}
	a, err := stats.AUC(scores, labels)
	if err != nil {
		return st
	}
	st.AUC = ptr(a)
	st.Lo, st.Hi = percentile(reps, level)
	return st
}

// diffStat is AUC(a) - AUC(b) on the traces where both are readable, the
// AUCs computed by on (aucOn, or withinAUCOn for the type-stratified
// one), with the interval of its paired replicates reps.
func diffStat(trs []*Trace, an, bn string, a, b func(*Trace) *float64, reps []float64, level float64, on func([]*Trace, []int, func(*Trace) *float64) float64) DiffStat {
	d := DiffStat{A: an, B: bn}
	var both []int
	users := map[string]bool{}
	for i, tr := range trs {
		if a(tr) != nil && b(tr) != nil {
			both = append(both, i)
			users[tr.User] = true
		}
	}
	d.N, d.Users = len(both), len(users)
	x, y := on(trs, both, a), on(trs, both, b)
	if math.IsNaN(x) || math.IsNaN(y) {
		return d
	}
	d.Diff = ptr(x - y)
	d.Lo, d.Hi = percentile(reps, level)
	return d
}

// agreement compares Sim and Real polarities turn by turn on the annotated
// traces.
func agreement(trs []*Trace, level float64, pol func(TurnTrace) Polarity) Agreement {
	var ag Agreement
	var real, sim []Polarity
	idx := func(p Polarity) int {
		if p == Positive {
			return 0
		}
		return 1
	}
	for _, tr := range trs {
		if !tr.Annotated {
			continue
		}
		ag.Scenarios++
		for _, p := range tr.RealByTurn {
			if p != Neutral {
				ag.RealPolar++
			}
		}
		for _, tt := range tr.Turns {
			simP := pol(tt)
			if simP != Neutral {
				ag.SimPolar++
			}
			if simP == Neutral || tt.Real == Neutral {
				continue
			}
			ag.Both++
			if simP == tt.Real {
				ag.Agree++
			}
			ag.Confusion[idx(tt.Real)][idx(simP)]++
			real, sim = append(real, tt.Real), append(sim, simP)
		}
	}
	if ag.Both == 0 {
		return ag
	}
	ag.Rate = ptr(float64(ag.Agree) / float64(ag.Both))
	// z = Phi^-1((1 + level) / 2) = sqrt(2) erfinv(level); 1.96 at 95%.
	lo, hi := stats.Wilson(ag.Agree, ag.Both, math.Sqrt2*math.Erfinv(level))
	ag.RateLo, ag.RateHi = ptr(lo), ptr(hi)
	if k, err := stats.Kappa(real, sim); err == nil && !math.IsNaN(k) {
		ag.Kappa = ptr(k)
	}
	return ag
}

// Target is one of the simulator's fidelity targets on P4G (Targets)
// checked against a report.
type Target struct {
	// Name says what is asked; Value what was measured; Met whether it
	// reaches the target (false when the figure is undefined).
	Name  string `json:"name"`
	Value string `json:"value"`
	Met   bool   `json:"met"`
}

// Targets checks the report against the simulator's fidelity targets on
// real persuadees: the replayed final belief must carry at least the
// information of the profile alone (the paired lower bound of AUC(B_T) -
// AUC(B_0) above -0.02), and should reach a profile-only logistic
// baseline (stretch; AUC(B_T) at least the baseline's, point estimate);
// the simulated per-turn reactions must agree with the annotated ones
// beyond chance (kappa at least 0.30); and the resistance types must be
// ranked as real donor rates rank them (simulated type ordering equal to
// the real one).
func (r *Report) Targets() []Target {
	var out []Target
	diff := func(b string) *DiffStat {
		for i := range r.Diffs {
			if r.Diffs[i].B == b {
				return &r.Diffs[i]
			}
		}
		return nil
	}
	t := Target{Name: "B_T not below B_0 (paired lower bound > -0.02)", Value: "n/a"}
	if d := diff("B_0"); d != nil && d.Lo != nil {
		t.Value, t.Met = fmt.Sprintf("%+.3f [%+.3f, %+.3f]", *d.Diff, *d.Lo, *d.Hi), *d.Lo > -0.02
	}
	out = append(out, t)
	t = Target{Name: "stretch: AUC B_T >= profile-only baseline", Value: "n/a"}
	if d := diff("baseline"); d != nil && d.Diff != nil {
		t.Value, t.Met = fmt.Sprintf("%+.3f", *d.Diff), *d.Diff >= 0
		if d.Lo != nil {
			t.Value = fmt.Sprintf("%+.3f [%+.3f, %+.3f]", *d.Diff, *d.Lo, *d.Hi)
		}
	}
	out = append(out, t)
	t = Target{Name: "per-turn kappa >= 0.30", Value: "n/a"}
	if k := r.Agreement.Kappa; k != nil {
		t.Value, t.Met = fmt.Sprintf("%.3f", *k), *k >= 0.30
	}
	out = append(out, t)
	out = append(out, Target{Name: "simulated type ordering equals the real one",
		Value: fmt.Sprintf("%d types", len(r.Types.Rows)), Met: r.Types.OrderEqual && len(r.Types.Rows) > 1})
	return out
}

// Table renders the report for a terminal.
func (r *Report) Table() string {
	var b strings.Builder
	f := func(p *float64) string {
		if p == nil {
			return "   n/a"
		}
		return fmt.Sprintf("%6.3f", *p)
	}
	fmt.Fprintf(&b, "Open-loop fidelity on PersuasionForGood: persuadee %s, probes %s, seed %d\n", r.Persuadee, strings.Join(r.Basis, ","), r.Seed)
	fmt.Fprintf(&b, "  replayed %d dialogues of %d users", r.Scenarios, r.Users)
	if r.Failed > 0 {
		fmt.Fprintf(&b, " (%d failed; first: %s)", r.Failed, r.FirstError)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "  (a) score vs real donation > $0: ROC AUC, %.0f%% CI from %d user-grouped bootstrap resamples\n", 100*r.Level, r.Resamples)
	fmt.Fprintf(&b, "      %-34s %5s %5s %6s %6s  %-17s %7s %7s\n", "", "n", "users", "base", "AUC", "CI", "S|don", "S|not")
	row := func(name string, s AUCStat) {
		fmt.Fprintf(&b, "      %-34s %5d %5d %5.1f%% %s  [%s, %s] %s  %s\n", name, s.N, s.Users, 100*s.BaseRate, f(s.AUC), f(s.Lo), f(s.Hi), f(s.MeanPos), f(s.MeanNeg))
	}
	row("initial belief B_0, all", r.Initial)
	row("final belief B_T, all", r.Final)
	row("profile-only logistic (OOF), all", r.Baseline)
	row("profile initial_stance, all", r.Stance)
	if r.Heldout.N > 0 {
		row("final belief B_T, heldout", r.Heldout)
	}
	b.WriteString("      paired differences (same resamples):\n")
	for _, d := range r.Diffs {
		fmt.Fprintf(&b, "      %-34s %5d %5d        %s  [%s, %s]\n", "AUC "+d.A+" - AUC "+d.B, d.N, d.Users, f(d.Diff), f(d.Lo), f(d.Hi))
	}
	src := r.Sources
	b.WriteString("\n  (a2) where B_T gains or loses the signal: within resistance types (donor/non-donor pairs of one type only), per type, per probe\n")
	row("initial belief B_0, within types", src.WithinB0)
	row("final belief B_T, within types", src.WithinBT)
	d := src.WithinDiff
	fmt.Fprintf(&b, "      %-34s %5d %5d        %s  [%s, %s]\n", "AUC B_T - AUC B_0, within types", d.N, d.Users, f(d.Diff), f(d.Lo), f(d.Hi))
	for _, t := range src.Types {
		fmt.Fprintf(&b, "      %-34s %5d       %5.1f%% B_0 %s -> B_T %s\n", "type "+string(t.Type), t.N, 100*float64(t.Positives)/float64(max(1, t.N)), f(t.B0), f(t.BT))
	}
	for _, p := range src.Probes {
		fmt.Fprintf(&b, "      %-34s %5d %5d        %s  [%s, %s]  at t=0 %s\n", "probe "+p.Probe+" P(Yes) at B_T", p.Final.N, p.Final.Users, f(p.Final.AUC), f(p.Final.Lo), f(p.Final.Hi), f(p.Initial))
	}
	b.WriteString("\n")
	ds := []decision.Decision{decision.Accept, decision.Conditional, decision.Reject, decision.Continue}
	parts := make([]string, 0, len(ds))
	for _, d := range ds {
		name := string(d)
		if d == decision.Continue {
			name = "none"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, r.Decisions[d]))
	}
	fmt.Fprintf(&b, "  simulated decisions (first terminal): %s; stopped after deciding: %d\n\n", strings.Join(parts, ", "), r.Closed)
	a := r.Agreement
	fmt.Fprintf(&b, "  (b) per-turn reaction polarity (the reply's stated one, else the sign of r_t) vs annotated persuadee acts (%d annotated dialogues)\n", a.Scenarios)
	fmt.Fprintf(&b, "      turns with a real polarity %d, with a simulated one %d, with both %d\n", a.RealPolar, a.SimPolar, a.Both)
	fmt.Fprintf(&b, "      agreement %s  [%s, %s] (Wilson %.0f%%)   Cohen's kappa %s\n", f(a.Rate), f(a.RateLo), f(a.RateHi), 100*r.Level, f(a.Kappa))
	fmt.Fprintf(&b, "      confusion (real/sim):  +/+ %d  +/- %d  -/+ %d  -/- %d\n",
		a.Confusion[0][0], a.Confusion[0][1], a.Confusion[1][0], a.Confusion[1][1])
	ad := r.AgreementDense
	fmt.Fprintf(&b, "      from the decision and sign of r_t only: both %d, agreement %s, kappa %s; confusion +/+ %d  +/- %d  -/+ %d  -/- %d\n\n",
		ad.Both, f(ad.Rate), f(ad.Kappa), ad.Confusion[0][0], ad.Confusion[0][1], ad.Confusion[1][0], ad.Confusion[1][1])
	fmt.Fprintf(&b, "  (c) calibration: real donor rate vs mean simulated belief\n")
	fmt.Fprintf(&b, "      %-12s %5s %7s %8s %8s\n", "type", "n", "real", "mean B_T", "mean B_0")
	for _, c := range r.Types.Rows {
		fmt.Fprintf(&b, "      %-12s %5d %6.1f%%   %s   %s\n", c.Group, c.N, 100*c.RealRate, f(c.MeanBT), f(c.MeanB0))
	}
	eq := "no"
	if r.Types.OrderEqual {
		eq = "yes"
	}
	fmt.Fprintf(&b, "      order by real rate %v, by mean B_T %v: equal %s\n\n", r.Types.RealOrder, r.Types.SimOrder, eq)

	fmt.Fprintf(&b, "      %-12s %-8s %13s %5s %7s %8s\n", "trait", "tertile", "range", "n", "real", "mean B_T")
	for _, t := range r.Traits {
		for i, c := range t.Rows {
			name := ""
			if i == 0 {
				name = t.Trait
			}
			fmt.Fprintf(&b, "      %-12s %-8s %6.1f..%-6.1f %5d %6.1f%%   %s\n", name, c.Group, *c.Min, *c.Max, c.N, 100*c.RealRate, f(c.MeanBT))
		}
		same := "no"
		if t.SameDirection {
			same = "yes"
		}
		fmt.Fprintf(&b, "      %-12s high-low: real %+.3f, sim %+.4f, same direction %s\n", "", t.RealSlope, t.SimSlope, same)
	}
	b.WriteString("\n  fidelity targets:\n")
	for _, t := range r.Targets() {
		met := "missed"
		if t.Met {
			met = "met"
		}
		fmt.Fprintf(&b, "      %-48s %-26s %s\n", t.Name, t.Value, met)
	}
	return b.String()
}
