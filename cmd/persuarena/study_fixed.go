package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/study"
)

// newStudyFixedCmd returns study fixed.
func newStudyFixedCmd() *cobra.Command {
	var (
		o          study.FixedOptions
		sets       []string
		split      string
		persuadee  string
		baselines  []string
		format     string
		configPath string
		refine     int
		testSplit  string
		starts     []string
	)
	cmd := &cobra.Command{
		Use:   "fixed",
		Short: "Search the best reply-blind fixed act sequence, overall and per resistance type",
		Long: `Beam-searches fixed act sequences (one act set per turn, the planner's 31
sets, worded by the built-in templates, never reading a reply) of length 1 to
--tmax on the scenarios of --split, polishes each best and the best uniform
sequence (one act set every turn, the ask added at the end), and any --start
sequences, one turn at a time and by swapping two turns (--refine passes), and prints per objective (all types, EB,
IT, AR, AA) the best sequence's full acceptance per type, its moved share
(B_T > 0.5) and mean B_T, the --baseline persuaders on the same episodes, and
how many other types lose at least 10 pp acceptance with each type's best
sequence (docs/simulator/types.md), then the same sequences on
--fresh rollouts of the same scenarios, other persons never searched on:
a best found among thousands on one draw of persons is favoured by that
draw, and its fresh acceptance is not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			o.Refine = refine // bounded by its flag (0..1000)
			for _, text := range starts {
				sq, err := study.ParseSeq(text)
				if err != nil {
					return fmt.Errorf("--start: %w", err)
				}
				o.Starts = append(o.Starts, sq)
			}
			if refine == 0 {
				o.Refine = -1 // study.FixedOptions: negative is none
			}
			sp, err := scenario.ParseSplit(split)
			if err != nil {
				return fmt.Errorf("--split: %w", err)
			}
			all, err := scenario.ResolveOrBuiltins(cmd.Context(), sets)
			if err != nil {
				return err
			}
			o.Scenarios = scenario.Filter(all, sp)
			if testSplit != "" {
				tp, err := scenario.ParseSplit(testSplit)
				if err != nil {
					return fmt.Errorf("--test-split: %w", err)
				}
				if tp == "" || sp == "" || tp == sp {
					return fmt.Errorf("--test-split %s: overlaps --split %s, the scenarios searched on", testSplit, split)
				}
				o.Test = scenario.Filter(all, tp)
			}
			if o.Persuadee, err = roles.ResolvePersuadee(ctx, configPath, persuadee); err != nil {
				return err
			}
			for _, name := range baselines {
				p, err := baseline.New(name)
				if err != nil {
					return fmt.Errorf("--baseline: %w", err)
				}
				o.Baselines = append(o.Baselines, p)
			}
			res, err := study.FixedStudy(ctx, o)
			if err != nil {
				return err
			}
			if format == "json" {
				e := json.NewEncoder(cmd.OutOrStdout())
				e.SetIndent("", "  ")
				return e.Encode(res)
			}
			return res.WriteMarkdown(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	scenariosFlag(f, &sets, "scenario sets")
	f.StringVar(&split, "split", "heldout", "split to use: train, val, heldout or all")
	f.StringVar(&testSplit, "test-split", "", "also score the best sequences and the baselines on this split, never searched on (train, val or heldout; default none)")
	f.StringVar(&persuadee, "persuadee", "sim", "persuadee (sim, sim-soft, sim-hard, sim:FILE, or llm:NAME with --config)")
	f.StringVar(&configPath, "config", "", "persuarena.yaml for llm:NAME persuadees")
	f.StringSliceVar(&baselines, "baseline", []string{"random", "script"}, "built-in persuaders scored on the same episodes")
	tmaxFlag(f, &o.Tmax, episode.DefaultTmax, "the longest sequence searched")
	flagbound.Int(f, &o.Beam, "beam", 3, 1, 10_000, "prefixes kept per objective and length")
	flagbound.Int(f, &refine, "refine", 4, 0, 1000, "polishing passes after the beam: each best sequence's turns replaced by every other act set, or dropped, and swapped (0: none)")
	f.StringArrayVar(&starts, "start", nil, `a sequence of your own to play and polish beside the search's ("d+p > e+p > p+c+a"; repeatable)`)
	flagbound.Int(f, &o.Rollouts, "rollouts", 1, 1, 100_000, "rollouts per scenario")
	flagbound.Int(f, &o.Fresh, "fresh", 10, 0, 100_000, "fresh rollouts per searched scenario (other persons, never searched on) on which the best sequences and the baselines are scored again (0: none)")
	seedFlag(f, &o.Seed, "each episode's seed derives from (seed, scenario id, rollout)")
	workersFlag(f, &o.Workers)
	f.StringVar(&format, "format", "table", "output format: table (Markdown) or json")
	return cmd
}
