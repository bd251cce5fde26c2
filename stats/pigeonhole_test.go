package stats

import (
	"math"
	"testing"
)

func TestPigeonholeBootstrap(t *testing.T) {
	// A constant matrix: every replicate equals the mean.
	c, err := PigeonholeBootstrap([][]float64{{0.25, 0.25}, {0.25, 0.25}}, 200, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Estimate != 0.25 || c.Lo != 0.25 || c.Hi != 0.25 || c.P != 2.0/201 {
		t.Fatalf("constant: %+v", c)
	}
	// Rows that differ only by a shift: d[r][c] = a_r with a = (-1, +1).
	// A replicate's mean is the mean of the drawn rows: -1, 0 or +1 with
	// probabilities 1/4, 1/2, 1/4, so the 95% interval is [-1, 1] and the
	// p-value near 1 (3/4 of replicates on each side).
	d := [][]float64{{-1, -1, -1}, {1, 1, 1}}
	c, err = PigeonholeBootstrap(d, 20000, 0.95, 7)
	if err != nil {
		t.Fatal(err)
	}
	if c.Estimate != 0 || c.Lo != -1 || c.Hi != 1 || c.P != 1 {
		t.Fatalf("row shift: %+v", c)
	}
	// Column effects: d[r][c] = b_c with b = (0, 0, 3); the mean over
	// three drawn columns has mean 1 and variance Var(b)/3 = 2/3.
	// The replicate mean takes 0, 1, 2, 3 with probabilities 8, 12, 6, 1
	// over 27, so the 95% interval is [0, 3].
	c, err = PigeonholeBootstrap([][]float64{{0, 0, 3}, {0, 0, 3}}, 10000, 0.95, 5)
	if err != nil {
		t.Fatal(err)
	}
	if c.Estimate != 1 || c.Lo != 0 || c.Hi != 3 {
		t.Fatalf("column effects: %+v", c)
	}
	// A clear positive effect: p at its floor 2/(B+1).
	c, _ = PigeonholeBootstrap([][]float64{{1, 2}, {2, 1}, {1, 1}}, 999, 0.9, 3)
	if c.P != 2.0/1000 || c.Lo < 1 || c.Hi > 2 || math.Abs(c.Estimate-8.0/6) > 1e-15 {
		t.Fatalf("positive: %+v", c)
	}
	for _, bad := range [][][]float64{{}, {{}}, {{1, 2}, {1}}, {{math.NaN()}}} {
		if _, err := PigeonholeBootstrap(bad, 10, 0.95, 1); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if _, err := PigeonholeBootstrap(d, 10, 1.5, 1); err == nil {
		t.Error("level 1.5 accepted")
	}
}
