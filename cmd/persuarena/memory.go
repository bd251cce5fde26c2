package main

import (
	"encoding/json"
	"fmt"
	"github.com/persuarena/persuarena/runs"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/persuhmm"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/scenario"
)

// memoryCmd groups the PersuHMM memory subcommands.
var memoryCmd = &cobra.Command{
	Use:   "memory",
	Short: "Learn, inspect and evaluate a PersuHMM hierarchical meta-strategy memory",
	Long: `A PersuHMM memory (PersuHMM paper) is a tree domain -> category (logical,
emotional, behavioral) -> strategy, each strategy with its validity
V = n_succ / n_d and up to W success patterns, learned by a loop of step
generator, guided persuader, goal evaluator, pattern analyst, strategy
generator and strategy refiner. Use it as a persuader with
--persuader hmm:FILE. See docs/persuhmm.md.`,
}

type memoryLearnOpts struct {
	out, pee, split, dp, llmRole, config string
	scenarios                            []string
	tasks, b, u, w, nd, tmax, macro      int
	seed                                 uint64
	noHier                               bool
}

type memoryAblateOpts struct {
	pee, strongest string
	scenarios      []string
	tasks, tmax    int
	topK           int
	seed           uint64
	cross          bool
}

func init() {
	var lo memoryLearnOpts
	learn := &cobra.Command{
		Use:   "learn",
		Short: "Learn a memory on scenario tasks (resumable: rerun to continue)",
		Example: `  persuarena memory learn --out hmm.json
  persuarena memory learn --out hmm.json --dailypersuasion path/to/DailyPersuasion.json --llm llm:planner --config persuarena.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := runs.AtLeast(1, "batch", lo.b, "cap", lo.u, "patterns", lo.w, "tmax", lo.tmax); err != nil {
				return err
			}
			ctx := cmd.Context()
			tasks, err := loadTasks(lo.scenarios, lo.split, lo.dp, lo.tasks)
			if err != nil {
				return err
			}
			reg, err := roles.New(lo.config)
			if err != nil {
				return err
			}
			pee, err := reg.Persuadee(lo.pee)
			if err != nil {
				return err
			}
			comp := persuhmm.NewEmbeddedComponents(0, 0)
			if lo.llmRole != "" {
				role, c, err := reg.Role(lo.llmRole)
				if err != nil {
					return err
				}
				comp = persuhmm.NewLLMComponents(c, role.Sampling, func(style string) episode.Persuader {
					p := llmagent.NewPersuader(lo.llmRole, c, role)
					p.Style = style
					return p
				})
			}
			m := persuhmm.New()
			if _, err := os.Stat(lo.out); err == nil {
				if m, err = persuhmm.Load(lo.out); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "resuming %s\n", lo.out)
			}
			enc := bdi.NewHashedTFIDF(0)
			err = persuhmm.Learn(ctx, m, tasks, pee, comp, enc, persuhmm.LearnConfig{
				B: lo.b, Refine: persuhmm.RefineOptions{U: lo.u, W: lo.w, Nd: lo.nd}, Seed: lo.seed,
				Episode: episode.Config{Tmax: lo.tmax}, Checkpoint: lo.out,
				Progress: func(s persuhmm.LearnState) {
					fmt.Fprintf(cmd.ErrOrStderr(), "tasks %d/%d  accepted %d  pending patterns %d  tokens %d\n", s.Done, s.Total, s.Accepted, len(s.Pending), s.Tokens())
				},
			})
			if err != nil {
				return err
			}
			if !lo.noHier {
				u, err := m.Hierarchise(ctx, enc, comp.Summariser, persuhmm.HierOptions{MacroDomains: lo.macro, Seed: lo.seed})
				if err != nil {
					return err
				}
				m.Learn.ComponentUsage = m.Learn.ComponentUsage.Add(u)
				if err := m.Save(lo.out); err != nil {
					return err
				}
			}
			return printStats(cmd.OutOrStdout(), m)
		},
	}
	f := learn.Flags()
	f.StringVar(&lo.out, "out", "hmm.json", "memory file (written after every batch; an existing one is resumed)")
	scenariosFlag(f, &lo.scenarios, "learning scenarios")
	f.StringVar(&lo.split, "split", string(scenario.Train), "scenario split to learn on (train, val, heldout; empty: all)")
	f.StringVar(&lo.dp, "dailypersuasion", "", "learn on a DailyPersuasion JSON file instead of --scenarios")
	f.IntVar(&lo.tasks, "tasks", 0, "use only the first N tasks (0: all)")
	f.IntVar(&lo.b, "batch", persuhmm.DefaultB, "batch size B (PersuHMM paper: 10)")
	f.IntVar(&lo.u, "cap", persuhmm.DefaultU, "strategies per domain U (PersuHMM paper: 24)")
	f.IntVar(&lo.w, "patterns", persuhmm.DefaultW, "success patterns per strategy W (PersuHMM paper: 3)")
	f.IntVar(&lo.nd, "nd", persuhmm.DefaultNd, "validation threshold N_d (PersuHMM paper: 15)")
	f.IntVar(&lo.macro, "macro-domains", 0, "macro domains for K-means (0: 21/35 of the domains, as the PersuHMM paper)")
	f.BoolVar(&lo.noHier, "no-hierarchy", false, "skip K-means hierarchisation after learning")
	f.StringVar(&lo.pee, "persuadee", "sim", "persuadee: "+roles.PersuadeeKinds)
	f.StringVar(&lo.llmRole, "llm", "", "run every component as this LLM role (llm:ROLE of --config); default the embedded rules")
	f.StringVar(&lo.config, "config", "", "persuarena.yaml with LLM roles")
	seedFlag(f, &lo.seed, "task order and episodes")
	tmaxFlag(f, &lo.tmax, episode.DefaultTmax, "Probe-RPO paper: 10")

	show := &cobra.Command{
		Use: "show FILE", Short: "Print a memory as its tree", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := persuhmm.Load(args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, md := range m.MacroDomains {
				fmt.Fprintf(w, "macro domain %q: %v\n", md.Name, md.Domains)
			}
			for _, d := range m.Domains {
				sub := persuhmm.Subtree{Domains: []string{d.Name}, Strategies: d.Strategies, Macros: d.Macros}
				fmt.Fprintf(w, "%s(%d learning tasks)\n", sub.Text(), d.Seen)
			}
			return nil
		},
	}
	export := &cobra.Command{
		Use: "export FILE", Short: "Print a memory as JSON lines, one strategy a line", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := persuhmm.Load(args[0])
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			for _, d := range m.Domains {
				for _, s := range d.Strategies {
					row := struct {
						*persuhmm.Strategy
						Validity float64 `json:"validity"`
					}{s, s.Validity()}
					if err := enc.Encode(row); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	statsCmd := &cobra.Command{
		Use: "stats FILE", Short: "Summarise a memory", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := persuhmm.Load(args[0])
			if err != nil {
				return err
			}
			return printStats(cmd.OutOrStdout(), m)
		},
	}

	var ao memoryAblateOpts
	ablate := &cobra.Command{
		Use:   "ablate",
		Short: "Print the PersuHMM ablation table (and the cross-domain table) on the embedded path",
		Long: `Ablate learns on the train split and tests on the val and held-out splits of
--scenarios: (0) no persuasion skills, (1) plans from the task alone, (2) a
memory learned by judging whole dialogues, (3) the full loop without
hierarchy, (4) the full loop; every built-in persuader on the same tasks,
with exact McNemar tests against the strongest. --cross adds the
cross-domain table: one memory per domain family, tested on the others.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			learn, err := loadTasks(ao.scenarios, string(scenario.Train), "", ao.tasks)
			if err != nil {
				return err
			}
			val, err := loadTasks(ao.scenarios, string(scenario.Val), "", 0)
			if err != nil {
				return err
			}
			held, err := loadTasks(ao.scenarios, string(scenario.Heldout), "", 0)
			if err != nil {
				return err
			}
			reg, err := roles.New("")
			if err != nil {
				return err
			}
			pee, err := reg.Persuadee(ao.pee)
			if err != nil {
				return err
			}
			c := persuhmm.AblationConfig{Learn: learn, Test: append(val, held...), Persuadee: pee, Encoder: bdi.NewHashedTFIDF(0),
				Learning: persuhmm.LearnConfig{Seed: ao.seed, Episode: episode.Config{Tmax: ao.tmax}}, Hier: persuhmm.HierOptions{Seed: ao.seed},
				TopK: ao.topK, Progress: cmd.ErrOrStderr()}
			a, err := persuhmm.Ablate(ctx, c)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "learn %d tasks, test %d tasks, persuadee %s, seed %d\n\n", len(learn), len(c.Test), ao.pee, ao.seed)
			if err := persuhmm.WriteAblation(w, a); err != nil {
				return err
			}
			if !ao.cross {
				return nil
			}
			rows, err := persuhmm.CrossDomain(ctx, c, a.Strongest().Name)
			if err != nil {
				return err
			}
			fmt.Fprintln(w)
			return persuhmm.WriteCross(w, rows)
		},
	}
	f = ablate.Flags()
	scenariosFlag(f, &ao.scenarios, "scenario sets (train split to learn, val and held-out to test)")
	f.StringVar(&ao.pee, "persuadee", "sim", "persuadee: "+roles.PersuadeeKinds)
	f.IntVar(&ao.tasks, "tasks", 0, "learn on only the first N train tasks (0: all)")
	f.IntVar(&ao.topK, "top-k", 0, "test-time top-k retrieval (0: the whole subtree)")
	f.BoolVar(&ao.cross, "cross", false, "also print the cross-domain table")
	seedFlag(f, &ao.seed, "task order and episodes")
	tmaxFlag(f, &ao.tmax, episode.DefaultTmax, "Probe-RPO paper: 10")

	memoryCmd.AddCommand(learn, show, export, statsCmd, ablate)
	rootCmd.AddCommand(memoryCmd)
}

