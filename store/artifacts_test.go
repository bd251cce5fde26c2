package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// An artifact reads back as stored, is replaced by a second save, goes
// with its run, and an unknown run or name is ErrNotFound.
func TestArtifacts(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	if err := db.SaveArtifact(ctx, "r1", "dialogues.jsonl", []byte("{\"a\":1}\n")); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveArtifact(ctx, "r1", "dialogues.jsonl", []byte("{\"a\":2}\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := db.Artifact(ctx, "r1", "dialogues.jsonl"); err != nil || string(b) != "{\"a\":2}\n" {
		t.Errorf("artifact = %q, %v", b, err)
	}
	if _, err := db.Artifact(ctx, "r1", "other"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing name: %v", err)
	}
	if err := db.SaveArtifact(ctx, "nope", "x", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}
	if err := db.SaveArtifact(ctx, "r1", "", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty name: %v", err)
	}
	if err := db.DeleteRun(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM artifacts`).Scan(&n); err != nil || n != 0 {
		t.Errorf("artifacts after rm: %d, %v", n, err)
	}
}

func TestOpenExistingRefusesMissing(t *testing.T) {
	path := t.TempDir() + "/none.db"
	if _, err := OpenExisting(context.Background(), path); err == nil || !strings.Contains(err.Error(), "no run database at "+path) {
		t.Errorf("err = %v", err)
	}
}
