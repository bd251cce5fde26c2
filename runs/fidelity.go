package runs

import (
	"context"
	"errors"

	"github.com/persuarena/persuarena/fidelity"
	"github.com/persuarena/persuarena/p4g"
	"github.com/persuarena/persuarena/persuasiontrace"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/scenario"
)

// FidelitySpec is a fidelity check of a persuadee against
// PersuasionForGood (P4G paper; docs/fidelity.md): From re-imports the
// CSV files ("" the embedded set), Split replays one split ("" all),
// Persuadee (with Config for llm:NAME) is the persuadee checked; Probes
// names the probe basis (probe.Resolve; "" is the check's own default:
// probe.Default for P4G, probe.AgreementBasis for PersuasionTrace); Seed,
// Resamples (>= 1) and Workers (>= 1) are fidelity.Options'.
type FidelitySpec struct {
	From, Persuadee, Split, Config, Probes string
	Seed                                   uint64
	Resamples, Workers                     int
}

// FidelityP4G replays every P4G dialogue open-loop through the persuadee
// (fidelity.Run) and returns its report; progress, when set, is called
// after each dialogue with the counts. Errors: Resamples or Workers < 1,
// probe.Resolve's, an unknown split, loading's, roles.ResolvePersuadee's and fidelity.Run's.
func FidelityP4G(ctx context.Context, spec FidelitySpec, progress func(done, total int)) (*fidelity.Report, error) {
	if err := AtLeast(1, "workers", spec.Workers, "resamples", spec.Resamples); err != nil {
		return nil, err
	}
	basis, err := probe.Resolve(spec.Probes)
	if err != nil {
		return nil, err
	}
	split, err := scenario.ParseSplit(spec.Split)
	if err != nil {
		return nil, err
	}
	ss, err := p4g.Scenarios(spec.From)
	if err != nil {
		return nil, err
	}
	ss = scenario.Filter(ss, split)
	pee, err := roles.ResolvePersuadee(ctx, spec.Config, spec.Persuadee)
	if err != nil {
		return nil, err
	}
	return fidelity.Run(ctx, ss, pee, fidelity.Options{Basis: basis, Seed: spec.Seed, Resamples: spec.Resamples, Workers: spec.Workers, Progress: progress})
}

// FidelityPersuasionTrace imports the PersuasionTrace rounds under
// spec.From (persuasiontrace.Import; required: the data set is not
// embedded), replays them open-loop through spec.Persuadee
// (fidelity.RunTrace) and returns the report; progress, when set, is
// called after each round with the counts. spec.Split is not used.
// Errors: an empty From, Resamples or Workers < 1, probe.Resolve's, the
// import's, roles.ResolvePersuadee's and fidelity.RunTrace's.
func FidelityPersuasionTrace(ctx context.Context, spec FidelitySpec, progress func(done, total int)) (*fidelity.TraceReport, error) {
	if spec.From == "" {
		return nil, errors.New("--from: the PersuasionTrace directory is required (the data set is not embedded)")
	}
	if err := AtLeast(1, "workers", spec.Workers, "resamples", spec.Resamples); err != nil {
		return nil, err
	}
	var basis probe.Basis // nil: fidelity.RunTrace's agreement basis
	if spec.Probes != "" {
		b, err := probe.Resolve(spec.Probes)
		if err != nil {
			return nil, err
		}
		basis = b
	}
	rounds, sum, err := persuasiontrace.Import(spec.From)
	if err != nil {
		return nil, err
	}
	pee, err := roles.ResolvePersuadee(ctx, spec.Config, spec.Persuadee)
	if err != nil {
		return nil, err
	}
	return fidelity.RunTrace(ctx, rounds, sum, pee, fidelity.Options{Basis: basis, Seed: spec.Seed, Resamples: spec.Resamples, Workers: spec.Workers, Progress: progress})
}
