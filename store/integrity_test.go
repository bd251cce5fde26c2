package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fillDB creates a file database with enough runs to span many pages.
func fillDB(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		cfg := fmt.Sprintf(`{"note":%q}`, strings.Repeat("x", 500))
		if err := db.CreateRun(ctx, Run{ID: fmt.Sprintf("r%03d", i), Kind: "eval", Seed: uint64(i), Config: []byte(cfg), CreatedAt: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// Opening an existing database with garbled pages for writing fails with
// ErrCorrupt, naming the file, and leaves it byte for byte as it was.
func TestOpenRefusesCorruptDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	fillDB(t, path)
	raw, err := os.ReadFile(path)
	if err != nil || len(raw) < 8*4096 {
		t.Fatalf("%d bytes, %v", len(raw), err)
	}
	for i := 3 * 4096; i < 5*4096; i++ { // garble two b-tree pages
		raw[i] = byte(i*131 + 7)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), path)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "quick_check") {
		t.Fatalf("Open of a garbled database: %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, raw) {
		t.Fatal("the refused open changed the file")
	}
}

// A database whose WAL index cannot be created beside it (a read-only
// directory; here a directory blocks the -shm file, which works as root
// too) is still listed read-only, and refuses writes.
func TestOpenReadOnlyWithoutWALIndex(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.db")
	fillDB(t, path)
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	if err := os.Mkdir(path+"-shm", 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.ListRuns(ctx)
	if err != nil || len(runs) != 200 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	if err := db.CreateRun(ctx, Run{ID: "new", Kind: "eval"}); err == nil {
		t.Fatal("a read-only store accepted a write")
	}
	if _, err := OpenReadOnly(ctx, filepath.Join(dir, "missing.db")); err == nil || !strings.Contains(err.Error(), "no run database at") {
		t.Fatalf("missing file: %v", err)
	}
}

// A --db that is a directory, a named pipe or a device is refused at once
// in one line, for writing and for reading (a pipe could block; SQLite
// answered "disk I/O error").
func TestOpenRefusesNonRegular(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, path := range []string{dir, "/dev/zero"} {
		for _, open := range []func(context.Context, string) (*DB, error){Open, OpenExisting, OpenReadOnly} {
			if _, err := open(ctx, path); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), path+": invalid value: not a regular file") {
				t.Errorf("%s: %v", path, err)
			}
		}
	}
}
