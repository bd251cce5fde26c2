package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/fidelity"
	"github.com/persuarena/persuarena/p4g"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/scenario"
	"github.com/spf13/cobra"
)

// fidelityCmd groups the fidelity checks of persuadees against real data.
var fidelityCmd = &cobra.Command{
	Use:   "fidelity",
	Short: "Check a persuadee against real people (open-loop replay of real dialogues)",
}

var fidelityP4GFlags struct {
	from, persuadee, split, format, config string
	seed                                   uint64
	resamples, workers                     int
}

var fidelityP4GCmd = &cobra.Command{
	Use:   "p4g",
	Short: "Replay PersuasionForGood dialogues and compare the persuadee with the real persuadees",
	Long: `Open-loop replay: the real persuader's utterances of every PersuasionForGood
dialogue are fed turn by turn to the persuadee built from the real persuadee's
survey. Reports (a) the ROC AUC against the real outcome (donated more than $0)
of the initial belief B_0, the final belief B_T, a profile-only logistic
regression predicted out of fold (user-grouped 5-fold cross-fitting) and the
profile's initial_stance, side by side, with the paired differences B_T - B_0
and B_T - baseline; every interval is a seeded user-grouped bootstrap; (b) on
the 295 annotated dialogues, per-turn agreement between the simulated reaction
and the annotated persuadee acts, with Cohen's kappa; (c) calibration tables:
real donor rate against mean simulated belief per resistance type and per
tertile of nine traits, with the type-ordering check. Method: docs/fidelity.md.

By default the scenarios embedded in the binary are used; --from DIR re-imports
them from the raw CSV files.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		fl := fidelityP4GFlags
		if err := atLeast(1, "workers", fl.workers, "resamples", fl.resamples); err != nil {
			return err
		}
		if fl.format != "table" && fl.format != "json" {
			return fmt.Errorf("--format %q: want table or json", fl.format)
		}
		var ss []scenario.Scenario
		var err error
		if fl.from != "" {
			ss, _, err = p4g.Import(fl.from)
		} else {
			ss, err = scenario.Resolve("p4g")
		}
		if err != nil {
			return err
		}
		if fl.split != "" {
			sp := scenario.Split(fl.split)
			found := false
			for _, s := range scenario.Splits {
				found = found || s == sp
			}
			if !found {
				return fmt.Errorf("--split %q: want one of %v", fl.split, scenario.Splits)
			}
			ss = scenario.Filter(ss, sp)
		}
		pee, err := fidelityPersuadee(cmd.Context(), fl.persuadee, fl.config)
		if err != nil {
			return err
		}
		errw := cmd.ErrOrStderr()
		rep, err := fidelity.Run(cmd.Context(), ss, pee, fidelity.Options{
			Seed: fl.seed, Resamples: fl.resamples, Workers: fl.workers,
			Progress: func(done, total int) {
				if done == total || done%100 == 0 {
					fmt.Fprintf(errw, "replayed %d/%d\n", done, total)
				}
			},
		})
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if fl.format == "json" {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}
		_, err = fmt.Fprint(out, rep.Table())
		return err
	},
}

// fidelityPersuadee resolves --persuadee: "sim" is the embedded simulator,
// "sim-soft" and "sim-hard" its variants, sim:FILE a simulator config
// file, llm:NAME a role of the config.
func fidelityPersuadee(ctx context.Context, name, config string) (episode.Persuadee, error) {
	reg, err := roles.New(config)
	if err != nil {
		return nil, err
	}
	p, err := reg.Persuadee(name)
	if err != nil {
		return nil, fmt.Errorf("--persuadee: %w", err)
	}
	return p, reg.Preflight(ctx)
}

func init() {
	f := fidelityP4GCmd.Flags()
	f.StringVar(&fidelityP4GFlags.from, "from", "", "re-import from the PersuasionForGood CSV directory instead of the embedded scenarios")
	f.StringVar(&fidelityP4GFlags.persuadee, "persuadee", "sim", "persuadee to check: sim, sim-soft, sim-hard, sim-hand (the hand-set parameters), sim:FILE (a simulator config file) or llm:NAME (with --config)")
	f.StringVar(&fidelityP4GFlags.split, "split", "", "replay only this split (train, val or heldout); default all")
	seedFlag(f, &fidelityP4GFlags.seed, "persuadee sessions and bootstrap")
	f.IntVar(&fidelityP4GFlags.resamples, "resamples", 10000, "user-grouped bootstrap resamples for the AUC intervals")
	workersFlag(f, &fidelityP4GFlags.workers)
	f.StringVar(&fidelityP4GFlags.format, "format", "table", "output format: table or json")
	fidelityCmd.PersistentFlags().StringVar(&fidelityP4GFlags.config, "config", "", "persuarena.yaml naming the backend and role of an llm:NAME persuadee (docs/llm-roles.md)")
	fidelityCmd.AddCommand(fidelityP4GCmd)
	rootCmd.AddCommand(fidelityCmd)
}
