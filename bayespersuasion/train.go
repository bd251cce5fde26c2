package bayespersuasion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"math/rand/v2"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/atomicfile"
	"github.com/persuarena/persuarena/internal/filelimit"
)

// NumFeatures is the length of Planner.Theta: weights of an item's value
// jump ΔV, its belief change Δb and an item bias, then the stop logit.
const NumFeatures = 4

// Planner is a trained disclosure policy: a softmax over the holding,
// untold items and "stop", with logit θ0·ΔV + θ1·Δb + θ2 for an item
// (ΔV and Δb: the change in the sender's value V and in the belief in the
// claim if the Bayesian receiver heard that item next) and θ3 for stop.
// The features do not name claims, so one policy plays every claim.
type Planner struct {
	Theta [NumFeatures]float64 `json:"theta"`
	// Sample draws from the softmax instead of taking its most probable
	// choice (training uses sampling; Eval plays the argmax).
	Sample bool `json:"-"`
}

// Name returns "planner".
func (p *Planner) Name() string { return "planner" }

// Begin implements Strategy.
func (p *Planner) Begin(c *Claim, w World, rng *rand.Rand) Plan {
	return planFunc(func(told []bool, post []float64) (int, bool) {
		ch, _ := p.choices(c, w, told, post)
		k := p.pick(ch, rng)
		if ch[k].item < 0 {
			return 0, false
		}
		return ch[k].item, true
	})
}

type choice struct {
	item  int // -1: stop
	feat  [NumFeatures]float64
	logit float64
	prob  float64
}

// choices lists stop and every holding untold item with features and
// softmax probabilities.
func (p *Planner) choices(c *Claim, w World, told []bool, post []float64) ([]choice, error) {
	v0, b0 := c.Value(post), c.Belief(post)
	ch := []choice{{item: -1, feat: [NumFeatures]float64{0, 0, 0, 1}}}
	for _, i := range candidates(w, told) {
		q, err := c.PosteriorFrom(post, []int{i})
		if err != nil {
			continue
		}
		ch = append(ch, choice{item: i, feat: [NumFeatures]float64{c.Value(q) - v0, c.Belief(q) - b0, 1, 0}})
	}
	mx := math.Inf(-1)
	for k := range ch {
		for j, f := range ch[k].feat {
			ch[k].logit += p.Theta[j] * f
		}
		mx = math.Max(mx, ch[k].logit)
	}
	z := 0.0
	for k := range ch {
		ch[k].prob = math.Exp(ch[k].logit - mx)
		z += ch[k].prob
	}
	for k := range ch {
		ch[k].prob /= z
	}
	return ch, nil
}

func (p *Planner) pick(ch []choice, rng *rand.Rand) int {
	if !p.Sample {
		best := 0
		for k := range ch {
			if ch[k].prob > ch[best].prob {
				best = k
			}
		}
		return best
	}
	u := rng.Float64()
	for k := range ch {
		if u < ch[k].prob {
			return k
		}
		u -= ch[k].prob
	}
	return len(ch) - 1
}

// rollout plays one sampled disclosure episode of c in w against the
// Bayesian receiver's model and returns the reward V(post) - V(prior)
// and the summed score-function gradient of log π over its choices.
func (p *Planner) rollout(c *Claim, w World, rng *rand.Rand) (float64, [NumFeatures]float64) {
	var grad [NumFeatures]float64
	told := make([]bool, len(c.Evidence))
	post := append([]float64(nil), c.Prior...)
	for range len(c.Evidence) + 1 {
		ch, _ := p.choices(c, w, told, post)
		k := p.pick(ch, rng)
		for j := range grad {
			grad[j] += ch[k].feat[j]
			for _, o := range ch {
				grad[j] -= o.prob * o.feat[j]
			}
		}
		if ch[k].item < 0 {
			break
		}
		told[ch[k].item] = true
		post, _ = c.PosteriorFrom(post, []int{ch[k].item})
	}
	return c.Value(post) - c.PriorValue(), grad
}

// TrainConfig configures Train.
type TrainConfig struct {
	Claims []*Claim
	// Steps is the number of policy-gradient steps; 0 means 200.
	Steps int
	// Group is the number of rollouts per claim and world in a step (the
	// group whose rewards are normalised into advantages); 0 means 8.
	Group int
	// Batch is the number of (claim, world) groups per step; 0 means 16.
	Batch int
	// LR is the learning rate; 0 means 0.5.
	LR   float64
	Seed uint64
	// Checkpoint, when set, is a JSON file written atomically every Every
	// steps (0 means 10) and at the end; Train resumes from it when it
	// exists, and a resumed run ends exactly where an uninterrupted one
	// would.
	Checkpoint string
	Every      int
}

// Checkpoint is Train's saved state.
type Checkpoint struct {
	Step    int     `json:"step"`
	Planner Planner `json:"planner"`
	// Curve is the mean reward (posterior value - prior value) of the
	// sampled rollouts at each step so far.
	Curve []float64 `json:"curve"`
	Seed  uint64    `json:"seed"`
	// Settings identifies what else the run depends on (claim ids, Group,
	// Batch, LR; trainSettings): a resume with other settings is refused,
	// since it would match neither run. Empty in checkpoints written
	// before it existed, which resume as before.
	Settings string `json:"settings,omitempty"`
}

