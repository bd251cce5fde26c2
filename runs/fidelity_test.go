package runs

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// --probes agreement reads openness itself: B_0 = (1 + o_0)/2 with o_0
// the scenario's initial stance, so B_0 ranks the dialogues exactly as
// the stance does, and the report has no per-probe rows.
func TestFidelityP4GProbes(t *testing.T) {
	spec := FidelitySpec{Persuadee: "sim", Split: "heldout", Probes: "agreement", Seed: 1, Resamples: 10, Workers: 2}
	rep, err := FidelityP4G(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Initial.AUC == nil || rep.Stance.AUC == nil || math.Abs(*rep.Initial.AUC-*rep.Stance.AUC) > 1e-12 || len(rep.Sources.Probes) != 0 {
		t.Errorf("agreement: AUC B_0 %v, stance %v, probe rows %d; want B_0 = stance, none", rep.Initial.AUC, rep.Stance.AUC, len(rep.Sources.Probes))
	}
	spec.Probes = ""
	rep, err = FidelityP4G(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sources.Probes) != 3 || rep.Sources.Probes[0].Probe != "ca" {
		t.Errorf("default basis: probe rows %+v, want ca, pe, ac", rep.Sources.Probes)
	}
	spec.Probes = filepath.Join(t.TempDir(), "none.json")
	if _, err := FidelityP4G(context.Background(), spec, nil); err == nil || !strings.Contains(err.Error(), "probe basis") || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("missing basis file: err %v, want it named", err)
	}
}
