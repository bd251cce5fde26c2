package stats

import (
	"fmt"
	"math"
)

// Crossed is the result of PigeonholeBootstrap.
type Crossed struct {
	// Estimate is the grand mean of the matrix.
	Estimate float64
	// Lo and Hi bound the percentile interval of the replicates.
	Lo, Hi float64
	// P is the two-sided bootstrap p-value for a mean of 0: twice the
	// smaller share of replicates at or below 0 and at or above 0, capped
	// at 1. With B replicates it is at least 2/(B+1) (the observed sample
	// counts as one replicate).
	P float64
	// Level is the coverage and Resamples the number of replicates.
	Level     float64
	Resamples int
}

// PigeonholeBootstrap bootstraps the grand mean of a fully crossed
// two-way layout d[r][c] (e.g. r = training seed, c = scenario, each cell
// a paired difference averaged over rollouts) whose rows and columns are
// both random samples: each replicate draws R rows and C columns
// independently with replacement and takes the mean of the R×C selected
// cells (Owen 2007, "The pigeonhole bootstrap", Ann. Appl. Stat. 1(2)).
// Resampling both ways keeps the correlation of cells that share a row
// (one seed's checkpoint) or a column (one scenario) in the interval, which
// a bootstrap over cells would ignore.
//
// resamples <= 0 means 10,000 and level 0 means 0.95. Same seed, same
// result. Errors: an empty or ragged matrix, a non-finite cell, level
// outside (0, 1).
func PigeonholeBootstrap(d [][]float64, resamples int, level float64, seed uint64) (Crossed, error) {
	if resamples <= 0 {
		resamples = 10000
	}
	if level == 0 {
		level = 0.95
	}
	if !(level > 0 && level < 1) {
		return Crossed{}, fmt.Errorf("stats: pigeonhole bootstrap: level %v, want (0, 1)", level)
	}
	R := len(d)
	if R == 0 || len(d[0]) == 0 {
		return Crossed{}, fmt.Errorf("stats: pigeonhole bootstrap: empty matrix")
	}
	C := len(d[0])
	total := 0.0
	for r, row := range d {
		if len(row) != C {
			return Crossed{}, fmt.Errorf("stats: pigeonhole bootstrap: row %d has %d columns, want %d", r, len(row), C)
		}
		for c, x := range row {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return Crossed{}, fmt.Errorf("stats: pigeonhole bootstrap: cell (%d, %d) is %v", r, c, x)
			}
			total += x
		}
	}
	out := Crossed{Estimate: total / float64(R*C), Level: level, Resamples: resamples}
	rng := newRand(seed)
	rows := make([]int, R)
	colCount := make([]float64, C)
	reps := make([]float64, resamples)
	le, ge := 1, 1 // the observed sample counts on both sides of 0
	for b := range reps {
		for i := range rows {
			rows[i] = rng.IntN(R)
		}
		clear(colCount)
		for range C {
			colCount[rng.IntN(C)]++
		}
		s := 0.0
		for _, r := range rows {
			for c, k := range colCount {
				if k != 0 {
					s += k * d[r][c]
				}
			}
		}
		m := s / float64(R*C)
		reps[b] = m
		if m <= 0 {
			le++
		}
		if m >= 0 {
			ge++
		}
	}
	out.Lo, out.Hi = percentileCI(reps, level)
	out.P = math.Min(1, 2*float64(min(le, ge))/float64(resamples+1))
	return out, nil
}
