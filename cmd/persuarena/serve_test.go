package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
