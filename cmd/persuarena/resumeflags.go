package main

import (
	"github.com/spf13/pflag"

	"github.com/persuarena/persuarena/runs"
)

// givenPlanFlags returns the runs.EvalPlanFlags given on the command line
// (runs.EvalOptions.Given: with --resume, one that would change the
// stored plan is refused).
func givenPlanFlags(f *pflag.FlagSet) []string {
	var given []string
	for _, name := range runs.EvalPlanFlags {
		if f.Changed(name) {
			given = append(given, name)
		}
	}
	return given
}
