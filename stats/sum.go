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
// math.fsum. Values must be finite (an infinity or NaN makes Value NaN or
// infinite as IEEE arithmetic does, no longer exactly). The zero value is
// an empty sum (Value 0); Add costs O(len(partials)), typically 1-3.
type Sum struct {
	partials []float64 // non-overlapping, increasing magnitude
}

// Add adds x to the sum.
func (s *Sum) Add(x float64) {
	i := 0
	for _, y := range s.partials {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			s.partials[i] = lo
			i++
		}
		x = hi
	}
	s.partials = append(s.partials[:i], x)
}

// Value returns the sum, correctly rounded to float64.
func (s *Sum) Value() float64 {
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
