package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/store"
)

// A masp eval run stores its configuration and its dialogues: they read
// back (MASPDialogues) as the --out file holds them, one per persuader,
// user and case, and a run without dialogues is ErrNotFound.
func TestMASPEvalStoresDialogues(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	svc := New(db)
	out := filepath.Join(t.TempDir(), "d.jsonl")
	spec := MASPSpec{Task: "p4g", Split: "val", Users: []string{"sim-soft", "sim-hard"}, Persuaders: []string{"script"},
		T: 4, Seed: 2, TauQ: 0.7, NoBDI: true, JudgeSamples: 3, Resamples: 50, Workers: 2, Out: out}
	var log bytes.Buffer
	res, err := svc.MASPEval(ctx, spec, &log, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := db.GetRun(ctx, res.RunID)
	if err != nil || run.Kind != "masp" || run.Status != store.StatusDone {
		t.Fatalf("run %+v, %v", run, err)
	}
	var stored MASPSpec
	if err := json.Unmarshal(run.Config, &stored); err != nil || stored.T != 4 || stored.Split != "val" || stored.Workers != 0 {
		t.Errorf("stored config %s: %v", run.Config, err)
	}
	ds, err := svc.MASPDialogues(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2*res.Cases || res.Cases != 200 {
		t.Fatalf("%d dialogues of %d cases, want 2 x 200", len(ds), res.Cases)
	}
	if ds[0].Persuader != "script" || ds[0].User != "sim-soft" || ds[res.Cases].User != "sim-hard" || len(ds[0].Turns) == 0 || len(ds[0].Turns) > 4 {
		t.Errorf("first dialogues %+v / %+v", ds[0], ds[res.Cases])
	}
	file, _ := os.ReadFile(out)
	art, _ := db.Artifact(ctx, res.RunID, DialoguesArtifact)
	if !bytes.Equal(file, art) || bytes.Count(art, []byte("\n")) != 400 {
		t.Errorf("--out file (%d bytes) differs from the stored dialogues (%d bytes)", len(file), len(art))
	}
	if !strings.Contains(log.String(), "run "+res.RunID+": 400 dialogues to play") {
		t.Errorf("log %q", log.String())
	}
	if _, err := svc.MASPDialogues(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}
}
