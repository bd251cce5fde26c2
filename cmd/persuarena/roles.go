package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/persuader"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/sim"
)

// plannerPrefix marks a persuader name that loads a planner checkpoint.
const plannerPrefix = "planner:"

// newPersuaders resolves persuader names: the built-ins of package
// persuader, llm:NAME roles of the --config file (roles may be nil), and
// planner:PATH checkpoints written by persuarena train.
func newPersuaders(names []string, roles *llmRoles) ([]episode.Persuader, error) {
	var out []episode.Persuader
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("persuader %q given twice", n)
		}
		seen[n] = true
		if isLLMRef(n) {
			p, err := roles.persuader(n)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
			continue
		}
		if path, ok := strings.CutPrefix(n, plannerPrefix); ok {
			// A trained planner checkpoint (persuarena train), named
			// "planner:PATH" in runs and tables.
			p, err := planner.LoadPlanner(path)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
			continue
		}
		p, err := persuader.New(n)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// newPersuadees resolves persuadee names: "sim" is the embedded simulator,
// "sim-soft" and "sim-hard" its soft and hard settings, sim:FILE a
// simulator config file, llm:NAME a role of
// the --config file (roles may be nil).
func newPersuadees(names []string, roles *llmRoles) ([]episode.Persuadee, error) {
	var out []episode.Persuadee
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("persuadee %q given twice", n)
		}
		seen[n] = true
		switch {
		case slices.Contains(sim.Names, n) || n == sim.HandName || sim.IsFileRef(n):
			// The simulator and its soft and hard settings
			// (docs/simulator.md; MASP's soft and hard users, docs/masp.md),
			// its hand-set parameters (sim-hand), or a config file sim:FILE
			// (sim.LoadFile).
			c, err := sim.ByName(n)
			if err != nil {
				return nil, err
			}
			out = append(out, sim.New(c))
		case isLLMRef(n):
			p, err := roles.persuadee(n)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		default:
			return nil, fmt.Errorf("unknown persuadee %q (known: sim, sim-soft, sim-hard, sim-hand, sim:FILE, llm:NAME with --config)", n)
		}
	}
	return out, nil
}
