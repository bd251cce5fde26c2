package stats

import "testing"

// BenchmarkWilcoxonExact50 times the exact signed-rank test at the largest
// n "auto" runs exactly (null distribution rebuilt on each call).
func BenchmarkWilcoxonExact50(b *testing.B) {
	d := make([]float64, 50)
	for i := range d {
		d[i] = float64(i + 1)
		if i%3 == 0 {
			d[i] = -d[i]
		}
	}
	for b.Loop() {
		if _, err := Wilcoxon(d, WilcoxonOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBootstrapPaired times a 10,000-resample paired-difference
// interval on 120 pairs (one held-out comparison) for each method.
func BenchmarkBootstrapPaired(b *testing.B) {
	x := make([]float64, 120)
	y := make([]float64, 120)
	for i := range x {
		x[i] = float64(i%4*2 - 3) // -3, -1, 1, 3 like R_goal
		y[i] = float64((i*7)%4*2 - 3)
	}
	for _, m := range []string{"percentile", "bca"} {
		b.Run(m, func(b *testing.B) {
			for b.Loop() {
				if _, err := PairedDiffCI(x, y, BootstrapOptions{Resamples: 10000, Method: m, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
