package main

import (
	"math"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/arena"
	"github.com/persuarena/persuarena/internal/flagbound"
)

// newGenerateCmd returns scenarios generate and its arena subcommand.
func newGenerateCmd() *cobra.Command {
	generate := &cobra.Command{Use: "generate", Short: "Generate scenario sets from the project's own generators"}
	var (
		seed         uint64
		out, domains string
		sizes        = arena.DefaultSizes
	)
	cmd := &cobra.Command{
		Use:   "arena",
		Short: "Compose the multi-domain PersuArena-style set (1,468 train / 200 val / 120 held-out)",
		Long: `Compose the multi-domain scenario set from a domain bank (default the embedded
arena/domains.json) and write it as JSONL; same seed, same bytes. See docs/arena.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return arena.GenerateFile(seed, domains, sizes, out, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	flagbound.Uint64(fl, &seed, "seed", 1, 0, math.MaxUint64, "generator seed (the committed scenarios/arena.jsonl uses 1)")
	fl.StringVar(&out, "out", "scenarios/arena.jsonl", "output JSONL file (written atomically)")
	fl.StringVar(&domains, "domains", "", "domain bank JSON file (default: the embedded arena/domains.json)")
	flagbound.Int(fl, &sizes.Train, "train", sizes.Train, 0, 100_000, "train scenarios")
	flagbound.Int(fl, &sizes.Val, "val", sizes.Val, 0, 100_000, "validation scenarios")
	flagbound.Int(fl, &sizes.Heldout, "heldout", sizes.Heldout, 0, 100_000, "held-out scenarios")
	generate.AddCommand(cmd)
	return generate
}
