package stats

import (
	"fmt"
	"math"
	"sort"
)

// Spearman returns Spearman's rank correlation of paired samples x and y
// (Spearman 1904): the Pearson correlation of their ranks, ties given
// their average rank (as scipy.stats.spearmanr), in [-1, 1]. It is NaN
// when either sample is constant. Errors: len(x) != len(y), fewer than 2
// pairs, a NaN value.
func Spearman(x, y []float64) (float64, error) {
	if len(x) != len(y) {
		return math.NaN(), fmt.Errorf("stats: Spearman: %d and %d values", len(x), len(y))
	}
	if len(x) < 2 {
		return math.NaN(), fmt.Errorf("stats: Spearman: %d pairs, want at least 2", len(x))
	}
	for i := range x {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) {
			return math.NaN(), fmt.Errorf("stats: Spearman: NaN at pair %d", i)
		}
	}
	return Pearson(averageRanks(x), averageRanks(y)), nil
}

// averageRanks returns the 1-based ranks of v, ties sharing their mean rank.
func averageRanks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

// Pearson returns the sample correlation of x and y (equal lengths >= 2;
// shorter or unequal input panics through indexing), NaN when either has
// zero variance.
func Pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}
