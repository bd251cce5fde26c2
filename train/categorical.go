package train

import (
	stdcontext "context"
	"encoding/json"
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX's graph DSL reads best unqualified.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/policynet"
)

// Weights are the parameters of a categorical policy network
// logits = W2·tanh(W1·x + b1) + b2 (or W2·x + b2 when the hidden width is
// 0), the layout planner.Policy uses, for any number of actions: W1 is
// In×Hidden and W2 Hidden×Actions (In×Actions when linear), row-major.
// W1 and B1 are empty for a linear network. It is policynet.Weights.
type Weights = policynet.Weights

// Optimizer exposes the trainer's autodiff update (the GoMLX graph of model,
// Adam on the simplego backend) for a categorical policy of any action count,
// so other trainers (package selfplay: the planner and the user-side policy
// of MASP self-play) take exactly the steps Trainer takes: the PPO-clipped
// surrogate with a k3 KL penalty to a reference and an entropy bonus
// (grpo.Loss's objective, the Probe-RPO paper's Table 3 terms; MASP paper,
// Eq. 24), averaged over the batch. StepNLL offers a supervised negative
// log-likelihood update for warm starts (the MASP paper's Algorithm 1 line
// 4). It is not safe for concurrent use.
type Optimizer struct {
	m   *model
	nll *context.Exec
}

// NewOptimizer returns an optimiser for a network with in inputs, hidden
// units (0 = linear) and actions outputs, starting from w (copied), with
// cfg's learning rate, clip ε, KL β and entropy coefficient, and Adam's
// state restored from state when it is non-empty (a value State
// returned). Errors: bad dimensions, weights of the wrong size, or a
// state that does not parse.
func NewOptimizer(in, hidden, actions int, w Weights, cfg grpo.Config, state json.RawMessage) (*Optimizer, error) {
	if in < 1 || hidden < 0 || actions < 2 {
		return nil, fmt.Errorf("train: optimiser dims in %d, hidden %d, actions %d: want in >= 1, hidden >= 0, actions >= 2", in, hidden, actions)
	}
	want := [4]int{0, 0, in * actions, actions}
	if hidden > 0 {
		want = [4]int{in * hidden, hidden, hidden * actions, actions}
	}
	for i, s := range [][]float64{w.W1, w.B1, w.W2, w.B2} {
		if len(s) != want[i] {
			return nil, fmt.Errorf("train: optimiser weights %s have %d values, want %d", [...]string{"w1", "b1", "w2", "b2"}[i], len(s), want[i])
		}
	}
	var opt map[string]tensorState
	if len(state) > 0 {
		if err := json.Unmarshal(state, &opt); err != nil {
			return nil, fmt.Errorf("train: optimiser state: %w", err)
		}
	}
	m, err := buildModel(in, hidden, actions, w, cfg, opt)
	if err != nil {
		return nil, err
	}
	adam := optimizers.Adam().LearningRate(cfg.LearningRate).Done()
	o := &Optimizer{m: m}
	if o.nll, err = context.NewExec(m.backend, m.ctx, func(ctx *context.Context, in []*Node) []*Node {
		l := o.nllGraph(ctx, in)
		adam.UpdateGraph(ctx, l.Graph(), l)
		return []*Node{l}
	}); err != nil {
		return nil, fmt.Errorf("train: compile nll: %w", err)
	}
	return o, nil
}

// nllGraph is the supervised loss -Σ_n w_n log π(a_n|x_n) over the
// inputs of model.graph (only x, the one-hot actions and the weights are
// read).
func (o *Optimizer) nllGraph(ctx *context.Context, in []*Node) *Node {
	x, onehot, w := in[0], in[1], in[5]
	lp := o.m.logProbs(ctx, x)
	return Neg(ReduceAllSum(Mul(ReduceSum(Mul(lp, onehot), -1), w)))
}

// Loss evaluates the GRPO loss terms of batch at the current weights
// (Sample.Action in [0, actions)). Errors: an empty batch, a sample of
// the wrong shape, a graph error.
func (o *Optimizer) Loss(batch []Sample) (LossTerms, error) { return o.m.Loss(batch) }

// Step takes one Adam step on the GRPO loss of batch and returns the loss
// terms at the weights before the step. Errors: as Loss.
func (o *Optimizer) Step(batch []Sample) (LossTerms, error) { return o.m.Step(batch) }

// Steps takes n >= 1 Adam steps on batch (as Step, n times) and returns
// the loss terms of the first step (at the weights before the updates:
// the reported loss, KL and entropy) and of the last (its clip fraction
// is the share clipped at the final update). It checks ctx before each
// step and returns ctx.Err() once it has ended, so that a long run of
// updates stops at a signal. Errors: as Loss, or ctx's; the steps before
// a failed one are kept.
func (o *Optimizer) Steps(ctx stdcontext.Context, batch []Sample, n int) (first, last LossTerms, err error) {
	return o.m.steps(ctx.Err, batch, n)
}

// StepNLL takes one Adam step on the supervised loss -(1/N) Σ_n log
// π(a_n|x_n) (behaviour cloning; only Features and Action are read) and
// returns that loss before the step (nats per sample). Errors: as Loss.
func (o *Optimizer) StepNLL(batch []Sample) (float64, error) {
	in, err := o.m.inputs(batch)
	if err != nil {
		return 0, err
	}
	out, err := o.nll.Exec(in...)
	if err != nil {
		return 0, fmt.Errorf("train: graph: %w", err)
	}
	return tensors.ToScalar[float64](out[0]), nil
}

// WeightsInto copies the current weights into w, whose slices must have
// the network's sizes.
func (o *Optimizer) WeightsInto(w Weights) { o.m.weightsInto(w) }

// State returns Adam's state (moments and step counters) as JSON, for a
// checkpoint; NewOptimizer restores it.
func (o *Optimizer) State() (json.RawMessage, error) {
	st, err := o.m.optimizerState()
	if err != nil {
		return nil, err
	}
	return json.Marshal(st)
}
