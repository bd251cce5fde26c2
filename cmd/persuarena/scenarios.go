package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/scenario"
)

// newScenariosCmd returns scenarios and its list, show, validate, stats,
// import and generate subcommands.
func newScenariosCmd() *cobra.Command {
	var (
		listSets  []string
		listSplit string
	)
	list := &cobra.Command{
		Use:   "list [SET|FILE ...]",
		Short: "List scenarios (default: the built-in sets p4g and arena)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return scenario.WriteList(cmd.Context(), cmd.OutOrStdout(), chosenSets(cmd, listSets, args), scenario.Split(listSplit))
		},
	}
	scenariosFlag(list.Flags(), &listSets, "scenario sets to list (or as arguments)")
	list.Flags().StringVar(&listSplit, "split", "", "only this split (train, val, heldout)")

	var (
		showSets   []string
		showPublic bool
	)
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print one scenario as JSON (--public: only what a persuader sees)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("from") {
				fmt.Fprintln(cmd.ErrOrStderr(), "--from is now --scenarios")
			}
			return scenario.WriteOne(cmd.Context(), cmd.OutOrStdout(), showSets, args[0], showPublic)
		},
	}
	sf := show.Flags()
	scenariosFlag(sf, &showSets, "scenario sets to search")
	// --from was this flag's name before every command chose sets with
	// --scenarios; the old spelling still works, hidden, onto the same list.
	sf.Var(sf.Lookup("scenarios").Value, "from", "old name of --scenarios")
	_ = sf.MarkHidden("from")
	sf.BoolVar(&showPublic, "public", false, "print only the public view a persuader sees")

	var validateSets []string
	validate := &cobra.Command{
		Use:   "validate [SET|FILE ...]",
		Short: "Check scenario files (default: the built-in sets) against the schema; print every problem",
		RunE: func(cmd *cobra.Command, args []string) error {
			return scenario.CheckFiles(cmd.Context(), cmd.OutOrStdout(), chosenSets(cmd, validateSets, args))
		},
	}
	scenariosFlag(validate.Flags(), &validateSets, "scenario sets to check (or as arguments)")

	var statsSets []string
	stats := &cobra.Command{
		Use:   "stats [SET|FILE ...]",
		Short: "Count scenarios by split, family, resistance, closeness, relationship",
		RunE: func(cmd *cobra.Command, args []string) error {
			ss, err := scenario.ResolveOrBuiltins(cmd.Context(), chosenSets(cmd, statsSets, args))
			if err != nil {
				return err
			}
			return scenario.Summarize(ss).WriteText(cmd.OutOrStdout())
		},
	}
	scenariosFlag(stats.Flags(), &statsSets, "scenario sets to count (or as arguments)")

	scenarios := &cobra.Command{
		Use:   "scenarios",
		Short: "List, inspect, validate, import and generate scenario sets",
	}
	scenarios.AddCommand(list, show, validate, stats, newImportCmd(), newGenerateCmd())
	return scenarios
}

// chosenSets is what a scenarios subcommand reads: the --scenarios sets,
// then the positional ones, when --scenarios is given; the positional
// ones alone otherwise; --scenarios' default (the built-in sets) when
// there are none.
func chosenSets(cmd *cobra.Command, flag, args []string) []string {
	if cmd.Flags().Changed("scenarios") || len(args) == 0 {
		return append(slices.Clone(flag), args...)
	}
	return args
}
