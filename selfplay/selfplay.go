// Package selfplay is MASP's alternating self-play at the planner level
// (MASP paper, Algorithm 1, §3.4-3.5): the system
// planner (package planner) plays a trainable user-side policy (User)
// that chooses a reaction class each turn from its BDI state and the
// persuader's acts. Each cycle first updates the planner against the
// frozen user with r_S = w_prog Δs - w_inf ||ẑ - z||²_A, then the user
// against the frozen planner with r_U = -w_prog Δs + w_rat q, each with
// group-relative advantages of discounted returns-to-go (package grpo)
// and a PPO-clipped update with a KL penalty to that side's warm-start
// reference (package train's Optimizer), and finally refits the
// history-only student mentalizer on new teacher labels. Dialogues are
// played with masp.Play (the closed-loop protocol, rewards and judges);
// checkpoints are atomic and a resumed run equals an uninterrupted one.
// docs/masp.md ("Self-play") describes it.
package selfplay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/train"
)

// Config is a self-play run's configuration; it is stored in the
// checkpoint and a resumed run uses the stored one.
type Config struct {
	// Cycles is K, the number of outer iterations (>= 1).
	Cycles int `json:"cycles"`
	// T is the turn budget of each dialogue (MASP paper: 8).
	T int `json:"t"`
	// G is the number of rollouts per scenario, the group (>= 2).
	G int `json:"g"`
	// ScenariosPerStep is the number of scenarios (groups) per update
	// step (>= 1).
	ScenariosPerStep int `json:"scenarios_per_step"`
	// SystemSteps and UserSteps are the update steps of each side per cycle
	// (< 4096; SystemSteps >= 1). UserSteps 0 skips the user phase: the
	// planner then trains against the fixed warm-start user (the MASP paper's
	// "planner-only" ablation).
	SystemSteps int `json:"system_steps"`
	UserSteps   int `json:"user_steps"`
	// Updates is the number of Adam steps on each step's batch (>= 1);
	// the first is on-policy, the PPO clip acts from the second on.
	Updates int `json:"updates"`
	// System and User are the two sides' optimiser settings: LearningRate,
	// KLBeta (β of the k3 KL to that side's reference), EntropyCoef,
	// ClipEps, Eps and StdDDOF of the group normalisation are read; the
	// other fields are not used.
	System grpo.Config `json:"system"`
	User   grpo.Config `json:"user"`
	// UserHidden is the user policy's hidden width (0 = linear).
	UserHidden int `json:"user_hidden"`
	// UserWarmSteps is the number of full-batch behaviour-cloning steps
	// of the user's warm start (>= 0; 0 leaves it uniform).
	UserWarmSteps int `json:"user_warm_steps"`
	// Weights are w_prog, w_inf, w_rat and γ (masp.DefaultWeights; its KL
	// field is not read: System.KLBeta and User.KLBeta are).
	Weights masp.Weights `json:"weights"`
	// Mind names the simulator variant of the user's mind: "default",
	// "soft" or "hard" (sim.Variant).
	Mind string `json:"mind"`
	// WithheldYes adds one rule to the rule-based rationality judge
	// (masp.SimRationalityJudge) for the user policy: once the user's mind
	// (the simulator) has reached accept or conditional, a reply that does
	// not accept or give a conditional yes is NOT_RATIONAL ("withheld the
	// yes its mind had reached"). See WithheldYesJudge.
	WithheldYes bool `json:"withheld_yes"`
	// StudentLambda is the student's ridge penalty (<= 0: bdi.DefaultLambda).
	StudentLambda float64 `json:"student_lambda"`
	// Seed drives all randomness: the user's initial weights, scenario
	// choice, every dialogue.
	Seed uint64 `json:"seed"`
}

