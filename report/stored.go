package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/buildinfo"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// StoredOptions are WriteStored's options.
type StoredOptions struct {
	// Out is the directory written (created if missing); Title heads the
	// report ("" is "PersuArena report").
	Out, Title string
	// Seed and Resamples (>= 1) set the paired bootstrap; Baseline is the
	// persuader every other one is compared against ("": the first).
	Seed      uint64
	Resamples int
	Baseline  string
	// ViewAddr links runs and the Table 8 episode to a running persuarena
	// view at this host:port (Options.ViewAddr); "" for no links.
	ViewAddr string
	// Timestamp adds a generated-at line (the output is then no longer
	// byte-identical across runs).
	Timestamp bool
}

// WriteStored builds the report of runIDs from st in one streamed pass
// over their episodes (BuildStream, in analysis.PlanArms order; the
// paired comparisons read outcome rows only) and writes it into o.Out
// (Report.WriteDir), printing each written path on out and progress,
// skipped sections and unresolvable scenario sets on errOut. Train runs
// add their step metrics, and Figure 7 groups their rollouts by training
// step with the first train run's GRPO config. Errors: no Out, Resamples
// < 1, an unknown or repeated run, runs without episodes, the store's,
// BuildStream's and WriteDir's.
func WriteStored(ctx context.Context, st store.Reader, runIDs []string, o StoredOptions, out, errOut io.Writer) error {
	if o.Out == "" {
		return fmt.Errorf("--out is required")
	}
	if o.Resamples < 1 {
		return fmt.Errorf("--resamples must be >= 1, got %d", o.Resamples)
	}
	var infos []RunInfo
	meta := newRunMeta()
	arms, err := analysis.PlanArms(ctx, st, runIDs)
	if err != nil {
		return err
	}
	total := 0
	for _, id := range runIDs {
		run, err := st.GetRun(ctx, id)
		if err != nil {
			return fmt.Errorf("run %s: %w", id, err)
		}
		counts, err := st.TerminalCounts(ctx, id)
		if err != nil {
			return err
		}
		n, failed := 0, 0
		for _, c := range counts {
			n += c.Episodes
			failed += c.Terminals[decision.TermFailed]
		}
		total += n
		infos = append(infos, RunInfo{ID: run.ID, Kind: run.Kind, Status: run.Status, Version: run.Version,
			Seed: run.Seed, CreatedAt: run.CreatedAt, Config: run.Config, Episodes: n, Failed: failed})
		if err := meta.add(ctx, st, run, errOut); err != nil {
			return err
		}
	}
	if total == 0 {
		return fmt.Errorf("run(s) %s hold no episodes", strings.Join(runIDs, ", "))
	}
	ro := o.buildOptions(infos, meta, errOut)
	src := Source{
		Each: func(fn func(*episode.Episode) error) error {
			fmt.Fprintf(errOut, "report: reading %d episode(s) of run(s) %s\n", total, strings.Join(runIDs, ", "))
			return analysis.EachArmEpisode(ctx, st, arms, fn)
		},
		Outcomes: func(per, pee string) (string, []episode.Outcome, error) {
			return analysis.ArmOutcomes(ctx, st, arms, per, pee)
		},
	}
	r, err := BuildStream(src, ro)
	if err != nil {
		return err
	}
	fmt.Fprintf(errOut, "report: writing %s\n", o.Out)
	names, err := r.WriteDir(o.Out)
	if err != nil {
		return err
	}
	for _, s := range r.Skipped {
		fmt.Fprintln(errOut, "report: not shown:", s)
	}
	for _, n := range names {
		fmt.Fprintln(out, filepath.Join(o.Out, n))
	}
	return nil
}

// runSets maps the scenario ids of run's configured scenario sets (an eval
// run stores them under "scenarios": built-in names, JSONL paths or a
// registered source's sets such as repo:PACK; runplan.ResolveSet) to the
// set's name, as eval names them, into setOf; it returns the names in
// order. A set that no longer resolves (a moved file) is reported on errOut
// and its episodes show as set "unknown".
func runSets(ctx context.Context, run store.Run, setOf map[string]string, errOut io.Writer) []string {
	cfg, ok := runplan.DecodeGrid(run.Config)
	if !ok {
		return nil
	}
	var names []string
	for _, ref := range cfg.Scenarios {
		ss, err := runplan.ResolveSet(ctx, ref)
		if err != nil {
			fmt.Fprintf(errOut, "report: run %s: scenario set %s: %v (its episodes show as set \"unknown\")\n", run.ID, ref, err)
			continue
		}
		name := scenario.SetName(ref)
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

// runMeta is what a stored report gathers from its runs besides episodes:
// their scenario sets (setOf: scenario id → set name), and for train runs
// the step metrics, the rollouts per scenario a step (groupSize, by run
// id) and the first run's GRPO config.
type runMeta struct {
	sets      []string
	setOf     map[string]string
	groupSize map[string]int
	training  []TrainingRun
	gcfg      *grpo.Config
}

func newRunMeta() *runMeta {
	return &runMeta{setOf: map[string]string{}, groupSize: map[string]int{}}
}

// add records run's sets and, for a train run, its GRPO config and step
// metrics (st.Metrics); a train run whose λ differs from the first one's
// is noted on errOut. Errors: st.Metrics'.
func (m *runMeta) add(ctx context.Context, st store.Reader, run store.Run, errOut io.Writer) error {
	for _, name := range runSets(ctx, run, m.setOf, errOut) {
		if !slices.Contains(m.sets, name) {
			m.sets = append(m.sets, name)
		}
	}
	cfg, ok := trainGRPO(run)
	if !ok {
		return nil
	}
	m.groupSize[run.ID] = cfg.G
	if m.gcfg == nil {
		m.gcfg = &cfg
	} else if m.gcfg.Lambda != cfg.Lambda {
		fmt.Fprintf(errOut, "report: run %s trains with λ = %g; Figure 7 uses the first training run's λ = %g\n", run.ID, cfg.Lambda, m.gcfg.Lambda)
	}
	steps, err := st.Metrics(ctx, run.ID)
	if err != nil {
		return err
	}
	m.training = append(m.training, TrainingRun{RunID: run.ID, Steps: steps})
	return nil
}

// buildOptions is the Options of a report of stored runs: o's title,
// bootstrap, baseline and viewer address, the runs' infos, meta's sets
// ("unknown" for scenarios of no set) and training metrics, Figure 7
// grouping of train runs' rollouts by step, and progress lines on errOut.
func (o StoredOptions) buildOptions(infos []RunInfo, meta *runMeta, errOut io.Writer) Options {
	groupSize, setOf := meta.groupSize, meta.setOf
	ro := Options{Title: o.Title, Runs: infos, Sets: meta.sets, CompareSeed: o.Seed, Resamples: o.Resamples,
		Baseline: o.Baseline, ViewAddr: o.ViewAddr, Generator: "persuarena " + buildinfo.Version(),
		Progress: func(s string) { fmt.Fprintf(errOut, "report: %s\n", s) },
		Training: meta.training, GRPO: meta.gcfg}
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
	if o.Timestamp {
		ro.Generated = time.Now().UTC().Format(time.RFC3339)
	}
	return ro
}
