//go:build unix

package filelimit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Directories, named pipes and devices are refused before any read, with
// one line naming the path and what it is: a named pipe no one writes to
// would block a read for ever, /dev/zero and /dev/urandom never end.
func TestNotRegularRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, what string }{
		{fifo, "a named pipe"}, {"/dev/zero", "a character device"}, {"/dev/urandom", "a character device"},
		{link, "a character device"}, {dir, "a directory"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(tc.path, 1<<20); done <- err }()
		select {
		case err := <-done:
			want := tc.path + ": not a regular file (" + tc.what + "): give a file"
			if !errors.Is(err, ErrNotRegular) || err.Error() != want || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v, want %q", tc.path, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ReadFile still blocked after 10 s", tc.path)
		}
		if _, err := Open(tc.path, 1<<20); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open %s: %v", tc.path, err)
		}
	}
}
