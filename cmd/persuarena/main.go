// Command persuarena simulates, trains and evaluates persuaders in
// multi-turn strategic dialogue. It is a thin layer over the library
// packages; each subcommand lives in its own file and registers itself on
// rootCmd in an init function.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:   "persuarena",
	Short: "Simulate, train and evaluate persuaders against persuadees with hidden profiles",
	Long: `PersuArena simulates multi-turn persuasion against persuadees with hidden
profiles, rewards probed belief changes (Probe-RPO) and evaluates persuaders.
The default persuadee "sim" is a seeded simulator, not an LLM. See README.md.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

// scenariosCmd groups scenario subcommands (list, show, validate, stats,
// import, generate); files add their subcommands to it.
var scenariosCmd = &cobra.Command{
	Use:   "scenarios",
	Short: "List, inspect, validate, import and generate scenario sets",
}

func init() { rootCmd.AddCommand(scenariosCmd) }

func main() {
	// Ctrl-C cancels the context: running commands stop cleanly, keeping
	// everything already finished.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := rootCmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "persuarena:", err)
		os.Exit(1)
	}
}
