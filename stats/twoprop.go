package stats

import "math"

// TwoProp is a comparison of two independent binomial proportions p1 =
// x1/n1 and p2 = x2/n2 (an A/B test's arms).
type TwoProp struct {
	P1, P2 float64
	// Diff is p1 - p2, and [Lo, Hi] its Newcombe hybrid score interval
	// (Newcombe 1998, method 10: from the two Wilson intervals).
	Diff, Lo, Hi float64
	// Z is the pooled two-proportion z statistic and P its two-sided
	// p-value, 2·(1 - Φ(|Z|)); Z = 0 and P = 1 when the pooled proportion
	// is 0 or 1 (no variation).
	Z, P float64
}

// TwoProportion compares x1 of n1 with x2 of n2 at normal quantile z
// (Z95 for a 95% interval): the pooled z-test
//
//	p = (x1 + x2)/(n1 + n2),  Z = (p1 - p2) / sqrt(p(1-p)(1/n1 + 1/n2))
//
// and Newcombe's interval for p1 - p2, L = d - sqrt((p1-l1)² + (u2-p2)²),
// U = d + sqrt((u1-p1)² + (p2-l2)²), where (l, u) are the Wilson
// intervals. Counts are clamped to [0, n]; n1 or n2 <= 0 gives NaN
// proportions and the uninformative interval [-1, 1] with P = 1.
func TwoProportion(x1, n1, x2, n2 int, z float64) TwoProp {
	if n1 <= 0 || n2 <= 0 {
		return TwoProp{P1: math.NaN(), P2: math.NaN(), Diff: math.NaN(), Lo: -1, Hi: 1, P: 1}
	}
	x1, x2 = min(max(x1, 0), n1), min(max(x2, 0), n2)
	p1, p2 := float64(x1)/float64(n1), float64(x2)/float64(n2)
	r := TwoProp{P1: p1, P2: p2, Diff: p1 - p2, P: 1}
	l1, u1 := Wilson(x1, n1, z)
	l2, u2 := Wilson(x2, n2, z)
	r.Lo = r.Diff - math.Sqrt((p1-l1)*(p1-l1)+(u2-p2)*(u2-p2))
	r.Hi = r.Diff + math.Sqrt((u1-p1)*(u1-p1)+(p2-l2)*(p2-l2))
	p := float64(x1+x2) / float64(n1+n2)
	if se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2))); se > 0 {
		r.Z = r.Diff / se
		r.P = math.Erfc(math.Abs(r.Z) / math.Sqrt2)
	}
	return r
}
