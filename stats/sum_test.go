package stats

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Hand-checked sums where a running float64 sum is wrong, with cases from
// Python's math.fsum tests (Lib/test/test_math.py, testFsum): [1, 1e100,
// 1, -1e100] sums to 2; 1 + 2^-53 is a tie that rounds to even (1), and
// 2^-106 more breaks the tie upwards.
func TestSumExact(t *testing.T) {
	cases := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0.1, 0.2, 0.3}, 0.6},                    // running sum: 0.6000000000000001
		{[]float64{1, 1e100, 1, -1e100}, 2},                // running sum: 0
		{[]float64{1e-16, 1, 1e16}, 1.0000000000000002e16}, // running sum: 1e16
		{[]float64{1, math.Ldexp(1, -53), math.Ldexp(1, -106)}, math.Nextafter(1, 2)},
		{[]float64{1, math.Ldexp(1, -53)}, 1}, // a tie rounds to even
		{[]float64{-0.5, 0.25, 0.25}, 0},
	}
	for _, c := range cases {
		var s Sum
		for _, x := range c.in {
			s.Add(x)
		}
		if got := s.Value(); got != c.want {
			t.Errorf("Sum%v = %v, want %v", c.in, got, c.want)
		}
	}
}

// The sum of the same values in any order is the same float64, bit for
// bit, and equals the exact rational sum rounded once (math/big).
func TestSumOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 2000)
	for i := range xs {
		xs[i] = r.Float64() * math.Pow(10, float64(r.IntN(30)-15))
		if r.IntN(2) == 0 {
			xs[i] = -xs[i]
		}
	}
	var ref Sum
	for _, x := range xs {
		ref.Add(x)
	}
	want := exactSum(xs)
	if got := ref.Value(); got != want {
		t.Fatalf("Sum = %v, exact %v", got, want)
	}
	for k := 0; k < 20; k++ {
		r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		var s Sum
		for _, x := range xs {
			s.Add(x)
		}
		if got := s.Value(); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("shuffle %d: %v, want %v", k, got, want)
		}
	}
}

// exactSum is the float64 nearest the exact sum of xs, through math/big.
func exactSum(xs []float64) float64 {
	acc := new(big.Float).SetPrec(4096)
	for _, x := range xs {
		acc.Add(acc, new(big.Float).SetPrec(4096).SetFloat64(x))
	}
	f, _ := acc.Float64()
	return f
}

// Non-finite values are summed apart (a NaN anywhere is NaN; infinities
// give their IEEE sum); an intermediate overflow gives its infinity,
// the documented Choice where Python's fsum raises OverflowError.
func TestSumNonFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		in   []float64
		want float64
	}{
		{[]float64{1, inf}, inf},
		{[]float64{inf, 1, 2}, inf},
		{[]float64{-inf, 1e308, 1e308}, nan}, // -Inf plus an overflow's +Inf, as IEEE's -Inf + Inf
		{[]float64{inf, -inf}, nan},
		{[]float64{1, nan, 2}, nan},
		{[]float64{1e308, 1e308}, inf},
		{[]float64{-1e308, -1e308, 5}, -inf},
		{[]float64{1e308, 1e308, -1e308}, inf}, // exactly 1e308: not represented
		{[]float64{math.MaxFloat64, -math.MaxFloat64, 1}, 1},
	}
	for _, c := range cases {
		var s Sum
		for _, x := range c.in {
			s.Add(x)
		}
		got := s.Value()
		if math.Float64bits(got) != math.Float64bits(c.want) && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("Sum%v = %v, want %v", c.in, got, c.want)
		}
	}
}