// DefaultConfig returns the defaults: 4 cycles of T = 8, G 4, 16
// scenarios per step, 4 system and 4 user steps a cycle, 4 Adam updates a
// step; both sides with learning rate train.DefaultLearningRate (1e-2),
// KL β 0.05 (masp.DefaultWeights.KL, released rl/grpo.py), entropy 0.01,
// clip 0.2, ε 1e-6, sample std (grpo.DefaultConfig); a user network with
// 16 hidden units warm-started by 300 behaviour-cloning steps; the reward
// weights masp.DefaultWeights (w_prog 1, w_inf 0.25, w_rat 0.5, γ 0.97);
// the default simulator as the user's mind; the withheld-yes rule on;
// student λ 1; seed 1.
//
// Choice: cycle, step and width sizes are the project's (the MASP paper's Table 12
// is for LoRA-tuned LLMs); they keep a run to minutes on 2 cores.
func DefaultConfig() Config {
	side := grpo.DefaultConfig()
	side.LearningRate = train.DefaultLearningRate
	side.KLBeta = masp.DefaultWeights.KL
	return Config{Cycles: 4, T: masp.DefaultT, G: 4, ScenariosPerStep: 16, SystemSteps: 4, UserSteps: 4, Updates: 4,
		System: side, User: side, UserHidden: 16, UserWarmSteps: 300, Weights: masp.DefaultWeights,
		Mind: "default", WithheldYes: true, StudentLambda: bdi.DefaultLambda, Seed: 1}
}

// Validate checks every field and names the first bad one.
func (c Config) Validate() error {
	bad := func(f string, v any, want string) error { return fmt.Errorf("selfplay: %s = %v, want %s", f, v, want) }
	switch {
	case c.Cycles < 1 || c.Cycles > grpo.MaxSteps:
		return bad("cycles", c.Cycles, fmt.Sprintf("1..%d", grpo.MaxSteps))
	case c.T < 1 || c.T > episode.MaxTmax:
		return bad("t", c.T, fmt.Sprintf("1..%d", episode.MaxTmax))
	case c.G < 2 || c.G > grpo.MaxG:
		return bad("g", c.G, fmt.Sprintf("2..%d", grpo.MaxG))
	case c.ScenariosPerStep < 1 || c.ScenariosPerStep > grpo.MaxScenariosPerStep:
		return bad("scenarios_per_step", c.ScenariosPerStep, fmt.Sprintf("1..%d", grpo.MaxScenariosPerStep))
	case c.SystemSteps < 1 || c.SystemSteps >= 4096:
		return bad("system_steps", c.SystemSteps, "1..4095")
	case c.UserSteps < 0 || c.UserSteps >= 4096:
		return bad("user_steps", c.UserSteps, "0..4095")
	case c.Updates < 1 || c.Updates > grpo.MaxUpdates:
		return bad("updates", c.Updates, fmt.Sprintf("1..%d", grpo.MaxUpdates))
	case c.UserHidden < 0 || c.UserHidden > 4096:
		return bad("user_hidden", c.UserHidden, "0..4096")
	case c.UserWarmSteps < 0 || c.UserWarmSteps > grpo.MaxSteps:
		return bad("user_warm_steps", c.UserWarmSteps, fmt.Sprintf("0..%d", grpo.MaxSteps))
	case !(c.Weights.Gamma > 0 && c.Weights.Gamma <= 1):
		return bad("weights.gamma", c.Weights.Gamma, "a value in (0, 1]")
	}
	for _, w := range []float64{c.Weights.Prog, c.Weights.Inf, c.Weights.Rat} {
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return bad("weights", c.Weights, "finite weights >= 0")
		}
	}
	for _, side := range []struct {
		name string
		g    grpo.Config
	}{{"system", c.System}, {"user", c.User}} {
		g := side.g
		g.G, g.ScenariosPerStep, g.Epochs, g.StrategyWeight, g.Lambda = 2, 1, 1, 0, 0
		if err := g.Validate(); err != nil {
			return fmt.Errorf("selfplay: %s: %w", side.name, err)
		}
	}
	if _, err := sim.Variant(c.Mind); err != nil {
		return fmt.Errorf("selfplay: mind: %w", err)
	}
	return nil
}

