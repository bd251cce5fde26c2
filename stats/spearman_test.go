package stats

import (
	"math"
	"testing"
)

func TestSpearman(t *testing.T) {
	// Hand-computed: ranks of x are 1 2 3 4 5, of y 2 1 4 3 5; d² = 1+1+1+1+0
	// = 4, rho = 1 - 6·4/(5·24) = 0.8.
	rho, err := Spearman([]float64{1, 2, 3, 4, 5}, []float64{20, 10, 40, 30, 50})
	if err != nil || math.Abs(rho-0.8) > 1e-12 {
		t.Errorf("Spearman = %v, %v; want 0.8", rho, err)
	}
	// Ties: x ranks 1.5 1.5 3, y ranks 1 2 3; Pearson of those = sqrt(3)/2.
	rho, _ = Spearman([]float64{1, 1, 2}, []float64{1, 2, 3})
	if math.Abs(rho-math.Sqrt(3)/2) > 1e-12 {
		t.Errorf("tied Spearman = %v, want %v", rho, math.Sqrt(3)/2)
	}
	if rho, _ := Spearman([]float64{1, 1}, []float64{1, 2}); !math.IsNaN(rho) {
		t.Errorf("constant sample: %v, want NaN", rho)
	}
	if _, err := Spearman([]float64{1}, []float64{1}); err == nil {
		t.Error("one pair: no error")
	}
}
