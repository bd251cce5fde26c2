package grpo_test

import (
	"fmt"

	"github.com/persuarena/persuarena/grpo"
)

// Group-relative outcome advantages of a hand group of G = 4 rollouts with
// outcome rewards R_out = 3, 1, -1, -3 (accept, conditional, pending,
// reject): mean 0, sample standard deviation (DefaultConfig's ddof 1)
// sqrt(20/3) = 2.5820, so A_out = R_out / (2.5820 + 1e-6).
func ExampleOutcomeAdvantages() {
	a, err := grpo.OutcomeAdvantages([]float64{3, 1, -1, -3}, grpo.DefaultConfig())
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", a)
	// Output: [1.1619 0.3873 -0.3873 -1.1619]
}

// Combine adds λ times the dense advantage of every turn to the rollout's
// outcome advantage: A_{i,t} = A_out_i + λ·A_dense_{i,t}.
func ExampleCombine() {
	a := grpo.Combine([]float64{1, -1}, [][]float64{{0.5, -0.5}, {0, 1}}, 0.5)
	fmt.Println(a)
	// Output: [[1.25 0.75] [-1 -0.5]]
}
