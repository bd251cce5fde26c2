package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/selfplay"
	"github.com/persuarena/persuarena/train"
)

// SelfPlayMeta is what a self-play run keeps in its checkpoint (and run
// record) besides selfplay.Config, so a resume needs only the directory.
type SelfPlayMeta struct {
	Scenarios   []string `json:"scenarios"`
	Split       string   `json:"split"`
	InitPlanner string   `json:"init_planner,omitempty"`
	Student     string   `json:"student,omitempty"`
}

// selfPlayRecord is a self-play run's stored configuration.
type selfPlayRecord struct {
	SelfPlay selfplay.Config `json:"selfplay"`
	SelfPlayMeta
	CheckpointDir string `json:"checkpoint_dir"`
}

// SelfPlaySpec is a self-play invocation: the MASP paper's alternating
// self-play (Algorithm 1; package selfplay) of Config on Meta's scenarios,
// checkpointed in Dir.
type SelfPlaySpec struct {
	Config selfplay.Config
	Meta   SelfPlayMeta
	Dir    string
	// Resume continues the run saved in Dir with its stored config and
	// meta; Cycles >= 0 then replaces its cycle count (-1 keeps it).
	Resume bool
	Cycles int
	// Workers is the number of concurrent dialogues (>= 1).
	Workers int
	// Log receives a line per phase (may be nil).
	Log io.Writer
}

// SelfPlayResult is a finished self-play run.
type SelfPlayResult struct {
	RunID  string
	Cycles int
	// Evaluate is the masp eval command comparing the starting planner
	// with the trained one.
	Evaluate string
}

