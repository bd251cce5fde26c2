package runs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/internal/atomicfile"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/study"
	"github.com/persuarena/persuarena/train"
)

// LambdaStudySpec is a λ study (the Probe-RPO paper's Table 9 and
// Figure 7, with controls; package study): every arm of Arms (IDs of
// study.LambdaArms; empty: all) trained per seed of Seeds on the train
// splits of Sets against Persuadee (a simulator name), each checkpoint
// evaluated on their held-out splits, Rollouts (>= 1) per scenario with
// episode seeds from EvalSeed. MaxSteps (>= 0; 0 the full schedule) caps
// training; Dir keeps finished runs (a rerun resumes); Resamples is the
// bootstrap size. Doc and Section (both or neither) name a Markdown file
// and its marked section to update; Out a file for the tables ("" none).
type LambdaStudySpec struct {
	Seeds                        []uint64
	Arms, Sets                   []string
	Persuadee, Dir               string
	Rollouts, Workers, Resamples int
	MaxSteps                     int
	EvalSeed                     uint64
	Doc, Section, Out            string
}

// ArmList names the λ study's arms with what each is for ("ID (note); ...").
func ArmList() string {
	var parts []string
	for _, a := range study.LambdaArms() {
		parts = append(parts, fmt.Sprintf("%s (%s)", a.ID, a.Note))
	}
	return strings.Join(parts, "; ")
}

// LambdaStudy runs the study (study.Lambda; a line per finished run to
// log) and returns its Markdown tables headed by command, written into
// Doc's Section (study.UpdateDoc) and Out (atomically) when set. Errors:
// bad counts, an unknown arm, Doc without Section, the registry's,
// LoadSets', study.Lambda's and the writers'.
func LambdaStudy(ctx context.Context, spec LambdaStudySpec, command string, log io.Writer) (string, error) {
	if spec.Rollouts < 1 || spec.Workers < 1 || spec.MaxSteps < 0 || len(spec.Seeds) == 0 {
		return "", fmt.Errorf("study lambda: want --rollouts >= 1, --workers >= 1, --max-steps >= 0 and at least one --seeds")
	}
	if (spec.Doc == "") != (spec.Section == "") {
		return "", fmt.Errorf("study lambda: --doc and --section go together")
	}
	o := study.Options{Seeds: spec.Seeds, Rollouts: spec.Rollouts, EvalSeed: spec.EvalSeed, Workers: spec.Workers,
		Dir: spec.Dir, Log: log, Resamples: spec.Resamples}
	all := study.LambdaArms()
	for _, id := range spec.Arms {
		i := slices.IndexFunc(all, func(a study.Arm) bool { return a.ID == id })
		if i < 0 {
			return "", fmt.Errorf("study lambda: unknown arm %q (known: %s)", id, ArmList())
		}
		o.Arms = append(o.Arms, all[i])
	}
	o.Train = train.DefaultConfig()
	o.Train.MaxSteps = spec.MaxSteps
	reg, err := roles.New("")
	if err != nil {
		return "", err
	}
	if o.Persuadee, err = reg.Persuadee(spec.Persuadee); err != nil {
		return "", err
	}
	trainSets, err := runplan.LoadSets(ctx, spec.Sets, string(scenario.Train))
	if err != nil {
		return "", err
	}
	o.TrainScenarios = runplan.Scenarios(trainSets)
	if o.Heldout, err = runplan.LoadSets(ctx, spec.Sets, string(scenario.Heldout)); err != nil {
		return "", err
	}
	res, err := study.Lambda(ctx, o)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := res.Markdown(&b, command); err != nil {
		return "", err
	}
	if spec.Doc != "" {
		if err := study.UpdateDoc(spec.Doc, spec.Section, b.String()); err != nil {
			return "", err
		}
	}
	if spec.Out != "" {
		return b.String(), atomicfile.Write(spec.Out, []byte(b.String()))
	}
	return b.String(), nil
}