// Options are the parts of a run that are not configuration.
type Options struct {
	// Scenarios are the training scenarios (e.g. the p4g train split), in
	// a fixed order; they become masp.ScenarioCases.
	Scenarios []scenario.Scenario
	// Planner is the initial system policy, also its KL reference (the
	// "warm start" of Algorithm 1 line 4, e.g. a planner trained against
	// soft users); nil means a fresh uniform planner (planner.NewPolicy
	// with the default features and hidden width, seeded by Config.Seed).
	// Resume ignores it.
	Planner *planner.Policy
	// StudentCache, when set, is the "real dialogue" BDI cache the
	// student is fitted on and mixed into every refresh; nil means one is
	// generated: the built-in script and random persuaders against the
	// default simulator on the training scenarios (as persuarena masp
	// cache does).
	StudentCache *bdi.Cache
	// Workers bounds concurrent dialogues (<= 0: 1). Results do not
	// depend on it.
	Workers int
	// Dir, when set, receives the checkpoints after every cycle
	// (CheckpointFile, PlannerFile, UserFile), written atomically.
	Dir string
	// Store and RunID, when set, receive each cycle's metrics
	// (store.SaveMetrics, step = cycle index).
	Store store.Store
	RunID string
	// Log, when set, receives one line per cycle and phase.
	Log io.Writer
	// Meta is opaque caller data stored in the checkpoint (persuarena
	// selfplay keeps its scenario sets and split there); Resume keeps the
	// stored value when o.Meta is nil. ReadInfo returns it.
	Meta json.RawMessage
}

// Phase names one part of a cycle.
type Phase string

// The three parts of a cycle, in order (Algorithm 1 lines 6-18).
const (
	PhaseSystem  Phase = "system"
	PhaseUser    Phase = "user"
	PhaseStudent Phase = "student"
)

// Runner runs self-play cycles. It is not safe for concurrent use.
type Runner struct {
	cfg     Config
	o       Options
	cases   []*masp.Case
	fp      string
	cycle   int // cycles completed
	sys     *planner.Policy
	sysRef  *planner.Policy
	sysOpt  *train.Optimizer
	usr     *Net
	usrRef  *Net
	usrOpt  *train.Optimizer
	student *bdi.Student
	base    []bdi.Example
	enc     embed.Encoder
	mind    sim.Config

	// Test hooks: onPhase is called before each phase; wrapSystem wraps
	// the planner persuader of every self-play dialogue.
	onPhase    func(cycle int, p Phase)
	wrapSystem func(episode.Persuader) episode.Persuader
}

// New starts a run: the planner from o.Planner (or fresh), the student
// fitted on the real-dialogue cache (Algorithm 1 line 3), the user policy
// warm-started by behaviour cloning of its mind (line 4); the two warm
// starts are the frozen references. Errors: an invalid cfg, no scenarios,
// an invalid planner, a store without run ID, or a rollout error.
func New(ctx context.Context, cfg Config, o Options) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r, err := newRunner(cfg, o)
	if err != nil {
		return nil, err
	}
	if o.Planner != nil {
		if err := o.Planner.Validate(); err != nil {
			return nil, fmt.Errorf("selfplay: initial planner: %w", err)
		}
		r.sys = o.Planner.Clone()
	} else if r.sys, err = planner.NewPolicy(planner.DefaultFeatureSpec(), planner.DefaultHidden, cfg.Seed); err != nil {
		return nil, err
	}
	r.sysRef = r.sys.Clone()
	if r.sysOpt, err = newSysOpt(r.sys, cfg.System, nil); err != nil {
		return nil, err
	}
	if err := r.loadBase(ctx); err != nil {
		return nil, err
	}
	if r.student, err = bdi.FitStudent(r.base, bdi.DefaultAlpha, cfg.StudentLambda); err != nil {
		return nil, fmt.Errorf("selfplay: initial student: %w", err)
	}
	if r.usr, err = NewNet(NumFeatures, cfg.UserHidden, NumReactions, cfg.Seed); err != nil {
		return nil, err
	}
	if err := r.warmUser(ctx); err != nil {
		return nil, err
	}
	r.usrRef = r.usr.Clone()
	if r.usrOpt, err = trainOptimizer(r.usr, cfg, nil); err != nil {
		return nil, err
	}
	return r, nil
}

