package sim_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/persuarena/persuarena/sim"
)

// TestFittedLoads checks the embedded fit: it is the repository's
// sim/fits/people.json byte for byte, starts from the hand-set parameters,
// carries its provenance, and Fitted holds exactly its values.
func TestFittedLoads(t *testing.T) {
	c, f := sim.Fitted()
	if c.Name != "sim" || f.Base != sim.HandName || f.Provenance == nil || f.Provenance.Command == "" {
		t.Fatalf("Fitted: name %q, base %q, provenance %+v", c.Name, f.Base, f.Provenance)
	}
	disk, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(sim.FittedPath)))
	if err != nil {
		t.Fatal(err)
	}
	c2, f2, err := sim.ParseFile(sim.FittedPath, disk)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), disk) {
		t.Errorf("the embedded fit does not re-encode to %s", sim.FittedPath)
	}
	hand := sim.HandConfig()
	for k, v := range f2.Params {
		got, err := c.Param(k)
		if err != nil || got != v {
			t.Errorf("%s: Fitted %v (%v), file %v", k, got, err, v)
		}
		if h, _ := hand.Param(k); h == v {
			t.Logf("%s: fitted value equals the hand-set one (%v)", k, v)
		}
	}
	c2.Name = "sim"
	if c != c2 {
		t.Error("Fitted differs from the file parsed from disk")
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

// TestVariantsOfHand: the soft and hard variants are derived from the
// default by relative shifts that give, on the hand-set parameters,
// exactly the hand-set soft and hard values.
func TestVariantsOfHand(t *testing.T) {
	s, h := sim.SoftOf(sim.HandConfig()), sim.HardOf(sim.HandConfig())
	type v struct{ got, want float64 }
	for name, x := range map[string]v{
		"soft Accept": {s.Accept, 0.15}, "soft Conditional": {s.Conditional, -0.05}, "soft ReactAsk": {s.ReactAsk, 0.175},
		"soft ReactPressure": {s.ReactPressure, 0.15}, "soft ReactBackfire": {s.ReactBackfire, 0.1}, "soft Understood": {s.Understood, 0.3},
		"soft AddressTotal": {s.AddressTotal, 1.2}, "soft NoiseSD": {s.NoiseSD, 0.03}, "soft EB.BadMove": {s.EB.BadMove, 0.04},
		"soft IT.BadMove": {s.IT.BadMove, 0.075}, "soft AR.BadMove": {s.AR.BadMove, 0.025}, "soft AA.BadMove": {s.AA.BadMove, 0.015},
		"hard Accept": {h.Accept, 0.45}, "hard Conditional": {h.Conditional, 0.15}, "hard ReactAsk": {h.ReactAsk, 0.525},
		"hard ReactPressure": {h.ReactPressure, 0.45}, "hard ReactBackfire": {h.ReactBackfire, 0.3}, "hard Understood": {h.Understood, 0.6},
		"hard AddressTotal": {h.AddressTotal, 0.8}, "hard NoiseSD": {h.NoiseSD, 0.06}, "hard EB.BadMove": {h.EB.BadMove, 0.12},
		"hard IT.BadMove": {h.IT.BadMove, 0.225}, "hard AR.BadMove": {h.AR.BadMove, 0.075}, "hard AA.BadMove": {h.AA.BadMove, 0.045},
	} {
		if x.got != x.want {
			t.Errorf("%s = %v, want %v", name, x.got, x.want)
		}
	}
	if s.Name != "sim-soft" || h.Name != "sim-hard" || sim.Soft() != sim.SoftOf(sim.DefaultConfig()) || sim.Hard() != sim.HardOf(sim.DefaultConfig()) {
		t.Error("Soft and Hard are not SoftOf and HardOf of the default")
	}
}
