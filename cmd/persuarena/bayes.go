package main

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/bayes"
	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/roles"
)

var bayesFlags struct {
	claims, config, receiver, planner, out, from string
	senders, settings                            []string
	rollouts, steps, limit                       int
	seed                                         uint64
}

var bayesCmd = &cobra.Command{
	Use:   "bayes",
	Short: "Bayesian-persuasion environment with exact optima (Strategic Persuasion paper)",
}

func bayesClaims() ([]*bayes.Claim, error) {
	var cs []*bayes.Claim
	var err error
	if bayesFlags.claims != "" {
		cs, err = bayes.LoadClaims(bayesFlags.claims)
	} else {
		cs, err = bayes.Claims()
	}
	if err == nil && bayesFlags.limit > 0 && bayesFlags.limit < len(cs) {
		cs = cs[:bayesFlags.limit]
	}
	return cs, err
}

var bayesOptimumCmd = &cobra.Command{
	Use:   "optimum",
	Short: "Print each claim's exact benchmarks: no disclosure, full disclosure, optimal signal, evidence pool",
	Args:  cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		cs, err := bayesClaims()
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "claim\tdomain\tstates\tnone\tfull\toptimal\tpool all\tpool best")
		for _, c := range cs {
			b, err := bayes.Optimum(c)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", c.ID, c.Domain, len(c.States), b.Prior, b.Full, b.Optimal, b.PoolAll, b.PoolBest)
		}
		return tw.Flush()
	},
}

var bayesEvalCmd = &cobra.Command{
	Use:   "eval",
	Short: "Play the claims between senders and a receiver; print gain, share of the optimal gain and paired tests",
	Args:  cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		cs, err := bayesClaims()
		if err != nil {
			return err
		}
		senders, err := bayes.BuiltinSenders(cs)
		if err != nil {
			return err
		}
		if bayesFlags.planner != "" {
			p, err := bayes.LoadPlanner(bayesFlags.planner)
			if err != nil {
				return err
			}
			senders = append(senders, bayes.StrategySender(p))
		}
		reg, err := roles.New(bayesFlags.config)
		if err != nil {
			return err
		}
		for _, ref := range bayesFlags.senders {
			role, cl, err := reg.Role(ref)
			if err != nil {
				return err
			}
			senders = append(senders, bayes.LLMSender{P: llmagent.NewPersuader(ref, cl, role)})
		}
		var rcv bayes.ReceiverRole = bayes.BayesRole{}
		if bayesFlags.receiver != "bayes" {
			role, cl, err := reg.Role(bayesFlags.receiver)
			if err != nil {
				return err
			}
			rcv = bayes.LLMReceiver{P: llmagent.NewPersuadee(bayesFlags.receiver, cl, role, llmagent.PersuadeeOptions{})}
		}
		var sts []bayes.Setting
		for _, s := range bayesFlags.settings {
			switch st := bayes.Setting(strings.TrimSpace(s)); st {
			case bayes.Static, bayes.Dynamic:
				sts = append(sts, st)
			default:
				return fmt.Errorf("--setting %q: want static or dynamic", s)
			}
		}
		rep, err := bayes.Eval(cmd.Context(), bayes.EvalConfig{Claims: cs, Senders: senders, Receiver: rcv,
			Settings: sts, Rollouts: bayesFlags.rollouts, Seed: bayesFlags.seed})
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if err := rep.Write(out); err != nil {
			return err
		}
		a := bayes.LikertAgreement(rep.Results)
		fmt.Fprintf(out, "\nLikert vs probe belief (%d episodes): Spearman before %s, after %s, change %s; mean |Likert-probe| before %.3f, after %.3f, change %.3f\n",
			a.N, fmtRho(a.SpearmanBefore), fmtRho(a.SpearmanAfter), fmtRho(a.SpearmanChange), a.MADBefore, a.MADAfter, a.MADChange)
		return nil
	},
}

func fmtRho(r float64) string {
	if math.IsNaN(r) {
		return "-"
	}
	return fmt.Sprintf("%.3f", r)
}