func newRunner(cfg Config, o Options) (*Runner, error) {
	if len(o.Scenarios) == 0 {
		return nil, errors.New("selfplay: no training scenarios")
	}
	if o.Store != nil && o.RunID == "" {
		return nil, errors.New("selfplay: a store needs a run ID")
	}
	mind, err := sim.Variant(cfg.Mind)
	if err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, o: o, cases: masp.ScenarioCases(o.Scenarios), fp: scenario.Fingerprint(o.Scenarios),
		enc: embed.NewMemo(embed.NewHashedTFIDF(embed.DefaultHashDim)), mind: mind}, nil
}

func newSysOpt(p *planner.Policy, g grpo.Config, state json.RawMessage) (*train.Optimizer, error) {
	return train.NewOptimizer(p.Spec.Dim(), p.Hidden, planner.NumActions, p.Weights(), g, state)
}

func trainOptimizer(n *Net, cfg Config, state json.RawMessage) (*train.Optimizer, error) {
	return train.NewOptimizer(NumFeatures, cfg.UserHidden, NumReactions, n.Weights(), cfg.User, state)
}

// Config returns the run's configuration.
func (r *Runner) Config() Config { return r.cfg }

// RunID returns the store run the metrics go to ("" without a store).
func (r *Runner) RunID() string { return r.o.RunID }

// CyclesDone returns the number of completed cycles.
func (r *Runner) CyclesDone() int { return r.cycle }

// SetCycles changes the number of cycles (>= 1), e.g. to extend a resumed
// run; later checkpoints store it.
func (r *Runner) SetCycles(n int) error {
	if n < 1 {
		return fmt.Errorf("selfplay: cycles = %d, want >= 1", n)
	}
	r.cfg.Cycles = n
	return nil
}

// Planner returns a copy of the current system policy.
func (r *Runner) Planner() *planner.Policy { return r.sys.Clone() }

// PlannerReference returns a copy of the planner's KL reference (its
// warm start).
func (r *Runner) PlannerReference() *planner.Policy { return r.sysRef.Clone() }

// User returns a copy of the current user network.
func (r *Runner) User() *Net { return r.usr.Clone() }

// UserReference returns a copy of the user's KL reference (its
// behaviour-cloned warm start).
func (r *Runner) UserReference() *Net { return r.usrRef.Clone() }

// Student returns the current student mentalizer (not a copy).
func (r *Runner) Student() *bdi.Student { return r.student }

// loadBase builds the student's real-dialogue examples.
func (r *Runner) loadBase(ctx context.Context) error {
	c := r.o.StudentCache
	if c == nil {
		var err error
		if c, err = r.realCache(ctx); err != nil {
			return err
		}
	}
	ex, err := examples(ctx, c, r.enc)
	if err != nil {
		return fmt.Errorf("selfplay: student cache: %w", err)
	}
	if len(ex) == 0 {
		return errors.New("selfplay: the student cache has no states")
	}
	r.base = ex
	return nil
}

// realCache plays script and random against the default simulator on the
// training cases (one dialogue each, seed Config.Seed) and labels them
// with the simulator teacher: the stand-in for the MASP paper's real dialogue
// prefixes.
func (r *Runner) realCache(ctx context.Context) (*bdi.Cache, error) {
	var pers []episode.Persuader
	for _, n := range []string{"script", "random"} {
		p, err := baseline.New(n)
		if err != nil {
			return nil, err
		}
		pers = append(pers, p)
	}
	users := []masp.User{{Name: "sim", Persuadee: sim.New(sim.DefaultConfig()), Success: masp.SimSuccessJudge{Rule: masp.DefaultSuccessRule}}}
	res, err := masp.Evaluate(ctx, masp.EvalConfig{T: r.cfg.T, Seed: r.cfg.Seed, Workers: r.o.Workers, Mind: &masp.Mind{Encoder: r.enc}}, r.cases, pers, users, nil)
	if err != nil {
		return nil, fmt.Errorf("selfplay: student dialogues: %w", err)
	}
	var ds []*masp.Dialogue
	for p := range res.Dialogues {
		ds = append(ds, res.Dialogues[p][0]...)
	}
	return masp.CacheRecords(r.caseMap(), ds), nil
}

