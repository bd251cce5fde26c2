package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/train"
)

// trainRunConfig is what a train run stores in the run database: the
// trainer's configuration and the names of what it trained against.
type trainRunConfig struct {
	Train      train.Config `json:"train"`
	Scenarios  []string     `json:"scenarios"`
	Split      string       `json:"split"`
	Persuadee  string       `json:"persuadee"`
	Checkpoint string       `json:"checkpoint"`
	Config     string       `json:"config,omitempty"`
	Basis      probe.Basis  `json:"basis"`
	// Judge is the --judge role (llm:NAME) giving R_strategy, and
	// JudgeSamples its samples per question.
	Judge        string `json:"judge,omitempty"`
	JudgeSamples int    `json:"judge_samples,omitempty"`
}

func init() {
	var (
		rc      trainRunConfig
		probes  string
		workers int
		dbPath  string
		resume  bool
	)
	cfg := train.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a strategy planner with Probe-RPO against a persuadee",
		Long: `Trains a planner persuader (a small policy that picks the persuasion acts of each
turn; the built-in templates write them) with Probe-RPO (seed 000): G rollouts
per scenario, group-relative advantages from the outcome reward and, with
weight --lambda, the probed belief changes; PPO-clipped Adam updates with a k3
KL penalty to the initial policy and an entropy bonus.

Every rollout is stored in the run database (so runs analyse like eval runs),
with per-step metrics; a line per step goes to stderr. The checkpoint file is
written atomically every --checkpoint-every steps and at the end; evaluate it
with "persuarena eval --persuader planner:PATH". Ctrl-C stops; "--resume"
continues from the checkpoint exactly as if never stopped.

R_out = R_goal + w R_strategy, with R_strategy from --judge llm:NAME when given
(else 0).

Defaults: seed 000 Table 3 (G 4, 16 scenarios a step, 2 epochs, KL 0.05,
entropy 0.01, lambda 0.5) except the learning rate (1e-2, not 1e-5: see
docs/training.md), against the simulator "sim" on the train splits of arena
and p4g.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := atLeast(1, "tmax", cfg.Tmax, "workers", workers); err != nil {
				return err
			}
			cfg.Features.Tmax = cfg.Tmax
			rc.Train = cfg
			maxSteps := -1 // keep the stored cap on --resume
			if cmd.Flags().Changed("max-steps") {
				maxSteps = cfg.MaxSteps
			}
			return runTrain(cmd.Context(), rc, probes, workers, dbPath, resume, maxSteps, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	scenariosFlag(f, &rc.Scenarios, "training scenario sets")
	f.StringVar(&rc.Split, "split", "train", "split to train on: train, val, heldout or all")
	f.StringVar(&rc.Persuadee, "persuadee", "sim", "persuadee to train against (sim, sim-soft, sim-hard, sim:FILE, or llm:NAME with --config)")
	f.StringVar(&rc.Config, "config", "", "persuarena.yaml naming the backends and roles of llm:NAME persuadees and judges (docs/llm-roles.md)")
	f.StringVar(&rc.Judge, "judge", "", "llm:NAME: LLM judge (a role of --config) rating each rollout's strategy, R_strategy in [-1, 1] (default: none, R_strategy = 0)")
	f.IntVar(&rc.JudgeSamples, "judge-samples", 1, "judge samples per question, averaged (with --judge)")
	f.StringVar(&rc.Checkpoint, "checkpoint", "planner.json", "checkpoint file (written atomically; --resume reads it)")
	f.BoolVar(&resume, "resume", false, "continue the run saved in --checkpoint (its stored configuration is used; --max-steps may extend it)")
	f.Float64Var(&cfg.GRPO.Lambda, "lambda", cfg.GRPO.Lambda, "λ, weight of the dense (probe) advantage; 0 = outcome-only GRPO (seed 000 best: 0.5)")
	f.Var(denseModeFlag{&cfg.GRPO.DenseMode}, "dense-mode", "dense advantage: scaled ((B_T - B_{t-1})/std, default), pooled (DeepSeekMath form, length-biased), turn, rtg-per-turn, or the control length-only (docs/grpo.md)")
	f.BoolVar(&cfg.ShuffleBeliefs, "shuffle-beliefs", false, "control: replace each rollout's dense rewards by another group's of the same length (docs/results.md λ study)")
	f.Float64Var(&cfg.GRPO.SeparateThreshold, "separate-threshold", cfg.GRPO.SeparateThreshold, "Figure 7: a dead group counts as separated when λ·A_dense at turn 1 differs by more than this")
	f.IntVar(&cfg.GRPO.G, "g", cfg.GRPO.G, "rollouts per scenario (group size)")
	f.IntVar(&cfg.GRPO.ScenariosPerStep, "scenarios-per-step", cfg.GRPO.ScenariosPerStep, "scenarios (groups) per step")
	f.IntVar(&cfg.GRPO.Epochs, "epochs", cfg.GRPO.Epochs, "passes over the training scenarios")
	f.IntVar(&cfg.MaxSteps, "max-steps", 0, "stop after this many steps (0: epochs x floor(scenarios / scenarios-per-step))")
	f.Float64Var(&cfg.GRPO.LearningRate, "lr", cfg.GRPO.LearningRate, "Adam learning rate (seed 000's 1e-5 is for a 4B LLM)")
	f.Float64Var(&cfg.GRPO.KLBeta, "kl", cfg.GRPO.KLBeta, "β, weight of the k3 KL penalty to the initial policy")
	f.Float64Var(&cfg.GRPO.EntropyCoef, "entropy", cfg.GRPO.EntropyCoef, "entropy bonus weight")
	f.Float64Var(&cfg.GRPO.ClipEps, "clip", cfg.GRPO.ClipEps, "PPO clip ε")
	f.Float64Var(&cfg.GRPO.StrategyWeight, "strategy-weight", cfg.GRPO.StrategyWeight, "w in R_out = R_goal + w R_strategy (R_strategy = 0: no judge yet)")
	f.IntVar(&cfg.Updates, "updates", cfg.Updates, "Adam updates per step on its batch")
	f.IntVar(&cfg.Hidden, "hidden", cfg.Hidden, "planner hidden width (0 = linear policy)")
	f.IntVar(&cfg.Features.BowDims, "bow-dims", cfg.Features.BowDims, "hashed bag-of-words features of the last reply (0 = none)")
	tmaxFlag(f, &cfg.Tmax, cfg.Tmax, "Probe-RPO paper: 10")
	f.IntVar(&cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, "write the checkpoint every N steps (0: only at the end)")
	seedFlag(f, &cfg.GRPO.Seed, "initial weights, scenario order, every episode")
	f.StringVar(&probes, "probes", "", "probe basis JSON file (default: the CA/PE/AC basis of seed 000 Table 1)")
	workersFlag(f, &workers)
	dbFlag(f, &dbPath)
	rootCmd.AddCommand(cmd)

	var metricsDB string
	mcmd := &cobra.Command{
		Use:   "metrics RUN_ID",
		Short: "Print a training run's stored per-step metrics as CSV",
		Long: `Prints one CSV row per training step of run RUN_ID: step (1-based), then every
stored metric in name order (accept, dead_share, entropy, kl, mean_abs_a_out,
mean_abs_lambda_a_dense, mean_r_out, separated_share, ...; docs/training.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := store.Open(cmd.Context(), metricsDB)
			if err != nil {
				return err
			}
			defer db.Close()
			return writeMetricsCSV(cmd.Context(), db, args[0], cmd.OutOrStdout())
		},
	}
	dbFlag(mcmd.Flags(), &metricsDB)
	cmd.AddCommand(mcmd)
}