// SelfPlay runs self-play: it validates the spec (Tmax, Workers >= 1,
// selfplay.Config.Validate), loads the scenarios, the --init-planner
// checkpoint (planner:PATH) and the student's BDI cache, creates the run
// (kind selfplay) when the service has a database (Path or Store set;
// none: no run is stored), and runs the cycles, one checkpoint each.
// Ctrl-C keeps the last checkpoint (Log says how to continue). Errors: a
// Dir that already holds a run without Resume, a bad planner reference,
// the loaders', selfplay.New's or Resume's, and the store's.
func (s *Service) SelfPlay(ctx context.Context, spec SelfPlaySpec) (*SelfPlayResult, error) {
	logf := func(format string, args ...any) {
		if spec.Log != nil {
			fmt.Fprintf(spec.Log, format, args...)
		}
	}
	cfg, meta, dir := spec.Config, spec.Meta, spec.Dir
	if err := AtLeast(1, "tmax", cfg.T, "workers", spec.Workers); err != nil {
		return nil, err
	}
	var runID string
	if spec.Resume {
		info, err := selfplay.ReadInfo(dir)
		if err != nil {
			return nil, err
		}
		if len(info.Meta) > 0 {
			if err := json.Unmarshal(info.Meta, &meta); err != nil {
				return nil, fmt.Errorf("resume %s: stored command settings: %w", dir, err)
			}
		}
		cfg, runID = info.Config, info.RunID
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sets, err := runplan.LoadSets(ctx, meta.Scenarios, meta.Split)
	if err != nil {
		return nil, err
	}
	scs := runplan.Scenarios(sets)
	rawMeta, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	o := selfplay.Options{Scenarios: scs, Workers: spec.Workers, Dir: dir, Log: spec.Log, Meta: rawMeta}
	if !spec.Resume {
		if _, err := os.Stat(filepath.Join(dir, selfplay.CheckpointFile)); err == nil {
			return nil, fmt.Errorf("%s already holds a self-play run: continue it with --resume or choose another --checkpoint-dir", dir)
		}
		if meta.InitPlanner != "" {
			path, ok := roles.PlannerPath(meta.InitPlanner)
			if !ok {
				return nil, fmt.Errorf("--init-planner %q: want planner:PATH", meta.InitPlanner)
			}
			ck, err := planner.Load(path)
			if err != nil {
				return nil, err
			}
			o.Planner = ck.Policy
		}
	}
	if meta.Student != "" {
		if o.StudentCache, err = bdi.LoadCache(meta.Student); err != nil {
			return nil, err
		}
	}
	stored := s.Store != nil || s.Path != ""
	if stored {
		if runID != "" {
			if _, err := s.Resume(ctx, runID, nil); err != nil {
				return nil, fmt.Errorf("resume %s: %w", dir, err)
			}
		} else if runID, err = s.Create(ctx, "selfplay", cfg.Seed, selfPlayRecord{SelfPlay: cfg, SelfPlayMeta: meta, CheckpointDir: dir}); err != nil {
			return nil, err
		}
		o.Store, o.RunID = s.Store, runID
	} else {
		runID = ""
	}
	var r *selfplay.Runner
	if spec.Resume {
		if r, err = selfplay.Resume(ctx, dir, o); err != nil {
			return nil, s.Finish(ctx, runID, err)
		}
		if spec.Cycles >= 0 {
			if err := r.SetCycles(spec.Cycles); err != nil {
				return nil, s.Finish(ctx, runID, err)
			}
		}
	} else {
		logf("self-play on %d scenarios: fitting the student and warm-starting the user\n", len(scs))
		if r, err = selfplay.New(ctx, cfg, o); err != nil {
			return nil, s.Finish(ctx, runID, err)
		}
	}
	if r.CyclesDone() >= r.Config().Cycles {
		logf("all %d cycles already done (extend with --cycles)\n", r.Config().Cycles)
	} else {
		logf("run %s: cycles %d..%d, checkpoints in %s\n", r.RunID(), r.CyclesDone()+1, r.Config().Cycles, dir)
	}
	_, err = r.Run(ctx)
	if errors.Is(err, context.Canceled) {
		logf("interrupted after cycle %d; continue with: persuarena selfplay --resume --checkpoint-dir %s\n", r.CyclesDone(), dir)
	}
	if err := s.Finish(ctx, runID, err); err != nil {
		return nil, err
	}
	base := "script"
	if meta.InitPlanner != "" {
		base = meta.InitPlanner
	}
	return &SelfPlayResult{RunID: r.RunID(), Cycles: r.CyclesDone(),
		Evaluate: fmt.Sprintf("persuarena masp eval --persuader %s,planner:%s/%s --users sim-soft,sim-hard,sim",
			base, strings.TrimSuffix(dir, "/"), selfplay.PlannerFile)}, nil
}

// WarmstartSpec is a planner warm start: Probe-RPO training (package
// train, as the train job) against one simulator variant (e.g. sim-soft,
// the MASP paper's "trained only against soft users" baseline), nothing
// stored in the run database.
type WarmstartSpec struct {
	Train     train.Config
	Persuadee string
	Scenarios []string
	Split     string
	// Out is the planner checkpoint (written atomically); Resume
	// continues it, Steps >= 0 then replacing its cap (-1 keeps it); a
	// new run trains Steps steps (0: epochs x floor(scenarios / per step)).
	Out     string
	Resume  bool
	Steps   int
	Workers int
	Log     io.Writer
}

// Warmstart trains a warm-start planner and returns the steps done.
// Errors: no Out, Tmax or Workers < 1, a persuadee that is not a
// simulator, LoadSets', train.New's, train.Resume's and training errors.
func Warmstart(ctx context.Context, spec WarmstartSpec) (int, error) {
	if spec.Out == "" {
		return 0, errors.New("selfplay warmstart needs --out")
	}
	if err := AtLeast(1, "tmax", spec.Train.Tmax, "workers", spec.Workers); err != nil {
		return 0, err
	}
	if !roles.IsSim(spec.Persuadee) {
		return 0, fmt.Errorf("--persuadee %q: want a simulator (%s)", spec.Persuadee, "sim, sim-soft, sim-hard, sim-hand, sim:FILE")
	}
	reg, err := roles.New("")
	if err != nil {
		return 0, err
	}
	pee, err := reg.Persuadee(spec.Persuadee)
	if err != nil {
		return 0, fmt.Errorf("--persuadee: %w", err)
	}
	sets, err := runplan.LoadSets(ctx, spec.Scenarios, spec.Split)
	if err != nil {
		return 0, err
	}
	scs := runplan.Scenarios(sets)
	o := train.Options{Scenarios: scs, Persuadee: pee, Workers: spec.Workers, Checkpoint: spec.Out, Log: spec.Log}
	var tr *train.Trainer
	if spec.Resume {
		if tr, err = train.Resume(spec.Out, o); err != nil {
			return 0, err
		}
		if spec.Steps >= 0 {
			if err := tr.SetMaxSteps(spec.Steps); err != nil {
				return 0, err
			}
		}
	} else {
		cfg := spec.Train
		cfg.Features.Tmax = cfg.Tmax
		cfg.MaxSteps = max(spec.Steps, 0)
		if tr, err = train.New(cfg, o); err != nil {
			return 0, err
		}
	}
	if spec.Log != nil {
		fmt.Fprintf(spec.Log, "warm start: %d scenarios against %s, steps %d..%d\n", len(scs), spec.Persuadee, tr.StepsDone()+1, tr.TotalSteps())
	}
	if _, err := tr.Run(ctx); err != nil {
		return 0, err
	}
	return tr.StepsDone(), nil
}