func (r *Runner) caseMap() map[string]*masp.Case {
	m := make(map[string]*masp.Case, len(r.cases))
	for _, c := range r.cases {
		m[c.ID] = c
	}
	return m
}

// examples turns a cache into student examples: every turn record, plus
// each session's initial state with the empty history. Choice: the
// initial examples teach the student the turn-1 estimate ẑ_1 = M(h_0)
// that the inference term of r_S compares with z_1 (cached P4G sessions
// have no opening, so h_0 is empty).
func examples(ctx context.Context, c *bdi.Cache, enc embed.Encoder) ([]bdi.Example, error) {
	ex, err := c.Examples(ctx, enc, bdi.DefaultAlpha)
	if err != nil {
		return nil, err
	}
	for _, s := range c.Sessions {
		z, err := bdi.Vector(ctx, s.Initial, enc, bdi.DefaultAlpha)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", s.Session, err)
		}
		ex = append(ex, bdi.Example{History: nil, Z: z})
	}
	return ex, nil
}

// warmUser fits the user network by behaviour cloning (Algorithm 1 line
// 4): a Mimic user (which replies as its mind, the simulator, would)
// plays the initial planner and the built-in script and random persuaders
// on every training case, and the network takes UserWarmSteps Adam steps
// on the negative log-likelihood of the mind's classes (minibatches of
// warmBatch turns).
func (r *Runner) warmUser(ctx context.Context) error {
	if r.cfg.UserWarmSteps == 0 {
		return nil
	}
	mimic, err := NewUser(r.usr, r.mind, Mimic())
	if err != nil {
		return err
	}
	pl, err := planner.New(r.sys)
	if err != nil {
		return err
	}
	pers := []episode.Persuader{pl}
	for _, n := range []string{"script", "random"} {
		p, err := baseline.New(n)
		if err != nil {
			return err
		}
		pers = append(pers, p)
	}
	var batch []train.Sample
	for pi, p := range pers {
		idx := make([]int, len(r.cases))
		for i := range idx {
			idx[i] = i
		}
		rolls, err := r.play(ctx, idx, 1, p, mimic, 0x7761726d00+pi, false) // "warm"
		if err != nil {
			return err
		}
		for _, ro := range rolls {
			for _, d := range ro.usr {
				if d.Label >= 0 {
					batch = append(batch, train.Sample{Features: d.Features, Action: int(d.Label)})
				}
			}
		}
	}
	if len(batch) == 0 {
		return errors.New("selfplay: no warm-start turns")
	}
	opt, err := train.NewOptimizer(NumFeatures, r.cfg.UserHidden, NumReactions, r.usr.Weights(), r.cfg.User, nil)
	if err != nil {
		return err
	}
	// Minibatches of warmBatch turns, drawn without replacement from a
	// seeded permutation per pass (full-batch steps on ~10^4 turns cost
	// ~0.2 s each on simplego).
	rng := rand.New(rand.NewPCG(r.cfg.Seed, 0x7761726d62)) // "warmb"
	var perm []int
	pos := 0
	mb := make([]train.Sample, 0, warmBatch)
	var first, last float64
	for k := range r.cfg.UserWarmSteps {
		if err := ctx.Err(); err != nil {
			return err
		}
		mb = mb[:0]
		for len(mb) < min(warmBatch, len(batch)) {
			if pos == len(perm) {
				perm, pos = rng.Perm(len(batch)), 0
			}
			mb = append(mb, batch[perm[pos]])
			pos++
		}
		l, err := opt.StepNLL(mb)
		if err != nil {
			return err
		}
		if k == 0 {
			first = l
		}
		last = l
	}
	opt.WeightsInto(r.usr.Weights())
	if r.o.Log != nil {
		fmt.Fprintf(r.o.Log, "user warm start: %d turns, %d steps of %d, minibatch NLL %.3f -> %.3f nats (uniform %.3f)\n",
			len(batch), r.cfg.UserWarmSteps, min(warmBatch, len(batch)), first, last, math.Log(NumReactions))
	}
	return nil
}

// warmBatch is the minibatch size of the user's warm start. Choice: 512.
const warmBatch = 512

