package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/redteam"
	"github.com/persuarena/persuarena/runs"
)

// redteamWin is redteam's error when a degenerate family wins: exit
// status 2, after the report.
type redteamWin struct{ families []string }

func (w redteamWin) Error() string {
	return "red team: " + strings.Join(w.families, ", ") + " beat an honest reference (docs/redteam.md)"
}

func (redteamWin) ExitCode() int { return 2 }

func newRedteamCmd() *cobra.Command {
	spec := runs.RedteamSpec{Options: redteam.DefaultOptions()}
	var format string
	cmd := &cobra.Command{
		Use:   "redteam",
		Short: "Search degenerate persuader text for exploits of a persuadee before training against it",
		Long: `Audits a persuadee: an evolutionary search over families of degenerate
persuader text (word lists, echo, negated and conceded answers, keyword
stuffing, padding, repetition, manipulation, instructions aimed at the probes,
chat about something else) on the train scenarios, each family's best scored
on the held-out scenarios against honest references (the built-in script and
an honest answering persuader). Prints per family the acceptance, the moved
share, the mean r_t and the best text with its transcript.

Exit status: 0 when no family beats the lower honest reference's full
acceptance, 2 when one does (after the report), 1 on an error. Run it on any
persuadee before training against it. See docs/redteam.md.`,
		Example: `  persuarena redteam --persuadee sim
  persuarena redteam --persuadee sim+reader=llm:reader --config persuarena.yaml --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return fmt.Errorf("--format %q: want table or json", format)
			}
			r, err := runs.Redteam(cmd.Context(), spec)
			if err != nil {
				return err
			}
			if format == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				err = enc.Encode(r)
			} else {
				_, err = fmt.Fprint(cmd.OutOrStdout(), r.Table())
			}
			if err != nil {
				return err
			}
			if r.Win {
				var w redteamWin
				for _, f := range r.Families {
					if f.Wins {
						w.families = append(w.families, f.Family)
					}
				}
				return w
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Persuadee, "persuadee", "sim", "persuadee audited: sim, sim-soft, sim-hard, sim-hand, sim:FILE, sim+reader=llm:ROLE or llm:ROLE (with --config)")
	f.StringVar(&spec.Config, "config", "", "persuarena.yaml naming the backend of llm:ROLE roles (docs/llm-roles.md)")
	scenariosFlag(f, &spec.Scenarios, "scenario sets searched and scored")
	f.StringVar(&spec.SearchSplit, "search-split", "train", "split the search plays on")
	f.StringVar(&spec.TestSplit, "test-split", "heldout", "split every family's best and the references are scored on")
	f.Var(&commaList{p: &spec.Families}, "families", "families searched, comma-separated (default all: "+strings.Join(redteam.Families(), ", ")+")")
	flagbound.Int(f, &spec.SearchScenarios, "search-scenarios", spec.SearchScenarios, 1, 10000, "search scenarios each candidate plays")
	flagbound.Int(f, &spec.Population, "population", spec.Population, 2, 1000, "candidates per generation")
	flagbound.Int(f, &spec.Generations, "generations", spec.Generations, 0, 1000, "generations after the first")
	flagbound.Int(f, &spec.Rollouts, "rollouts", spec.Rollouts, 1, runs.MaxPlannedEpisodes, "rollouts per held-out scenario")
	tmaxFlag(f, &spec.Tmax, episode.DefaultTmax, "Probe-RPO paper: 10")
	probesFlag(f, &spec.Probes, "default")
	seedFlag(f, &spec.Seed, "search and episodes")
	workersFlag(f, &spec.Workers)
	f.StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}
