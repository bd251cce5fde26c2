package bayespersuasion

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/roles"
)

// ClaimSpec selects the claims of a command: the claim set JSON file File
// (LoadClaims; "" the built-in set, Claims), keeping the first Limit
// claims (0: all).
type ClaimSpec struct {
	File  string
	Limit int
}

// Load returns the selected claims. Errors: LoadClaims' or Claims'.
func (s ClaimSpec) Load() ([]*Claim, error) {
	var cs []*Claim
	var err error
	if s.File != "" {
		cs, err = LoadClaims(s.File)
	} else {
		cs, err = Claims()
	}
	if err == nil && s.Limit > 0 && s.Limit < len(cs) {
		cs = cs[:s.Limit]
	}
	return cs, err
}

// RunOptimum writes to out a table of each selected claim's exact
// benchmarks (Optimum), sender values in [0, 1]: no disclosure (the
// prior's), full disclosure, the optimal signal, the whole evidence pool
// and its best subset. Errors: the claims' loading, Optimum's and out's.
func RunOptimum(spec ClaimSpec, out io.Writer) error {
	cs, err := spec.Load()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "claim\tdomain\tstates\tnone\tfull\toptimal\tpool all\tpool best")
	for _, c := range cs {
		b, err := Optimum(c)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", c.ID, c.Domain, len(c.States), b.Prior, b.Full, b.Optimal, b.PoolAll, b.PoolBest)
	}
	return tw.Flush()
}

// EvalSpec is one Strategic Persuasion paper evaluation (RunEval): the
// built-in senders (BuiltinSenders), plus a trained planner and LLM
// senders, play the claims against one receiver.
type EvalSpec struct {
	ClaimSpec
	// Config is the persuarena.yaml naming the LLM roles ("" none).
	Config string
	// Receiver is "bayes" (the exact Bayesian receiver, BayesRole) or
	// llm:ROLE (LLMReceiver).
	Receiver string
	// Senders are extra llm:ROLE senders (LLMSender); Planner, when set,
	// is a Train checkpoint whose planner also plays (StrategySender).
	Senders []string
	Planner string
	// Settings are "static" and/or "dynamic" (none: both).
	Settings []string
	// Rollouts is the worlds per claim (0: 20); Seed seeds the worlds,
	// sampling and bootstrap.
	Rollouts int
	Seed     uint64
}

// Validate checks the settings. Errors: `--setting "X": want static or
// dynamic` for another setting.
func (s EvalSpec) Validate() error {
	_, err := s.settings()
	return err
}

func (s EvalSpec) settings() ([]Setting, error) {
	var sts []Setting
	for _, v := range s.Settings {
		switch st := Setting(strings.TrimSpace(v)); st {
		case Static, Dynamic:
			sts = append(sts, st)
		default:
			return nil, fmt.Errorf("--setting %q: want static or dynamic", v)
		}
	}
	return sts, nil
}

