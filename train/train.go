// Package train fits a planner (package planner) with Probe-RPO (Probe-RPO
// paper, §3): each step plays G rollouts of each of a batch of scenarios
// against a persuadee, turns the outcomes and the probed belief changes into
// group-relative advantages with package grpo, and takes PPO-clipped Adam
// steps on the policy through a GoMLX autodiff graph (pure-Go simplego
// backend). It writes atomic checkpoints, resumes from them exactly, stores
// every rollout and per-step metrics in the run store, and prints a line per
// step. docs/training.md describes the objective, defaults and metrics.
package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// Config is a training run's configuration; it is stored in every
// checkpoint and in the run record.
type Config struct {
	// GRPO holds λ, G, scenarios per step, epochs, learning rate, β, entropy
	// coefficient, clip ε, ε, w_strategy and the seed (the Probe-RPO paper's
	// Table 3 defaults, except LearningRate: see DefaultConfig).
	GRPO grpo.Config `json:"grpo"`
	// Features is the planner's feature layout.
	Features planner.FeatureSpec `json:"features"`
	// Hidden is the planner's hidden width (0 = linear).
	Hidden int `json:"hidden"`
	// Updates is the number of Adam steps on each step's batch, >= 1;
	// the first is on-policy (ratio 1), later ones are where the PPO clip
	// acts. Choice: 4 (the Probe-RPO paper does not state it; 1-4 is common for
	// GRPO with μ iterations, DeepSeekMath §4.1).
	Updates int `json:"updates"`
	// MaxSteps caps the number of steps, >= 0; 0 means Epochs × ⌊n/S⌋ for
	// n training scenarios and S scenarios per step (Probe-RPO paper: 2 × ⌊1468 /
	// 16⌋ = 182).
	MaxSteps int `json:"max_steps"`
	// Tmax is the episode length cap (Probe-RPO paper: 10).
	Tmax int `json:"tmax"`
	// CheckpointEvery writes a checkpoint every N steps, >= 0 (0: only at
	// the end).
	CheckpointEvery int `json:"checkpoint_every"`
	// ShuffleBeliefs trains on the belief-shuffled control: before the
	// advantages of a step are computed, every rollout's dense rewards
	// are replaced by another group's of the same length
	// (grpo.ShuffleDense, seeded by the run seed and the step). A control
	// for the λ study (docs/results.md), never a training method.
	ShuffleBeliefs bool `json:"shuffle_beliefs,omitempty"`
}

// DefaultLearningRate is the planner's default Adam step size.
//
// Choice: 1e-2, not the Probe-RPO paper's 1e-5 (Table 3). That value is for
// fine-tuning a 4B-parameter LLM whose initial policy is already fluent;
// the planner is a ~2k-parameter network trained from a uniform policy,
// where Adam's per-parameter step of about lr moves logits by ~1e-5 per
// step and nothing would be learnt in a few hundred steps.
const DefaultLearningRate = 1e-2

// DefaultConfig returns grpo.DefaultConfig with LearningRate
// DefaultLearningRate, planner.DefaultFeatureSpec, hidden
// planner.DefaultHidden, 4 updates per step, no step cap, Tmax 10 and a
// checkpoint every 10 steps.
func DefaultConfig() Config {
	g := grpo.DefaultConfig()
	g.LearningRate = DefaultLearningRate
	return Config{GRPO: g, Features: planner.DefaultFeatureSpec(), Hidden: planner.DefaultHidden,
		Updates: 4, Tmax: episode.DefaultTmax, CheckpointEvery: 10}
}

