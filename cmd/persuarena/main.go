// Command persuarena simulates, trains and evaluates persuaders in
// multi-turn strategic dialogue. It is a thin layer over the library
// packages; each subcommand lives in its own file and registers itself on
// rootCmd in an init function.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() { cancel(interrupted{<-sigs}) }()
	err := rootCmd.ExecuteContext(ctx)
	signal.Stop(sigs)
	os.Exit(exitStatus(context.Cause(ctx), err, os.Stderr))
}

// interrupted is the cause of main's context after a signal.
type interrupted struct{ sig os.Signal }

func (i interrupted) Error() string { return "interrupted by " + i.sig.String() }

// exitStatus prints err (unless it is only the interruption's
// cancellation: the command has already said how to resume) and returns
// the exit status: 0, 1 for an error (or the error's own ExitCode, as
// redteam's 2 for a win), or after a signal 128 + its number
// (130 for Ctrl-C, 143 for SIGTERM), the shell's convention.
func exitStatus(cause, err error, stderr io.Writer) int {
	var in interrupted
	if errors.As(cause, &in) {
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "persuarena:", err)
		}
		if n, ok := in.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
		return 130
	}
	if err != nil {
		fmt.Fprintln(stderr, "persuarena:", err)
		var c interface{ ExitCode() int }
		if errors.As(err, &c) {
			return c.ExitCode()
		}
		return 1
	}
	return 0
}
