package stats_test

import (
	"fmt"

	"github.com/persuarena/persuarena/stats"
)

// Wilson's 95% score interval for 7 successes in 20 trials. By hand:
// p = 0.35, z²/n = 0.19207, centre = (0.35 + 0.09604)/1.19207 = 0.37417,
// half = 1.95996/1.19207 · sqrt(0.011375 + 0.0024009) = 0.19298, so
// [0.1812, 0.5671] (Newcombe 1998, method 3).
func ExampleWilson() {
	lo, hi := stats.Wilson(7, 20, stats.Z95)
	fmt.Printf("7/20: [%.4f, %.4f]\n", lo, hi)
	// Output: 7/20: [0.1812, 0.5671]
}

// McNemar's exact test on 8 pairs only A won and 2 only B won: two-sided
// p = 2 · P(X <= 2), X ~ Bin(10, 1/2) = 2 · 56/1024 = 0.109375.
func ExampleMcNemarExact() {
	fmt.Printf("p = %.6f\n", stats.McNemarExact(8, 2))
	// Output: p = 0.109375
}
