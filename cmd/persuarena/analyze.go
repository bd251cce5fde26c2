package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
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
	dbFlag(f, &dbPath)
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
	arms, err := planArms(ctx, db, runIDs)
	if err != nil {
		return err
	}
	kept := filterArms(arms, o.persuader)
	if len(kept) == 0 {
		if o.persuader != "" {
			var names []string
			for _, a := range arms {
				if !contains(names, a.name) {
					names = append(names, a.name)
				}
			}
			return fmt.Errorf("no episodes of persuader %q (the runs hold %s)", o.persuader, strings.Join(names, ", "))
		}
		return fmt.Errorf("run(s) %s hold no episodes", strings.Join(runIDs, ", "))
	}
	// deadgroups: the --dense-mode, --lambda and --separate-threshold flags.
	so := analysis.StreamOptions{Groups: analysis.GroupOptions{Config: &o.grpo}}
	if o.scenario != "" {
		so.TraceScenario, so.TraceRollout = o.scenario, max(o.rollout, 0)
	}
	st := analysis.NewStream(so)
	if err := eachArmEpisode(ctx, db, kept, st.Add); err != nil {
		return err
	}
	for i, w := range whats {
		var t analysis.Table
		switch w {
		case "table6":
			t = st.AcceptanceByProfile().Table()
		case "table7":
			t = st.AcceptanceGrid().Table()
		case "table8":
			var ep *episode.Episode
			if o.scenario != "" {
				ep, err = st.FindEpisode()
			} else {
				ep, err = st.LargestDenseAccepted()
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
			t = st.ConversionOf().Table()
		case "acts":
			t = st.ActsByTurn().Table()
		case "beliefs":
			t = st.BeliefTrajectories().Table()
		case "deadgroups":
			t = st.DeadGroups().Table()
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

// runArm is one (persuader, persuadee) arm of a stored run, with the
// persuader name the analyses show (analysis.Concat's renaming).
type runArm struct {
	run  string
	arm  store.Arm
	name string
}

// planArms lists the arms of runIDs in the order analysis.Concat over
// loadRunEpisodes would give their episodes: runs in order; in a run, by
// the position of the persuader and then the persuadee in the run's
// configured lists (unlisted names last), ties by name as the store sorts
// them. A persuader name found in more than one run is named
// "RUN_ID:name". It reads only the runs' metadata and distinct arms.
// Errors: a run given twice; a run that does not exist.
func planArms(ctx context.Context, db *store.DB, runIDs []string) ([]runArm, error) {
	var out []runArm
	inRuns := map[string]map[string]bool{}
	for i, id := range runIDs {
		if contains(runIDs[:i], id) {
			return nil, fmt.Errorf("run %s given twice", id)
		}
		run, err := db.GetRun(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		arms, err := db.Arms(ctx, id)
		if err != nil {
			return nil, err
		}
		var cfg struct {
			Persuaders []string `json:"persuaders"`
			Persuadees []string `json:"persuadees"`
		}
		if len(run.Config) > 0 && json.Unmarshal(run.Config, &cfg) == nil {
			pos := func(list []string, name string) int {
				if i := slices.Index(list, name); i >= 0 {
					return i
				}
				return len(list)
			}
			slices.SortStableFunc(arms, func(a, b store.Arm) int {
				if c := pos(cfg.Persuaders, a.Persuader) - pos(cfg.Persuaders, b.Persuader); c != 0 {
					return c
				}
				return pos(cfg.Persuadees, a.Persuadee) - pos(cfg.Persuadees, b.Persuadee)
			})
		}
		for _, a := range arms {
			if inRuns[a.Persuader] == nil {
				inRuns[a.Persuader] = map[string]bool{}
			}
			inRuns[a.Persuader][id] = true
			out = append(out, runArm{run: id, arm: a, name: a.Persuader})
		}
	}
	for i, a := range out {
		if len(inRuns[a.arm.Persuader]) > 1 {
			out[i].name = a.run + ":" + a.arm.Persuader
		}
	}
	return out, nil
}

// filterArms keeps the arms whose shown persuader name is persuader (all
// of them when it is empty).
func filterArms(arms []runArm, persuader string) []runArm {
	if persuader == "" {
		return arms
	}
	var out []runArm
	for _, a := range arms {
		if a.name == persuader {
			out = append(out, a)
		}
	}
	return out
}

// eachArmEpisode streams the episodes of arms, in order, to fn one at a
// time (store.DB.EachEpisode), the persuader renamed as the arm shows it:
// the episodes analysis.Concat of loadRunEpisodes would hold, in its order,
// without holding them.
func eachArmEpisode(ctx context.Context, db *store.DB, arms []runArm, fn func(*episode.Episode) error) error {
	for _, a := range arms {
		err := db.EachEpisode(ctx, a.run, func(ep *episode.Episode) error {
			if ep.Persuader != a.arm.Persuader || ep.Persuadee != a.arm.Persuadee {
				return nil // an empty name in the filter matches every name
			}
			ep.Persuader = a.name
			return fn(ep)
		}, store.Filter{Persuader: a.arm.Persuader, Persuadee: a.arm.Persuadee})
		if err != nil {
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
