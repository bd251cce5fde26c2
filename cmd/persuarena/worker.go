package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/queue"
	"github.com/persuarena/persuarena/runs"
)

// newWorkerCmd returns worker: plays the queued episodes of eval --enqueue.
func newWorkerCmd() *cobra.Command {
	var (
		dbPath string
		o      queue.WorkerOptions
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Play the queued episodes of eval runs (eval --enqueue) from a PostgreSQL run database",
		Long: `Plays the episode jobs that eval --enqueue queued in --db (a postgres:// URL),
of any run, --workers at a time, until Ctrl-C. Start as many workers on as
many machines as the engines can serve: each episode is stored exactly once
and equals what a single-process eval with the same seed stores; the worker
storing a run's last episode finishes the run. persuarena runs show RUN_ID
shows the progress from any machine. See docs/scale.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Log = cmd.ErrOrStderr()
			o.Ready = func() {
				fmt.Fprintf(cmd.ErrOrStderr(), "worker: playing queued episodes, %d at a time (Ctrl-C stops)\nworker: %s\n", o.Workers, o.Applied())
			}
			return queue.Work(cmd.Context(), dbPath, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dbPath, "db", "", "the PostgreSQL run database: postgres://user:pass@host:5432/db (required)")
	workersFlag(f, &o.Workers)
	f.StringVar(&o.Config, "config", "", "persuarena.yaml on this machine, replacing the runs' stored --config path (docs/llm-roles.md)")
	flagbound.Int(f, &o.Retries, "retries", 2, 0, runs.MaxRetries, "replays of an episode that failed with a transient engine fault before its failure is stored")
	flagbound.Duration(f, &o.JobTimeout, "job-timeout", queue.DefaultJobTimeout, time.Second, 7*24*time.Hour, "cancel an episode running longer (its job is retried)")
	flagbound.Duration(f, &o.RescueAfter, "rescue-after", 0, 0, 7*24*time.Hour, "replay a job on another worker once it has run this long without finishing (a killed worker's); must exceed --job-timeout (0: the job timeout plus a tenth, at least 30s more)")
	cmd.MarkFlagRequired("db")
	return cmd
}
