//go:build unix

package scenario

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/persuarena/persuarena/internal/filelimit"
)

// within runs f and fails the test when it has not returned after d (a
// load that hangs would otherwise hang the test binary).
func within(t *testing.T, d time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", what, d)
		return nil
	}
}

// A scenario reference that is a named pipe, a device or a directory is
// refused before it is read, in one line naming it (a pipe no one writes
// to blocked the load for ever, /dev/zero for ever, /dev/urandom grew to
// gigabytes), both when loading (eval --scenarios) and when validating
// (scenarios validate).
func TestNonRegularScenarioFilesRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, what string }{
		{fifo, "a named pipe"}, {"/dev/zero", "a character device"}, {"/dev/urandom", "a character device"}, {dir, "a directory"},
	} {
		err := within(t, 10*time.Second, tc.path, func() error {
			_, err := ResolveSplitContext(context.Background(), Heldout, "arena", tc.path)
			return err
		})
		if want := tc.path + ": not a regular file (" + tc.what + "): give a file"; !errors.Is(err, filelimit.ErrNotRegular) || err.Error() != want {
			t.Errorf("load %s: %v, want %q", tc.path, err, want)
		}
		var buf bytes.Buffer
		err = within(t, 10*time.Second, tc.path, func() error { return CheckFiles(context.Background(), &buf, []string{tc.path}) })
		if want := tc.path + ": not a regular file (" + tc.what + "): give a file\n"; err == nil || buf.String() != want {
			t.Errorf("validate %s: %v, printed %q, want %q", tc.path, err, buf.String(), want)
		}
	}
}

// A file that is not JSONL at all stops at MaxProblems problems instead
// of collecting one per line of its whole size.
func TestTooManyProblemsStopsReading(t *testing.T) {
	p := filepath.Join(t.TempDir(), "junk.jsonl")
	if err := os.WriteFile(p, bytes.Repeat([]byte("\xff\xfe junk\n"), 50000), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(p)
	var le *LoadError
	if !errors.As(err, &le) || len(le.Problems) != MaxProblems+1 {
		t.Fatalf("want %d problems, got %v", MaxProblems+1, err)
	}
	if last := le.Problems[MaxProblems]; last.Line != MaxProblems+1 || !strings.Contains(last.Msg, "reading stopped") {
		t.Fatalf("last problem %+v", last)
	}
}

// A load observes its context at every line: cancelled, it stops at once
// with an error wrapping context.Canceled.
func TestLoadStopsWhenCancelled(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "scenarios", "arena.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ResolveAllContext(ctx, p)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), p+":1: loading stopped") {
		t.Fatalf("cancelled load: %v", err)
	}
}
