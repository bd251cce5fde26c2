// Package study runs PersuArena's reusable experiments: today the λ study
// of Probe-RPO (PersuArena paper, Table 9 and Figure 7), which trains a
// planner for every arm (λ, dense-advantage mode, control) and seed,
// evaluates each checkpoint on the same held-out episodes, and tests the
// paper's claim that the dense term helps against controls that keep its
// length or its belief statistics but not its credit assignment.
// `persuarena study lambda` drives it and writes its tables into
// docs/results.md; docs/results.md also states the verdict rule.
package study

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/atomicfile"
	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/train"
)

// Arm is one training configuration of the λ study.
type Arm struct {
	// ID names the arm in files and on the command line (letters,
	// digits, '.', '-').
	ID string `json:"id"`
	// Lambda is λ in A = A_out + λ·A_dense, >= 0.
	Lambda float64 `json:"lambda"`
	// Mode is the dense-advantage mode (grpo.DenseMode).
	Mode grpo.DenseMode `json:"dense_mode"`
	// Shuffle trains on the belief-shuffled control
	// (train.Config.ShuffleBeliefs).
	Shuffle bool `json:"shuffle_beliefs"`
	// Note says what the arm is for, in a few words.
	Note string `json:"note"`
}

// Treatment is the ID of the arm the verdict is about: λ = 0.5 with the
// default (scaled) dense term, the Probe-RPO paper's best λ.
const Treatment = "lambda0.5"

// Comparators are the IDs the treatment must beat for the verdict
// "reproduced": outcome-only GRPO and the two controls.
var Comparators = []string{"lambda0", "length-only", "shuffled"}

// LambdaArms returns the study's default arms: λ ∈ {0, 0.5, 1} with the
// scaled dense term, the two controls at λ = 0.5 (length-only term;
// belief-shuffled scaled term), and the pooled (DeepSeekMath) form at
// λ = 0.5, which the project used before the scaled default.
func LambdaArms() []Arm {
	return []Arm{
		{ID: "lambda0", Lambda: 0, Mode: grpo.DenseScaled, Note: "outcome-only GRPO"},
		{ID: "lambda0.5", Lambda: 0.5, Mode: grpo.DenseScaled, Note: "Probe-RPO, scaled dense term (default)"},
		{ID: "lambda1", Lambda: 1, Mode: grpo.DenseScaled, Note: "Probe-RPO, scaled, λ = 1"},
		{ID: "length-only", Lambda: 0.5, Mode: grpo.DenseLengthOnly, Note: "control: -m·(turns left)/s alone"},
		{ID: "shuffled", Lambda: 0.5, Mode: grpo.DenseScaled, Shuffle: true, Note: "control: another group's belief trajectories"},
		{ID: "pooled", Lambda: 0.5, Mode: grpo.DensePooled, Note: "old default: DeepSeekMath pooled form (length-biased)"},
	}
}

// Options configures Lambda.
type Options struct {
	// Arms to train (default LambdaArms); IDs must be distinct.
	Arms []Arm
	// Seeds are the training seeds, one run per arm and seed (the
	// study is designed for at least 5; fewer are accepted).
	Seeds []uint64
	// Train is the base training configuration; each run overrides λ,
	// the dense mode, ShuffleBeliefs and the seed. Zero value:
	// train.DefaultConfig() (the Probe-RPO paper's Table 3 schedule).
	Train train.Config
	// TrainScenarios are the training scenarios (the train splits).
	TrainScenarios []scenario.Scenario
	// Heldout are the evaluation sets (the held-out splits), each
	// scenario evaluated Rollouts times with episode seeds from EvalSeed,
	// the same for every checkpoint (paired).
	Heldout  []eval.Set
	Rollouts int
	EvalSeed uint64
	// Persuadee is trained and evaluated against.
	Persuadee episode.Persuadee
	// Workers bounds concurrent episodes (results do not depend on it).
	Workers int
	// Dir, when set, keeps each finished run's cell (JSON) and final
	// checkpoint there; a later call with the same Dir and options reuses
	// them, so an interrupted study resumes where it stopped.
	Dir string
	// Log receives a line per finished run.
	Log io.Writer
	// Resamples is the number of bootstrap replicates (0: 10,000).
	Resamples int
}

