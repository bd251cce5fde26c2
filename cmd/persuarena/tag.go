package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/tagger"
)

// tagCmd tags one persuader utterance: `persuarena tag "TEXT"`.
var tagCmd = &cobra.Command{
	Use:   "tag TEXT...",
	Short: "Tag a persuader utterance with persuasion acts and pressure markers",
	Long: `Tag reads a persuader utterance with the rule-based move tagger and prints the
persuasion acts it finds (diagnostic, evidence, plan, commitment, autonomy;
seed 000 Figure 5) and the number of pressure markers. Several arguments are
joined with spaces. See docs/tagger.md for the rules.`,
	Example: `  persuarena tag "What worries you most? It's entirely your decision."
  persuarena tag agreement --from path/to/persuasionforgood`,
	Args: cobra.MinimumNArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		t := tagger.Tag(strings.Join(args, " "))
		acts := strings.Join(t.Acts.Strings(), ",")
		if acts == "" {
			acts = "-"
		}
		_, err := fmt.Fprintf(cmd.OutOrStdout(), "acts: %s\npressure: %d\n", acts, t.Pressure)
		return err
	},
}

var tagAgreementFrom string

// tagAgreementCmd measures the tagger against PersuasionForGood's
// annotated persuader strategies.
var tagAgreementCmd = &cobra.Command{
	Use:   "agreement --from DIR",
	Short: "Measure the tagger's agreement with PersuasionForGood strategy labels",
	Long: `Agreement reads DIR/300_dialog.csv (PersuasionForGood's 300 annotated
dialogues), maps the persuader strategy labels to the five acts (see
docs/tagger.md for the mapping) and prints per-act precision, recall, F1 and
Cohen's kappa of the tagger against them, per unit, then a per-label
breakdown.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		if tagAgreementFrom == "" {
			return fmt.Errorf("--from DIR is required (the folder holding 300_dialog.csv)")
		}
		path := filepath.Join(tagAgreementFrom, "300_dialog.csv")
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		units, err := tagger.ReadP4G(f, path)
		if err != nil {
			return err
		}
		return tagger.Agreement(units).Format(cmd.OutOrStdout())
	},
}

func init() {
	tagAgreementCmd.Flags().StringVar(&tagAgreementFrom, "from", "", "folder holding PersuasionForGood's 300_dialog.csv")
	tagCmd.AddCommand(tagAgreementCmd)
	rootCmd.AddCommand(tagCmd)
}
