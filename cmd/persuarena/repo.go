package main

import (
	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/reporeward"
	"github.com/persuarena/persuarena/runs"
)

// newRepoCmd returns repo (REPO paper) and its subcommands.
func newRepoCmd() *cobra.Command {
	root := &cobra.Command{Use: "repo", Short: "REPO paper: bad-case suite, A/B analysis, judge ratings, Bradley–Terry reward model (docs/repo.md)"}
	var spec, per, config, judge, dbPath, out string
	var seed uint64
	var samples int
	bad := &cobra.Command{Use: "badcases", Short: "Fix rate and clean-fix rate of a persuader on the built-in bad-case suite", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runs.REPOBadCases(cmd.Context(), spec, per, config, seed, cmd.OutOrStdout())
		}}
	bad.Flags().StringVar(&spec, "reward", "repo:negotiation", "reward spec whose rule functions check the replies")
	bad.Flags().StringVar(&per, "persuader", "script", "persuader to test (built-in, planner:CHECKPOINT or llm:ROLE)")
	ab := &cobra.Command{Use: "ab RUN_A RUN_B", Short: "A/B test of two runs: response rate and task success, two-proportion z-tests with Newcombe 95% CIs", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc := runs.Open(dbPath)
			defer svc.Close()
			return svc.REPOAB(cmd.Context(), args[0], args[1], cmd.OutOrStdout())
		}}
	var sets []string
	rate := &cobra.Command{Use: "rate RUN", Short: "Judge ratings 1-5 of a run's dialogues and the share with an excellent response", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc := runs.Open(dbPath)
			defer svc.Close()
			return svc.REPORate(cmd.Context(), args[0], judge, config, samples, sets, cmd.OutOrStdout())
		}}
	rate.Flags().StringVar(&judge, "judge", "", "llm:ROLE judge of --config")
	flagbound.Int(rate.Flags(), &samples, "judge-samples", 1, 1, runs.MaxJudgeSamples, "judge samples per question")
	rate.Flags().StringSliceVar(&sets, "scenarios", []string{"repo:negotiation"}, "scenario sets of the run")
	bt := &cobra.Command{Use: "bt-train PAIRS.jsonl", Short: "Train the embedded Bradley–Terry reward model on preference pairs", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return reporeward.TrainBTFile(args[0], out, reporeward.BTConfig{Seed: seed}, cmd.OutOrStdout())
		}}
	bt.Flags().StringVar(&out, "out", "bt.json", "model file to write")
	for _, c := range []*cobra.Command{bad, rate, bt} {
		seedFlag(c.Flags(), &seed, "sessions and the held-out split")
	}
	for _, c := range []*cobra.Command{bad, rate} {
		c.Flags().StringVar(&config, "config", "", "persuarena.yaml for llm:ROLE roles")
	}
	dbFlag(ab.Flags(), &dbPath)
	dbFlag(rate.Flags(), &dbPath)
	root.AddCommand(bad, ab, rate, bt)
	return root
}