// Cell is one trained and evaluated run: an arm at a seed.
type Cell struct {
	Arm  string `json:"arm"`
	Seed uint64 `json:"seed"`
	// Steps is the number of training steps played.
	Steps int `json:"steps"`
	// Outcomes are the held-out episodes in a fixed order (set, scenario,
	// rollout), the same for every cell, so cells pair by index.
	Outcomes []Outcome `json:"outcomes"`
	// Training figures, means over steps: dead-group share, separated
	// share of dead groups, corr(turn-1 dense advantage, length) of dead
	// groups, shortest-on-top share of mixed-length dead groups (NaN
	// stored as null when never defined), rollout turns.
	DeadShare      float64  `json:"dead_share"`
	SeparatedShare float64  `json:"separated_share"`
	DeadLenCorr    *float64 `json:"dead_len_corr"`
	ShortestTop    *float64 `json:"dead_shortest_top"`
	TrainTurns     float64  `json:"train_turns"`
	// Seconds is the wall time of training and evaluation.
	Seconds float64 `json:"seconds"`
	// Fingerprint identifies the options the cell was made with; a cached
	// cell with another fingerprint is recomputed.
	Fingerprint string `json:"fingerprint"`
}

// Outcome is one held-out episode's result.
type Outcome struct {
	Set      string            `json:"set"`
	Scenario string            `json:"scenario"`
	Rollout  int               `json:"rollout"`
	Terminal decision.Terminal `json:"terminal"`
	Turns    int               `json:"turns"`
	// BT is the final belief (NaN when unreadable: stored as null).
	BT *float64 `json:"b_t"`
}

