package main

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/store/storetest"
)

// builtBinary builds this command into a temporary directory of t and
// returns its path.
func builtBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "persuarena")
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the binary: %v\n%s", err, out)
	}
	return bin
}

// interrupt starts bin with args, waits for a standard-error
// line containing ready, sends SIGINT and returns the exit status and
// everything written to standard error.
func interrupt(t *testing.T, bin, ready string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(stderr)
	signalled := false
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if !signalled && strings.Contains(sc.Text(), ready) {
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			signalled = true
		}
	}
	err = cmd.Wait()
	if !signalled {
		t.Fatalf("%v: never wrote %q (%v); stderr:\n%s", args, ready, err, strings.Join(lines, "\n"))
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), strings.Join(lines, "\n")
}

// checkInterrupted: exit status 130 (128 + SIGINT), the line want on
// standard error, and no error line ("persuarena: context canceled").
func checkInterrupted(t *testing.T, code int, stderr, want string) {
	t.Helper()
	if code != 130 {
		t.Errorf("exit status %d, want 130; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "persuarena: ") {
			t.Errorf("an error line after Ctrl-C: %q", l)
		}
	}
}

// Ctrl-C stops eval, train, serve and worker (on PostgreSQL) cleanly: the
// resume line (eval, train), no error line, exit status 130.
func TestInterruptExitStatus(t *testing.T) {
	cidata.Slow(t, "starts and interrupts processes")
	bin := builtBinary(t)
	t.Run("eval", func(t *testing.T) {
		// 221,600 episodes: still playing when the signal arrives.
		code, stderr := interrupt(t, bin, " episodes to play (", "eval", "--db", "runs.db", "--split", "all", "--rollouts", "20", "--workers", "1")
		checkInterrupted(t, code, stderr, "interrupted: finished episodes are stored; continue with: persuarena eval --resume ")
	})
	t.Run("train", func(t *testing.T) {
		code, stderr := interrupt(t, bin, "step 1/", "train", "--db", "runs.db", "--checkpoint", "planner.json", "--workers", "1")
		checkInterrupted(t, code, stderr, "; continue with: persuarena train --resume --checkpoint planner.json --db runs.db")
	})
	t.Run("serve", func(t *testing.T) {
		code, stderr := interrupt(t, bin, "storing finished episodes in run", "serve", "--db", "runs.db", "--addr", "127.0.0.1:0")
		checkInterrupted(t, code, stderr, "persuarena serve: http://127.0.0.1:")
	})
	t.Run("worker", func(t *testing.T) {
		db := storetest.PostgresURL(t) // skips without PERSUARENA_PG_URL, fails so under CI
		code, stderr := interrupt(t, bin, "worker: workers 1,", "worker", "--db", db, "--workers", "1", "--job-timeout", "10m")
		checkInterrupted(t, code, stderr, "(Ctrl-C stops)")
		// The start-up lines name the timeouts that apply, the rescue
		// time derived from --job-timeout.
		if want := "worker: workers 1, retries 2, job timeout 10m0s, rescue after 11m0s (derived: the job timeout plus max(30s, a tenth)), job poll 1s, finish poll 10s"; !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	})
}
