// Package runplan is an evaluation run's plan, below the commands that
// create, play, queue and show runs (runs, queue, the viewer): the part
// of the stored eval spec that fixes the run's episodes (Grid), its
// scenario sets resolved (LoadSets), and the episode count that follows
// (Plan.Total). The episodes themselves, in play order, are eval.Plan's
// jobs, keyed by episode.Key.
package runplan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/internal/registry"
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

// DecodeGrid reads the Grid of a stored run spec (store.Run.Config): eval
// runs store it whole (runs.EvalSpec embeds it), and every other kind
// stores its scenario sets and split under the same names. It is the one
// reader of those fields for the analyses, the report and the viewer. ok
// is false when config is empty or does not decode as a JSON object.
func DecodeGrid(config []byte) (g Grid, ok bool) {
	if len(config) == 0 || json.Unmarshal(config, &g) != nil {
		return Grid{}, false
	}
	return g, true
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

// A Source loads the scenarios of the set a method package names by a
// prefix (RegisterSource): REPO's scenario packs, "repo:NAME" (package
// reporeward). Its errors name the set.
type Source func(name string) ([]scenario.Scenario, error)

// sources are the registered scenario sources by prefix.
var sources = registry.New[Source]("scenario source")

// RegisterSource makes the set references that start with prefix (e.g.
// "repo:") resolve through src with the rest of the reference: the
// package that owns the sets calls it from its init (package registry), so
// the run plan knows no method by name. It panics when prefix is empty or
// registered twice.
func RegisterSource(prefix string, src Source) { sources.Register(prefix, src) }

// sourceOf returns the registered source whose prefix ref starts with (the
// longest, when several do) and the rest of ref; ok is false for none.
func sourceOf(ref string) (src Source, name string, ok bool) {
	best := ""
	for _, p := range sources.Names() {
		if strings.HasPrefix(ref, p) && len(p) > len(best) {
			best = p
		}
	}
	if best == "" {
		return nil, "", false
	}
	src, _ = sources.Lookup(best)
	return src, ref[len(best):], true
}

// ResolveSet returns every scenario of one set reference: a set of a
// registered source (RegisterSource: REPO's repo:PACK), a built-in set
// name or a JSONL file (scenario.ResolveAllContext: loading ends when ctx
// does).
func ResolveSet(ctx context.Context, ref string) ([]scenario.Scenario, error) {
	if src, name, ok := sourceOf(ref); ok {
		return src(name)
	}
	return scenario.ResolveAllContext(ctx, ref)
}

// LoadSets resolves scenario set references (a registered source's sets,
// built-in names or JSONL files; ResolveSet) and keeps the split's
// scenarios (split as scenario.ParseSplit reads it; "all": every one), one
// Set per reference
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
		if _, _, ok := sourceOf(ref); ok {
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
