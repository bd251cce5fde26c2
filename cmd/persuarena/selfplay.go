package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/selfplay"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/train"
)

// selfplayMeta is what persuarena selfplay keeps in the checkpoint (and
// the run record) besides the library's configuration, so --resume needs
// only --checkpoint-dir.
type selfplayMeta struct {
	Scenarios   []string `json:"scenarios"`
	Split       string   `json:"split"`
	InitPlanner string   `json:"init_planner,omitempty"`
	Student     string   `json:"student,omitempty"`
}

// selfplayRunConfig is the run record's configuration.
type selfplayRunConfig struct {
	SelfPlay selfplay.Config `json:"selfplay"`
	selfplayMeta
	CheckpointDir string `json:"checkpoint_dir"`
}

func init() { rootCmd.AddCommand(newSelfplayCmd()) }

// newSelfplayCmd returns "selfplay" and its "warmstart" subcommand; a
// fresh tree each call, so tests do not share flag state.
func newSelfplayCmd() *cobra.Command {
	var (
		meta           selfplayMeta
		dir, dbPath    string
		resume         bool
		workers        int
		cfg            = selfplay.DefaultConfig()
		userLR, userKL float64
	)
	cmd := &cobra.Command{
		Use:   "selfplay",
		Short: "MASP alternating self-play: train the planner against a trainable user policy and back (seed 003 Algorithm 1)",
		Long: `Alternating self-play at the planner level (seed 003 Algorithm 1; docs/masp.md,
"Self-play"). The system is a planner (persuarena train's policy: which
persuasion acts to use each turn, realised by the built-in templates); the
user is a trainable policy that chooses a reaction class each turn (voice a
concern, push back, warm up, deflect, accept, conditional, reject) from its
BDI state and the persuader's acts, over a simulator "mind" whose latent state
moves with the persuader's acts. Dialogues follow the MASP closed-loop
protocol (T = 8).

Each cycle: (a) the planner plays the frozen user and is updated with
r_S = w_prog Δs - w_inf ||ẑ - z||²_A (ẑ from the student mentalizer, z from
the teacher); (b) the user plays the frozen, updated planner and is updated
with r_U = -w_prog Δs + w_rat q (q from the rule-based rationality judge);
both with group-relative advantages of discounted returns-to-go (γ 0.97) and
a PPO-clipped step with a KL penalty to that side's warm-start reference;
(c) the student is refitted on real prefixes plus the cycle's self-play
prefixes. Before cycle 1 the user is warm-started by behaviour cloning of its
mind, and the planner starts from --init-planner (its KL reference).

After every cycle, --checkpoint-dir receives selfplay.json (the whole state;
--resume continues from it exactly), planner.json (evaluate with
"persuarena masp eval --persuader planner:DIR/planner.json") and user.json,
each written atomically. One line per phase goes to stderr and the cycle's
metrics to the run database ("persuarena train metrics RUN_ID" prints them).

"persuarena selfplay warmstart" trains a planner against a simulator variant
(e.g. soft users only) to start from.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := atLeast(1, "tmax", cfg.T, "workers", workers); err != nil {
				return err
			}
			if cmd.Flags().Changed("user-lr") {
				cfg.User.LearningRate = userLR
			}
			if cmd.Flags().Changed("user-kl") {
				cfg.User.KLBeta = userKL
			}
			cycles := -1
			if cmd.Flags().Changed("cycles") {
				cycles = cfg.Cycles
			}
			return runSelfplay(cmd.Context(), cfg, meta, dir, dbPath, resume, cycles, workers, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Cycles, "cycles", cfg.Cycles, "outer self-play cycles K (with --resume: extend the run to this many)")
	scenariosFlag(f, &meta.Scenarios, "training scenario sets")
	f.StringVar(&meta.Split, "split", "train", "split to train on: train, val, heldout or all")
	f.IntVar(&cfg.G, "g", cfg.G, "dialogues per scenario (the group)")
	f.IntVar(&cfg.ScenariosPerStep, "scenarios-per-step", cfg.ScenariosPerStep, "scenarios (groups) per update step")
	f.IntVar(&cfg.SystemSteps, "system-steps", cfg.SystemSteps, "planner update steps per cycle")
	f.IntVar(&cfg.UserSteps, "user-steps", cfg.UserSteps, "user update steps per cycle")
	f.IntVar(&cfg.Updates, "updates", cfg.Updates, "Adam updates per step on its batch")
	tmaxFlag(f, &cfg.T, cfg.T, "MASP paper: 8")
	f.Float64Var(&cfg.System.LearningRate, "lr", cfg.System.LearningRate, "planner learning rate")
	f.Float64Var(&cfg.System.KLBeta, "kl", cfg.System.KLBeta, "planner KL β to its reference (seed 003 released code: 0.05)")
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
	f.StringVar(&meta.InitPlanner, "init-planner", "", "planner:PATH: start the planner (and its KL reference) from this checkpoint (default: a fresh uniform planner)")
	f.StringVar(&meta.Student, "student", "", "BDI cache (persuarena masp cache) of real dialogues for the student (default: generated from script and random against sim)")
	f.StringVar(&dir, "checkpoint-dir", "selfplay", "directory of the checkpoints (selfplay.json, planner.json, user.json)")
	f.BoolVar(&resume, "resume", false, "continue the run saved in --checkpoint-dir (its stored configuration and scenarios are used; --cycles may extend it)")
	workersFlag(f, &workers)
	dbFlag(f, &dbPath)
	cmd.AddCommand(selfplayWarmstartCmd())
	return cmd
}

// runSelfplay runs "persuarena selfplay". With resume, the run in dir
// continues with its stored configuration; cycles >= 0 replaces its cycle
// count.
func runSelfplay(ctx context.Context, cfg selfplay.Config, meta selfplayMeta, dir, dbPath string, resume bool, cycles, workers int, out, errOut io.Writer) error {
	var runID string
	if resume {
		info, err := selfplay.ReadInfo(dir)
		if err != nil {
			return err
		}
		if len(info.Meta) > 0 {
			if err := json.Unmarshal(info.Meta, &meta); err != nil {
				return fmt.Errorf("resume %s: stored command settings: %w", dir, err)
			}
		}
		cfg, runID = info.Config, info.RunID
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	sets, err := loadSets(meta.Scenarios, meta.Split)
	if err != nil {
		return err
	}
	var scs []scenario.Scenario
	for _, s := range sets {
		scs = append(scs, s.Scenarios...)
	}
	rawMeta, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	o := selfplay.Options{Scenarios: scs, Workers: workers, Dir: dir, Log: errOut, Meta: rawMeta}
	if !resume {
		if _, err := os.Stat(filepath.Join(dir, selfplay.CheckpointFile)); err == nil {
			return fmt.Errorf("%s already holds a self-play run: continue it with --resume or choose another --checkpoint-dir", dir)
		}
		if meta.InitPlanner != "" {
			path, ok := roles.PlannerPath(meta.InitPlanner)
			if !ok {
				return fmt.Errorf("--init-planner %q: want planner:PATH", meta.InitPlanner)
			}
			ck, err := planner.Load(path)
			if err != nil {
				return err
			}
			o.Planner = ck.Policy
		}
	}
	if meta.Student != "" {
		if o.StudentCache, err = bdi.LoadCache(meta.Student); err != nil {
			return err
		}
	}
	var db *store.DB
	if dbPath != "" {
		if db, err = store.Open(ctx, dbPath); err != nil {
			return err
		}
		defer db.Close()
		o.Store = db
		if runID != "" {
			if _, err := db.GetRun(ctx, runID); err != nil {
				return fmt.Errorf("resume %s: run %s: %w", dir, runID, err)
			}
		} else {
			if runID, err = runs.New(db).Create(ctx, "selfplay", cfg.Seed, selfplayRunConfig{SelfPlay: cfg, selfplayMeta: meta, CheckpointDir: dir}); err != nil {
				return err
			}
		}
		o.RunID = runID
	}
	var r *selfplay.Runner
	if resume {
		if r, err = selfplay.Resume(ctx, dir, o); err != nil {
			return err
		}
		if cycles >= 0 {
			if err := r.SetCycles(cycles); err != nil {
				return err
			}
		}
	} else {
		fmt.Fprintf(errOut, "self-play on %d scenarios: fitting the student and warm-starting the user\n", len(scs))
		if r, err = selfplay.New(ctx, cfg, o); err != nil {
			return errors.Join(err, setStatus(db, runID, store.StatusFailed))
		}
	}
	if err := setStatus(db, r.RunID(), store.StatusRunning); err != nil {
		return err
	}
	if r.CyclesDone() >= r.Config().Cycles {
		fmt.Fprintf(errOut, "all %d cycles already done (extend with --cycles)\n", r.Config().Cycles)
	} else {
		fmt.Fprintf(errOut, "run %s: cycles %d..%d, checkpoints in %s\n", r.RunID(), r.CyclesDone()+1, r.Config().Cycles, dir)
	}
	_, err = r.Run(ctx)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(errOut, "interrupted after cycle %d; continue with: persuarena selfplay --resume --checkpoint-dir %s\n", r.CyclesDone(), dir)
	}
	if serr := setStatus(db, r.RunID(), runs.Status(err)); serr != nil || err != nil {
		return errors.Join(err, serr)
	}
	base := "script"
	if meta.InitPlanner != "" {
		base = meta.InitPlanner
	}
	fmt.Fprintf(out, "self-play: %d cycles done; checkpoints in %s\nevaluate: persuarena masp eval --persuader %s,planner:%s/%s --users sim-soft,sim-hard,sim\n",
		r.CyclesDone(), dir, base, strings.TrimSuffix(dir, "/"), selfplay.PlannerFile)
	return nil
}

func setStatus(db *store.DB, runID, status string) error {
	if db == nil || runID == "" {
		return nil
	}
	return db.SetRunStatus(context.Background(), runID, status)
}

// selfplayWarmstartCmd is "persuarena selfplay warmstart": Probe-RPO (the
// train package) against one simulator variant.
func selfplayWarmstartCmd() *cobra.Command {
	var (
		scenarios      []string
		split, out     string
		persuadee      string
		workers, steps int
		resume         bool
	)
	cfg := train.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "warmstart --out FILE",
		Short: "Train a planner with Probe-RPO against one simulator variant (e.g. soft users only) to start self-play from",
		Long: `Trains a planner exactly as "persuarena train" does (package train; docs/training.md)
but against a chosen simulator variant: sim-soft (default; MASP's "trained
only against soft users" baseline), sim or sim-hard. The checkpoint is a
planner checkpoint: pass it to "persuarena selfplay --init-planner
planner:FILE" and to "persuarena masp eval --persuader planner:FILE".
--resume continues it (same --persuadee and scenarios; --steps may extend it).
Nothing is stored in the run database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("selfplay warmstart needs --out")
			}
			if err := atLeast(1, "tmax", cfg.Tmax, "workers", workers); err != nil {
				return err
			}
			if !roles.IsSim(persuadee) {
				return fmt.Errorf("--persuadee %q: want a simulator (%s)", persuadee, "sim, sim-soft, sim-hard, sim-hand, sim:FILE")
			}
			reg, _ := roles.New("")
			pee, err := reg.Persuadee(persuadee)
			if err != nil {
				return fmt.Errorf("--persuadee: %w", err)
			}
			sets, err := loadSets(scenarios, split)
			if err != nil {
				return err
			}
			var scs []scenario.Scenario
			for _, s := range sets {
				scs = append(scs, s.Scenarios...)
			}
			o := train.Options{Scenarios: scs, Persuadee: pee, Workers: workers, Checkpoint: out, Log: cmd.ErrOrStderr()}
			var tr *train.Trainer
			if resume {
				if tr, err = train.Resume(out, o); err != nil {
					return err
				}
				if cmd.Flags().Changed("steps") {
					if err := tr.SetMaxSteps(steps); err != nil {
						return err
					}
				}
			} else {
				cfg.Features.Tmax = cfg.Tmax
				cfg.MaxSteps = steps
				if tr, err = train.New(cfg, o); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "warm start: %d scenarios against %s, steps %d..%d\n", len(scs), persuadee, tr.StepsDone()+1, tr.TotalSteps())
			if _, err := tr.Run(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "planner trained against %s for %d steps: %s\n", persuadee, tr.StepsDone(), out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&persuadee, "persuadee", "sim-soft", "simulator variant to train against: sim-soft, sim, sim-hard or sim:FILE (a simulator config file)")
	scenariosFlag(f, &scenarios, "training scenario sets")
	f.StringVar(&split, "split", "train", "split to train on")
	f.StringVar(&out, "out", "", "planner checkpoint to write (atomically)")
	f.IntVar(&steps, "steps", 0, "steps (0: epochs x floor(scenarios / scenarios-per-step))")
	f.IntVar(&cfg.GRPO.Epochs, "epochs", cfg.GRPO.Epochs, "passes over the training scenarios")
	f.IntVar(&cfg.GRPO.G, "g", cfg.GRPO.G, "rollouts per scenario")
	f.IntVar(&cfg.GRPO.ScenariosPerStep, "scenarios-per-step", cfg.GRPO.ScenariosPerStep, "scenarios per step")
	f.Float64Var(&cfg.GRPO.Lambda, "lambda", cfg.GRPO.Lambda, "λ, weight of the dense (probe) advantage")
	f.Float64Var(&cfg.GRPO.LearningRate, "lr", cfg.GRPO.LearningRate, "Adam learning rate")
	tmaxFlag(f, &cfg.Tmax, cfg.Tmax, "Probe-RPO paper: 10")
	f.IntVar(&cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, "write the checkpoint every N steps (0: only at the end)")
	seedFlag(f, &cfg.GRPO.Seed, "initial weights, scenario order, every episode")
	workersFlag(f, &workers)
	f.BoolVar(&resume, "resume", false, "continue the run saved in --out")
	return cmd
}
