package main

import (
	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/persuhmm"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/scenario"
)

// memoryFile declares a subcommand that loads the memory FILE and prints
// it with write.
func memoryFile(use, short string, write func(*persuhmm.Memory, *cobra.Command) error) *cobra.Command {
	return &cobra.Command{
		Use: use + " FILE", Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := persuhmm.Load(args[0])
			if err != nil {
				return err
			}
			return write(m, cmd)
		},
	}
}

// newMemoryCmd returns memory, the PersuHMM memory subcommands.
func newMemoryCmd() *cobra.Command {
	var lo persuhmm.LearnSpec
	var config string
	learn := &cobra.Command{
		Use:   "learn",
		Short: "Learn a memory on scenario tasks (resumable: rerun to continue)",
		Example: `  persuarena memory learn --out hmm.json
  persuarena memory learn --out hmm.json --dailypersuasion path/to/DailyPersuasion.json --llm llm:planner --config persuarena.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := runs.AtLeast(1, "batch", lo.B, "cap", lo.U, "patterns", lo.W, "tmax", lo.Tmax); err != nil {
				return err
			}
			reg, err := roles.New(config)
			if err != nil {
				return err
			}
			lo.Roles = reg
			m, err := persuhmm.RunLearn(cmd.Context(), lo, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return m.WriteStats(cmd.OutOrStdout())
		},
	}
	f := learn.Flags()
	f.StringVar(&lo.Out, "out", "hmm.json", "memory file (written after every batch; an existing one is resumed)")
	scenariosFlag(f, &lo.Scenarios, "learning scenarios")
	f.StringVar(&lo.Split, "split", string(scenario.Train), "scenario split to learn on (train, val, heldout; empty: all)")
	f.StringVar(&lo.DailyPersuasion, "dailypersuasion", "", "learn on a DailyPersuasion JSON file instead of --scenarios")
	flagbound.Int(f, &lo.Tasks, "tasks", 0, 0, 1_000_000, "use only the first N tasks (0: all)")
	flagbound.Int(f, &lo.B, "batch", persuhmm.DefaultB, 1, 100_000, "batch size B (PersuHMM paper: 10)")
	flagbound.Int(f, &lo.U, "cap", persuhmm.DefaultU, 1, 100_000, "strategies per domain U (PersuHMM paper: 24)")
	flagbound.Int(f, &lo.W, "patterns", persuhmm.DefaultW, 1, 1000, "success patterns per strategy W (PersuHMM paper: 3)")
	flagbound.Int(f, &lo.Nd, "nd", persuhmm.DefaultNd, 1, 100_000, "validation threshold N_d (PersuHMM paper: 15)")
	flagbound.Int(f, &lo.MacroDomains, "macro-domains", 0, 0, 100_000, "macro domains for K-means (0: 21/35 of the domains, as the PersuHMM paper)")
	f.BoolVar(&lo.NoHierarchy, "no-hierarchy", false, "skip K-means hierarchisation after learning")
	f.StringVar(&lo.Persuadee, "persuadee", "sim", "persuadee: "+roles.PersuadeeKinds)
	f.StringVar(&lo.LLM, "llm", "", "run every component as this LLM role (llm:ROLE of --config); default the embedded rules")
	f.StringVar(&lo.Encoder, "encoder", "tfidf", "text encoder: tfidf (hashed TF-IDF) or llm:ROLE (the backend's /v1/embeddings)")
	f.StringVar(&config, "config", "", "persuarena.yaml with LLM roles")
	seedFlag(f, &lo.Seed, "task order and episodes")
	tmaxFlag(f, &lo.Tmax, episode.DefaultTmax, "Probe-RPO paper: 10")

	show := memoryFile("show", "Print a memory as its tree", func(m *persuhmm.Memory, cmd *cobra.Command) error { return m.WriteTree(cmd.OutOrStdout()) })
	export := memoryFile("export", "Print a memory as JSON lines, one strategy a line", func(m *persuhmm.Memory, cmd *cobra.Command) error { return m.WriteJSONL(cmd.OutOrStdout()) })
	statsCmd := memoryFile("stats", "Summarise a memory", func(m *persuhmm.Memory, cmd *cobra.Command) error { return m.WriteStats(cmd.OutOrStdout()) })

	var ao persuhmm.AblateSpec
	var aconfig string
	ablate := &cobra.Command{
		Use:   "ablate",
		Short: "Print the PersuHMM ablation table (and the cross-domain table) on the embedded path",
		Long: `Learns on the train split, tests on val and held-out: five ablation variants and
the built-in persuaders, McNemar against the strongest. See docs/persuhmm.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := roles.New(aconfig)
			if err != nil {
				return err
			}
			ao.Roles = reg
			return persuhmm.RunAblate(cmd.Context(), ao, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f = ablate.Flags()
	scenariosFlag(f, &ao.Scenarios, "scenario sets (train split to learn, val and held-out to test)")
	f.StringVar(&ao.Persuadee, "persuadee", "sim", "persuadee: "+roles.PersuadeeKinds)
	flagbound.Int(f, &ao.Tasks, "tasks", 0, 0, 1_000_000, "learn on only the first N train tasks (0: all)")
	flagbound.Int(f, &ao.TopK, "top-k", 0, 0, 100_000, "test-time top-k retrieval (0: the whole subtree)")
	f.BoolVar(&ao.Cross, "cross", false, "also print the cross-domain table")
	f.StringVar(&ao.Encoder, "encoder", "tfidf", "text encoder: tfidf (hashed TF-IDF) or llm:ROLE (the backend's /v1/embeddings)")
	f.StringVar(&aconfig, "config", "", "persuarena.yaml with LLM roles (for --encoder llm:ROLE)")
	seedFlag(f, &ao.Seed, "task order and episodes")
	tmaxFlag(f, &ao.Tmax, episode.DefaultTmax, "Probe-RPO paper: 10")

	var co persuhmm.CompareSpec
	var cconfig string
	compare := &cobra.Command{
		Use:   "compare A B",
		Short: "LLM-judge two persuaders: win rate, persuasiveness, empathy, helpfulness and pairwise preference",
		Example: `  persuarena memory compare hmm:hmm.json script --persuadee llm:user --judge llm:judge --config persuarena.yaml
  persuarena memory compare hmm:a.json hmm:b.json --judge llm:j1 --judge llm:j2 --config persuarena.yaml   # with kappa`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := roles.New(cconfig)
			if err != nil {
				return err
			}
			co.A, co.B, co.Roles = args[0], args[1], reg
			return persuhmm.RunCompare(cmd.Context(), co, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f = compare.Flags()
	scenariosFlag(f, &co.Scenarios, "test scenarios")
	f.StringVar(&co.Split, "split", string(scenario.Heldout), "scenario split to test on (train, val, heldout; empty: all)")
	f.StringVar(&co.DailyPersuasion, "dailypersuasion", "", "test on a DailyPersuasion JSON file instead of --scenarios")
	flagbound.Int(f, &co.Tasks, "tasks", 0, 0, 1_000_000, "use only the first N tasks (0: all)")
	f.StringVar(&co.Persuadee, "persuadee", "sim", "persuadee: "+roles.PersuadeeKinds)
	f.StringArrayVar(&co.Judges, "judge", nil, "LLM judge llm:ROLE (repeat for several; two or more add kappa)")
	flagbound.Int(f, &co.Samples, "judge-samples", 1, 1, runs.MaxJudgeSamples, "samples per judge question")
	f.StringVar(&cconfig, "config", "", "persuarena.yaml with LLM roles")
	seedFlag(f, &co.Seed, "episodes")
	tmaxFlag(f, &co.Tmax, episode.DefaultTmax, "Probe-RPO paper: 10")

	memory := &cobra.Command{
		Use:   "memory",
		Short: "Learn, inspect and evaluate a PersuHMM hierarchical meta-strategy memory",
		Long: `A PersuHMM paper memory: domain -> category -> strategy with validity and
success patterns; play it with --persuader hmm:FILE. See docs/persuhmm.md.`,
	}
	memory.AddCommand(learn, show, export, statsCmd, ablate, compare)
	return memory
}
