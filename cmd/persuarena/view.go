package main

import (
	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/view"
)

// newViewCmd returns view: the read-only web viewer.
func newViewCmd() *cobra.Command {
	var dbPath, addr string
	var allowHosts []string
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Browse runs, episodes and run comparisons in a read-only web viewer",
		Long: `Serves a read-only web viewer of the run database: the runs with the live
progress of running ones, a run's outcome table with Wilson intervals and its
filtered episode list, an episode's turn-by-turn timeline with its belief
trajectory and hidden profile (analyst only), and a comparison of two runs
pair by pair. It listens on loopback by default. See docs/view.md.`,
		Example: `  persuarena view
  persuarena view --db runs.db --addr 127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc := runs.Open(dbPath)
			defer svc.Close()
			return svc.View(cmd.Context(), addr, cmd.ErrOrStderr(), allowHosts...)
		},
	}
	dbFlag(cmd.Flags(), &dbPath)
	cmd.Flags().StringVar(&addr, "addr", view.DefaultAddr, "listen address (host:port); keep it on loopback unless the network is trusted")
	cmd.Flags().StringSliceVar(&allowHosts, "allow-host", nil, "host name the viewer answers besides localhost and IP addresses (e.g. a machine name off loopback); repeatable")
	return cmd
}
