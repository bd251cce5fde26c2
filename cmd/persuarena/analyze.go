package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/store"
)

// analyses lists the --what values of analyze in "all" order.
var analyses = []string{"table6", "table7", "table8", "table9", "acts", "beliefs", "deadgroups"}

// analyzeOptions are analyze's flags.
type analyzeOptions struct {
	what, persuader, scenario, format string
	rollout                           int
	// grpo sets the dense mode, λ and separation threshold of deadgroups.
	grpo grpo.Config
}

func init() {
	var (
		o      = analyzeOptions{grpo: grpo.DefaultConfig()}
		dbPath string
	)
	cmd := &cobra.Command{
		Use:   "analyze RUN_ID...",
		Short: "Seed 000's analyses of stored runs: Tables 6-9 and the data of Figures 5-7",
		Long: `Computes seed 000's analyses from the episodes of one or more stored runs:

  table6      full acceptance by hidden resistance type and domain family, per persuader
  table7      full acceptance per persuader (rows) and persuadee (columns)
  table8      probe trace of one episode: acts, probe states, B_t and r_dense per turn
              (default: the accepted episode with the largest sum |r_dense|;
              choose one with --scenario ID --rollout R [--persuader P])
  table9      mean final belief B_T, moved % (B_T > 0.5), closed|moved % per persuader
  acts        Figure 5: % of persuader utterances holding each act, by turn
  beliefs     Figure 6: mean probe states and belief by turn, per terminal state
  deadgroups  Figure 7: share of dead GRPO groups (same R_goal across a scenario's
              rollouts) and the share the dense reward still separates;
              needs a run with --rollouts >= 2
  all         every one of them

Several runs are concatenated; a persuader name found in more than one run is
renamed RUN_ID:name. --persuader keeps one persuader (use the renamed form
then). Failed episodes are left out and counted. See docs/analysis.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("rollout") {
				o.rollout = -1
			}
			return runAnalyze(cmd.Context(), dbPath, args, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.what, "what", "all", "analysis: "+strings.Join(analyses, ", ")+" or all")
	f.StringVar(&o.persuader, "persuader", "", "keep only this persuader (for table8: the trace's persuader)")
	f.StringVar(&o.scenario, "scenario", "", "table8: scenario id of the episode to trace")
	f.IntVar(&o.rollout, "rollout", 0, "table8: rollout of the episode to trace (default 0 with --scenario)")
	f.StringVar(&o.format, "format", "text", "output format: text, csv or markdown")
	f.Var(denseModeFlag{&o.grpo.DenseMode}, "dense-mode", "deadgroups: dense advantage (scaled, pooled, turn, rtg-per-turn, length-only)")
	f.Float64Var(&o.grpo.Lambda, "lambda", o.grpo.Lambda, "deadgroups: λ weighting the dense term in the separation test")
	f.Float64Var(&o.grpo.SeparateThreshold, "separate-threshold", o.grpo.SeparateThreshold, "deadgroups: separated when λ·A_dense at turn 1 differs by more than this")
	f.StringVar(&dbPath, "db", "persuarena.db", "run database (SQLite)")
	rootCmd.AddCommand(cmd)
}

// openExistingDB opens the run database at path, refusing to create a
// missing file (a typo would otherwise create an empty store).
func openExistingDB(ctx context.Context, path string) (*store.DB, error) {
	if path != ":memory:" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no run database at %s (set --db)", path)
		}
	}
	return store.Open(ctx, path)
}

// loadRunEpisodes returns a run's episodes, ordered by the persuaders and
// persuadees of its stored config when it has such lists (eval runs).
func loadRunEpisodes(ctx context.Context, db *store.DB, runID string) ([]*episode.Episode, error) {
	run, err := db.GetRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	eps, err := db.Episodes(ctx, runID)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Persuaders []string `json:"persuaders"`
		Persuadees []string `json:"persuadees"`
	}
	if len(run.Config) > 0 && json.Unmarshal(run.Config, &cfg) == nil {
		eps = analysis.Order(eps, cfg.Persuaders, cfg.Persuadees)
	}
	return eps, nil
}

func runAnalyze(ctx context.Context, dbPath string, runIDs []string, o analyzeOptions, out, errOut io.Writer) error {
	whats := []string{o.what}
	if o.what == "all" {
		whats = analyses
	} else if !contains(analyses, o.what) {
		return fmt.Errorf("unknown --what %q (want %s or all)", o.what, strings.Join(analyses, ", "))
	}
	switch o.format {
	case "text", "csv", "markdown":
	default:
		return fmt.Errorf("unknown --format %q (want text, csv or markdown)", o.format)
	}
	if o.rollout >= 0 && o.scenario == "" {
		return errors.New("--rollout needs --scenario")
	}
	if o.grpo.DenseMode == "" { // callers that build analyzeOptions by hand
		o.grpo = grpo.DefaultConfig()
	}
	if err := o.grpo.Validate(); err != nil {
		return err
	}
	db, err := openExistingDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	var runs []analysis.RunEpisodes
	for i, id := range runIDs {
		if contains(runIDs[:i], id) {
			return fmt.Errorf("run %s given twice", id)
		}
		eps, err := loadRunEpisodes(ctx, db, id)
		if err != nil {
			return err
		}
		runs = append(runs, analysis.RunEpisodes{RunID: id, Episodes: eps})
	}
	all := analysis.Concat(runs)
	eps := analysis.Filter(all, o.persuader)
	if len(eps) == 0 {
		if o.persuader != "" {
			arms, _ := analysis.Arms(all)
			var names []string
			for _, a := range arms {
				if !contains(names, a.Persuader) {
					names = append(names, a.Persuader)
				}
			}
			return fmt.Errorf("no episodes of persuader %q (the runs hold %s)", o.persuader, strings.Join(names, ", "))
		}
		return fmt.Errorf("run(s) %s hold no episodes", strings.Join(runIDs, ", "))
	}
	for i, w := range whats {
		var t analysis.Table
		switch w {
		case "table6":
			t = analysis.AcceptanceByProfile(eps).Table()
		case "table7":
			t = analysis.AcceptanceGrid(eps).Table()
		case "table8":
			var ep *episode.Episode
			if o.scenario != "" {
				ep, err = analysis.FindEpisode(eps, "", o.scenario, max(o.rollout, 0))
			} else {
				ep, err = analysis.LargestDenseAccepted(eps, "")
			}
			if err != nil {
				if o.what == "all" {
					fmt.Fprintln(errOut, "table8 skipped:", err)
					continue
				}
				return err
			}
			t = analysis.TraceOf(ep).Table()
		case "table9":
			t = analysis.ConversionOf(eps).Table()
		case "acts":
			t = analysis.ActsByTurn(eps).Table()
		case "beliefs":
			t = analysis.BeliefTrajectories(eps).Table()
		case "deadgroups":
			t = analysis.DeadGroups(eps, analysis.GroupOptions{}).Table()
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := t.Write(out, o.format); err != nil {
			return err
		}
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
