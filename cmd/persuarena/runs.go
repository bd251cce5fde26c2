package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/runs"
)

func init() {
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
	var episodeKey string
	show := &cobra.Command{
		Use:   "show RUN_ID [--episode PERSUADER/PERSUADEE/SCENARIO#ROLLOUT]",
		Short: "Show a run's metadata and terminal states per pair, or one episode's transcript",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return svc(cmd, func(s *runs.Service) error {
				if episodeKey != "" {
					return s.ShowEpisode(cmd.Context(), args[0], episodeKey, cmd.OutOrStdout())
				}
				return s.Show(cmd.Context(), args[0], cmd.OutOrStdout())
			})
		},
	}
	show.Flags().StringVar(&episodeKey, "episode", "", "print this episode's transcript (key: persuader/persuadee/scenario#rollout)")
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
	rootCmd.AddCommand(runsCmd)
}
