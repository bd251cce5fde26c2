package stats

import "testing"

// drawer reproduces newRand(seed).IntN exactly, for powers of two and
// other sizes (including sizes where Lemire's rejection step is reached).
func TestDrawerMatchesIntN(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 64, 1000, 44320, 1<<62 + 1} {
		r := newRand(42)
		d := drawer{newPCG(42)}
		got := make([]int, 5000)
		d.fill(got, n)
		for i, g := range got {
			if w := r.IntN(n); g != w {
				t.Fatalf("n=%d draw %d: %d, IntN %d", n, i, g, w)
			}
		}
	}
}

// BootstrapMany and PairedDiffCIs equal the separate calls exactly, on
// both sides of the pipelining threshold; a hand-checkable case: with
// every difference equal to 2 each resample's mean is 2.
func TestPairedDiffCIsEqualsSeparateCalls(t *testing.T) {
	for _, n := range []int{30, pipelineDraws/1000 + 7} {
		a1, b1, a2, b2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			a1[i], b1[i] = float64(i%3), float64(i%5)/2
			a2[i], b2[i] = float64(i%7)-3, float64(i%2)
		}
		o := BootstrapOptions{Resamples: 1000, Seed: 9}
		both, err := PairedDiffCIs([][]float64{a1, a2}, [][]float64{b1, b2}, o)
		if err != nil {
			t.Fatal(err)
		}
		c1, err1 := PairedDiffCI(a1, b1, o)
		c2, err2 := PairedDiffCI(a2, b2, o)
		if err1 != nil || err2 != nil || both[0] != c1 || both[1] != c2 {
			t.Fatalf("n=%d: together %+v, separately %+v %+v (%v %v)", n, both, c1, c2, err1, err2)
		}
		if c1 == c2 {
			t.Fatalf("n=%d: the two samples gave the same interval %+v", n, c1)
		}
	}
	twos := []float64{3, 4, 5}
	c, err := PairedDiffCIs([][]float64{twos}, [][]float64{{1, 2, 3}}, BootstrapOptions{Resamples: 50, Seed: 1})
	if err != nil || c[0].Estimate != 2 || c[0].Lo != 2 || c[0].Hi != 2 || c[0].Resamples != 50 {
		t.Fatalf("constant differences: %+v %v", c, err)
	}
	if _, err := PairedDiffCIs([][]float64{{1, 2}, {1}}, [][]float64{{1, 2}, {1}}, BootstrapOptions{}); err == nil {
		t.Fatal("samples of different lengths accepted")
	}
}
