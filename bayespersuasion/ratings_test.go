package bayespersuasion

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImportRatings(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "r.csv")
	os.WriteFile(csvPath, []byte("claim,argument,rating_initial,rating_final\nA,x,2,5\nA,y,3,3\nB,z,4,2\n"), 0o644)
	jl := filepath.Join(dir, "r.jsonl")
	os.WriteFile(jl, []byte(`{"claim":"A","argument":"x","rating_initial":2,"rating_final":5}`+"\n\n"+
		`{"claim":"A","rating_initial":3,"rating_final":3}`+"\n"+`{"claim":"B","rating_initial":4,"rating_final":2}`+"\n"), 0o644)
	for _, p := range []string{csvPath, jl} {
		rs, err := ImportRatings(p)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := HumanGain(rs, 1)
		if err != nil {
			t.Fatal(err)
		}
		// Changes +3, 0, -2: mean 1/3, one of three positive, two claims.
		if rep.N != 3 || rep.Claims != 2 || math.Abs(rep.Gain.Estimate-1.0/3) > 1e-12 || math.Abs(rep.Positive-1.0/3) > 1e-12 {
			t.Errorf("%s: %+v", p, rep)
		}
		if !(rep.Gain.Lo <= rep.Gain.Estimate && rep.Gain.Estimate <= rep.Gain.Hi) || rep.Gain.Lo < -2 || rep.Gain.Hi > 3 {
			t.Errorf("%s: interval %+v", p, rep.Gain)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("claim,rating_initial,rating_final\nA,2,five\n"), 0o644)
	if _, err := ImportRatings(bad); err == nil || !strings.Contains(err.Error(), "bad.csv:2: rating_final") {
		t.Errorf("bad number: %v", err)
	}
	os.WriteFile(bad, []byte("claim,rating_initial\nA,2\n"), 0o644)
	if _, err := ImportRatings(bad); err == nil || !strings.Contains(err.Error(), `no "rating_final" column`) {
		t.Errorf("missing column: %v", err)
	}
}
