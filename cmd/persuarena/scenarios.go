package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/scenarios"
)

// scenariosLoad resolves SET|FILE arguments, defaulting to all built-in
// sets.
func scenariosLoad(refs []string) ([]scenario.Scenario, error) {
	if len(refs) == 0 {
		refs = scenarios.Names
	}
	return scenario.ResolveAll(refs...)
}

// scenariosTrunc shortens s to at most n runes, marking the cut with "...".
func scenariosTrunc(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

func init() {
	var listSplit string
	list := &cobra.Command{
		Use:   "list [SET|FILE ...]",
		Short: "List scenarios (default: the built-in sets p4g and arena)",
		RunE: func(cmd *cobra.Command, args []string) error {
			split := scenario.Split(listSplit)
			if split != "" && !slices.Contains(scenario.Splits, split) {
				return fmt.Errorf("--split %q: want one of %v", listSplit, scenario.Splits)
			}
			ss, err := scenariosLoad(args)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSPLIT\tFAMILY\tRES\tDOMAIN")
			for _, s := range scenario.Filter(ss, split) {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Split, s.Family, s.Hidden.Resistance, scenariosTrunc(s.Domain, 50))
			}
			return tw.Flush()
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
			ss, err := scenariosLoad(showFrom)
			if err != nil {
				return err
			}
			s, ok := scenario.ByID(ss, args[0])
			if !ok {
				return fmt.Errorf("no scenario with id %q", args[0])
			}
			var v any = s
			if showPublic {
				v = s.Public()
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(v)
		},
	}
	show.Flags().StringSliceVar(&showFrom, "from", nil, "scenario sets or files to search (default: p4g, arena)")
	show.Flags().BoolVar(&showPublic, "public", false, "print only the public view a persuader sees")

	validate := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check scenario files against the schema; print every problem",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, ref := range args {
				ss, err := scenario.Resolve(ref)
				var le *scenario.LoadError
				switch {
				case errors.As(err, &le):
					for _, p := range le.Problems {
						fmt.Fprintln(cmd.OutOrStdout(), p)
					}
					bad++
				case err != nil:
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %v\n", ref, err)
					bad++
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "%s: ok: %d scenarios\n", ref, len(ss))
				}
			}
			if bad > 0 {
				return fmt.Errorf("%d of %d files invalid", bad, len(args))
			}
			return nil
		},
	}

	stats := &cobra.Command{
		Use:   "stats [SET|FILE ...]",
		Short: "Count scenarios by split, family, resistance, closeness, relationship",
		RunE: func(cmd *cobra.Command, args []string) error {
			ss, err := scenariosLoad(args)
			if err != nil {
				return err
			}
			return scenario.Summarize(ss).WriteText(cmd.OutOrStdout())
		},
	}

	scenariosCmd.AddCommand(list, show, validate, stats)
}
