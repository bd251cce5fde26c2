package main

import (
	"fmt"
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
seed 000 Figure 5), the number of pressure markers, and the
PersuasionForGood persuader strategies (Wang et al. 2019: logical-appeal,
emotion-appeal, credibility-appeal, personal-story, self-modeling,
foot-in-the-door, donation-information, the three inquiries, greeting,
praise-user, thank, ask-donation-amount). Several arguments are joined with
spaces. See docs/tagger.md for the rules.`,
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
breakdown. It then reads DIR/300_info.csv for each dialogue's persuader and
prints, per P4G strategy, the support, precision, recall and kappa of the
tagger's strategy family on all units, on the tuning part the strategy
rules were written from, and on the held-out persuaders (tagger.P4GHeldOut,
fixed before the rules were written).`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		return tagger.WriteP4GAgreement(tagAgreementFrom, cmd.OutOrStdout())
	},
}

func init() {
	tagAgreementCmd.Flags().StringVar(&tagAgreementFrom, "from", "", "folder holding PersuasionForGood's 300_dialog.csv")
	tagCmd.AddCommand(tagAgreementCmd)
	rootCmd.AddCommand(tagCmd)
}
