package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/train"
)

// serve validates its whole configuration (split, reward mode, limits,
// listen address) before it creates the run database: a rejected command
// leaves no file.
func TestServeRejectedInputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--split", "bogus"}, `unknown split "bogus"`},
		{[]string{"--reward", "lots"}, `unknown reward mode "lots"`},
		{[]string{"--max-sessions", "-1"}, "negative max sessions"},
		{[]string{"--addr", "256.0.0.1:1"}, "256.0.0.1"},
	} {
		db := filepath.Join(dir, "serve.db")
		// Every flag is given each time: the root command keeps values
		// between executions.
		args := append([]string{"serve", "--db", db, "--split", "train", "--reward", "dense", "--max-sessions", "4",
			"--addr", "127.0.0.1:0"}, tc.args...)
		rootCmd.SetOut(&bytes.Buffer{})
		rootCmd.SetErr(&bytes.Buffer{})
		rootCmd.SetArgs(args)
		err := rootCmd.ExecuteContext(context.Background())
		rootCmd.SetOut(nil)
		rootCmd.SetErr(nil)
		rootCmd.SetArgs(nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("%v: the rejected command created %s (%v)", tc.args, db, err)
		}
	}
}

// train validates its inputs before it creates the run database; --resume
// needs an existing one.
func TestTrainRejectedInputWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	base := trainRunConfig{Train: train.DefaultConfig(), Scenarios: []string{"arena"}, Split: "train", Persuadee: "sim",
		Checkpoint: filepath.Join(dir, "p.json")}
	bad := []struct {
		edit   func(*trainRunConfig)
		resume bool
		want   string
	}{
		{func(rc *trainRunConfig) { rc.Split = "bogus" }, false, `unknown split "bogus"`},
		{func(rc *trainRunConfig) { rc.Judge, rc.JudgeSamples = "llm:judge", 1 }, false, "needs --config"},
		{func(rc *trainRunConfig) { rc.Train.GRPO.ScenariosPerStep = 0 }, false, "scenarios_per_step = 0"},
		{func(rc *trainRunConfig) {}, true, "no run database"},
	}
	for i, tc := range bad {
		rc := base
		tc.edit(&rc)
		err := runTrain(ctx, rc, "", 1, db, tc.resume, -1, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %d: err %v, want %q", i, err, tc.want)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("case %d: the rejected command created %s (%v)", i, db, err)
		}
	}
}