// Validate checks every field (grpo.Config.Validate for GRPO).
func (c Config) Validate() error {
	if err := c.GRPO.Validate(); err != nil {
		return err
	}
	if err := c.Features.Validate(); err != nil {
		return err
	}
	switch {
	case c.Hidden < 0 || c.Hidden > 4096:
		return fmt.Errorf("train: hidden = %d, want 0..4096", c.Hidden)
	case c.Updates < 1 || c.Updates > grpo.MaxUpdates:
		return fmt.Errorf("train: updates = %d, want 1..%d", c.Updates, grpo.MaxUpdates)
	case c.MaxSteps < 0 || c.MaxSteps > grpo.MaxSteps:
		return fmt.Errorf("train: max_steps = %d, want 0..%d", c.MaxSteps, grpo.MaxSteps)
	case c.Tmax < 1 || c.Tmax > episode.MaxTmax:
		return fmt.Errorf("train: tmax = %d, want 1..%d", c.Tmax, episode.MaxTmax)
	case c.CheckpointEvery < 0 || c.CheckpointEvery > grpo.MaxSteps:
		return fmt.Errorf("train: checkpoint_every = %d, want 0..%d", c.CheckpointEvery, grpo.MaxSteps)
	}
	return nil
}

// Options are the parts of a run that are not configuration: what to
// train against and where results go.
type Options struct {
	// Scenarios are the training scenarios (e.g. the train splits of
	// arena and p4g), in a fixed order; each epoch visits a seeded
	// permutation.
	Scenarios []scenario.Scenario
	// Persuadee is the training partner (sim, or any episode.Persuadee).
	Persuadee episode.Persuadee
	// Basis is the probe basis (nil: probe.Default).
	Basis probe.Basis
	// Judge, when set, rates each finished rollout's strategy
	// (episode.Config.Judge, R_strategy in [-1, 1]); R_out = R_goal +
	// w·R_strategy (Episode.OutcomeReward). nil, or a judge failure on an
	// episode, means R_out = R_goal there.
	Judge episode.Judge
	// Rewarder, when set, scores each finished rollout with a reward spec
	// (episode.Config.Rewarder; REPO paper): the rollout's outcome reward
	// is then the spec's composed R (grpo.Outcome).
	Rewarder episode.Rewarder
	// Workers bounds concurrent rollouts (<= 0: 1). Results do not depend
	// on it.
	Workers int
	// Store and RunID, when set, receive every rollout episode
	// (SaveEpisode) and each step's metrics (SaveMetrics).
	Store store.Store
	RunID string
	// Checkpoint is the checkpoint file path ("" = none).
	Checkpoint string
	// Log, when set, receives one line per step (FormatMetrics).
	Log io.Writer
}

// state is the trainer's part of a checkpoint (planner.Checkpoint.Training).
type state struct {
	Config Config `json:"config"`
	// Step is the number of steps completed.
	Step int `json:"step"`
	// RunID is the store run the episodes and metrics belong to.
	RunID string `json:"run_id,omitempty"`
	// Scenarios fingerprints the training scenario list (FNV-1a of the
	// IDs in order), so a resume on another list is refused.
	Scenarios string `json:"scenarios"`
	// Optimizer is Adam's state (moments and step counters).
	Optimizer map[string]tensorState `json:"optimizer"`
}

// Trainer runs Probe-RPO steps. It is not safe for concurrent use.
type Trainer struct {
	cfg    Config
	o      Options
	policy *planner.Policy
	ref    *planner.Policy
	m      *model
	step   int
	fp     string
}

// New starts a fresh run: the initial policy is planner.NewPolicy(cfg.
// Features, cfg.Hidden, cfg.GRPO.Seed), which is also the reference
// policy. Errors: an invalid cfg, no scenarios, no persuadee.
func New(cfg Config, o Options) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	pol, err := planner.NewPolicy(cfg.Features, cfg.Hidden, cfg.GRPO.Seed)
	if err != nil {
		return nil, err
	}
	m, err := newModel(pol, cfg.GRPO, nil)
	if err != nil {
		return nil, err
	}
	return &Trainer{cfg: cfg, o: o, policy: pol, ref: pol.Clone(), m: m, fp: scenario.Fingerprint(o.Scenarios)}, nil
}

