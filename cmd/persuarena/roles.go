package main

import (
	"fmt"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/persuader"
	"github.com/persuarena/persuarena/sim"
)

// newPersuaders resolves persuader names: the built-ins of package persuader.
func newPersuaders(names []string) ([]episode.Persuader, error) {
	var out []episode.Persuader
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("persuader %q given twice", n)
		}
		seen[n] = true
		p, err := persuader.New(n)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// newPersuadees resolves persuadee names: "sim" is the embedded simulator.
func newPersuadees(names []string) ([]episode.Persuadee, error) {
	var out []episode.Persuadee
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("persuadee %q given twice", n)
		}
		seen[n] = true
		switch n {
		case "sim":
			out = append(out, sim.New(sim.DefaultConfig()))
		default:
			return nil, fmt.Errorf("unknown persuadee %q (known: sim)", n)
		}
	}
	return out, nil
}
