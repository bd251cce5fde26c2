package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/runs"
)

// newFidelityCmd returns fidelity and its p4g and persuasiontrace
// subcommands.
func newFidelityCmd() *cobra.Command {
	var (
		spec   runs.FidelitySpec
		format string
	)
	p4gCmd := &cobra.Command{
		Use:   "p4g",
		Short: "Replay PersuasionForGood dialogues and compare the persuadee with the real persuadees",
		Long: `Replays every P4G paper dialogue open-loop against the persuadee built from its
real persuadee's survey and reports AUC, act agreement and calibration
against the real outcomes. See docs/fidelity.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return fmt.Errorf("--format %q: want table or json", format)
			}
			errw := cmd.ErrOrStderr()
			rep, err := runs.FidelityP4G(cmd.Context(), spec, func(done, total int) {
				if done == total || done%100 == 0 {
					fmt.Fprintf(errw, "replayed %d/%d\n", done, total)
				}
			})
			if err != nil {
				return err
			}
			if format == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), rep.Table())
			return err
		},
	}
	f := p4gCmd.Flags()
	f.StringVar(&spec.From, "from", "", "re-import from the PersuasionForGood CSV directory instead of the embedded scenarios")
	f.StringVar(&spec.Persuadee, "persuadee", "sim", "persuadee to check: sim, sim-soft, sim-hard, sim-hand (the hand-set parameters), sim:FILE (a simulator config file) or llm:NAME (with --config)")
	f.StringVar(&spec.Split, "split", "", "replay only this split (train, val or heldout); default all")
	seedFlag(f, &spec.Seed, "persuadee sessions and bootstrap")
	flagbound.Int(f, &spec.Resamples, "resamples", 10000, 1, analysis.MaxResamples, "user-grouped bootstrap resamples for the AUC intervals")
	workersFlag(f, &spec.Workers)
	f.StringVar(&format, "format", "table", "output format: table or json")
	probesFlag(f, &spec.Probes, "default")
	var (
		ptSpec   runs.FidelitySpec
		ptFormat string
	)
	ptCmd := &cobra.Command{
		Use:   "persuasiontrace",
		Short: "Replay PersuasionTrace rounds and compare the persuadee's belief with the real people's reports",
		Long: `Imports the PersuasionTrace rounds under --from (folders of the upstream
exporter's files, any nesting), replays each round's real persuader messages
open-loop into the persuadee and compares its belief, at every position where
the person reported one, with the person's: per-report MAE beside the
constant-belief and mean-shift predictors, shares moved, mean shifts,
correlations and trajectory clusters, persuasion and control rounds apart,
with person-grouped bootstrap intervals. See docs/fidelity.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ptFormat != "table" && ptFormat != "json" {
				return fmt.Errorf("--format %q: want table or json", ptFormat)
			}
			ptSpec.Config = spec.Config
			errw := cmd.ErrOrStderr()
			rep, err := runs.FidelityPersuasionTrace(cmd.Context(), ptSpec, func(done, total int) {
				if done == total || done%100 == 0 {
					fmt.Fprintf(errw, "replayed %d/%d\n", done, total)
				}
			})
			if err != nil {
				return err
			}
			if ptFormat == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), rep.Table())
			return err
		},
	}
	pf := ptCmd.Flags()
	pf.StringVar(&ptSpec.From, "from", "", "PersuasionTrace directory: folders of the upstream exporter's round files (required)")
	pf.StringVar(&ptSpec.Persuadee, "persuadee", "sim", "persuadee to check: sim, sim-soft, sim-hard, sim-hand, sim:FILE or llm:NAME (with --config)")
	seedFlag(pf, &ptSpec.Seed, "persuadee sessions and bootstrap")
	flagbound.Int(pf, &ptSpec.Resamples, "resamples", 10000, 1, analysis.MaxResamples, "person-grouped bootstrap resamples for the intervals")
	workersFlag(pf, &ptSpec.Workers)
	pf.StringVar(&ptFormat, "format", "table", "output format: table or json")
	probesFlag(pf, &ptSpec.Probes, "agreement")
	fidelityCmd := &cobra.Command{Use: "fidelity", Short: "Check a persuadee against real people (open-loop replay of real dialogues)"}
	fidelityCmd.PersistentFlags().StringVar(&spec.Config, "config", "", "persuarena.yaml naming the backend and role of an llm:NAME persuadee (docs/llm-roles.md)")
	fidelityCmd.AddCommand(p4gCmd, ptCmd)
	return fidelityCmd
}