// Resume continues the run saved in the checkpoint at path: weights,
// reference policy, Adam state, configuration and step count are
// restored, so the continued run equals an uninterrupted one (same
// rollouts, same weights, same metrics). o.RunID, when empty, is taken
// from the checkpoint. Errors: an unreadable checkpoint, one without
// training state, or a different scenario list.
func Resume(path string, o Options) (*Trainer, error) {
	ck, err := planner.Load(path)
	if err != nil {
		return nil, err
	}
	var st state
	if len(ck.Training) == 0 || ck.Reference == nil {
		return nil, fmt.Errorf("train: resume %s: the checkpoint has no training state (an evaluation-only file)", path)
	}
	if err := json.Unmarshal(ck.Training, &st); err != nil {
		return nil, fmt.Errorf("train: resume %s: training state: %w", path, err)
	}
	if err := st.Config.Validate(); err != nil {
		return nil, fmt.Errorf("train: resume %s: %w", path, err)
	}
	if ck.Policy.Spec != st.Config.Features || ck.Policy.Hidden != st.Config.Hidden {
		return nil, fmt.Errorf("train: resume %s: policy shape differs from its configuration", path)
	}
	if o.RunID == "" {
		o.RunID = st.RunID
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if fp := scenario.Fingerprint(o.Scenarios); fp != st.Scenarios {
		return nil, fmt.Errorf("train: resume %s: the training scenarios differ from the checkpoint's (fingerprint %s, saved %s)", path, fp, st.Scenarios)
	}
	m, err := newModel(ck.Policy, st.Config.GRPO, st.Optimizer)
	if err != nil {
		return nil, fmt.Errorf("train: resume %s: %w", path, err)
	}
	return &Trainer{cfg: st.Config, o: o, policy: ck.Policy, ref: ck.Reference, m: m, step: st.Step, fp: st.Scenarios}, nil
}

// RunIDOf returns the store run ID saved in the training checkpoint at
// path ("" when it has none). Errors: an unreadable checkpoint or one
// without training state.
func RunIDOf(path string) (string, error) {
	ck, err := planner.Load(path)
	if err != nil {
		return "", err
	}
	var st state
	if len(ck.Training) == 0 {
		return "", fmt.Errorf("train: %s has no training state (an evaluation-only file)", path)
	}
	if err := json.Unmarshal(ck.Training, &st); err != nil {
		return "", fmt.Errorf("train: %s: training state: %w", path, err)
	}
	return st.RunID, nil
}

func (o Options) check() error {
	if len(o.Scenarios) == 0 {
		return errors.New("train: no training scenarios")
	}
	if o.Persuadee == nil {
		return errors.New("train: no persuadee")
	}
	if o.Store != nil && o.RunID == "" {
		return errors.New("train: a store needs a run ID")
	}
	return nil
}

// Config returns the run's configuration.
func (t *Trainer) Config() Config { return t.cfg }

// Policy returns a copy of the current policy.
func (t *Trainer) Policy() *planner.Policy { return t.policy.Clone() }

// Reference returns a copy of the reference (initial) policy.
func (t *Trainer) Reference() *planner.Policy { return t.ref.Clone() }

// SetMaxSteps changes the step cap (Config.MaxSteps, >= 0), e.g. to
// extend a resumed run; later checkpoints store the new value. Errors: a
// negative n.
func (t *Trainer) SetMaxSteps(n int) error {
	if n < 0 {
		return fmt.Errorf("train: max_steps = %d, want >= 0", n)
	}
	t.cfg.MaxSteps = n
	return nil
}

// StepsDone returns the number of steps completed.
func (t *Trainer) StepsDone() int { return t.step }

// StepsPerEpoch is max(1, ⌊n/S⌋) for n scenarios and S per step; a
// partial last batch is dropped (Probe-RPO paper: 182 steps = 2 × ⌊1468/16⌋).
func (t *Trainer) StepsPerEpoch() int {
	return max(1, len(t.o.Scenarios)/t.cfg.GRPO.ScenariosPerStep)
}

// TotalSteps is MaxSteps when set, else Epochs × StepsPerEpoch.
func (t *Trainer) TotalSteps() int {
	if t.cfg.MaxSteps > 0 {
		return t.cfg.MaxSteps
	}
	return t.cfg.GRPO.Epochs * t.StepsPerEpoch()
}

// batch returns the scenario indices of step s: epoch e = s / StepsPerEpoch
// visits the permutation of PCG(seed, e), S scenarios a step (all n when n
// < S).
func (t *Trainer) batch(s int) []int {
	n := len(t.o.Scenarios)
	per := t.StepsPerEpoch()
	e, k := s/per, s%per
	r := rand.New(rand.NewPCG(t.cfg.GRPO.Seed, episode.Mix(uint64(e)+0xe90c)))
	perm := r.Perm(n)
	size := min(t.cfg.GRPO.ScenariosPerStep, n)
	return perm[k*size : (k+1)*size]
}

// Metrics are one step's figures (docs/training.md). Shares are in [0, 1].
type Metrics struct {
	Step     int
	Episodes int
	// MeanROut is the mean R_out of scored rollouts; Accept, Conditional,
	// Pending, Reject and Failed are terminal shares of all rollouts.
	MeanROut, Accept, Conditional, Pending, Reject, Failed float64
	// MeanTurns is the mean number of persuader turns.
	MeanTurns float64
	// DeadShare is the share of groups whose R_out are all equal;
	// SeparatedShare the share of those dead groups that the dense term
	// still separates (0 when none is dead) (the Probe-RPO paper's Figure 7a-b).
	DeadShare, SeparatedShare float64
	// DeadLengthCorr is the mean, over dead groups, of the correlation
	// between the turn-1 dense advantage and episode length
	// (grpo.GroupStats.LengthCorr); DeadShortestTop the share of
	// mixed-length dead groups whose shortest rollout gets the top turn-1
	// dense advantage (GroupStats.ShortestTop). Both NaN when no group
	// qualifies. They say whether the dense term separates dead groups by
	// belief or merely by length.
	DeadLengthCorr, DeadShortestTop float64
	// MeanAbsAOut and MeanAbsLambdaADense are the mean |A_out| and
	// |λ·A_dense| over all turns of the step (Figure 7c).
	MeanAbsAOut, MeanAbsLambdaADense float64
	// Loss, Surrogate, KL (k3, to the reference) and Entropy are the
	// batch means at the start of the step (before its first update);
	// ClipFrac is the share of clipped samples at the last update.
	Loss, Surrogate, KL, Entropy, ClipFrac float64
}

// Map returns the metrics by name, for store.SaveMetrics. Undefined
// (NaN) metrics are left out, so the step simply lacks them.
func (m Metrics) Map() map[string]float64 {
	out := map[string]float64{
		"episodes": float64(m.Episodes), "mean_r_out": m.MeanROut, "accept": m.Accept, "conditional": m.Conditional,
		"pending": m.Pending, "reject": m.Reject, "failed": m.Failed, "mean_turns": m.MeanTurns,
		"dead_share": m.DeadShare, "separated_share": m.SeparatedShare,
		"dead_len_corr": m.DeadLengthCorr, "dead_shortest_top": m.DeadShortestTop,
		"mean_abs_a_out": m.MeanAbsAOut, "mean_abs_lambda_a_dense": m.MeanAbsLambdaADense,
		"loss": m.Loss, "surrogate": m.Surrogate, "kl": m.KL, "entropy": m.Entropy, "clip_frac": m.ClipFrac,
	}
	maps.DeleteFunc(out, func(_ string, v float64) bool { return math.IsNaN(v) })
	return out
}

// FormatMetrics is the live line of one step.
func FormatMetrics(m Metrics, total int) string {
	return fmt.Sprintf("step %d/%d  eps %d  R_out %+.3f  acc %5.1f%%  dead %5.1f%%  sep|dead %5.1f%%  KL %.4f  H %.3f  |A_out| %.3f  |λA_dense| %.3f  clip %.2f",
		m.Step+1, total, m.Episodes, m.MeanROut, 100*m.Accept, 100*m.DeadShare, 100*m.SeparatedShare,
		m.KL, m.Entropy, m.MeanAbsAOut, m.MeanAbsLambdaADense, m.ClipFrac)
}

// rollout is one played episode and the planner's decisions in it.
type rollout struct {
	ep        *episode.Episode
	decisions []planner.Decision
}

// recording wraps a planner so that the trainer gets the session of one
// rollout.
type recording struct {
	p    *planner.Planner
	sess *planner.Session
}

func (r *recording) Name() string { return r.p.Name() }
func (r *recording) Start(ctx context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	s, err := r.p.StartSession(ctx, pub, seed)
	r.sess = s
	return s, err
}

// Step plays one training step (the next one) and updates the policy. It
// returns the step's metrics after storing them, its episodes and, when
// due, a checkpoint. Errors: ctx cancelled (nothing of the step is kept),
// a store or checkpoint error, or a graph error.
func (t *Trainer) Step(ctx context.Context) (Metrics, error) {
	s := t.step
	G := t.cfg.GRPO.G
	idx := t.batch(s)
	pl, err := planner.New(t.policy)
	if err != nil {
		return Metrics{}, err
	}
	ecfg := episode.Config{Tmax: t.cfg.Tmax, Basis: t.o.Basis, Judge: t.o.Judge, Rewarder: t.o.Rewarder}
	rolls, err := parallel.Map(ctx, len(idx)*G, t.o.Workers, func(ctx context.Context, j int) (rollout, error) {
		sc := &t.o.Scenarios[idx[j/G]]
		ro := s*G + j%G
		rec := &recording{p: pl}
		ep, err := episode.Run(ctx, ecfg, sc, rec, t.o.Persuadee, episode.Seed(t.cfg.GRPO.Seed, sc.ID, ro))
		if err != nil {
			return rollout{}, err
		}
		ep.RunID, ep.Rollout = t.o.RunID, ro
		r := rollout{ep: ep}
		if rec.sess != nil {
			r.decisions = rec.sess.Decisions()
		}
		return r, nil
	})
	if err != nil {
		return Metrics{}, err
	}
	met, batch, err := t.advantages(s, idx, rolls)
	if err != nil {
		return Metrics{}, err
	}
	if len(batch) > 0 {
		first, last, err := t.m.steps(ctx.Err, batch, t.cfg.Updates)
		if err != nil {
			return Metrics{}, err
		}
		met.Loss, met.Surrogate, met.KL, met.Entropy = first.Loss, first.Surrogate, first.KL, first.Entropy
		met.ClipFrac = last.ClipFrac
		t.m.policyInto(t.policy)
	}
	t.step++
	bg := context.WithoutCancel(ctx)
	if t.o.Store != nil {
		for _, r := range rolls {
			if err := t.o.Store.SaveEpisode(bg, t.o.RunID, r.ep); err != nil && !errors.Is(err, store.ErrDuplicate) {
				// ErrDuplicate: a resumed run replays steps whose episodes
				// the interrupted run already stored (identical by
				// determinism).
				return met, err
			}
		}
		if err := t.o.Store.SaveMetrics(bg, t.o.RunID, s, met.Map()); err != nil {
			return met, err
		}
	}
	if t.o.Log != nil {
		fmt.Fprintln(t.o.Log, FormatMetrics(met, t.TotalSteps()))
	}
	if t.o.Checkpoint != "" && (t.step == t.TotalSteps() || t.cfg.CheckpointEvery > 0 && t.step%t.cfg.CheckpointEvery == 0) {
		if err := t.Save(t.o.Checkpoint); err != nil {
			return met, err
		}
	}
	return met, nil
}

// advantages scores the step's rollouts, computes each group's
// advantages and statistics with grpo.Analyze, and builds the batch.
func (t *Trainer) advantages(s int, idx []int, rolls []rollout) (Metrics, []Sample, error) {
	G := t.cfg.GRPO.G
	met := Metrics{Step: s, Episodes: len(rolls)}
	var batch []Sample
	scored := 0
	var lp []float64
	rOuts := make([][]float64, len(idx))
	denses := make([][][]float64, len(idx))
	for gi := range idx {
		group := rolls[gi*G : (gi+1)*G]
		rOut := make([]float64, G)
		dense := make([][]float64, G)
		for i, r := range group {
			ep := r.ep
			met.MeanTurns += float64(len(ep.Turns))
			switch ep.Terminal {
			case decision.TermAccept:
				met.Accept++
			case decision.TermConditional:
				met.Conditional++
			case decision.TermReject:
				met.Reject++
			case decision.TermFailed:
				met.Failed++
			default:
				met.Pending++
			}
			rOut[i] = grpo.Outcome(ep, t.cfg.GRPO.StrategyWeight)
			if !math.IsNaN(rOut[i]) {
				met.MeanROut += rOut[i]
				scored++
			}
			dense[i] = grpo.DenseRewards(ep)[:min(len(ep.Turns), len(r.decisions))]
		}
		rOuts[gi], denses[gi] = rOut, dense
	}
	if t.cfg.ShuffleBeliefs {
		denses = grpo.ShuffleDense(denses, episode.Mix(t.cfg.GRPO.Seed^episode.Mix(uint64(s)+0x5f1e)))
	}
	var tally grpo.DeadTally
	for gi := range idx {
		group := rolls[gi*G : (gi+1)*G]
		rOut, dense := rOuts[gi], denses[gi]
		adv, st, err := grpo.Analyze(rOut, dense, t.cfg.GRPO)
		if err != nil {
			return met, nil, fmt.Errorf("train: step %d group %s: %w", s, t.o.Scenarios[idx[gi]].ID, err)
		}
		gt := 0
		for i, r := range group {
			if math.IsNaN(rOut[i]) {
				continue
			}
			for k := range adv[i] {
				d := r.decisions[k]
				lp = t.ref.LogProbs(lp, d.Features)
				batch = append(batch, Sample{Features: d.Features, Action: d.Action, OldLogp: d.Logp, RefLogp: lp[d.Action], Adv: adv[i][k]})
			}
			gt += len(adv[i])
		}
		// Figure 7c terms: Analyze's per-turn means, weighted by the
		// group's turns.
		tally.Add(st, gt)
	}
	n := float64(len(rolls))
	met.Accept /= n
	met.Conditional /= n
	met.Pending /= n
	met.Reject /= n
	met.Failed /= n
	met.MeanTurns /= n
	if scored > 0 {
		met.MeanROut /= float64(scored)
	}
	met.DeadShare = tally.DeadShare()
	if tally.Dead > 0 {
		met.SeparatedShare = tally.SeparatedShare()
	}
	met.DeadLengthCorr, met.DeadShortestTop = tally.LengthCorr(), tally.ShortestTopShare()
	if tally.Turns > 0 {
		met.MeanAbsAOut, met.MeanAbsLambdaADense = tally.MeanAbsOut(), tally.MeanAbsDense()
	}
	return met, batch, nil
}

// Save writes a checkpoint of the run to path (atomically): policy,
// reference, configuration, step count, run ID, scenario fingerprint and
// Adam state.
func (t *Trainer) Save(path string) error {
	opt, err := t.m.optimizerState()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(state{Config: t.cfg, Step: t.step, RunID: t.o.RunID, Scenarios: t.fp, Optimizer: opt})
	if err != nil {
		return fmt.Errorf("train: checkpoint: %w", err)
	}
	return planner.Save(path, &planner.Checkpoint{Policy: t.policy, Reference: t.ref, Training: raw})
}

// Run plays the remaining steps up to TotalSteps. It returns the metrics
// of the steps it played. A cancelled ctx stops between steps (or drops
// the step in progress) and returns ctx.Err(); the last checkpoint stays
// valid for Resume.
func (t *Trainer) Run(ctx context.Context) ([]Metrics, error) {
	var out []Metrics
	for t.step < t.TotalSteps() {
		m, err := t.Step(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}