// writeMetricsCSV writes run runID's step metrics as CSV: a header "step"
// plus the metric names (sorted, the union over steps), then a row per
// step (1-based), empty where a step lacks a metric.
func writeMetricsCSV(ctx context.Context, db *store.DB, runID string, out io.Writer) error {
	ms, err := db.Metrics(ctx, runID)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for _, m := range ms {
		for k := range m.Metrics {
			set[k] = true
		}
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	slices.Sort(names)
	w := csv.NewWriter(out)
	if err := w.Write(append([]string{"step"}, names...)); err != nil {
		return err
	}
	for _, m := range ms {
		row := []string{strconv.Itoa(m.Step + 1)}
		for _, k := range names {
			v, ok := m.Metrics[k]
			cell := ""
			if ok {
				cell = strconv.FormatFloat(v, 'g', 6, 64)
			}
			row = append(row, cell)
		}
		if err := w.Write(row); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

// runTrain runs "persuarena train". With resume, the run saved in
// rc.Checkpoint continues with its stored configuration, except that
// maxSteps >= 0 replaces its step cap (to extend it).
//
// A new run opens (and creates) the database only after its inputs are
// valid, so a rejected command leaves no file; --resume needs an existing
// database.
func runTrain(ctx context.Context, rc trainRunConfig, probes string, workers int, dbPath string, resume bool, maxSteps int, out, errOut io.Writer) (err error) {
	var db *store.DB
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	var runID string
	if resume {
		if db, err = openExistingDB(ctx, dbPath); err != nil {
			return err
		}
		id, stored, err := trainRunOf(ctx, db, rc.Checkpoint)
		if err != nil {
			return err
		}
		ckPath, cfgPath := rc.Checkpoint, rc.Config
		rc = stored
		rc.Checkpoint = ckPath
		if cfgPath != "" {
			rc.Config = cfgPath
		}
		runID = id
	}
	if !resume {
		rc.Basis = probe.Default
		if probes != "" {
			if rc.Basis, err = probe.LoadBasis(probes); err != nil {
				return err
			}
		}
	}
	reg, err := roles.New(rc.Config)
	if err != nil {
		return err
	}
	pees, err := reg.Persuadees([]string{rc.Persuadee})
	if err != nil {
		return err
	}
	sets, err := loadSets(rc.Scenarios, rc.Split)
	if err != nil {
		return err
	}
	var scs []scenario.Scenario
	for _, s := range sets {
		scs = append(scs, s.Scenarios...)
	}
	var judge episode.Judge
	if rc.Judge != "" {
		j, err := reg.Judge(rc.Judge, rc.JudgeSamples)
		if err != nil {
			return err
		}
		judge = j.ForEpisodes()
	}
	if !resume {
		if err := rc.Train.Validate(); err != nil {
			return err
		}
		if db, err = store.Open(ctx, dbPath); err != nil {
			return err
		}
	}
	o := train.Options{Scenarios: scs, Persuadee: pees[0], Basis: rc.Basis, Workers: workers, Store: db,
		Checkpoint: rc.Checkpoint, Log: errOut, Judge: judge}
	var tr *train.Trainer
	if resume {
		o.RunID = runID
		if tr, err = train.Resume(rc.Checkpoint, o); err != nil {
			return err
		}
		if maxSteps >= 0 {
			if err := tr.SetMaxSteps(maxSteps); err != nil {
				return err
			}
		}
	} else {
		if runID, err = runs.New(db).Create(ctx, "train", rc.Train.GRPO.Seed, rc); err != nil {
			return err
		}
		o.RunID = runID
		if tr, err = train.New(rc.Train, o); err != nil {
			return err
		}
	}
	bg := context.WithoutCancel(ctx)
	if err := db.SetRunStatus(bg, runID, store.StatusRunning); err != nil {
		return err
	}
	if tr.StepsDone() >= tr.TotalSteps() {
		fmt.Fprintf(errOut, "run %s: all %d steps already done (extend with --max-steps)\n", runID, tr.TotalSteps())
	} else {
		fmt.Fprintf(errOut, "run %s: training on %d scenarios against %s, steps %d..%d, checkpoint %s\n",
			runID, len(scs), rc.Persuadee, tr.StepsDone()+1, tr.TotalSteps(), rc.Checkpoint)
	}
	_, err = tr.Run(ctx)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(errOut, "interrupted after step %d; continue with: persuarena train --resume --checkpoint %s --db %s\n",
			tr.StepsDone(), rc.Checkpoint, db.Path())
	}
	if err := runs.New(db).Finish(ctx, runID, err); err != nil {
		return err
	}
	fmt.Fprintf(out, "run %s: %d steps done; checkpoint %s\nevaluate: persuarena eval --persuader planner:%s,script --db %s\n",
		runID, tr.StepsDone(), rc.Checkpoint, rc.Checkpoint, db.Path())
	return nil
}

// trainRunOf reads the run ID from the checkpoint's training state and the
// run's stored configuration.
func trainRunOf(ctx context.Context, db *store.DB, checkpoint string) (string, trainRunConfig, error) {
	var rc trainRunConfig
	id, err := train.RunIDOf(checkpoint)
	if err != nil {
		return "", rc, err
	}
	run, err := db.GetRun(ctx, id)
	if err != nil {
		return "", rc, fmt.Errorf("resume %s: run %s: %w", checkpoint, id, err)
	}
	if err := json.Unmarshal(run.Config, &rc); err != nil {
		return "", rc, fmt.Errorf("resume %s: run %s: stored config: %w", checkpoint, id, err)
	}
	return id, rc, nil
}

// denseModeFlag is a pflag.Value for grpo.DenseMode; Set rejects unknown
// modes with the list of known ones.
type denseModeFlag struct{ m *grpo.DenseMode }

func (f denseModeFlag) String() string {
	if f.m == nil {
		return ""
	}
	return string(*f.m)
}

func (f denseModeFlag) Set(s string) error {
	m, err := grpo.ParseDenseMode(s)
	if err != nil {
		return err
	}
	*f.m = m
	return nil
}

func (denseModeFlag) Type() string { return "mode" }
