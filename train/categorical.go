package train

import (
	"encoding/json"
	"fmt"

	"github.com/gomlx/gomlx/backends/simplego"
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

// Optimizer exposes the trainer's autodiff update (the GoMLX graph of
// model, Adam on the simplego backend) for a categorical policy of any
// action count, so other trainers (package selfplay: the planner and the
// user-side policy of MASP self-play) take exactly the steps Trainer
// takes: the PPO-clipped surrogate with a k3 KL penalty to a reference and
// an entropy bonus (grpo.Loss's objective, seed 000 Table 3 terms; seed
// 003 Eq. 24), averaged over the batch. StepNLL offers a supervised
// negative log-likelihood update for warm starts (seed 003 Algorithm 1
// line 4). It is not safe for concurrent use.
type Optimizer struct {
	m       *model
	actions int
	nll     *context.Exec
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
	top := in
	want := [4]int{0, 0, in * actions, actions}
	if hidden > 0 {
		want = [4]int{in * hidden, hidden, hidden * actions, actions}
		top = hidden
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
	// Choice: sequential ops, as newModel (simplego's parallel scheduler
	// races under -race in v0.26.0).
	be, err := simplego.New("ops_sequential")
	if err != nil {
		return nil, fmt.Errorf("train: simplego backend: %w", err)
	}
	m := &model{backend: be, ctx: context.New(), hidden: hidden, in: in, cfg: cfg}
	pc := m.ctx.InAbsPath(policyScope)
	set := func(name string, data []float64, dims ...int) {
		pc.VariableWithValue(name, tensors.FromFlatDataAndDimensions(append([]float64(nil), data...), dims...))
	}
	if hidden > 0 {
		set("w1", w.W1, in, hidden)
		set("b1", w.B1, hidden)
	}
	set("w2", w.W2, top, actions)
	set("b2", w.B2, actions)
	for _, name := range sortedKeys(opt) {
		if err := m.restoreVar(name, opt[name]); err != nil {
			return nil, err
		}
	}
	adam := optimizers.Adam().LearningRate(cfg.LearningRate).Done()
	o := &Optimizer{m: m, actions: actions}
	if m.update, err = context.NewExec(be, m.ctx, func(ctx *context.Context, in []*Node) []*Node {
		terms := m.graph(ctx, in)
		adam.UpdateGraph(ctx, terms[0].Graph(), terms[0])
		return terms
	}); err != nil {
		return nil, fmt.Errorf("train: compile update: %w", err)
	}
	if m.loss, err = context.NewExec(be, m.ctx, func(ctx *context.Context, in []*Node) []*Node {
		return m.graph(ctx, in)
	}); err != nil {
		return nil, fmt.Errorf("train: compile loss: %w", err)
	}
	if o.nll, err = context.NewExec(be, m.ctx, func(ctx *context.Context, in []*Node) []*Node {
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
	g := x.Graph()
	v := func(name string) *Node { return ctx.GetVariableByScopeAndName(policyScope, name).ValueGraph(g) }
	h := x
	if o.m.hidden > 0 {
		h = Tanh(Add(MatMul(x, v("w1")), ExpandAxes(v("b1"), 0)))
	}
	lp := LogSoftmax(Add(MatMul(h, v("w2")), ExpandAxes(v("b2"), 0)), -1)
	return Neg(ReduceAllSum(Mul(ReduceSum(Mul(lp, onehot), -1), w)))
}

// inputs packs batch as model.inputs does, for o's action count.
func (o *Optimizer) inputs(batch []Sample) ([]any, error) {
	n, in, k := len(batch), o.m.in, o.actions
	if n == 0 {
		return nil, grpo.ErrEmptyBatch
	}
	pad := padRows(n)
	x := make([]float64, pad*in)
	oh := make([]float64, pad*k)
	old := make([]float64, pad)
	ref := make([]float64, pad)
	adv := make([]float64, pad)
	w := make([]float64, pad)
	for i, s := range batch {
		if len(s.Features) != in {
			return nil, fmt.Errorf("train: sample %d has %d features, want %d", i, len(s.Features), in)
		}
		if s.Action < 0 || s.Action >= k {
			return nil, fmt.Errorf("train: sample %d has action %d, want 0..%d", i, s.Action, k-1)
		}
		copy(x[i*in:], s.Features)
		oh[i*k+s.Action] = 1
		old[i], ref[i], adv[i], w[i] = s.OldLogp, s.RefLogp, s.Adv, 1/float64(n)
	}
	return []any{
		tensors.FromFlatDataAndDimensions(x, pad, in),
		tensors.FromFlatDataAndDimensions(oh, pad, k),
		tensors.FromFlatDataAndDimensions(old, pad),
		tensors.FromFlatDataAndDimensions(ref, pad),
		tensors.FromFlatDataAndDimensions(adv, pad),
		tensors.FromFlatDataAndDimensions(w, pad),
	}, nil
}

func (o *Optimizer) run(e *context.Exec, batch []Sample) (LossTerms, error) {
	in, err := o.inputs(batch)
	if err != nil {
		return LossTerms{}, err
	}
	out, err := e.Exec(in...)
	if err != nil {
		return LossTerms{}, fmt.Errorf("train: graph: %w", err)
	}
	f := func(i int) float64 { return tensors.ToScalar[float64](out[i]) }
	return LossTerms{Loss: f(0), Surrogate: f(1), KL: f(2), Entropy: f(3), ClipFrac: f(4)}, nil
}

// Loss evaluates the GRPO loss terms of batch at the current weights
// (Sample.Action in [0, actions)). Errors: an empty batch, a sample of
// the wrong shape, a graph error.
func (o *Optimizer) Loss(batch []Sample) (LossTerms, error) { return o.run(o.m.loss, batch) }

// Step takes one Adam step on the GRPO loss of batch and returns the loss
// terms at the weights before the step. Errors: as Loss.
func (o *Optimizer) Step(batch []Sample) (LossTerms, error) { return o.run(o.m.update, batch) }

// StepNLL takes one Adam step on the supervised loss -(1/N) Σ_n log
// π(a_n|x_n) (behaviour cloning; only Features and Action are read) and
// returns that loss before the step (nats per sample). Errors: as Loss.
func (o *Optimizer) StepNLL(batch []Sample) (float64, error) {
	in, err := o.inputs(batch)
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
func (o *Optimizer) WeightsInto(w Weights) {
	get := func(name string, dst []float64) {
		v := o.m.ctx.GetVariableByScopeAndName(policyScope, name)
		copy(dst, tensors.MustCopyFlatData[float64](v.MustValue()))
	}
	if o.m.hidden > 0 {
		get("w1", w.W1)
		get("b1", w.B1)
	}
	get("w2", w.W2)
	get("b2", w.B2)
}

// State returns Adam's state (moments and step counters) as JSON, for a
// checkpoint; NewOptimizer restores it.
func (o *Optimizer) State() (json.RawMessage, error) {
	st, err := o.m.optimizerState()
	if err != nil {
		return nil, err
	}
	return json.Marshal(st)
}
