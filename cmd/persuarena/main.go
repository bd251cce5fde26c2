// Command persuarena simulates, trains and evaluates persuaders in
// multi-turn strategic dialogue. It is a thin layer over the library
// packages: each command is built by a constructor (newEvalCmd, ...) that
// declares its flags into local variables, and newRootCmd assembles a
// fresh tree, so no flag value outlives one execution.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/internal/buildinfo"
)

// newRootCmd returns a fresh persuarena command tree.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "persuarena",
		Short: "Simulate, train and evaluate persuaders against persuadees with hidden profiles",
		Long: `PersuArena simulates multi-turn persuasion against persuadees with hidden
profiles, rewards probed belief changes (Probe-RPO) and evaluates persuaders.
The default persuadee "sim" is a seeded simulator, not an LLM. See README.md.`,
		Version:       buildinfo.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("persuarena {{.Version}}\n")
	root.SetFlagErrorFunc(flagErrorHint) // inherited by every subcommand
	root.AddCommand(
		newEvalCmd(), newTrainCmd(), newServeCmd(), newWorkerCmd(),
		newRunsCmd(), newViewCmd(), newAnalyzeCmd(), newCompareCmd(), newReportCmd(), newExportCmd(),
		newScenariosCmd(), newFidelityCmd(), newSimCmd(), newTagCmd(),
		newMASPCmd(), newSelfplayCmd(), newMemoryCmd(), newBayesCmd(), newRepoCmd(), newStudyCmd(), newRedteamCmd(),
		newVersionCmd(),
	)
	return root
}

// interruptGrace is how long a command may run on after SIGINT or
// SIGTERM before the process exits anyway.
//
// Choice: 3 s. Every phase observes the signal (loading, playing, training
// and their store writes end within a fraction of a second, keeping what
// is done and printing how to resume); the grace only ends a loop that
// does not, with the run it played left to look dead (runs list) and be
// resumed, rather than holding a core until SIGKILL. A second signal ends
// the process at once.
const interruptGrace = 3 * time.Second

func main() {
	// Ctrl-C cancels the context: running commands stop cleanly, keeping
	// everything already finished.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		cancel(interrupted{sig})
		select {
		case <-sigs:
		case <-time.After(interruptGrace):
			fmt.Fprintf(os.Stderr, "persuarena: not stopped %v after the signal; exiting (persuarena runs list shows its run; resume it)\n", interruptGrace)
		}
		os.Exit(exitStatus(interrupted{sig}, nil, os.Stderr))
	}()
	err := newRootCmd().ExecuteContext(ctx)
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
