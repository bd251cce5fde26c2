package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/store"
)

// Adapters of the tests to the library entry points the commands call.

type (
	evalConfig     = runs.EvalSpec
	trainRunConfig = runs.TrainSpec
	serveConfig    = runs.ServeSpec
)

var (
	analyses        = analysis.Analyses
	openExistingDB  = store.OpenExisting
	loadRunEpisodes = analysis.LoadRun
	contains        = slices.Contains[[]string, string]
)

// execRoot runs persuarena with args on a fresh command tree, as main
// does, and returns its standard output and standard error.
func execRoot(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return execTree(t, newRootCmd(), args...)
}

// execTree runs the command tree root (newRootCmd's, its flags perhaps
// set beforehand) with args.
func execTree(t *testing.T, root *cobra.Command, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// have passes an open database to runEval.
func have(db *store.DB) *store.DB { return db }

// runEval is the eval command's body over db: resume runID ("" a new
// run) of cfg with workers, printing in format.
func runEval(ctx context.Context, db *store.DB, runID string, cfg evalConfig, workers int, format string, out, errOut io.Writer) error {
	cfg.Workers = workers
	res, err := runs.New(db).RunEval(ctx, cfg, runs.EvalOptions{RunID: runID, Format: format, Log: errOut, Probes: ""})
	if res == nil || res.Summaries == nil {
		return err
	}
	return errors.Join(err, res.Write(out, format))
}

// runAnalyze is the analyze command's body over the database file dbPath.
func runAnalyze(ctx context.Context, dbPath string, ids []string, o analysis.AnalyzeOptions, out, errOut io.Writer) error {
	db, err := store.OpenExisting(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	return analysis.Analyze(ctx, db, ids, o, out, errOut)
}

// runCompare is the compare command's body over the database file dbPath.
func runCompare(ctx context.Context, dbPath, a, b string, o analysis.CompareStoredOptions, out io.Writer) error {
	db, err := store.OpenExisting(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	return analysis.CompareStored(ctx, db, a, b, o, out)
}

// runTrain is the train command's body over the database file dbPath
// (maxSteps -1 keeps a resumed run's cap).
func runTrain(ctx context.Context, rc trainRunConfig, probes string, workers int, dbPath string, resume bool, maxSteps int, out, errOut io.Writer) error {
	svc := runs.Open(dbPath)
	defer svc.Close()
	res, err := svc.Train(ctx, rc, runs.TrainOptions{Resume: resume, MaxSteps: maxSteps, Probes: probes, Workers: workers, Log: errOut})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "run %s: %d steps done; checkpoint %s\n", res.RunID, res.Steps, res.Checkpoint)
	return err
}
