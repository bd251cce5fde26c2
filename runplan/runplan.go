// Package runplan is an evaluation run's plan, below the commands that
// create, play, queue and show runs (runs, queue, the viewer): the part
// of the stored eval spec that fixes the run's episodes (Grid), its
// scenario sets resolved (LoadSets), and the episode count that follows
// (Plan.Total). The episodes themselves, in play order, are eval.Plan's
// jobs, keyed by episode.Key.
package runplan

import (
	"context"
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/reporeward"
	"github.com/persuarena/persuarena/scenario"
)

// Grid is the part of an eval run's stored spec (runs.EvalSpec embeds
// it; its JSON names are the stored ones) that fixes which episodes the
// run plays: every persuadee × persuader × scenario of the sets in Split
// × rollout, each Tmax turns at most with seeds from Seed.
type Grid struct {
	// Persuaders and Persuadees are role names (package roles).
	Persuaders []string `json:"persuaders"`
	Persuadees []string `json:"persuadees"`
	// Scenarios are set references (LoadSets); Split is train, val,
	// heldout or all.
	Scenarios []string `json:"scenarios"`
	Split     string   `json:"split"`
	// Tmax is the turn cap (>= 1), Rollouts the rollouts per scenario
	// (>= 1), Seed the run seed (episode.Seed derives each episode's).
	Tmax     int    `json:"tmax"`
	Rollouts int    `json:"rollouts"`
	Seed     uint64 `json:"seed"`
}

// Plan is a Grid with its scenario sets loaded.
type Plan struct {
	Grid Grid
	// Sets are the grid's sets, each holding its split's scenarios.
	Sets []eval.Set
}

// Of loads g's sets (LoadSets). Errors are LoadSets'.
func Of(ctx context.Context, g Grid) (Plan, error) {
	sets, err := LoadSets(ctx, g.Scenarios, g.Split)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Grid: g, Sets: sets}, nil
}

// Total is the number of episodes the plan holds: persuadees ×
// persuaders × scenarios × rollouts (the length of eval.Plan's job list
// with nothing done), 0 when Rollouts < 1.
func (p Plan) Total() int {
	n := 0
	for _, s := range p.Sets {
		n += len(s.Scenarios)
	}
	return len(p.Grid.Persuadees) * len(p.Grid.Persuaders) * n * max(p.Grid.Rollouts, 0)
}

// ResolveSet returns every scenario of one set reference: a REPO scenario
// pack (repo:PACK, package reporeward), a built-in set name or a JSONL file
// (scenario.ResolveAllContext: loading ends when ctx does).
func ResolveSet(ctx context.Context, ref string) ([]scenario.Scenario, error) {
	if name, ok := strings.CutPrefix(ref, reporeward.PackPrefix); ok {
		p, err := reporeward.LoadPack(name)
		if err != nil {
			return nil, err
		}
		return p.Scenarios, nil
	}
	return scenario.ResolveAllContext(ctx, ref)
}

// LoadSets resolves scenario set references (REPO packs, built-in names
// or JSONL files; ResolveSet) and keeps the split's scenarios (split as
// scenario.ParseSplit reads it; "all": every one), one Set per reference
// in order. Loading ends when ctx does. Errors: an unknown split, a set
// that does not load (a file that is not a regular file or is over its
// size limit is refused before it is read; see scenario.LoadFiles), a set
// without scenarios of the split, or ctx's (wrapped).
func LoadSets(ctx context.Context, refs []string, split string) ([]eval.Set, error) {
	sp, err := scenario.ParseSplit(split)
	if err != nil {
		return nil, err
	}
	var sets []eval.Set
	for _, ref := range refs {
		if strings.HasPrefix(ref, reporeward.PackPrefix) {
			all, err := ResolveSet(ctx, ref)
			if err != nil {
				return nil, err
			}
			if ss := scenario.Filter(all, sp); len(ss) > 0 {
				sets = append(sets, eval.Set{Name: ref, Scenarios: ss})
				continue
			}
			return nil, fmt.Errorf("scenario set %s has no %s scenarios", ref, split)
		}
		// only the split's lines of a built-in set are decoded
		ss, err := scenario.ResolveSplitContext(ctx, sp, ref)
		if err != nil {
			return nil, err
		}
		if len(ss) == 0 {
			return nil, fmt.Errorf("scenario set %s has no %s scenarios", ref, split)
		}
		sets = append(sets, eval.Set{Name: scenario.SetName(ref), Scenarios: ss})
	}
	return sets, nil
}

// Scenarios flattens sets into one slice, in order.
func Scenarios(sets []eval.Set) []scenario.Scenario {
	var out []scenario.Scenario
	for _, s := range sets {
		out = append(out, s.Scenarios...)
	}
	return out
}
