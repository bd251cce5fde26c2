package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/selfplay"
	"github.com/persuarena/persuarena/train"
)

func init() { rootCmd.AddCommand(newSelfplayCmd()) }

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
	f.IntVar(&cfg.Cycles, "cycles", cfg.Cycles, "outer self-play cycles K (with --resume: extend the run to this many)")
	scenariosFlag(f, &spec.Meta.Scenarios, "training scenario sets")
	f.StringVar(&spec.Meta.Split, "split", "train", "split to train on: train, val, heldout or all")
	f.IntVar(&cfg.G, "g", cfg.G, "dialogues per scenario (the group)")
	f.IntVar(&cfg.ScenariosPerStep, "scenarios-per-step", cfg.ScenariosPerStep, "scenarios (groups) per update step")
	f.IntVar(&cfg.SystemSteps, "system-steps", cfg.SystemSteps, "planner update steps per cycle")
	f.IntVar(&cfg.UserSteps, "user-steps", cfg.UserSteps, "user update steps per cycle")
	f.IntVar(&cfg.Updates, "updates", cfg.Updates, "Adam updates per step on its batch")
	tmaxFlag(f, &cfg.T, cfg.T, "MASP paper: 8")
	f.Float64Var(&cfg.System.LearningRate, "lr", cfg.System.LearningRate, "planner learning rate")
	f.Float64Var(&cfg.System.KLBeta, "kl", cfg.System.KLBeta, "planner KL β to its reference (MASP paper's released code: 0.05)")
	f.Float64Var(&userLR, "user-lr", cfg.User.LearningRate, "user policy learning rate")
	f.Float64Var(&userKL, "user-kl", cfg.User.KLBeta, "user KL β to its warm-start reference")
	f.IntVar(&cfg.UserHidden, "user-hidden", cfg.UserHidden, "user policy hidden width (0 = linear)")
	f.IntVar(&cfg.UserWarmSteps, "user-warm-steps", cfg.UserWarmSteps, "behaviour-cloning steps of the user's warm start (0: uniform start)")
	f.StringVar(&cfg.Mind, "mind", cfg.Mind, "simulator variant of the user's mind: default, soft or hard")
	f.Float64Var(&cfg.Weights.Prog, "w-prog", cfg.Weights.Prog, "w_prog, weight of progress Δs in r_S and r_U")
	f.Float64Var(&cfg.Weights.Inf, "w-inf", cfg.Weights.Inf, "w_inf, weight of the mentalization error in r_S")
	f.Float64Var(&cfg.Weights.Rat, "w-rat", cfg.Weights.Rat, "w_rat, weight of the rationality signal q in r_U")
	f.Float64Var(&cfg.Weights.Gamma, "gamma", cfg.Weights.Gamma, "discount γ of the returns-to-go")
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
	f.IntVar(&spec.Steps, "steps", 0, "steps (0: epochs x floor(scenarios / scenarios-per-step))")
	f.IntVar(&cfg.GRPO.Epochs, "epochs", cfg.GRPO.Epochs, "passes over the training scenarios")
	f.IntVar(&cfg.GRPO.G, "g", cfg.GRPO.G, "rollouts per scenario")
	f.IntVar(&cfg.GRPO.ScenariosPerStep, "scenarios-per-step", cfg.GRPO.ScenariosPerStep, "scenarios per step")
	f.Float64Var(&cfg.GRPO.Lambda, "lambda", cfg.GRPO.Lambda, "λ, weight of the dense (probe) advantage")
	f.Float64Var(&cfg.GRPO.LearningRate, "lr", cfg.GRPO.LearningRate, "Adam learning rate")
	tmaxFlag(f, &cfg.Tmax, cfg.Tmax, "Probe-RPO paper: 10")
	f.IntVar(&cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, "write the checkpoint every N steps (0: only at the end)")
	seedFlag(f, &cfg.GRPO.Seed, "initial weights, scenario order, every episode")
	workersFlag(f, &spec.Workers)
	f.BoolVar(&spec.Resume, "resume", false, "continue the run saved in --out")
	return cmd
}
