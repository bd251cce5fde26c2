package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/simfit"
)

// TestSimFitWritesALoadableFile runs a one-evaluation fit (the real fit is
// checked by package simfit) and resolves its file as a persuadee.
func TestSimFitWritesALoadableFile(t *testing.T) {
	cidata.Slow(t, "fits the simulator")
	out := filepath.Join(t.TempDir(), "fit.json")
	_, stderr, err := execRoot(t, "sim", "fit", "p4g", "--max-evals", "1", "--folds", "0", "--seed", "1", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "sim fit on 662 train dialogues of 499 users") || !strings.Contains(stderr, "validation, fitted") {
		t.Errorf("summary:\n%s", stderr)
	}
	c, f, err := sim.LoadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Provenance
	if p.Command != "persuarena sim fit p4g --seed 1 --folds 0 --max-evals 1 --closed-n 160 --bounds strategy --base sim-hand" || !strings.HasPrefix(p.Data, "sha256:") ||
		p.Objective["validation_default"] == 0 || len(f.Params) != len(simfit.DefaultParams) || f.Base != sim.HandName ||
		!strings.Contains(p.ClosedLoop, "arena 160, p4g 160") || p.Metrics["closed_default_ece"] == 0 {
		t.Errorf("provenance %+v params %v", p, f.Params)
	}
	pees, err := mustRegistry(t, "").Persuadees([]string{"sim", "sim:" + out, sim.HandName})
	if err != nil || len(pees) != 3 || pees[1].Name() != "sim:"+out || pees[2].Name() != sim.HandName {
		t.Fatalf("newPersuadees: %v %v", pees, err)
	}
	if c.Name != "sim:"+out {
		t.Errorf("config name %q", c.Name)
	}
	// A bad file is reported with its line and field.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{\n  \"schema\": \"persuarena.sim-config/v1\",\n  \"params\": {\"Acept\": 1}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mustRegistry(t, "").Persuadees([]string{"sim:" + bad}); err == nil || !strings.Contains(err.Error(), "bad.json:3: params.Acept") {
		t.Errorf("bad file: %v", err)
	}
	if _, err := roles.ResolvePersuadee(context.Background(), "", "sim:"+bad); err == nil || !strings.Contains(err.Error(), "bad.json:3: params.Acept") {
		t.Errorf("fidelity, bad file: %v", err)
	}
}
