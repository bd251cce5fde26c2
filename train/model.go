package train

import (
	"fmt"
	"math/bits"
	"sort"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX's graph DSL reads best unqualified.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/planner"
)

// Sample is one persuader turn of a training batch, in the form the
// autodiff graph reads.
type Sample struct {
	// Features is the planner's input at this turn (len Spec.Dim()).
	Features []float64
	// Action is the chosen action index in [0, planner.NumActions).
	Action int
	// OldLogp is the action's log-probability under the policy that
	// sampled it, RefLogp under the reference (initial) policy (nats).
	OldLogp, RefLogp float64
	// Adv is the advantage A_{i,t} (grpo.Analyze).
	Adv float64
}

// LossTerms are the batch means the graph computes, as in grpo.LossTerms.
type LossTerms struct {
	Loss, Surrogate, KL, Entropy, ClipFrac float64
}

// model is the policy as GoMLX variables on the pure-Go simplego backend,
// with Adam's state, and two compiled functions: the loss alone and the
// loss followed by one Adam step.
//
// The graph computes, for the N samples of a batch (padded with
// zero-weight rows so that few shapes are compiled, see padRows),
//
//	logπ = LogSoftmax(W2·tanh(W1·x + b1) + b2)        (planner.Policy)
//	L = -(1/N) Σ_n [ min(ρ_n A_n, clip(ρ_n, 1-ε, 1+ε) A_n) - β·k3_n + c·H_n ]
//
// with ρ_n = exp(logπ(a_n) - oldLogp_n), k3_n = exp(ref_n - logπ(a_n)) -
// (ref_n - logπ(a_n)) - 1 and H_n = -Σ_a π(a) logπ(a): grpo.Loss's
// objective (the Probe-RPO paper's Table 3 terms), which TestGraphLossMatchesGRPO
// checks to 1e-9. Gradients come from GoMLX's reverse-mode autodiff.
type model struct {
	backend backends.Backend
	ctx     *context.Context
	hidden  int
	in      int
	actions int
	cfg     grpo.Config
	update  *context.Exec
	loss    *context.Exec
}

// Variable scope and names.
const (
	policyScope = "/policy"
	adamScope   = "AdamOptimizer"
)

// newModel builds the model for p's shapes and loads p's weights. opt,
// when non-nil, restores Adam's state (from optimizerState).
func newModel(p *planner.Policy, cfg grpo.Config, opt map[string]tensorState) (*model, error) {
	return buildModel(p.Spec.Dim(), p.Hidden, planner.NumActions, p.Weights(), cfg, opt)
}

// buildModel builds the model of a network with in inputs, hidden units
// (0 = linear) and actions outputs, loads w (copied; sizes checked by the
// caller) and, when opt is non-nil, restores Adam's state (from
// optimizerState).
func buildModel(in, hidden, actions int, w Weights, cfg grpo.Config, opt map[string]tensorState) (*model, error) {
	// Choice: ops run one after another. simplego's parallel op scheduler
	// (its default when nothing else executes) shows a data race under
	// go test -race in v0.26.0 (exec.go, the buffer-ownership flags), and
	// the graph is too small to gain from running ops side by side.
	be, err := simplego.New("ops_sequential")
	if err != nil {
		return nil, fmt.Errorf("train: simplego backend: %w", err)
	}
	m := &model{backend: be, ctx: context.New(), hidden: hidden, in: in, actions: actions, cfg: cfg}
	pc := m.ctx.InAbsPath(policyScope)
	set := func(name string, data []float64, dims ...int) {
		pc.VariableWithValue(name, tensors.FromFlatDataAndDimensions(append([]float64(nil), data...), dims...))
	}
	top := in
	if hidden > 0 {
		set("w1", w.W1, in, hidden)
		set("b1", w.B1, hidden)
		top = hidden
	}
	set("w2", w.W2, top, actions)
	set("b2", w.B2, actions)
	for _, name := range sortedKeys(opt) {
		if err := m.restoreVar(name, opt[name]); err != nil {
			return nil, err
		}
	}
	adam := optimizers.Adam().LearningRate(cfg.LearningRate).Done()
	m.update, err = context.NewExec(be, m.ctx, func(ctx *context.Context, in []*Node) []*Node {
		terms := m.graph(ctx, in)
		adam.UpdateGraph(ctx, terms[0].Graph(), terms[0])
		return terms
	})
	if err != nil {
		return nil, fmt.Errorf("train: compile update: %w", err)
	}
	m.loss, err = context.NewExec(be, m.ctx, func(ctx *context.Context, in []*Node) []*Node {
		return m.graph(ctx, in)
	})
	if err != nil {
		return nil, fmt.Errorf("train: compile loss: %w", err)
	}
	return m, nil
}