var bayesTrainCmd = &cobra.Command{
	Use:   "train",
	Short: "Train a disclosure planner by policy gradient, reward = posterior value - prior value",
	Args:  cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		if bayesFlags.out == "" {
			return fmt.Errorf("--out CHECKPOINT is required")
		}
		cs, err := bayesClaims()
		if err != nil {
			return err
		}
		ck, err := bayes.Train(cmd.Context(), bayes.TrainConfig{Claims: cs, Steps: bayesFlags.steps, Seed: bayesFlags.seed, Checkpoint: bayesFlags.out})
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		n := len(ck.Curve)
		for _, s := range []int{0, n / 4, n / 2, 3 * n / 4, n - 1} {
			lo := max(0, s-4)
			sum := 0.0
			for _, v := range ck.Curve[lo : s+1] {
				sum += v
			}
			fmt.Fprintf(out, "step %4d  mean reward %.3f\n", s+1, sum/float64(s+1-lo))
		}
		fmt.Fprintf(out, "θ = %.3f (ΔV, Δbelief, item bias, stop); checkpoint %s\n", ck.Planner.Theta, bayesFlags.out)
		return nil
	},
}

var bayesImportCmd = &cobra.Command{
	Use:   "import",
	Short: "Read persuasion-rating data (claim, argument, rating_initial, rating_final) and report the human persuasion gain",
	Args:  cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		if bayesFlags.from == "" {
			return fmt.Errorf("--from FILE (.jsonl or .csv) is required")
		}
		rs, err := bayes.ImportRatings(bayesFlags.from)
		if err != nil {
			return err
		}
		rep, err := bayes.HumanGain(rs, bayesFlags.seed)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%d ratings of %d claims: mean rating change %+.3f (95%% CI %+.3f to %+.3f); %.1f%% rose\n",
			rep.N, rep.Claims, rep.Gain.Estimate, rep.Gain.Lo, rep.Gain.Hi, 100*rep.Positive)
		return nil
	},
}

func init() {
	for _, c := range []*cobra.Command{bayesOptimumCmd, bayesEvalCmd, bayesTrainCmd} {
		c.Flags().StringVar(&bayesFlags.claims, "claims", "", "claim set JSON file (default: the built-in set)")
		c.Flags().IntVar(&bayesFlags.limit, "limit", 0, "use only the first N claims (0: all)")
	}
	for _, c := range []*cobra.Command{bayesEvalCmd, bayesTrainCmd, bayesImportCmd} {
		seedFlag(c.Flags(), &bayesFlags.seed, "worlds, sampling and bootstrap")
	}
	f := bayesEvalCmd.Flags()
	f.StringVar(&bayesFlags.config, "config", "", "persuarena.yaml naming LLM roles (for llm:ROLE senders or receiver)")
	f.StringVar(&bayesFlags.receiver, "receiver", "bayes", "receiver: bayes (the exact Bayesian receiver) or llm:ROLE")
	f.StringSliceVar(&bayesFlags.senders, "sender", nil, "extra LLM senders, llm:ROLE (repeatable); the built-in senders always play")
	f.StringVar(&bayesFlags.planner, "planner", "", "a trained planner checkpoint (bayes train --out) to add as a sender")
	f.StringSliceVar(&bayesFlags.settings, "setting", nil, "settings to play: static, dynamic (default both)")
	f.IntVar(&bayesFlags.rollouts, "rollouts", 20, "worlds per claim")
	bayesTrainCmd.Flags().StringVar(&bayesFlags.out, "out", "", "checkpoint file (resumed when it exists)")
	bayesTrainCmd.Flags().IntVar(&bayesFlags.steps, "steps", 200, "policy-gradient steps")
	bayesImportCmd.Flags().StringVar(&bayesFlags.from, "from", "", "rating data, .jsonl or .csv")
	bayesCmd.AddCommand(bayesOptimumCmd, bayesEvalCmd, bayesTrainCmd, bayesImportCmd)
	rootCmd.AddCommand(bayesCmd)
}
