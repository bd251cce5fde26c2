package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/arena"
	"github.com/persuarena/persuarena/scenario"
)

// generateCmd groups scenario generators (`persuarena scenarios generate`).
var generateCmd = &cobra.Command{
	Use:   "generate",
	Short: "Generate scenario sets from the project's own generators",
}

var generateArenaFlags struct {
	seed                uint64
	out, domains        string
	train, val, heldout int
}

var generateArenaCmd = &cobra.Command{
	Use:   "arena",
	Short: "Compose the multi-domain PersuArena-style set (1,468 train / 200 val / 120 held-out)",
	Long: `Compose the multi-domain scenario set from a domain bank (default the embedded
arena/domains.json) and write it as JSONL; same seed, same bytes. See docs/arena.md.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := &generateArenaFlags
		var bank arena.Bank
		var err error
		if f.domains == "" {
			bank, err = arena.DefaultBank()
		} else {
			bank, err = arena.LoadBank(f.domains)
		}
		if err != nil {
			return err
		}
		ss, rep, err := arena.Generate(f.seed, bank, arena.Sizes{Train: f.train, Val: f.val, Heldout: f.heldout})
		if err != nil {
			return err
		}
		if err := scenario.WriteFile(f.out, ss); err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		fmt.Fprintf(w, "wrote %d scenarios to %s\n", len(ss), f.out)
		return rep.Write(w)
	},
}

func init() {
	fl := generateArenaCmd.Flags()
	f := &generateArenaFlags
	fl.Uint64Var(&f.seed, "seed", 1, "generator seed (the committed scenarios/arena.jsonl uses 1)")
	fl.StringVar(&f.out, "out", "scenarios/arena.jsonl", "output JSONL file (written atomically)")
	fl.StringVar(&f.domains, "domains", "", "domain bank JSON file (default: the embedded arena/domains.json)")
	fl.IntVar(&f.train, "train", arena.DefaultSizes.Train, "train scenarios")
	fl.IntVar(&f.val, "val", arena.DefaultSizes.Val, "validation scenarios")
	fl.IntVar(&f.heldout, "heldout", arena.DefaultSizes.Heldout, "held-out scenarios")
	generateCmd.AddCommand(generateArenaCmd)
	scenariosCmd.AddCommand(generateCmd)
}