// Lambda runs (or resumes) the λ study and returns its result. Errors:
// bad options, a training or storage error, or ctx's error (finished
// cells stay in Dir).
func Lambda(ctx context.Context, o Options) (*Result, error) {
	if len(o.Arms) == 0 {
		o.Arms = LambdaArms()
	}
	if o.Train == (train.Config{}) {
		o.Train = train.DefaultConfig()
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("study: %w", err)
		}
	}
	fp, err := o.fingerprint()
	if err != nil {
		return nil, err
	}
	res := &Result{Arms: o.Arms, Seeds: o.Seeds, Sets: setNames(o.Heldout), Rollouts: o.Rollouts,
		EvalSeed: o.EvalSeed, Train: o.Train, Resamples: o.Resamples}
	start := time.Now()
	for _, arm := range o.Arms {
		for _, seed := range o.Seeds {
			c, err := o.cell(ctx, arm, seed, fp)
			if err != nil {
				return nil, fmt.Errorf("study: arm %s seed %d: %w", arm.ID, seed, err)
			}
			res.Cells = append(res.Cells, *c)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func (o *Options) check() error {
	seen := map[string]bool{}
	for _, a := range o.Arms {
		if a.ID == "" || seen[a.ID] {
			return fmt.Errorf("study: arm ID %q empty or repeated", a.ID)
		}
		seen[a.ID] = true
		if _, err := grpo.ParseDenseMode(string(a.Mode)); err != nil {
			return fmt.Errorf("study: arm %s: %w", a.ID, err)
		}
	}
	switch {
	case len(o.Seeds) == 0:
		return errors.New("study: no seeds")
	case len(o.TrainScenarios) == 0:
		return errors.New("study: no training scenarios")
	case len(o.Heldout) == 0:
		return errors.New("study: no held-out sets")
	case o.Rollouts < 1:
		return fmt.Errorf("study: rollouts = %d, want >= 1", o.Rollouts)
	case o.Persuadee == nil:
		return errors.New("study: no persuadee")
	}
	seeds := map[uint64]bool{}
	for _, s := range o.Seeds {
		if seeds[s] {
			return fmt.Errorf("study: seed %d is repeated", s)
		}
		seeds[s] = true
	}
	return o.Train.Validate()
}

// fingerprint hashes what decides a cell's content besides its arm and
// seed: the base training config, the training and held-out scenarios
// (their full content, not only IDs), rollouts, eval seed and the
// persuadee's Fingerprint (else its name).
func (o *Options) fingerprint() (string, error) {
	type key struct {
		Train     train.Config
		Scenarios []scenario.Scenario
		Heldout   []eval.Set
		Rollouts  int
		EvalSeed  uint64
		Persuadee string
	}
	k := key{Train: o.Train, Scenarios: o.TrainScenarios, Heldout: o.Heldout,
		Rollouts: o.Rollouts, EvalSeed: o.EvalSeed, Persuadee: o.Persuadee.Name()}
	if f, ok := o.Persuadee.(Fingerprinter); ok {
		k.Persuadee = f.Fingerprint()
	}
	raw, err := json.Marshal(k) // map keys are sorted by encoding/json
	if err != nil {
		return "", err
	}
	h := fnv.New64a()
	h.Write(raw)
	return fmt.Sprintf("%016x", h.Sum64()), nil
}

// Fingerprinter is an optional capability of a persuadee: a string that
// changes whenever its behaviour does (sim.Persuadee implements it). The
// study keys its cached cells by it, so a changed simulator retrains them;
// without it only the persuadee's name is used.
type Fingerprinter interface {
	Fingerprint() string
}

// cell trains and evaluates one arm at one seed, or loads it from Dir.
func (o *Options) cell(ctx context.Context, arm Arm, seed uint64, fp string) (*Cell, error) {
	var path, ckpt string
	if o.Dir != "" {
		path = filepath.Join(o.Dir, fmt.Sprintf("cell-%s-s%d.json", arm.ID, seed))
		ckpt = filepath.Join(o.Dir, fmt.Sprintf("planner-%s-s%d.json", arm.ID, seed))
		if raw, err := filelimit.ReadFile(path, filelimit.Data); err == nil {
			var c Cell
			if err := json.Unmarshal(raw, &c); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if c.Fingerprint == fp {
				return &c, nil
			}
		}
	}
	t0 := time.Now()
	cfg := o.Train
	cfg.GRPO.Lambda, cfg.GRPO.DenseMode, cfg.ShuffleBeliefs, cfg.GRPO.Seed = arm.Lambda, arm.Mode, arm.Shuffle, seed
	cfg.CheckpointEvery = 0
	tr, err := train.New(cfg, train.Options{Scenarios: o.TrainScenarios, Persuadee: o.Persuadee, Workers: o.Workers, Checkpoint: ckpt})
	if err != nil {
		return nil, err
	}
	mets, err := tr.Run(ctx)
	if err != nil {
		return nil, err
	}
	c := &Cell{Arm: arm.ID, Seed: seed, Steps: len(mets), Fingerprint: fp}
	trainFigures(c, mets)
	pl, err := planner.New(tr.Policy(), planner.WithName("planner:"+arm.ID))
	if err != nil {
		return nil, err
	}
	setOf := map[string]string{}
	for _, s := range o.Heldout {
		for i := range s.Scenarios {
			setOf[s.Scenarios[i].ID] = s.Name
		}
	}
	jobs := eval.Plan([]episode.Persuader{pl}, []episode.Persuadee{o.Persuadee}, o.Heldout, o.Rollouts, nil)
	err = eval.Execute(ctx, jobs, eval.Options{Seed: o.EvalSeed, Workers: o.Workers,
		Episode: episode.Config{Tmax: cfg.Tmax},
		Sink: func(ep *episode.Episode) error {
			oc := Outcome{Set: setOf[ep.ScenarioID], Scenario: ep.ScenarioID, Rollout: ep.Rollout, Terminal: ep.Terminal, Turns: len(ep.Turns)}
			if b, ok := ep.FinalBelief(); ok {
				oc.BT = &b
			}
			c.Outcomes = append(c.Outcomes, oc)
			return nil
		}})
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	for i, s := range o.Heldout {
		order[s.Name] = i
	}
	slices.SortFunc(c.Outcomes, func(a, b Outcome) int {
		return cmp.Or(cmp.Compare(order[a.Set], order[b.Set]), cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Rollout, b.Rollout))
	})
	c.Seconds = time.Since(t0).Seconds()
	if path != "" {
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		if err := atomicfile.Write(path, raw); err != nil {
			return nil, err
		}
	}
	if o.Log != nil {
		acc := 0
		for _, oc := range c.Outcomes {
			if oc.Terminal == decision.TermAccept {
				acc++
			}
		}
		fmt.Fprintf(o.Log, "study: %s seed %d: %d steps, held-out accept %.1f%%, dead %.1f%%, %.0f s\n",
			arm.ID, seed, c.Steps, 100*float64(acc)/float64(len(c.Outcomes)), 100*c.DeadShare, c.Seconds)
	}
	return c, nil
}

// trainFigures fills c's training means from the step metrics.
func trainFigures(c *Cell, mets []train.Metrics) {
	var corr, top float64
	nCorr, nTop := 0, 0
	var deadW float64
	for _, m := range mets {
		c.DeadShare += m.DeadShare
		c.SeparatedShare += m.SeparatedShare * m.DeadShare
		deadW += m.DeadShare
		c.TrainTurns += m.MeanTurns
		if !math.IsNaN(m.DeadLengthCorr) {
			corr += m.DeadLengthCorr
			nCorr++
		}
		if !math.IsNaN(m.DeadShortestTop) {
			top += m.DeadShortestTop
			nTop++
		}
	}
	if n := float64(len(mets)); n > 0 {
		c.DeadShare /= n
		c.TrainTurns /= n
	}
	if deadW > 0 {
		c.SeparatedShare /= deadW
	}
	if nCorr > 0 {
		v := corr / float64(nCorr)
		c.DeadLenCorr = &v
	}
	if nTop > 0 {
		v := top / float64(nTop)
		c.ShortestTop = &v
	}
}

func setNames(sets []eval.Set) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s.Name)
	}
	return out
}