// RunEval resolves spec's senders and receiver (LLM roles through package
// roles), plays them (Eval) and writes to out the report (Report.Write)
// and the agreement of Likert answers with probe beliefs
// (LikertAgreement; "-" for an undefined correlation). Errors: the
// claims' loading, LoadPlanner's, the role registry's, Validate's, Eval's
// and out's.
func RunEval(ctx context.Context, spec EvalSpec, out io.Writer) error {
	cs, err := spec.Load()
	if err != nil {
		return err
	}
	senders, err := BuiltinSenders(cs)
	if err != nil {
		return err
	}
	if spec.Planner != "" {
		p, err := LoadPlanner(spec.Planner)
		if err != nil {
			return err
		}
		senders = append(senders, StrategySender(p))
	}
	reg, err := roles.New(spec.Config)
	if err != nil {
		return err
	}
	for _, ref := range spec.Senders {
		role, cl, err := reg.Role(ref)
		if err != nil {
			return err
		}
		senders = append(senders, LLMSender{P: llmagent.NewPersuader(ref, cl, role)})
	}
	var rcv ReceiverRole = BayesRole{}
	if spec.Receiver != "bayes" {
		role, cl, err := reg.Role(spec.Receiver)
		if err != nil {
			return err
		}
		rcv = LLMReceiver{P: llmagent.NewPersuadee(spec.Receiver, cl, role, llmagent.PersuadeeOptions{})}
	}
	sts, err := spec.settings()
	if err != nil {
		return err
	}
	rep, err := Eval(ctx, EvalConfig{Claims: cs, Senders: senders, Receiver: rcv,
		Settings: sts, Rollouts: spec.Rollouts, Seed: spec.Seed})
	if err != nil {
		return err
	}
	if err := rep.Write(out); err != nil {
		return err
	}
	a := LikertAgreement(rep.Results)
	_, err = fmt.Fprintf(out, "\nLikert vs probe belief (%d episodes): Spearman before %s, after %s, change %s; mean |Likert-probe| before %.3f, after %.3f, change %.3f\n",
		a.N, fmtRho(a.SpearmanBefore), fmtRho(a.SpearmanAfter), fmtRho(a.SpearmanChange), a.MADBefore, a.MADAfter, a.MADChange)
	return err
}

func fmtRho(r float64) string {
	if math.IsNaN(r) {
		return "-"
	}
	return fmt.Sprintf("%.3f", r)
}

// TrainSpec is one planner training run (RunTrain): Steps policy-gradient
// steps (0: 200) on the selected claims, seeded by Seed, checkpointed to
// (and resumed from) Out.
type TrainSpec struct {
	ClaimSpec
	Out   string
	Steps int
	Seed  uint64
}

// Validate checks that spec names a checkpoint. Errors: "--out
// CHECKPOINT is required".
func (s TrainSpec) Validate() error {
	if s.Out == "" {
		return errors.New("--out CHECKPOINT is required")
	}
	return nil
}

// RunTrain trains a planner (Train, reward = posterior value - prior
// value, the Strategic Persuasion paper's) and writes to out the mean
// reward over the last five steps at five points of the curve and the
// final θ. Errors: Validate's, the claims' loading, Train's and out's.
func RunTrain(ctx context.Context, spec TrainSpec, out io.Writer) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	cs, err := spec.Load()
	if err != nil {
		return err
	}
	ck, err := Train(ctx, TrainConfig{Claims: cs, Steps: spec.Steps, Seed: spec.Seed, Checkpoint: spec.Out})
	if err != nil {
		return err
	}
	n := len(ck.Curve)
	for _, s := range []int{0, n / 4, n / 2, 3 * n / 4, n - 1} {
		lo := max(0, s-4)
		sum := 0.0
		for _, v := range ck.Curve[lo : s+1] {
			sum += v
		}
		fmt.Fprintf(out, "step %4d  mean reward %.3f\n", s+1, sum/float64(s+1-lo))
	}
	_, err = fmt.Fprintf(out, "θ = %.3f (ΔV, Δbelief, item bias, stop); checkpoint %s\n", ck.Planner.Theta, spec.Out)
	return err
}

// RunImport reads the rating data file from (ImportRatings, .jsonl or
// .csv) and writes to out its human persuasion gain (HumanGain, bootstrap
// seeded by seed) on one line. Errors: "--from FILE (.jsonl or .csv) is
// required" for an empty from, ImportRatings', HumanGain's and out's.
func RunImport(from string, seed uint64, out io.Writer) error {
	if from == "" {
		return errors.New("--from FILE (.jsonl or .csv) is required")
	}
	rs, err := ImportRatings(from)
	if err != nil {
		return err
	}
	rep, err := HumanGain(rs, seed)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%d ratings of %d claims: mean rating change %+.3f (95%% CI %+.3f to %+.3f); %.1f%% rose\n",
		rep.N, rep.Claims, rep.Gain.Estimate, rep.Gain.Lo, rep.Gain.Hi, 100*rep.Positive)
	return err
}
