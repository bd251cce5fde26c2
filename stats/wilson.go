package stats

import "math"

// Z95 is the two-sided 95% standard normal quantile, Phi^-1(0.975).
const Z95 = 1.959963984540054

// Wilson returns the Wilson score interval (Wilson 1927; Agresti & Coull
// 1998, Eq. 2) for a binomial proportion with successes out of n trials at
// normal quantile z (Z95 for 95%):
//
//	centre = (p + z²/2n) / (1 + z²/n)
//	half   = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²),   p = successes/n
//
// and returns centre ± half, which always lies in [0, 1]. n <= 0 gives the
// uninformative (0, 1). successes is clamped to [0, n].
func Wilson(successes, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	successes = min(max(successes, 0), n)
	nf := float64(n)
	p := float64(successes) / nf
	z2 := z * z
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return math.Max(0, centre-half), math.Min(1, centre+half)
}
