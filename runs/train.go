package runs

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/train"
)

// TrainSpec is what a train run stores in the run database: the
// trainer's configuration (package train; Probe-RPO paper) and the names
// of what it trained against. It never holds secrets.
type TrainSpec struct {
	Train      train.Config `json:"train"`
	Scenarios  []string     `json:"scenarios"`
	Split      string       `json:"split"`
	Persuadee  string       `json:"persuadee"`
	Checkpoint string       `json:"checkpoint"`
	Config     string       `json:"config,omitempty"`
	Basis      probe.Basis  `json:"basis"`
	// Judge is the llm:NAME role giving R_strategy, and JudgeSamples its
	// samples per question.
	Judge        string `json:"judge,omitempty"`
	JudgeSamples int    `json:"judge_samples,omitempty"`
	// Reward is a reward spec "repo:SPEC" (REPO paper): each rollout's
	// outcome reward is then the spec's composed R.
	Reward string `json:"reward,omitempty"`
}

// TrainOptions are a train invocation's options, not stored.
type TrainOptions struct {
	// Resume continues the run whose checkpoint is spec.Checkpoint with
	// its stored spec (a non-empty spec.Config replaces the stored path);
	// MaxSteps >= 0 then replaces its step cap, -1 keeps it.
	Resume   bool
	MaxSteps int
	// Probes names the probe basis of a new run (probe.Resolve: "" is
	// probe.Default, "agreement", or a JSON file). Workers is the number of concurrent rollouts (>= 1).
	Probes  string
	Workers int
	// Log receives a line per phase and per step (may be nil).
	Log io.Writer
}

// TrainResult is a finished (or stopped) train run.
type TrainResult struct {
	RunID      string
	Steps      int
	Checkpoint string
}

// Train is the train job: it validates spec (Tmax >= 1, Workers >= 1,
// train.Config.Validate), resolves the persuadee and judge (package
// roles) and the scenario sets (LoadSets), then creates (or, with
// o.Resume, reopens) the train run, trains with package train, storing
// every rollout and each step's metrics, and finishes the run (Finish:
// Ctrl-C marks it interrupted, and Log says how to continue). A new run's
// database is opened only once its input is valid. Errors: the
// validation's, the registry's, train.New's or train.Resume's, and the
// store's; the training error after the status is recorded.
func (s *Service) Train(ctx context.Context, spec TrainSpec, o TrainOptions) (*TrainResult, error) {
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format, args...)
		}
	}
	if err := AtLeast(1, "workers", o.Workers); err != nil {
		return nil, err
	}
	var runID string
	if o.Resume {
		if err := s.ensure(ctx, true); err != nil {
			return nil, err
		}
		id, err := train.RunIDOf(spec.Checkpoint)
		if err != nil {
			return nil, err
		}
		var stored TrainSpec
		if _, err := s.Resume(ctx, id, &stored); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", spec.Checkpoint, err)
		}
		stored.Checkpoint = spec.Checkpoint
		if spec.Config != "" {
			stored.Config = spec.Config
		}
		spec, runID = stored, id
	} else {
		if err := AtLeast(1, "tmax", spec.Train.Tmax); err != nil {
			return nil, err
		}
		spec.Train.Features.Tmax = spec.Train.Tmax
		b, err := probe.Resolve(o.Probes)
		if err != nil {
			return nil, err
		}
		spec.Basis = b
	}
	reg, err := roles.New(spec.Config)
	if err != nil {
		return nil, err
	}
	pees, err := reg.Persuadees([]string{spec.Persuadee})
	if err != nil {
		return nil, err
	}
	sets, err := runplan.LoadSets(ctx, spec.Scenarios, spec.Split)
	if err != nil {
		return nil, err
	}
	scs := runplan.Scenarios(sets)
	var judge episode.Judge
	if spec.Judge != "" {
		j, err := reg.Judge(spec.Judge, spec.JudgeSamples)
		if err != nil {
			return nil, err
		}
		judge = j.ForEpisodes()
	}
	rw, err := rewarder(reg, spec.Reward, spec.Judge, spec.JudgeSamples)
	if err != nil {
		return nil, err
	}
	if !o.Resume {
		if err := spec.Train.Validate(); err != nil {
			return nil, err
		}
		if err := s.ensure(ctx, false); err != nil {
			return nil, err
		}
	}
	to := train.Options{Scenarios: scs, Persuadee: pees[0], Basis: spec.Basis, Workers: o.Workers, Store: s.Store,
		Checkpoint: spec.Checkpoint, Log: o.Log, Judge: judge, Rewarder: rw}
	var tr *train.Trainer
	if o.Resume {
		to.RunID = runID
		if tr, err = train.Resume(spec.Checkpoint, to); err != nil {
			return nil, s.Finish(ctx, runID, err)
		}
		if o.MaxSteps >= 0 {
			if err := tr.SetMaxSteps(o.MaxSteps); err != nil {
				return nil, s.Finish(ctx, runID, err)
			}
		}
	} else {
		if runID, err = s.Create(ctx, "train", spec.Train.GRPO.Seed, spec); err != nil {
			return nil, err
		}
		to.RunID = runID
		if tr, err = train.New(spec.Train, to); err != nil {
			return nil, s.Finish(ctx, runID, err)
		}
	}
	if tr.StepsDone() >= tr.TotalSteps() {
		logf("run %s: all %d steps already done (extend with --max-steps)\n", runID, tr.TotalSteps())
	} else {
		logf("run %s: training on %d scenarios against %s, steps %d..%d, checkpoint %s\n",
			runID, len(scs), spec.Persuadee, tr.StepsDone()+1, tr.TotalSteps(), spec.Checkpoint)
	}
	_, err = tr.Run(ctx)
	if errors.Is(err, context.Canceled) {
		logf("interrupted after step %d; continue with: persuarena train --resume --checkpoint %s --db %s\n",
			tr.StepsDone(), spec.Checkpoint, s.DBPath())
	}
	res := &TrainResult{RunID: runID, Steps: tr.StepsDone(), Checkpoint: spec.Checkpoint}
	return res, s.Finish(ctx, runID, err)
}

// WriteMetricsCSV writes run runID's stored step metrics as CSV: a header
// "step" plus the metric names (sorted, the union over steps), then a row
// per step (1-based), empty where a step lacks a metric. Errors: the
// store's and the writer's.
func (s *Service) WriteMetricsCSV(ctx context.Context, runID string, out io.Writer) error {
	if err := s.ensure(ctx, true); err != nil {
		return err
	}
	ms, err := s.Store.Metrics(ctx, runID)
	if err != nil {
		return err
	}
	var names []string
	for _, m := range ms {
		for k := range m.Metrics {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	w := csv.NewWriter(out)
	if err := w.Write(append([]string{"step"}, names...)); err != nil {
		return err
	}
	for _, m := range ms {
		row := []string{strconv.Itoa(m.Step + 1)}
		for _, k := range names {
			cell := ""
			if v, ok := m.Metrics[k]; ok {
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

// AtLeast checks integer flags given as (name, value) pairs: each value
// must be >= min. The error names the first flag below it:
// "--NAME must be >= MIN, got V".
func AtLeast(min int, pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if v := pairs[i+1].(int); v < min {
			return fmt.Errorf("--%s must be >= %d, got %d", pairs[i].(string), min, v)
		}
	}
	return nil
}
