package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/train"
)

// newTrainCmd returns train (Probe-RPO training of a planner) and its
// metrics subcommand.
func newTrainCmd() *cobra.Command {
	var (
		spec   = runs.TrainSpec{Train: train.DefaultConfig()}
		o      runs.TrainOptions
		dbPath string
	)
	cfg := &spec.Train
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a strategy planner with Probe-RPO against a persuadee",
		Long: `Trains a planner persuader with Probe-RPO (Probe-RPO paper); evaluate it with
"eval --persuader planner:PATH"; --resume continues exactly. See docs/training.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.MaxSteps = -1 // keep the stored cap on --resume
			if cmd.Flags().Changed("max-steps") {
				o.MaxSteps = cfg.MaxSteps
			}
			svc := runs.Open(dbPath)
			defer svc.Close()
			o.Log = cmd.ErrOrStderr()
			res, err := svc.Train(cmd.Context(), spec, o)
			if err != nil || res == nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "run %s: %d steps done; checkpoint %s\nevaluate: persuarena eval --persuader planner:%s,script --db %s\n",
				res.RunID, res.Steps, res.Checkpoint, res.Checkpoint, svc.DBPath())
			return err
		},
	}
	f := cmd.Flags()
	scenariosFlag(f, &spec.Scenarios, "training scenario sets")
	f.StringVar(&spec.Split, "split", "train", "split to train on: train, val, heldout or all")
	f.StringVar(&spec.Persuadee, "persuadee", "sim", "persuadee to train against (sim, sim-soft, sim-hard, sim:FILE, or llm:NAME with --config)")
	f.StringVar(&spec.Config, "config", "", "persuarena.yaml naming the backends and roles of llm:NAME persuadees and judges (docs/llm-roles.md)")
	f.StringVar(&spec.Judge, "judge", "", "llm:NAME: LLM judge (a role of --config) rating each rollout's strategy, R_strategy in [-1, 1] (default: none, R_strategy = 0)")
	flagbound.Int(f, &spec.JudgeSamples, "judge-samples", 1, 1, runs.MaxJudgeSamples, "judge samples per question, averaged (with --judge)")
	f.StringVar(&spec.Reward, "reward", "", "repo:SPEC: the rollouts' outcome reward becomes the spec's R (REPO paper; docs/repo.md)")
	f.StringVar(&spec.Checkpoint, "checkpoint", "planner.json", "checkpoint file (written atomically; --resume reads it)")
	f.BoolVar(&o.Resume, "resume", false, "continue the run saved in --checkpoint (its stored configuration is used; --max-steps may extend it)")
	flagbound.Float(f, &cfg.GRPO.Lambda, "lambda", cfg.GRPO.Lambda, 0, 1e6, "λ, weight of the dense (probe) advantage; 0 = outcome-only GRPO (Probe-RPO paper best: 0.5)")
	f.Var(&cfg.GRPO.DenseMode, "dense-mode", "dense advantage: scaled ((B_T - B_{t-1})/std, default), pooled (DeepSeekMath form, length-biased), turn, rtg-per-turn, or the control length-only (docs/grpo.md)")
	f.BoolVar(&cfg.ShuffleBeliefs, "shuffle-beliefs", false, "control: replace each rollout's dense rewards by another group's of the same length (docs/results.md λ study)")
	flagbound.Float(f, &cfg.GRPO.SeparateThreshold, "separate-threshold", cfg.GRPO.SeparateThreshold, 0, 1e6, "Figure 7: a dead group counts as separated when λ·A_dense at turn 1 differs by more than this")
	flagbound.Int(f, &cfg.GRPO.G, "g", cfg.GRPO.G, 2, grpo.MaxG, "rollouts per scenario (group size)")
	flagbound.Int(f, &cfg.GRPO.ScenariosPerStep, "scenarios-per-step", cfg.GRPO.ScenariosPerStep, 1, grpo.MaxScenariosPerStep, "scenarios (groups) per step")
	flagbound.Int(f, &cfg.GRPO.Epochs, "epochs", cfg.GRPO.Epochs, 1, grpo.MaxEpochs, "passes over the training scenarios")
	flagbound.Int(f, &cfg.MaxSteps, "max-steps", 0, 0, grpo.MaxSteps, "stop after this many steps (0: epochs x floor(scenarios / scenarios-per-step))")
	flagbound.Float(f, &cfg.GRPO.LearningRate, "lr", cfg.GRPO.LearningRate, 1e-12, 1, "Adam learning rate (the Probe-RPO paper's 1e-5 is for a 4B LLM)")
	flagbound.Float(f, &cfg.GRPO.KLBeta, "kl", cfg.GRPO.KLBeta, 0, 1e6, "β, weight of the k3 KL penalty to the initial policy")
	flagbound.Float(f, &cfg.GRPO.EntropyCoef, "entropy", cfg.GRPO.EntropyCoef, 0, 1e6, "entropy bonus weight")
	flagbound.Float(f, &cfg.GRPO.ClipEps, "clip", cfg.GRPO.ClipEps, 1e-9, 0.999999, "PPO clip ε")
	flagbound.Float(f, &cfg.GRPO.StrategyWeight, "strategy-weight", cfg.GRPO.StrategyWeight, 0, 1e6, "w in R_out = R_goal + w R_strategy (R_strategy = 0 without --judge)")
	flagbound.Int(f, &cfg.Updates, "updates", cfg.Updates, 1, grpo.MaxUpdates, "Adam updates per step on its batch")
	flagbound.Int(f, &cfg.Hidden, "hidden", cfg.Hidden, 0, 4096, "planner hidden width (0 = linear policy)")
	flagbound.Int(f, &cfg.Features.BowDims, "bow-dims", cfg.Features.BowDims, 0, 4096, "hashed bag-of-words features of the last reply (0 = none)")
	tmaxFlag(f, &cfg.Tmax, cfg.Tmax, "Probe-RPO paper: 10")
	flagbound.Int(f, &cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, 0, grpo.MaxSteps, "write the checkpoint every N steps (0: only at the end)")
	seedFlag(f, &cfg.GRPO.Seed, "initial weights, scenario order, every episode")
	probesFlag(f, &o.Probes, "default")
	workersFlag(f, &o.Workers)
	dbFlag(f, &dbPath)
	var metricsDB string
	mcmd := &cobra.Command{
		Use:   "metrics RUN_ID",
		Short: "Print a training run's stored per-step metrics as CSV",
		Long: `Prints one CSV row per training step of run RUN_ID: step (1-based), then every
stored metric in name order (docs/training.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc := runs.Open(metricsDB)
			defer svc.Close()
			return svc.WriteMetricsCSV(cmd.Context(), args[0], cmd.OutOrStdout())
		},
	}
	dbFlag(mcmd.Flags(), &metricsDB)
	cmd.AddCommand(mcmd)
	return cmd
}
