package stats

import "math"

// Sum is the exact sum of float64 values, rounded once: Value is the
// float64 nearest the true sum of everything added (ties to even), so it
// does not depend on the order the values were added in. A run's tables
// sum per-episode outcomes in the order episodes finish, which two
// workers make vary from run to run; a plain running sum then differs in
// its last bits between runs of the same seed.
//
// The algorithm is Shewchuk's non-overlapping partials ("Adaptive
// Precision Floating-Point Arithmetic and Fast Robust Geometric
// Predicates", 1997) with the correctly rounded final step of Python's
// math.fsum. Non-finite values are summed apart, as fsum does: a NaN
// makes Value NaN, infinities give their IEEE sum (+Inf and -Inf: NaN).
// Choice: where fsum raises on an intermediate overflow (finite values
// whose partial sum leaves float64's range), Value is that overflow's
// infinity and later finite values are ignored, even where the exact sum
// is finite again, as in 1e308 + 1e308 - 1e308. The zero value is an
// empty sum (Value 0); Add costs O(len(partials)), typically 1-3.
type Sum struct {
	partials []float64 // non-overlapping, increasing magnitude
	special  float64   // the sum of the non-finite values added; 0: none
	overflow float64   // the first overflowed partial sum (±Inf); 0: none
}

// Add adds x to the sum.
func (s *Sum) Add(x float64) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		s.special += x
		return
	}
	if s.overflow != 0 {
		return // Value is the overflow's from now on
	}
	i := 0
	for _, y := range s.partials {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		if math.IsInf(hi, 0) {
			s.overflow = hi
			return
		}
		lo := y - (hi - x)
		if lo != 0 {
			s.partials[i] = lo
			i++
		}
		x = hi
	}
	s.partials = append(s.partials[:i], x)
}

// Value returns the sum, correctly rounded to float64 (non-finite and
// overflowing sums: see Sum).
func (s *Sum) Value() float64 {
	switch {
	case s.special != 0: // NaN != 0 too
		return s.special + s.overflow
	case s.overflow != 0:
		return s.overflow
	}
	n := len(s.partials)
	if n == 0 {
		return 0
	}
	n--
	hi, lo := s.partials[n], 0.0
	for n > 0 {
		x := hi
		n--
		y := s.partials[n]
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// Half-way case: the partials below lo decide the rounding direction.
	if n > 0 && (lo < 0 && s.partials[n-1] < 0 || lo > 0 && s.partials[n-1] > 0) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}
