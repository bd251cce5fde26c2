package runs

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/persuarena/persuarena/eval"
)

// MaxPlannedEpisodes bounds one run's plan (persuaders × persuadees ×
// scenarios × rollouts): a bigger plan is refused before anything is
// created.
//
// Choice: 10 million episodes: a plan holds about 100 bytes per episode
// (1 GB at the limit) and the largest published grids are under 100,000
// episodes; a typo such as --rollouts 1000000000 fails at once instead of
// exhausting memory with the run left "running".
const MaxPlannedEpisodes = 10_000_000

// Upper bounds of the jobs' other counts (flags and stored specs).
//
// Choice: far above any real use (a machine has at most a few hundred
// cores; a fault that outlasts 100 replays is not transient; a judge's
// verdict is stable after a few samples), so that a typo is refused
// before anything starts.
const (
	// MaxWorkers bounds concurrent episodes, rollouts or jobs.
	MaxWorkers = 1024
	// MaxRetries bounds the replays of an episode after transient faults.
	MaxRetries = 100
	// MaxJudgeSamples bounds a judge's samples per question.
	MaxJudgeSamples = 100
)

// checkRoleLists refuses empty role lists and empty names in them
// (--persuader ” is a typo, not a run of nothing).
func checkRoleLists(lists ...any) error {
	for i := 0; i+1 < len(lists); i += 2 {
		flag, names := lists[i].(string), lists[i+1].([]string)
		if len(names) == 0 {
			return fmt.Errorf("--%s is empty: name at least one", flag)
		}
		for _, n := range names {
			if strings.TrimSpace(n) == "" {
				return fmt.Errorf("--%s holds an empty name (%q)", flag, strings.Join(names, ","))
			}
		}
	}
	return nil
}

// planSize returns the episodes of a plan, overflow-safe, and an error
// naming the factors when it is over MaxPlannedEpisodes.
func planSize(persuaders, persuadees int, sets []eval.Set, rollouts int) (int, error) {
	scen := 0
	for _, s := range sets {
		scen += len(s.Scenarios)
	}
	n := uint64(1)
	for _, f := range []int{persuaders, persuadees, scen, rollouts} {
		hi, lo := bits.Mul64(n, uint64(max(f, 0)))
		if hi != 0 || lo > MaxPlannedEpisodes {
			return 0, fmt.Errorf("the plan has %d persuaders × %d persuadees × %d scenarios × %d rollouts, over the limit of %d episodes per run",
				persuaders, persuadees, scen, rollouts, MaxPlannedEpisodes)
		}
		n = lo
	}
	return int(n), nil
}