// loadTasks reads learning or test tasks: a DailyPersuasion file when dp
// is set, else the split of the scenario sets; n > 0 keeps the first n.
func loadTasks(sets []string, split, dp string, n int) ([]persuhmm.Task, error) {
	var tasks []persuhmm.Task
	if dp != "" {
		t, err := persuhmm.LoadDailyPersuasion(dp)
		if err != nil {
			return nil, err
		}
		tasks = t
	} else {
		ss, err := scenario.ResolveSplit(scenario.Split(split), sets...)
		if err != nil {
			return nil, err
		}
		tasks = persuhmm.TasksFromScenarios(ss)
	}
	if n > 0 && n < len(tasks) {
		tasks = tasks[:n]
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("no tasks in %v (split %q)", sets, split)
	}
	return tasks, nil
}

func printStats(w io.Writer, m *persuhmm.Memory) error {
	s := m.Stats()
	_, err := fmt.Fprintf(w, "domains %d  strategies %d (logical %d, emotional %d, behavioral %d)  patterns %d  macro domains %d  macro-strategies %d  mean validity %.3f  learning tasks %d\n",
		s.Domains, s.Strategies, s.PerCategory[persuhmm.Logical], s.PerCategory[persuhmm.Emotional], s.PerCategory[persuhmm.Behavioral],
		s.Patterns, s.MacroDomains, s.MacroStrategies, s.MeanValidity, s.TasksLearned)
	if err == nil && m.Learn != nil {
		_, err = fmt.Fprintf(w, "learning: %d/%d tasks, %d accepted, tokens %d (components %d requests)\n", m.Learn.Done, m.Learn.Total, m.Learn.Accepted, m.Learn.Tokens(), m.Learn.ComponentUsage.Requests)
	}
	return err
}
