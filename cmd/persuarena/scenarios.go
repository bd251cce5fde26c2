package main

import (
	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/scenario"
)

// newScenariosCmd returns scenarios and its list, show, validate, stats,
// import and generate subcommands.
func newScenariosCmd() *cobra.Command {
	var listSplit string
	list := &cobra.Command{
		Use:   "list [SET|FILE ...]",
		Short: "List scenarios (default: the built-in sets p4g and arena)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return scenario.WriteList(cmd.Context(), cmd.OutOrStdout(), args, scenario.Split(listSplit))
		},
	}
	list.Flags().StringVar(&listSplit, "split", "", "only this split (train, val, heldout)")

	var showFrom []string
	var showPublic bool
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print one scenario as JSON (--public: only what a persuader sees)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return scenario.WriteOne(cmd.Context(), cmd.OutOrStdout(), showFrom, args[0], showPublic)
		},
	}
	show.Flags().StringSliceVar(&showFrom, "from", nil, "scenario sets or files to search (default: p4g, arena)")
	show.Flags().BoolVar(&showPublic, "public", false, "print only the public view a persuader sees")

	validate := &cobra.Command{
		Use:   "validate [SET|FILE ...]",
		Short: "Check scenario files (default: the built-in sets) against the schema; print every problem",
		RunE: func(cmd *cobra.Command, args []string) error {
			return scenario.CheckFiles(cmd.Context(), cmd.OutOrStdout(), args)
		},
	}

	stats := &cobra.Command{
		Use:   "stats [SET|FILE ...]",
		Short: "Count scenarios by split, family, resistance, closeness, relationship",
		RunE: func(cmd *cobra.Command, args []string) error {
			ss, err := scenario.ResolveOrBuiltins(cmd.Context(), args)
			if err != nil {
				return err
			}
			return scenario.Summarize(ss).WriteText(cmd.OutOrStdout())
		},
	}

	scenarios := &cobra.Command{
		Use:   "scenarios",
		Short: "List, inspect, validate, import and generate scenario sets",
	}
	scenarios.AddCommand(list, show, validate, stats, newImportCmd(), newGenerateCmd())
	return scenarios
}