// weightsInto copies the policy variables into w, whose slices must have
// the network's sizes.
func (m *model) weightsInto(w Weights) {
	get := func(name string, dst []float64) {
		v := m.ctx.GetVariableByScopeAndName(policyScope, name)
		copy(dst, tensors.MustCopyFlatData[float64](v.MustValue()))
	}
	if m.hidden > 0 {
		get("w1", w.W1)
		get("b1", w.B1)
	}
	get("w2", w.W2)
	get("b2", w.B2)
}

// policyInto copies the policy variables into p (same shapes).
func (m *model) policyInto(p *planner.Policy) { m.weightsInto(p.Weights()) }

// logProbs builds the policy's log-softmax over the actions for the rows
// of x (planner.Policy.LogProbs as a graph).
func (m *model) logProbs(ctx *context.Context, x *Node) *Node {
	g := x.Graph()
	v := func(name string) *Node { return ctx.GetVariableByScopeAndName(policyScope, name).ValueGraph(g) }
	h := x
	if m.hidden > 0 {
		h = Tanh(Add(MatMul(x, v("w1")), ExpandAxes(v("b1"), 0)))
	}
	return LogSoftmax(Add(MatMul(h, v("w2")), ExpandAxes(v("b2"), 0)), -1)
}

// graph builds the loss terms [loss, surrogate, kl, entropy, clipfrac]
// from the inputs [x, onehot, oldLogp, refLogp, adv, weight].
func (m *model) graph(ctx *context.Context, in []*Node) []*Node {
	x, onehot, oldLogp, refLogp, adv, w := in[0], in[1], in[2], in[3], in[4], in[5]
	lp := m.logProbs(ctx, x)
	logp := ReduceSum(Mul(lp, onehot), -1)
	ratio := Exp(Sub(logp, oldLogp))
	clipped := ClipScalar(ratio, 1-m.cfg.ClipEps, 1+m.cfg.ClipEps)
	unclippedTerm := Mul(ratio, adv)
	surr := Min(unclippedTerm, Mul(clipped, adv))
	d := Sub(refLogp, logp)
	kl := Sub(Sub(Exp(d), d), OnesLike(d))
	ent := Neg(ReduceSum(Mul(Exp(lp), lp), -1))
	obj := Add(Sub(surr, MulScalar(kl, m.cfg.KLBeta)), MulScalar(ent, m.cfg.EntropyCoef))
	wsum := func(n *Node) *Node { return ReduceAllSum(Mul(n, w)) }
	clipFrac := wsum(ConvertDType(LessThan(surr, unclippedTerm), dtypes.Float64))
	return []*Node{Neg(wsum(obj)), wsum(surr), wsum(kl), wsum(ent), clipFrac}
}

// padRows is the padded batch size for n samples: a multiple of 128 up to
// 2048, a power of two above, so that at most ~20 graph shapes are ever
// compiled (GoMLX caches 32 per executable).
func padRows(n int) int {
	if n <= 2048 {
		return (n + 127) / 128 * 128
	}
	return 1 << bits.Len(uint(n-1))
}

// inputs packs a batch (Sample.Action in [0, m.actions)) into the
// graph's input tensors, padded (padRows) with rows of weight 0; real rows
// weigh 1/len(batch).
func (m *model) inputs(batch []Sample) ([]any, error) {
	n := len(batch)
	if n == 0 {
		return nil, grpo.ErrEmptyBatch
	}
	pad := padRows(n)
	x := make([]float64, pad*m.in)
	oh := make([]float64, pad*m.actions)
	old := make([]float64, pad)
	ref := make([]float64, pad)
	adv := make([]float64, pad)
	w := make([]float64, pad)
	for i, s := range batch {
		if len(s.Features) != m.in {
			return nil, fmt.Errorf("train: sample %d has %d features, want %d", i, len(s.Features), m.in)
		}
		if s.Action < 0 || s.Action >= m.actions {
			return nil, fmt.Errorf("train: sample %d has action %d, want 0..%d", i, s.Action, m.actions-1)
		}
		copy(x[i*m.in:], s.Features)
		oh[i*m.actions+s.Action] = 1
		old[i], ref[i], adv[i], w[i] = s.OldLogp, s.RefLogp, s.Adv, 1/float64(n)
	}
	return []any{
		tensors.FromFlatDataAndDimensions(x, pad, m.in),
		tensors.FromFlatDataAndDimensions(oh, pad, m.actions),
		tensors.FromFlatDataAndDimensions(old, pad),
		tensors.FromFlatDataAndDimensions(ref, pad),
		tensors.FromFlatDataAndDimensions(adv, pad),
		tensors.FromFlatDataAndDimensions(w, pad),
	}, nil
}

