// Package tablefmt formats the numbers of PersuArena's outcome and
// analysis tables (packages eval, analysis and report), so the same value
// prints the same way in every table.
package tablefmt

import (
	"math"
	"strconv"
)

// Pct formats a share in [0, 1] as a percentage with one decimal, as the
// Probe-RPO paper's tables do (0.4567 → "45.7"); NaN (an empty group) is
// "-".
func Pct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return Num(100*x, 1, false)
}

// Num formats x with prec decimals, with "+" before non-negative values
// when sign is set; NaN is "-". A value that rounds to zero prints as zero
// without a minus sign (-0.0004 with prec 3 → "0.000", or "+0.000" with
// sign).
func Num(x float64, prec int, sign bool) string {
	if math.IsNaN(x) {
		return "-"
	}
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if z, _ := strconv.ParseFloat(s, 64); z == 0 {
		s = strconv.FormatFloat(0, 'f', prec, 64)
	}
	if sign && s[0] != '-' {
		s = "+" + s
	}
	return s
}

// Interval formats a confidence interval [lo, hi] with prec decimals and
// signs ("[-0.12, +0.30]"), each bound as Num.
func Interval(lo, hi float64, prec int) string {
	return "[" + Num(lo, prec, true) + ", " + Num(hi, prec, true) + "]"
}

// JSONFloat returns x for a JSON encoder, or nil (null) for NaN and ±Inf,
// which JSON cannot carry (an empty group's mean, an undefined interval).
func JSONFloat(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}
