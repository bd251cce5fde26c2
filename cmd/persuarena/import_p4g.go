package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/p4g"
	"github.com/persuarena/persuarena/scenario"
)

// newImportCmd returns scenarios import, which groups the importers of
// public data sets (so far p4g).
func newImportCmd() *cobra.Command {
	var from, out string
	p4gCmd := &cobra.Command{
		Use:   "p4g --from DIR [--out FILE]",
		Short: "Import PersuasionForGood: one scenario per real persuadee",
		Long: `Import PersuasionForGood (P4G paper; Apache-2.0) from the directory of its CSV
files: one scenario per real persuadee, profile from its survey. See docs/p4g.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ss, rep, err := p4g.Import(from)
			if err != nil {
				return err
			}
			if err := scenario.WriteFile(out, ss); err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), rep.String())
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d scenarios to %s\n", len(ss), out)
			return nil
		},
	}
	f := p4gCmd.Flags()
	f.StringVar(&from, "from", "", "directory with the PersuasionForGood CSV files (required)")
	f.StringVar(&out, "out", "scenarios/p4g.jsonl", "output JSONL file")
	_ = p4gCmd.MarkFlagRequired("from")
	imp := &cobra.Command{
		Use:   "import",
		Short: "Convert public persuasion data sets into scenario sets",
	}
	imp.AddCommand(p4gCmd)
	return imp
}
