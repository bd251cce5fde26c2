package main

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/scenarios"
)

// The shared flag vocabulary: one name, one default and one meaning per
// flag across commands.
const defaultDB = "persuarena.db"

// dbFlag declares --db (the run database, default persuarena.db).
func dbFlag(f *pflag.FlagSet, p *string) {
	f.StringVar(p, "db", defaultDB, "run database: a SQLite file, or a postgres:// URL (docs/store.md)")
}

// workersFlag declares --workers (concurrent episodes or dialogues,
// default the number of CPUs, 1..runs.MaxWorkers; results never depend
// on it).
func workersFlag(f *pflag.FlagSet, p *int) {
	flagbound.Int(f, p, "workers", min(runtime.NumCPU(), runs.MaxWorkers), 1, runs.MaxWorkers, "concurrent episodes (results do not depend on it)")
}

// seedFlag declares --seed (the run seed, default 1).
func seedFlag(f *pflag.FlagSet, p *uint64, what string) {
	flagbound.Uint64(f, p, "seed", 1, 0, math.MaxUint64, "run seed: "+what)
}

// scenariosFlag declares --scenarios, the one way to choose scenario sets
// (default the built-in sets, p4g,arena; a copy per flag, since decoding
// a stored config reuses the slice).
func scenariosFlag(f *pflag.FlagSet, p *[]string, what string) {
	*p = slices.Clone(scenarios.Names)
	f.Var(&commaList{p: p}, "scenarios", what+`: built-in names (p4g, arena) or JSONL files, comma-separated (a backslash escapes a comma or backslash in a name: a\,b.jsonl)`)
}

// tmaxFlag declares --tmax (maximum persuader turns per episode,
// 1..episode.MaxTmax).
func tmaxFlag(f *pflag.FlagSet, p *int, def int, paper string) {
	flagbound.Int(f, p, "tmax", def, 1, episode.MaxTmax, fmt.Sprintf("maximum persuader turns per episode (%s)", paper))
}

// probesFlag declares --probes (the probe basis, probe.Resolve), with
// def the basis "" stands for.
func probesFlag(f *pflag.FlagSet, p *string, def string) {
	f.StringVar(p, "probes", "", "probe basis: default (the CA/PE/AC basis of the Probe-RPO paper, Table 1), agreement (one probe of agreement with the proposal), a JSON file, or none (eval only: outcome-only episodes without belief read-outs, for persuadees whose engine gives no log-probs); empty: "+def)
}

// scenariosHint follows an unknown flag that guesses at choosing scenario
// sets.
const scenariosHint = "a scenario set is chosen with --scenarios"

// flagErrorHint is the root's flag error function (subcommands inherit
// it): on a command that takes --scenarios, an unknown flag a newcomer
// may try for it (--set, --scenario, --from, --data, ...) gets
// scenariosHint; every other error is returned as it is.
func flagErrorHint(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || cmd.Flags().Lookup("scenarios") == nil {
		return err
	}
	switch ne.GetSpecifiedName() {
	case "set", "sets", "scenario", "scenario-set", "scenario-sets", "scenarios-set", "from", "data", "dataset", "data-set":
		return fmt.Errorf("%w (%s)", err, scenariosHint)
	}
	return err
}
