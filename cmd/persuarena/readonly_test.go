package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/store"
)

// runs list reads a database whose WAL index cannot be created beside it
// (as in a read-only directory; a directory in the -shm file's place
// stands for one, which works as root too), and eval into a garbled
// database is refused before it writes.
func TestReadOnlyListAndCorruptRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 { // enough runs for many pages
		id := fmt.Sprintf("20260101-000000-%04x", i)
		if err := db.CreateRun(ctx, store.Run{ID: id, Kind: "eval", Config: []byte(`{"pad":"` + strings.Repeat("x", 500) + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	os.Remove(path + "-shm")
	if err := os.Mkdir(path+"-shm", 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, err := execRoot(t, "runs", "list", "--db", path)
	if err != nil || !strings.Contains(out, "20260101-000000-00c7") {
		t.Fatalf("runs list: %v\n%s", err, out)
	}
	os.Remove(path + "-shm")

	raw, _ := os.ReadFile(path)
	for i := 3 * 4096; i < 5*4096; i++ { // two b-tree pages
		raw[i] = byte(i * 131)
	}
	os.WriteFile(path, raw, 0o644)
	_, _, err = execEval(t, false, false, "--db", path, "--split", "heldout", "--tmax", "2", "--rollouts", "1", "--workers", "1")
	if err == nil || !strings.Contains(err.Error(), "database is corrupt") {
		t.Fatalf("eval into a garbled database: %v", err)
	}
}
