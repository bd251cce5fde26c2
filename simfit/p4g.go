package simfit

import (
	"context"
	"fmt"
	"io"

	"github.com/persuarena/persuarena/p4g"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// P4GSpec is a fit of the simulator to PersuasionForGood (P4G paper):
// From re-imports the CSV files ("" uses the embedded set), Base is the
// starting configuration (sim.HandName or a built-in variant name, not a
// file), Bounds names ParamSets' entry; Seed, Folds, MaxEvals and Workers
// (>= 1) are Options'; ClosedN > 0 adds the closed-loop constraint on
// ClosedN train scenarios per set (DefaultClosedLoop).
type P4GSpec struct {
	From, Base, Bounds string
	Seed               uint64
	Folds, MaxEvals    int
	Workers, ClosedN   int
}

// FitP4G fits the simulator to the P4G train split (Fit; the validation
// split scores it, the held-out split is never read) and returns the sim
// config file with its provenance (the equivalent command line, the
// data hash). Progress lines and the fit's Summary go to log. Errors:
// Workers < 1, an unknown Base or Bounds, loading's and Fit's.
func FitP4G(ctx context.Context, spec P4GSpec, log io.Writer) (*sim.File, error) {
	if spec.Workers < 1 {
		return nil, fmt.Errorf("--workers must be >= 1, got %d", spec.Workers)
	}
	all, err := p4g.Scenarios(spec.From)
	if err != nil {
		return nil, err
	}
	base, err := sim.ByName(spec.Base)
	if err != nil {
		return nil, fmt.Errorf("--base: %w", err)
	}
	if sim.IsFileRef(spec.Base) {
		return nil, fmt.Errorf("--base: want %s, sim, sim-soft or sim-hard", sim.HandName)
	}
	var fit, val []*scenario.Scenario
	for i := range all {
		switch all[i].Split {
		case scenario.Train:
			fit = append(fit, &all[i])
		case scenario.Val:
			val = append(val, &all[i])
		}
	}
	data, err := DataHash(all)
	if err != nil {
		return nil, err
	}
	ps, ok := ParamSets[spec.Bounds]
	if !ok {
		return nil, fmt.Errorf("--bounds %q: want narrow, wide, traits, core or strategy", spec.Bounds)
	}
	opt := Options{Base: &base, Params: ps, Seed: spec.Seed, MaxEvals: spec.MaxEvals, Folds: spec.Folds, Workers: spec.Workers,
		Progress: func(msg string) { fmt.Fprintln(log, msg) }}
	if spec.ClosedN > 0 {
		arena, err := scenario.Resolve("arena")
		if err != nil {
			return nil, err
		}
		ap := make([]*scenario.Scenario, len(arena))
		for i := range arena {
			ap[i] = &arena[i]
		}
		opt.Closed = DefaultClosedLoop(ap, fit, spec.ClosedN)
		opt.Closed.Workers = spec.Workers
	}
	res, err := Fit(ctx, fit, val, opt)
	if err != nil {
		return nil, err
	}
	command := fmt.Sprintf("persuarena sim fit p4g --seed %d --folds %d --max-evals %d --closed-n %d --bounds %s --base %s",
		spec.Seed, spec.Folds, spec.MaxEvals, spec.ClosedN, spec.Bounds, spec.Base)
	fmt.Fprint(log, Summary(res, opt))
	return res.File(spec.Base, command, data, opt), nil
}