// trainSettings is Checkpoint.Settings of cfg (defaults filled in): the
// FNV-1a 64 hash of the claim ids, group, batch and learning rate.
func trainSettings(cfg TrainConfig) string {
	h := fnv.New64a()
	for _, c := range cfg.Claims {
		fmt.Fprintf(h, "%s\x00", c.ID)
	}
	fmt.Fprintf(h, "group %d batch %d lr %g", cfg.Group, cfg.Batch, cfg.LR)
	return fmt.Sprintf("%016x", h.Sum64())
}

// Train fits a Planner by policy gradient with reward = posterior value
// minus prior value (the Strategic Persuasion paper's reward): each step
// draws Batch (claim, world) pairs, samples Group rollouts of each, turns
// each group's rewards into advantages with grpo.OutcomeAdvantages
// (group-normalised, as in GRPO) and moves θ along the mean of
// advantage × ∇log π. θ starts at 0 (uniform choices). Step s draws from
// its own seed (Seed, s), so resuming from a checkpoint reproduces an
// uninterrupted run. Errors: no claims; a checkpoint that does not read
// or was written with another seed, claim list, group, batch or learning
// rate; a failed write; a cancelled ctx.
func Train(ctx context.Context, cfg TrainConfig) (*Checkpoint, error) {
	if len(cfg.Claims) == 0 {
		return nil, errors.New("bayes: train: no claims")
	}
	if cfg.Steps <= 0 {
		cfg.Steps = 200
	}
	if cfg.Group <= 0 {
		cfg.Group = 8
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 16
	}
	if cfg.LR == 0 {
		cfg.LR = 0.5
	}
	if cfg.Every <= 0 {
		cfg.Every = 10
	}
	settings := trainSettings(cfg)
	ck := &Checkpoint{Seed: cfg.Seed, Settings: settings}
	if cfg.Checkpoint != "" {
		raw, err := filelimit.ReadFile(cfg.Checkpoint, filelimit.Data)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("bayes: train: %w", err)
		default:
			if err := json.Unmarshal(raw, ck); err != nil {
				return nil, fmt.Errorf("bayes: train: checkpoint %s: %w", cfg.Checkpoint, err)
			}
			if ck.Seed != cfg.Seed {
				return nil, fmt.Errorf("bayes: train: checkpoint %s was written with seed %d, not %d", cfg.Checkpoint, ck.Seed, cfg.Seed)
			}
			if ck.Settings != "" && ck.Settings != settings {
				return nil, fmt.Errorf("bayes: train: checkpoint %s was written with other claims, group, batch or learning rate", cfg.Checkpoint)
			}
			ck.Settings = settings
		}
	}
	save := func() error {
		if cfg.Checkpoint == "" {
			return nil
		}
		raw, err := json.MarshalIndent(ck, "", " ")
		if err != nil {
			return err
		}
		return atomicfile.Write(cfg.Checkpoint, raw)
	}
	gcfg := grpo.DefaultConfig()
	for ck.Step < cfg.Steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rng := rand.New(rand.NewPCG(cfg.Seed, episode.Mix(uint64(ck.Step)+1)))
		p := ck.Planner
		p.Sample = true
		var grad [NumFeatures]float64
		mean := 0.0
		for range cfg.Batch {
			c := cfg.Claims[rng.IntN(len(cfg.Claims))]
			w := DrawWorld(c, rng.Uint64())
			rs := make([]float64, cfg.Group)
			gs := make([][NumFeatures]float64, cfg.Group)
			for g := range cfg.Group {
				rs[g], gs[g] = p.rollout(c, w, rng)
				mean += rs[g]
			}
			adv, err := grpo.OutcomeAdvantages(rs, gcfg)
			if err != nil {
				return nil, fmt.Errorf("bayes: train: %w", err)
			}
			for g := range gs {
				for j := range grad {
					grad[j] += adv[g] * gs[g][j]
				}
			}
		}
		n := float64(cfg.Batch * cfg.Group)
		for j := range grad {
			ck.Planner.Theta[j] += cfg.LR * grad[j] / n
		}
		ck.Curve = append(ck.Curve, mean/n)
		ck.Step++
		if ck.Step%cfg.Every == 0 {
			if err := save(); err != nil {
				return nil, fmt.Errorf("bayes: train: %w", err)
			}
		}
	}
	if err := save(); err != nil {
		return nil, fmt.Errorf("bayes: train: %w", err)
	}
	return ck, nil
}

// LoadPlanner reads the Planner of a Train checkpoint. Errors name path.
func LoadPlanner(path string) (*Planner, error) {
	raw, err := filelimit.ReadFile(path, filelimit.Data)
	if err != nil {
		return nil, fmt.Errorf("bayes: planner: %w", err)
	}
	var ck Checkpoint
	if err := json.Unmarshal(raw, &ck); err != nil {
		return nil, fmt.Errorf("bayes: planner: %s: %w", path, err)
	}
	return &ck.Planner, nil
}