// rollout is one self-play dialogue and both sides' decisions.
type rollout struct {
	dl  *masp.Dialogue
	sys []planner.Decision
	usr []UserDecision
}

// decider is a persuader session that records the decisions it took, in
// turn order (a planner session does); self-play trains on them.
type decider interface {
	Decisions() []planner.Decision
}

var _ decider = (*planner.Session)(nil)

// recPersuader keeps the session its persuader started when that session
// is a decider (checked at run time); any other session plays without
// recorded decisions.
type recPersuader struct {
	p    episode.Persuader
	sess decider
}

func (r *recPersuader) Name() string { return r.p.Name() }
func (r *recPersuader) Start(ctx context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	s, err := r.p.Start(ctx, pub, seed)
	if d, ok := s.(decider); ok && err == nil {
		r.sess = d
	}
	return s, err
}

type recUser struct {
	u    *User
	sess *UserSession
}

func (r *recUser) Name() string { return r.u.Name() }
func (r *recUser) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	s, err := r.u.StartSession(ctx, sc, seed)
	r.sess = s
	if err != nil {
		return nil, err
	}
	return s, nil
}

// mind returns the mind's terminal decision of the recorded session
// (decision.Continue before it starts).
func (r *recUser) mind() decision.Decision {
	if r.sess == nil {
		return decision.Continue
	}
	return r.sess.MindDecision()
}

// WithheldYesJudge is the rationality judge of self-play's user: Base
// (masp.SimRationalityJudge) plus one rule. When Mind reports that the
// user's mind (the simulator) has reached accept or conditional, at this
// turn or before, a reply whose decision is neither accept nor
// conditional is NOT_RATIONAL ("withheld the yes its mind had reached").
//
// Choice: the rule-based judge was written for the simulator, which
// always says the yes it has reached; a trained user can withhold it, and
// Eq. 16 then pays it +w_rat per turn for stalling (every continuing turn
// is judged rational) while a yes ends the dialogue. Seed 003 asks the
// judge whether a reply is rational "under the current mental state"; a
// refusal of the yes one's own state has reached is not. Config.WithheldYes
// turns the rule off.
type WithheldYesJudge struct {
	Base masp.RationalityJudge
	// Mind returns the mind's terminal decision so far (decision.Continue
	// when none).
	Mind func() decision.Decision
}

// Rationality implements masp.RationalityJudge.
func (j WithheldYesJudge) Rationality(ctx context.Context, ex *masp.Exchange) (int, string) {
	if j.Mind != nil {
		switch m := j.Mind(); m {
		case decision.Accept, decision.Conditional:
			if d := ex.Reply.Decision; d != decision.Accept && d != decision.Conditional {
				return masp.NotRational, "withheld the yes its mind had reached (" + string(m) + ")"
			}
		}
	}
	return j.Base.Rationality(ctx, ex)
}