func (m *model) run(e *context.Exec, batch []Sample) (LossTerms, error) {
	in, err := m.inputs(batch)
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

// Loss evaluates the loss terms of batch at the current weights.
func (m *model) Loss(batch []Sample) (LossTerms, error) { return m.run(m.loss, batch) }

// Step takes one Adam step on batch and returns the loss terms at the
// weights before the step.
func (m *model) Step(batch []Sample) (LossTerms, error) { return m.run(m.update, batch) }

// steps takes n >= 1 Adam steps on batch and returns the loss terms of
// the first and of the last step (each at the weights before it).
func (m *model) steps(stop func() error, batch []Sample, n int) (first, last LossTerms, err error) {
	for u := range n {
		if err := stop(); err != nil {
			return LossTerms{}, LossTerms{}, err
		}
		lt, err := m.Step(batch)
		if err != nil {
			return LossTerms{}, LossTerms{}, err
		}
		if u == 0 {
			first = lt
		}
		last = lt
	}
	return first, last, nil
}

// tensorState is one saved variable: its shape and values (float64 or,
// for step counters, int64).
type tensorState struct {
	Dims  []int     `json:"dims"`
	Float []float64 `json:"float,omitempty"`
	Int   []int64   `json:"int,omitempty"`
}

// optimizerState returns every non-policy variable (Adam's moments and
// step counters) by "scope/name", for checkpoints. The learning-rate
// variable is left out: it comes from the configuration.
func (m *model) optimizerState() (map[string]tensorState, error) {
	out := map[string]tensorState{}
	var err error
	m.ctx.EnumerateVariables(func(v *context.Variable) {
		if err != nil || v.Scope() == policyScope || v.Name() == optimizers.ParamLearningRate {
			return
		}
		t, e := v.Value()
		if e != nil {
			err = e
			return
		}
		st := tensorState{Dims: t.Shape().Dimensions}
		if st.Dims == nil {
			st.Dims = []int{}
		}
		switch t.DType() {
		case dtypes.Float64:
			st.Float = tensors.MustCopyFlatData[float64](t)
		case dtypes.Int64:
			st.Int = tensors.MustCopyFlatData[int64](t)
		default:
			err = fmt.Errorf("train: optimiser variable %s has dtype %s", v.ScopeAndName(), t.DType())
			return
		}
		out[v.ScopeAndName()] = st
	})
	return out, err
}

// restoreVar creates the variable "scope/name" with the saved value.
func (m *model) restoreVar(scopeName string, st tensorState) error {
	scope, name := context.SplitScope(scopeName)
	if scope == "" || name == "" || scope == policyScope {
		return fmt.Errorf("train: checkpoint optimiser variable %q: bad name", scopeName)
	}
	size := 1
	for _, d := range st.Dims {
		if d < 0 {
			return fmt.Errorf("train: checkpoint optimiser variable %q: negative dimension", scopeName)
		}
		size *= d
	}
	var t *tensors.Tensor
	switch {
	case st.Float != nil && len(st.Float) == size:
		t = tensors.FromFlatDataAndDimensions(append([]float64(nil), st.Float...), st.Dims...)
	case st.Int != nil && len(st.Int) == size:
		t = tensors.FromFlatDataAndDimensions(append([]int64(nil), st.Int...), st.Dims...)
	default:
		return fmt.Errorf("train: checkpoint optimiser variable %q: want %d float or int values", scopeName, size)
	}
	m.ctx.InAbsPath(scope).Checked(false).VariableWithValue(name, t).SetTrainable(false)
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
