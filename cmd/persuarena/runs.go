package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// newRunsCmd returns runs and its list, show, export and rm subcommands.
func newRunsCmd() *cobra.Command {
	var dbPath string
	runsCmd := &cobra.Command{
		Use:   "runs",
		Short: "List, inspect, export and remove stored runs",
		Long:  "Reads the run database (SQLite or PostgreSQL) that eval and other jobs write. See docs/store.md.",
	}
	dbFlag(runsCmd.PersistentFlags(), &dbPath)
	// svc opens --db for reading, refusing to create a missing file.
	svc := func(cmd *cobra.Command, run func(*runs.Service) error) error {
		s := runs.Open(dbPath)
		defer s.Close()
		return run(s)
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first, with episode counts and full acceptance rate",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return svc(cmd, func(s *runs.Service) error { return s.List(cmd.Context(), cmd.OutOrStdout()) })
		},
	}
	var (
		episodeKey string
		keys       bool
		kf         struct{ persuader, persuadee, scenario, split, terminal, family, resistance string }
	)
	show := &cobra.Command{
		Use:   "show RUN_ID [--episode PERSUADER/PERSUADEE/SCENARIO#ROLLOUT | --keys [filters]]",
		Short: "Show a run's metadata and terminal states per pair, its episode keys, or one episode's transcript",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return svc(cmd, func(s *runs.Service) error {
				switch {
				case episodeKey != "" && keys:
					return errors.New("--episode and --keys: choose one")
				case !keys && kf != (struct{ persuader, persuadee, scenario, split, terminal, family, resistance string }{}):
					return errors.New("the episode filters (--persuader, --persuadee, ...) need --keys")
				case episodeKey != "":
					return s.ShowEpisode(cmd.Context(), args[0], episodeKey, cmd.OutOrStdout())
				case keys:
					return s.ShowKeys(cmd.Context(), args[0], store.Filter{Persuader: kf.persuader, Persuadee: kf.persuadee,
						ScenarioID: kf.scenario, Split: scenario.Split(kf.split), Terminal: decision.Terminal(kf.terminal),
						Family: scenario.Family(kf.family), Resistance: scenario.Resistance(kf.resistance)}, cmd.OutOrStdout())
				}
				return s.Show(cmd.Context(), args[0], cmd.OutOrStdout())
			})
		},
	}
	sf := show.Flags()
	sf.StringVar(&episodeKey, "episode", "", "print this episode's transcript (key: persuader/persuadee/scenario#rollout)")
	sf.BoolVar(&keys, "keys", false, "list the run's episode keys (what --episode takes) with terminal states and turns; the filters below narrow it, as in the viewer")
	sf.StringVar(&kf.persuader, "persuader", "", "with --keys: only this persuader's episodes")
	sf.StringVar(&kf.persuadee, "persuadee", "", "with --keys: only this persuadee's episodes")
	sf.StringVar(&kf.scenario, "scenario", "", "with --keys: only this scenario id")
	sf.StringVar(&kf.split, "split", "", "with --keys: only this split (train, val, heldout; all: every split)")
	sf.StringVar(&kf.terminal, "terminal", "", "with --keys: only this terminal state (accept, conditional, pending, reject, truncated, failed)")
	sf.StringVar(&kf.family, "family", "", "with --keys: only this domain family")
	sf.StringVar(&kf.resistance, "resistance", "", "with --keys: only this resistance type (EB, IT, AR, AA)")
	var (
		jsonl bool
		out   string
	)
	exp := &cobra.Command{
		Use:   "export RUN_ID --jsonl [--out FILE]",
		Short: "Export a run's stored episode records as JSON Lines (docs/export.md, format episodes)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !jsonl {
				return errors.New("runs export: choose a format: --jsonl (the only one so far)")
			}
			return svc(cmd, func(s *runs.Service) error { return s.ExportEpisodes(cmd.Context(), args[0], out, cmd.OutOrStdout()) })
		},
	}
	exp.Flags().BoolVar(&jsonl, "jsonl", false, "write JSON Lines, the episode records as eval stores them")
	exp.Flags().StringVar(&out, "out", "", "output file, written atomically (default: standard output)")
	rm := &cobra.Command{
		Use:   "rm RUN_ID...",
		Short: "Delete runs with their episodes, turns, probe read-outs, metrics and artifacts (one transaction per run)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return svc(cmd, func(s *runs.Service) error { return s.Remove(cmd.Context(), args, cmd.OutOrStdout()) })
		},
	}
	runsCmd.AddCommand(list, show, exp, rm)
	return runsCmd
}
