package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/tagger"
)

// newTagCmd returns tag, which tags one persuader utterance
// (`persuarena tag "TEXT"`), and its agreement subcommand.
func newTagCmd() *cobra.Command {
	tag := &cobra.Command{
		Use:   "tag TEXT...",
		Short: "Tag a persuader utterance with persuasion acts and pressure markers",
		Long: `Tag prints the persuasion acts, pressure markers and P4G paper strategies the
rule-based tagger finds in one utterance (arguments joined). See docs/tagger.md.`,
		Example: `  persuarena tag "What worries you most? It's entirely your decision."
  persuarena tag agreement --from path/to/persuasionforgood`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t := tagger.Tag(strings.Join(args, " "))
			acts := strings.Join(t.Acts.Strings(), ",")
			if acts == "" {
				acts = "-"
			}
			strategies := strings.Join(t.Strategies.Strings(), ",")
			if strategies == "" {
				strategies = "-"
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "acts: %s\npressure: %d\nstrategies: %s\n", acts, t.Pressure, strategies)
			return err
		},
	}
	var from string
	// agreement measures the tagger against PersuasionForGood's annotated
	// persuader strategies.
	agreement := &cobra.Command{
		Use:   "agreement --from DIR",
		Short: "Measure the tagger's agreement with PersuasionForGood strategy labels",
		Long: `Agreement scores the tagger against the P4G paper's 300 annotated dialogues
(DIR/300_dialog.csv, 300_info.csv): per act and per strategy. See docs/tagger.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return tagger.WriteP4GAgreement(from, cmd.OutOrStdout())
		},
	}
	agreement.Flags().StringVar(&from, "from", "", "folder holding PersuasionForGood's 300_dialog.csv")
	tag.AddCommand(agreement)
	return tag
}
