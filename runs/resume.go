package runs

import (
	"fmt"
	"strings"
)

// refuseChangedPlan returns an error when a plan flag given with --resume
// (given: flag names, as EvalOptions.Given) asks for something else than
// the run's stored plan: the resume plays the stored plan, so the flag
// would be ignored. A flag repeating the stored value passes.
func refuseChangedPlan(given []string, spec, stored EvalSpec) error {
	for _, flag := range given {
		var want, have string
		switch flag {
		case "persuader":
			want, have = strings.Join(spec.Persuaders, ","), strings.Join(stored.Persuaders, ",")
		case "persuadee":
			want, have = strings.Join(spec.Persuadees, ","), strings.Join(stored.Persuadees, ",")
		case "scenarios":
			want, have = strings.Join(spec.Scenarios, ","), strings.Join(stored.Scenarios, ",")
		case "split":
			want, have = spec.Split, stored.Split
		case "tmax":
			want, have = fmt.Sprint(spec.Tmax), fmt.Sprint(stored.Tmax)
		case "rollouts":
			want, have = fmt.Sprint(spec.Rollouts), fmt.Sprint(stored.Rollouts)
		case "seed":
			want, have = fmt.Sprint(spec.Seed), fmt.Sprint(stored.Seed)
		case "judge":
			want, have = spec.Judge, stored.Judge
		case "judge-samples":
			want, have = fmt.Sprint(spec.JudgeSamples), fmt.Sprint(stored.JudgeSamples)
		case "judge-acts":
			want, have = fmt.Sprint(spec.JudgeActs), fmt.Sprint(stored.JudgeActs)
		case "reward":
			want, have = spec.Reward, stored.Reward
		case "sequential-probes":
			want, have = fmt.Sprint(spec.SequentialProbes), fmt.Sprint(stored.SequentialProbes)
		case "probes":
			return fmt.Errorf("--resume keeps the run's stored probe basis: drop --probes, or start a new run")
		default:
			continue
		}
		if want != have {
			return fmt.Errorf("--resume plays the run's stored plan (%s %s); --%s %s would change it: drop --%s, or start a new run without --resume", flag, have, flag, want, flag)
		}
	}
	return nil
}

// EvalPlanFlags are eval's flags that a run's stored plan fixes (see
// EvalOptions.Given).
var EvalPlanFlags = []string{"persuader", "persuadee", "scenarios", "split", "tmax", "rollouts", "seed", "probes",
	"judge", "judge-samples", "judge-acts", "reward", "sequential-probes"}
