package simfit

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/persuarena/persuarena/p4g"
	"github.com/persuarena/persuarena/persuasiontrace"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// P4GSpec is a fit of the simulator to PersuasionForGood (P4G paper):
// From re-imports the CSV files ("" uses the embedded set), Base is the
// starting configuration (sim.HandName or a built-in variant name, not a
// file), Bounds names ParamSets' entry; Seed, Folds, MaxEvals and Workers
// (>= 1) are Options'; ClosedN > 0 adds the closed-loop constraint on
// ClosedN train scenarios per set (DefaultClosedLoop). Trace, when set, is
// a PersuasionTrace directory (persuasiontrace.Import) whose train people's
// rounds add their term to the objective and whose validation people's
// rounds are scored (`persuarena sim fit people`); its held-out people are
// never read into the fit.
type P4GSpec struct {
	From, Base, Bounds string
	Trace              string
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
		return nil, fmt.Errorf("--bounds %q: want people, narrow, wide, traits, core or strategy", spec.Bounds)
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
	command := fmt.Sprintf("persuarena sim fit p4g --seed %d --folds %d --max-evals %d --closed-n %d --bounds %s --base %s",
		spec.Seed, spec.Folds, spec.MaxEvals, spec.ClosedN, spec.Bounds, spec.Base)
	var traceData string
	if spec.Trace != "" {
		rs, _, err := persuasiontrace.Import(spec.Trace)
		if err != nil {
			return nil, err
		}
		opt.Trace, opt.TraceVal = TraceSplit(rs)
		if traceData, err = DataHash(persuasiontrace.Scenarios(slices.Concat(opt.Trace, opt.TraceVal))); err != nil {
			return nil, err
		}
		command = fmt.Sprintf("persuarena sim fit people --trace %s --seed %d --folds %d --max-evals %d --closed-n %d --bounds %s --base %s",
			spec.Trace, spec.Seed, spec.Folds, spec.MaxEvals, spec.ClosedN, spec.Bounds, spec.Base)
	}
	res, err := Fit(ctx, fit, val, opt)
	if err != nil {
		return nil, err
	}
	fmt.Fprint(log, Summary(res, opt))
	f := res.File(spec.Base, command, data, opt)
	f.Provenance.TraceData = traceData
	return f, nil
}

// TraceSplit returns the rounds of the train people and of the validation
// people (persuasiontrace.Split), in order; the held-out people's rounds
// are left out, so a fit never sees them.
func TraceSplit(rs []persuasiontrace.Round) (train, val []persuasiontrace.Round) {
	for _, r := range rs {
		switch persuasiontrace.Split(r.Person) {
		case scenario.Train:
			train = append(train, r)
		case scenario.Val:
			val = append(val, r)
		}
	}
	return train, val
}