// play runs G dialogues of each case in idx between per and user with
// masp.Play (simulator success and rationality judges; BDI states from
// the user's latent state; with mind, the student's ẑ and the rewards),
// dialogue g of case i with seed episode.Seed(Seed, case id, block·G + g).
// The result is in (case, g) order whatever the worker count.
func (r *Runner) play(ctx context.Context, idx []int, G int, per episode.Persuader, user *User, block int, mind bool) ([]rollout, error) {
	base := masp.Config{T: r.cfg.T, Success: masp.SimSuccessJudge{Rule: masp.DefaultSuccessRule}, Rationality: masp.SimRationalityJudge{}}
	if mind {
		base.Mind = &masp.Mind{Encoder: r.enc, Student: r.student, Weights: r.cfg.Weights}
	}
	out := make([]rollout, len(idx)*G)
	err := parallel.Each(ctx, len(out), r.o.Workers, func(ctx context.Context, j int) error {
		c := r.cases[idx[j/G]]
		rp := &recPersuader{p: per}
		ru := &recUser{u: user}
		cfg := base
		if r.cfg.WithheldYes {
			cfg.Rationality = WithheldYesJudge{Base: masp.SimRationalityJudge{}, Mind: ru.mind}
		}
		seed := episode.Seed(r.cfg.Seed, c.ID, block*G+j%G)
		dl, err := masp.Play(ctx, cfg, c, rp, ru, seed)
		if err != nil {
			return err
		}
		out[j].dl = dl
		if rp.sess != nil {
			out[j].sys = rp.sess.Decisions()
		}
		if ru.sess != nil {
			out[j].usr = ru.sess.Decisions()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Advantages returns the group-relative advantage of every turn of one
// group of G rollouts (the MASP paper's Eq. 23 with returns-to-go): rewards[i][t]
// is rollout i's reward at its turn t (NaN = missing, counted 0), the
// return-to-go is G_{i,t} = Σ_{t' >= t} γ^{t'-t} r_{i,t'}
// (masp.Discounted of the suffix), and A_{i,t} normalises G_{·,t} over
// the rollouts that reached turn t with grpo.OutcomeAdvantages ((G -
// mean)/(std + ε); fewer than two values or ties give 0). A nil row (a
// failed dialogue) gets no advantages and is left out.
//
// Choice: normalising per turn index compares a turn's prospects with the
// other rollouts' at the same point of the dialogue; pooling all turns
// would favour early turns, whose returns sum more rewards. The paper
// leaves the grouping of "rollout steps" open (Appendix B.4).
//
// Errors: those of grpo.OutcomeAdvantages (a bad ε or ddof, an infinite
// return).
func Advantages(rewards [][]float64, gamma float64, cfg grpo.Config) ([][]float64, error) {
	n := 0
	rtg := make([][]float64, len(rewards))
	for i, row := range rewards {
		if row == nil {
			continue
		}
		rs := make([]float64, len(row))
		for t, v := range row {
			if !math.IsNaN(v) {
				rs[t] = v
			}
		}
		rtg[i] = make([]float64, len(row))
		for t := range row {
			rtg[i][t] = masp.Discounted(rs[t:], gamma)
		}
		n = max(n, len(row))
	}
	adv := make([][]float64, len(rewards))
	for i, row := range rewards {
		if row != nil {
			adv[i] = make([]float64, len(row))
		}
	}
	col := make([]float64, len(rewards))
	for t := range n {
		for i := range rewards {
			col[i] = math.NaN()
			if rtg[i] != nil && t < len(rtg[i]) {
				col[i] = rtg[i][t]
			}
		}
		a, err := grpo.OutcomeAdvantages(col, cfg)
		if err != nil {
			return nil, err
		}
		for i := range rewards {
			if rtg[i] != nil && t < len(rtg[i]) {
				adv[i][t] = a[i]
			}
		}
	}
	return adv, nil
}

// rewardsOf returns each rollout's per-turn r_S (system) or r_U (user);
// nil for a failed dialogue.
func rewardsOf(rolls []rollout, system bool) [][]float64 {
	out := make([][]float64, len(rolls))
	for i, ro := range rolls {
		if ro.dl == nil || ro.dl.Error != "" {
			continue
		}
		row := make([]float64, len(ro.dl.Turns))
		for t, tr := range ro.dl.Turns {
			p := tr.RU
			if system {
				p = tr.RS
			}
			row[t] = math.NaN()
			if p != nil {
				row[t] = *p
			}
		}
		out[i] = row
	}
	return out
}

// step picks the scenarios of (cycle, phase, step): ScenariosPerStep
// distinct indices from a PCG permutation seeded by the run seed and the
// triple (all of them when there are fewer).
func (r *Runner) step(cycle int, p Phase, k int) []int {
	ph := uint64(1)
	if p == PhaseUser {
		ph = 2
	}
	rng := rand.New(rand.NewPCG(r.cfg.Seed, episode.Mix(uint64(cycle)<<20|ph<<16|uint64(k))))
	perm := rng.Perm(len(r.cases))
	return perm[:min(r.cfg.ScenariosPerStep, len(perm))]
}

// rolloutBase is the rollout index block of (cycle, phase, step), so every
// self-play dialogue of a run has its own episode seed.
func rolloutBase(cycle int, p Phase, k int) int {
	ph := 0
	if p == PhaseUser {
		ph = 1
	}
	return (cycle*2+ph)*4096 + k
}
