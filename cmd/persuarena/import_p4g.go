package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/p4g"
	"github.com/persuarena/persuarena/scenario"
)

// importCmd groups the importers of public data sets; each importer adds
// itself under it.
var importCmd = &cobra.Command{
	Use:   "import",
	Short: "Convert public persuasion data sets into scenario sets",
}

var importP4GFlags struct {
	from, out string
}

var importP4GCmd = &cobra.Command{
	Use:   "p4g --from DIR [--out FILE]",
	Short: "Import PersuasionForGood: one scenario per real persuadee",
	Long: `Import PersuasionForGood (P4G paper; Apache-2.0) from the directory of its CSV
files: one scenario per real persuadee, profile from its survey. See docs/p4g.md.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		ss, rep, err := p4g.Import(importP4GFlags.from)
		if err != nil {
			return err
		}
		if err := scenario.WriteFile(importP4GFlags.out, ss); err != nil {
			return err
		}
		fmt.Fprint(cmd.OutOrStdout(), rep.String())
		fmt.Fprintf(cmd.OutOrStdout(), "wrote %d scenarios to %s\n", len(ss), importP4GFlags.out)
		return nil
	},
}

func init() {
	f := importP4GCmd.Flags()
	f.StringVar(&importP4GFlags.from, "from", "", "directory with the PersuasionForGood CSV files (required)")
	f.StringVar(&importP4GFlags.out, "out", "scenarios/p4g.jsonl", "output JSONL file")
	_ = importP4GCmd.MarkFlagRequired("from")
	importCmd.AddCommand(importP4GCmd)
	scenariosCmd.AddCommand(importCmd)
}
