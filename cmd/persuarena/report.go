package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/report"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// reportOptions are report's flags.
type reportOptions struct {
	out, title string
	seed       uint64
	resamples  int
	timestamp  bool
	baseline   string
}

func init() {
	var (
		o      reportOptions
		dbPath string
	)
	cmd := &cobra.Command{
		Use:   "report RUN_ID... --out DIR",
		Short: "Write a self-contained HTML report (tables and figures) of stored runs",
		Long: `Writes DIR/index.html: one self-contained page (inline CSS, figures as inline
SVG, no scripts, nothing loaded from the network) with the runs' metadata and
configurations, the Table 5/9 outcome summary per persuader, persuadee and
scenario set, seed 000's Tables 6-9, Figures 5 (persuasion acts by turn),
6 (probe states and belief by turn) and 7 (dead GRPO groups; needs
--rollouts >= 2), a terminal-state bar chart, the terminal shares with 95%
Wilson intervals and, when the runs hold two or more persuaders, the paired
comparison of each against the baseline (--baseline, default the first). Each figure is also saved as SVG and
PNG, and every table in Markdown (tables.md), for papers.

Several runs are combined as "analyze" combines them. The same runs give the
same files byte for byte (--timestamp adds a generated-at line). See
docs/report.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd.Context(), dbPath, args, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "directory to write index.html and the figures into (created if missing)")
	f.StringVar(&o.title, "title", "", `report title (default "PersuArena report")`)
	f.Uint64Var(&o.seed, "seed", 1, "bootstrap seed of the paired comparison")
	f.IntVar(&o.resamples, "resamples", analysis.DefaultResamples, "paired bootstrap resamples of the comparison")
	f.StringVar(&o.baseline, "baseline", "", "persuader every other persuader is compared against (default: the first in the runs)")
	f.BoolVar(&o.timestamp, "timestamp", false, "add a generated-at line (the report is then no longer byte-identical across builds)")
	dbFlag(f, &dbPath)
	cmd.MarkFlagRequired("out")
	rootCmd.AddCommand(cmd)
}

func runReport(ctx context.Context, dbPath string, runIDs []string, o reportOptions, out, errOut io.Writer) error {
	if o.out == "" {
		return fmt.Errorf("--out is required")
	}
	if o.resamples < 1 {
		return fmt.Errorf("--resamples must be >= 1, got %d", o.resamples)
	}
	db, err := openExistingDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	var (
		infos []report.RunInfo
		sets  []string
	)
	setOf := map[string]string{}
	groupSize := map[string]int{} // train runs: rollouts per scenario a step
	var (
		training []report.TrainingRun
		gcfg     *grpo.Config
	)
	arms, err := planArms(ctx, db, runIDs)
	if err != nil {
		return err
	}
	total := 0
	for _, id := range runIDs {
		run, err := db.GetRun(ctx, id)
		if err != nil {
			return fmt.Errorf("run %s: %w", id, err)
		}
		counts, err := db.TerminalCounts(ctx, id)
		if err != nil {
			return err
		}
		n, failed := 0, 0
		for _, c := range counts {
			n += c.Episodes
			failed += c.Terminals[decision.TermFailed]
		}
		total += n
		infos = append(infos, report.RunInfo{ID: run.ID, Kind: run.Kind, Status: run.Status, Version: run.Version,
			Seed: run.Seed, CreatedAt: run.CreatedAt, Config: run.Config, Episodes: n, Failed: failed})
		for _, name := range runSets(run, setOf, errOut) {
			if !contains(sets, name) {
				sets = append(sets, name)
			}
		}
		if cfg, ok := trainGRPO(run); ok {
			groupSize[id] = cfg.G
			if gcfg == nil {
				gcfg = &cfg
			} else if gcfg.Lambda != cfg.Lambda {
				fmt.Fprintf(errOut, "report: run %s trains with λ = %g; Figure 7 uses the first training run's λ = %g\n", id, cfg.Lambda, gcfg.Lambda)
			}
			steps, err := db.Metrics(ctx, id)
			if err != nil {
				return err
			}
			training = append(training, report.TrainingRun{RunID: id, Steps: steps})
		}
	}
	if total == 0 {
		return fmt.Errorf("run(s) %s hold no episodes", strings.Join(runIDs, ", "))
	}
	ro := report.Options{Title: o.title, Runs: infos, Sets: sets, CompareSeed: o.seed, Resamples: o.resamples,
		Baseline: o.baseline, Generator: "persuarena " + report.Version(),
		Progress: func(s string) { fmt.Fprintf(errOut, "report: %s\n", s) },
		Training: training, GRPO: gcfg}
	if len(groupSize) > 0 {
		// The trainer stores rollout i of step s (0-based) as rollout
		// s·G + i: Figure 7 groups a train run's rollouts by that step
		// (1-based); other runs' episodes sit at step 0.
		ro.Groups.Step = func(ep *episode.Episode) int {
			if g := groupSize[ep.RunID]; g > 0 {
				return ep.Rollout/g + 1
			}
			return 0
		}
	}
	if len(setOf) > 0 {
		ro.SetOf = func(id string) string {
			if s, ok := setOf[id]; ok {
				return s
			}
			return "unknown"
		}
	}
	if o.timestamp {
		ro.Generated = time.Now().UTC().Format(time.RFC3339)
	}
	// One pass over the runs' episodes, one at a time, in the order the
	// in-memory report read them (planArms); the paired comparison reads
	// its two arms' outcome rows only.
	src := report.Source{
		Each: func(fn func(*episode.Episode) error) error {
			fmt.Fprintf(errOut, "report: reading %d episode(s) of run(s) %s\n", total, strings.Join(runIDs, ", "))
			return eachArmEpisode(ctx, db, arms, fn)
		},
		Outcomes: func(per, pee string) (string, []episode.Outcome, error) {
			for _, a := range arms {
				if a.name != per || a.arm.Persuadee != pee {
					continue
				}
				var os []episode.Outcome
				err := db.EachOutcome(ctx, a.run, func(o episode.Outcome) error {
					if o.Persuader == a.arm.Persuader && o.Persuadee == pee {
						o.Persuader = a.name
						os = append(os, o)
					}
					return nil
				}, store.Filter{Persuader: a.arm.Persuader, Persuadee: pee})
				return a.run, os, err
			}
			return "", nil, nil
		},
	}
	r, err := report.BuildStream(src, ro)
	if err != nil {
		return err
	}
	fmt.Fprintf(errOut, "report: writing %s\n", o.out)
	names, err := r.WriteDir(o.out)
	if err != nil {
		return err
	}
	for _, s := range r.Skipped {
		fmt.Fprintln(errOut, "report: not shown:", s)
	}
	for _, n := range names {
		fmt.Fprintln(out, filepath.Join(o.out, n))
	}
	return nil
}

// runSets maps the scenario ids of run's configured scenario sets (an eval
// run stores them under "scenarios": built-in names or JSONL paths) to the
// set's name, as eval names them, into setOf; it returns the names in
// order. A set that no longer resolves (a moved file) is reported on errOut
// and its episodes show as set "unknown".
func runSets(run store.Run, setOf map[string]string, errOut io.Writer) []string {
	var cfg struct {
		Scenarios []string `json:"scenarios"`
	}
	if len(run.Config) == 0 || json.Unmarshal(run.Config, &cfg) != nil {
		return nil
	}
	var names []string
	for _, ref := range cfg.Scenarios {
		ss, err := scenario.Resolve(ref)
		if err != nil {
			fmt.Fprintf(errOut, "report: run %s: scenario set %s: %v (its episodes show as set \"unknown\")\n", run.ID, ref, err)
			continue
		}
		name := strings.TrimSuffix(ref[strings.LastIndex(ref, "/")+1:], ".jsonl")
		names = append(names, name)
		for _, sc := range ss {
			if _, ok := setOf[sc.ID]; !ok {
				setOf[sc.ID] = name
			}
		}
	}
	return names
}

// trainGRPO returns the GRPO configuration a train run stored (its config
// holds {"train": {"grpo": {...}}}, as persuarena train writes it); ok is
// false for other runs.
func trainGRPO(run store.Run) (cfg grpo.Config, ok bool) {
	var c struct {
		Train *struct {
			GRPO *grpo.Config `json:"grpo"`
		} `json:"train"`
	}
	cfg = grpo.DefaultConfig()
	c.Train = &struct {
		GRPO *grpo.Config `json:"grpo"`
	}{GRPO: &cfg}
	if run.Kind != "train" || len(run.Config) == 0 || json.Unmarshal(run.Config, &c) != nil || cfg.G < 1 {
		return grpo.Config{}, false
	}
	return cfg, true
}
