package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/persuarena/persuarena/bayespersuasion"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/flagbound"
)

// claimsFlags declares --claims and --limit into s.
func claimsFlags(f *pflag.FlagSet, s *bayespersuasion.ClaimSpec) {
	f.StringVar(&s.File, "claims", "", "claim set JSON file (default: the built-in set)")
	flagbound.Int(f, &s.Limit, "limit", 0, 0, 1_000_000, "use only the first N claims (0: all)")
}

// newBayesCmd returns bayes (Strategic Persuasion paper) and its optimum,
// eval, train and import subcommands.
func newBayesCmd() *cobra.Command {
	const seedUse = "worlds, sampling and bootstrap"
	var opt bayespersuasion.ClaimSpec
	optimum := &cobra.Command{
		Use:   "optimum",
		Short: "Print each claim's exact benchmarks: no disclosure, full disclosure, optimal signal, evidence pool",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return bayespersuasion.RunOptimum(opt, cmd.OutOrStdout()) },
	}
	claimsFlags(optimum.Flags(), &opt)

	var ev bayespersuasion.EvalSpec
	eval := &cobra.Command{
		Use:   "eval",
		Short: "Play the claims between senders and a receiver; print gain, share of the optimal gain and paired tests",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return bayespersuasion.RunEval(cmd.Context(), ev, cmd.OutOrStdout())
		},
	}
	f := eval.Flags()
	claimsFlags(f, &ev.ClaimSpec)
	seedFlag(f, &ev.Seed, seedUse)
	f.StringVar(&ev.Config, "config", "", "persuarena.yaml naming LLM roles (for llm:ROLE senders or receiver)")
	f.StringVar(&ev.Receiver, "receiver", "bayes", "receiver: bayes (the exact Bayesian receiver) or llm:ROLE")
	f.StringSliceVar(&ev.Senders, "sender", nil, "extra LLM senders, llm:ROLE (repeatable); the built-in senders always play")
	f.StringVar(&ev.Planner, "planner", "", "a trained planner checkpoint (bayes train --out) to add as a sender")
	f.StringSliceVar(&ev.Settings, "setting", nil, "settings to play: static, dynamic (default both)")
	flagbound.Int(f, &ev.Rollouts, "rollouts", 20, 1, 1_000_000, "worlds per claim")

	var tr bayespersuasion.TrainSpec
	train := &cobra.Command{
		Use:   "train",
		Short: "Train a disclosure planner by policy gradient, reward = posterior value - prior value",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return bayespersuasion.RunTrain(cmd.Context(), tr, cmd.OutOrStdout())
		},
	}
	f = train.Flags()
	claimsFlags(f, &tr.ClaimSpec)
	seedFlag(f, &tr.Seed, seedUse)
	f.StringVar(&tr.Out, "out", "", "checkpoint file (resumed when it exists)")
	flagbound.Int(f, &tr.Steps, "steps", 200, 1, grpo.MaxSteps, "policy-gradient steps")

	var from string
	var seed uint64
	imp := &cobra.Command{
		Use:   "import",
		Short: "Read persuasion-rating data (claim, argument, rating_initial, rating_final) and report the human persuasion gain",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return bayespersuasion.RunImport(from, seed, cmd.OutOrStdout())
		},
	}
	seedFlag(imp.Flags(), &seed, seedUse)
	imp.Flags().StringVar(&from, "from", "", "rating data, .jsonl or .csv")

	bayes := &cobra.Command{
		Use:   "bayes",
		Short: "Bayesian-persuasion environment with exact optima (Strategic Persuasion paper)",
	}
	bayes.AddCommand(optimum, eval, train, imp)
	return bayes
}
