package runs

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/redteam"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
)

// RedteamSpec is a red-team audit of a persuadee (package redteam;
// docs/redteam.md): Persuadee (with Config for llm:ROLE and
// sim+reader=llm:ROLE) is the persuadee audited; Scenarios the scenario
// sets, searched on their SearchSplit scenarios and scored on their
// TestSplit ones (train and heldout by default); Families the families
// ("" all); Probes the probe basis (probe.Resolve); Tmax the persuader
// turns per episode; the rest redteam.Options' budget, seed and
// workers.
type RedteamSpec struct {
	Persuadee, Config, Probes string
	Scenarios, Families       []string
	SearchSplit, TestSplit    string
	Tmax                      int
	redteam.Options
}

// Redteam loads the scenarios, resolves the persuadee and runs the red
// team. Errors: a count out of its range (validate), an unknown split or identical
// search and test splits, a set without scenarios of a split, a budget
// over MaxPlannedEpisodes episodes, probe.Resolve's,
// roles.ResolvePersuadee's and redteam.Run's.
func Redteam(ctx context.Context, spec RedteamSpec) (*redteam.Result, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	searchSplit, err := scenario.ParseSplit(spec.SearchSplit)
	if err != nil {
		return nil, err
	}
	testSplit, err := scenario.ParseSplit(spec.TestSplit)
	if err != nil {
		return nil, err
	}
	if searchSplit == "" || testSplit == "" || searchSplit == testSplit {
		return nil, fmt.Errorf("--search-split %q, --test-split %q: want two different splits (the search must not see the scored scenarios)", spec.SearchSplit, spec.TestSplit)
	}
	basis, err := probe.Resolve(spec.Probes)
	if err != nil {
		return nil, err
	}
	o := spec.Options
	search, err := runplan.LoadSets(ctx, spec.Scenarios, spec.SearchSplit)
	if err != nil {
		return nil, err
	}
	test, err := runplan.LoadSets(ctx, spec.Scenarios, spec.TestSplit)
	if err != nil {
		return nil, err
	}
	o.Search, o.Test = runplan.Scenarios(search), runplan.Scenarios(test)
	if err := redteamSize(spec, len(o.Search), len(o.Test)); err != nil {
		return nil, err
	}
	pee, err := roles.ResolvePersuadee(ctx, spec.Config, spec.Persuadee)
	if err != nil {
		return nil, err
	}
	o.Persuadee = pee
	o.Families = spec.Families
	o.Episode = episode.Config{Tmax: spec.Tmax, Basis: basis}
	return redteam.Run(ctx, o)
}

// validate checks every count before any work: Tmax in 1..episode.MaxTmax,
// Workers in 1..MaxWorkers, SearchScenarios, Population (>= 2),
// Generations (>= 0) and Rollouts each at most MaxPlannedEpisodes.
func (spec RedteamSpec) validate() error {
	for _, c := range []struct {
		flag      string
		v, lo, hi int
	}{{"tmax", spec.Tmax, 1, episode.MaxTmax}, {"workers", spec.Workers, 1, MaxWorkers},
		{"search-scenarios", spec.SearchScenarios, 1, MaxPlannedEpisodes}, {"population", spec.Population, 2, MaxPlannedEpisodes},
		{"generations", spec.Generations, 0, MaxPlannedEpisodes}, {"rollouts", spec.Rollouts, 1, MaxPlannedEpisodes}} {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("--%s must be in %d..%d, got %d", c.flag, c.lo, c.hi, c.v)
		}
	}
	return nil
}

// redteamSize refuses a red team whose episodes could exceed
// MaxPlannedEpisodes: at most families × population × (generations + 1)
// search candidates, each on min(search-scenarios, nSearch) scenarios,
// and (families + 2 references) × nTest × rollouts scored.
func redteamSize(spec RedteamSpec, nSearch, nTest int) error {
	fams := len(spec.Families)
	if fams == 0 {
		fams = len(redteam.Families())
	}
	mul := func(fs ...int) (uint64, bool) {
		n := uint64(1)
		for _, f := range fs {
			hi, lo := bits.Mul64(n, uint64(max(f, 0)))
			if hi != 0 || lo > MaxPlannedEpisodes {
				return 0, false
			}
			n = lo
		}
		return n, true
	}
	s, ok1 := mul(fams, spec.Population, spec.Generations+1, min(spec.SearchScenarios, nSearch))
	t, ok2 := mul(fams+2, nTest, spec.Rollouts)
	if !ok1 || !ok2 || s+t > MaxPlannedEpisodes {
		return fmt.Errorf("the red team could play %d families × %d candidates × %d generations × %d search scenarios plus %d × %d held-out scenarios × %d rollouts, over the limit of %d episodes per run",
			fams, spec.Population, spec.Generations+1, min(spec.SearchScenarios, nSearch), fams+2, nTest, spec.Rollouts, MaxPlannedEpisodes)
	}
	return nil
}
