package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/selfplay"
	"github.com/persuarena/persuarena/train"
)

// newSelfplayCmd returns "selfplay" and its "warmstart" subcommand; a
// fresh tree each call, so tests do not share flag state.
func newSelfplayCmd() *cobra.Command {
	var (
		spec           = runs.SelfPlaySpec{Config: selfplay.DefaultConfig()}
		dbPath         string
		userLR, userKL float64
	)
	cfg := &spec.Config
	cmd := &cobra.Command{
		Use:   "selfplay",
		Short: "MASP alternating self-play: train the planner against a trainable user policy and back (MASP paper, Algorithm 1)",
		Long: `Alternating planner/user self-play (MASP paper, Algorithm 1), checkpointed to
--checkpoint-dir after every cycle (--resume continues). See docs/masp.md, "Self-play".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("user-lr") {
				cfg.User.LearningRate = userLR
			}
			if cmd.Flags().Changed("user-kl") {
				cfg.User.KLBeta = userKL
			}
			spec.Cycles = -1
			if cmd.Flags().Changed("cycles") {
				spec.Cycles = cfg.Cycles
			}
			svc := runs.Open(dbPath)
			defer svc.Close()
			spec.Log = cmd.ErrOrStderr()
			res, err := svc.SelfPlay(cmd.Context(), spec)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "self-play: %d cycles done; checkpoints in %s\nevaluate: %s\n", res.Cycles, spec.Dir, res.Evaluate)
			return err
		},
	}
	f := cmd.Flags()
	flagbound.Int(f, &cfg.Cycles, "cycles", cfg.Cycles, 1, grpo.MaxSteps, "outer self-play cycles K (with --resume: extend the run to this many)")
	scenariosFlag(f, &spec.Meta.Scenarios, "training scenario sets")
	f.StringVar(&spec.Meta.Split, "split", "train", "split to train on: train, val, heldout or all")
	flagbound.Int(f, &cfg.G, "g", cfg.G, 2, grpo.MaxG, "dialogues per scenario (the group)")
	flagbound.Int(f, &cfg.ScenariosPerStep, "scenarios-per-step", cfg.ScenariosPerStep, 1, grpo.MaxScenariosPerStep, "scenarios (groups) per update step")
	flagbound.Int(f, &cfg.SystemSteps, "system-steps", cfg.SystemSteps, 1, 4095, "planner update steps per cycle")
	flagbound.Int(f, &cfg.UserSteps, "user-steps", cfg.UserSteps, 0, 4095, "user update steps per cycle")
	flagbound.Int(f, &cfg.Updates, "updates", cfg.Updates, 1, grpo.MaxUpdates, "Adam updates per step on its batch")
	tmaxFlag(f, &cfg.T, cfg.T, "MASP paper: 8")
	flagbound.Float(f, &cfg.System.LearningRate, "lr", cfg.System.LearningRate, 1e-12, 1, "planner learning rate")
	flagbound.Float(f, &cfg.System.KLBeta, "kl", cfg.System.KLBeta, 0, 1e6, "planner KL β to its reference (MASP paper's released code: 0.05)")
	flagbound.Float(f, &userLR, "user-lr", cfg.User.LearningRate, 1e-12, 1, "user policy learning rate")
	flagbound.Float(f, &userKL, "user-kl", cfg.User.KLBeta, 0, 1e6, "user KL β to its warm-start reference")
	flagbound.Int(f, &cfg.UserHidden, "user-hidden", cfg.UserHidden, 0, 4096, "user policy hidden width (0 = linear)")
	flagbound.Int(f, &cfg.UserWarmSteps, "user-warm-steps", cfg.UserWarmSteps, 0, grpo.MaxSteps, "behaviour-cloning steps of the user's warm start (0: uniform start)")
	f.StringVar(&cfg.Mind, "mind", cfg.Mind, "simulator variant of the user's mind: default, soft or hard")
	flagbound.Float(f, &cfg.Weights.Prog, "w-prog", cfg.Weights.Prog, 0, 1e6, "w_prog, weight of progress Δs in r_S and r_U")
	flagbound.Float(f, &cfg.Weights.Inf, "w-inf", cfg.Weights.Inf, 0, 1e6, "w_inf, weight of the mentalization error in r_S")
	flagbound.Float(f, &cfg.Weights.Rat, "w-rat", cfg.Weights.Rat, 0, 1e6, "w_rat, weight of the rationality signal q in r_U")
	flagbound.Float(f, &cfg.Weights.Gamma, "gamma", cfg.Weights.Gamma, 1e-9, 1, "discount γ of the returns-to-go")
	f.BoolVar(&cfg.WithheldYes, "withheld-yes", cfg.WithheldYes, "judge a user reply that withholds the yes its mind has reached NOT_RATIONAL (docs/masp.md)")
	seedFlag(f, &cfg.Seed, "user weights, scenario choice, every dialogue")
	f.StringVar(&spec.Meta.InitPlanner, "init-planner", "", "planner:PATH: start the planner (and its KL reference) from this checkpoint (default: a fresh uniform planner)")
	f.StringVar(&spec.Meta.Student, "student", "", "BDI cache (persuarena masp cache) of real dialogues for the student (default: generated from script and random against sim)")
	f.StringVar(&spec.Dir, "checkpoint-dir", "selfplay", "directory of the checkpoints (selfplay.json, planner.json, user.json)")
	f.BoolVar(&spec.Resume, "resume", false, "continue the run saved in --checkpoint-dir (its stored configuration and scenarios are used; --cycles may extend it)")
	workersFlag(f, &spec.Workers)
	dbFlag(f, &dbPath)
	cmd.AddCommand(selfplayWarmstartCmd())
	return cmd
}

// selfplayWarmstartCmd is "persuarena selfplay warmstart" (runs.Warmstart).
func selfplayWarmstartCmd() *cobra.Command {
	spec := runs.WarmstartSpec{Train: train.DefaultConfig()}
	cfg := &spec.Train
	cmd := &cobra.Command{
		Use:   "warmstart --out FILE",
		Short: "Train a planner with Probe-RPO against one simulator variant (e.g. soft users only) to start self-play from",
		Long: `Trains a planner as "persuarena train" does against one simulator variant, for
"selfplay --init-planner planner:FILE"; not stored in --db. See docs/masp.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if spec.Resume && !cmd.Flags().Changed("steps") {
				spec.Steps = -1
			}
			spec.Log = cmd.ErrOrStderr()
			n, err := runs.Warmstart(cmd.Context(), spec)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "planner trained against %s for %d steps: %s\n", spec.Persuadee, n, spec.Out)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Persuadee, "persuadee", "sim-soft", "simulator variant to train against: sim-soft, sim, sim-hard or sim:FILE (a simulator config file)")
	scenariosFlag(f, &spec.Scenarios, "training scenario sets")
	f.StringVar(&spec.Split, "split", "train", "split to train on")
	f.StringVar(&spec.Out, "out", "", "planner checkpoint to write (atomically)")
	flagbound.Int(f, &spec.Steps, "steps", 0, 0, grpo.MaxSteps, "steps (0: epochs x floor(scenarios / scenarios-per-step))")
	flagbound.Int(f, &cfg.GRPO.Epochs, "epochs", cfg.GRPO.Epochs, 1, grpo.MaxEpochs, "passes over the training scenarios")
	flagbound.Int(f, &cfg.GRPO.G, "g", cfg.GRPO.G, 2, grpo.MaxG, "rollouts per scenario")
	flagbound.Int(f, &cfg.GRPO.ScenariosPerStep, "scenarios-per-step", cfg.GRPO.ScenariosPerStep, 1, grpo.MaxScenariosPerStep, "scenarios per step")
	flagbound.Float(f, &cfg.GRPO.Lambda, "lambda", cfg.GRPO.Lambda, 0, 1e6, "λ, weight of the dense (probe) advantage")
	flagbound.Float(f, &cfg.GRPO.LearningRate, "lr", cfg.GRPO.LearningRate, 1e-12, 1, "Adam learning rate")
	tmaxFlag(f, &cfg.Tmax, cfg.Tmax, "Probe-RPO paper: 10")
	flagbound.Int(f, &cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, 0, grpo.MaxSteps, "write the checkpoint every N steps (0: only at the end)")
	seedFlag(f, &cfg.GRPO.Seed, "initial weights, scenario order, every episode")
	workersFlag(f, &spec.Workers)
	f.BoolVar(&spec.Resume, "resume", false, "continue the run saved in --out")
	return cmd
}
