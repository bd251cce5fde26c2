package masp

import (
	"fmt"
	"math"

	"github.com/persuarena/persuarena/stats"
)

// DefaultTauQ is tau_q, the rationality threshold of RCSR (MASP paper, Eq.
// 18: 0.70).
const DefaultTauQ = 0.70

// Trace is what the metrics need of one dialogue: tau_s and q_1, q_2, ...
type Trace struct {
	// SuccessTurn is tau_s, the first successful turn (1-based), 0 for
	// none.
	SuccessTurn int
	// Q holds q_t for the turns played; an unparseable or failed judgement
	// is 0.
	Q []int
}

// Success reports tau_s <= T (SR@T's indicator, MASP paper, §4).
func (tr Trace) Success(T int) bool { return tr.SuccessTurn >= 1 && tr.SuccessTurn <= T }

// Turns returns the turns to success, T for a failure (AT's summand).
func (tr Trace) Turns(T int) int {
	if tr.Success(T) {
		return tr.SuccessTurn
	}
	return T
}

// QBar returns q-bar_{tau_s}, the mean of q_1..q_{tau_s} (MASP paper, Eq.
// 17); NaN when the dialogue never succeeded. Judgements missing from Q
// (fewer than tau_s entries) count 0, like unparseable ones.
func (tr Trace) QBar() float64 {
	if tr.SuccessTurn < 1 {
		return math.NaN()
	}
	s := 0
	for i := 0; i < tr.SuccessTurn && i < len(tr.Q); i++ {
		s += tr.Q[i]
	}
	return float64(s) / float64(tr.SuccessTurn)
}

// RCSuccess is RCSR@T's indicator (MASP paper, Eq. 18): tau_s <= T and
// q-bar_{tau_s} >= tauQ.
func (tr Trace) RCSuccess(T int, tauQ float64) bool {
	return tr.Success(T) && tr.QBar() >= tauQ
}

func meanOf(n int, f func(i int) float64) float64 {
	if n == 0 {
		return math.NaN()
	}
	s := 0.0
	for i := range n {
		s += f(i)
	}
	return s / float64(n)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// SR returns SR@T, the share of dialogues that succeed within T turns
// (MASP paper, §4); NaN for no dialogues.
func SR(trs []Trace, T int) float64 {
	return meanOf(len(trs), func(i int) float64 { return b2f(trs[i].Success(T)) })
}

// AT returns the average turns to success with failures counted as T
// (MASP paper, §4); NaN for no dialogues.
func AT(trs []Trace, T int) float64 {
	return meanOf(len(trs), func(i int) float64 { return float64(trs[i].Turns(T)) })
}

// RCSR returns RCSR@T, the mean of the RCSuccess indicator (MASP paper, Eq.
// 18); NaN for no dialogues.
func RCSR(trs []Trace, T int, tauQ float64) float64 {
	return meanOf(len(trs), func(i int) float64 { return b2f(trs[i].RCSuccess(T, tauQ)) })
}

// RCSRCurve returns RCSR@t for t = 1..T (index t-1).
func RCSRCurve(trs []Trace, T int, tauQ float64) []float64 {
	out := make([]float64, T)
	for t := 1; t <= T; t++ {
		out[t-1] = RCSR(trs, t, tauQ)
	}
	return out
}

// MeanQ returns the mean q over all judged turns of all dialogues; NaN
// when there is none.
func MeanQ(trs []Trace) float64 {
	s, n := 0, 0
	for _, tr := range trs {
		for _, q := range tr.Q {
			s += q
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(s) / float64(n)
}

// checkAligned returns the number of cases of byUser, an error when users
// have different numbers of dialogues or none.
func checkAligned(byUser [][]Trace) (int, error) {
	if len(byUser) == 0 {
		return 0, fmt.Errorf("masp: no users")
	}
	n := len(byUser[0])
	for u, trs := range byUser {
		if len(trs) != n {
			return 0, fmt.Errorf("masp: user %d has %d dialogues, user 0 has %d (worst-case metrics need the same cases for every user)", u, len(trs), n)
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("masp: no dialogues")
	}
	return n, nil
}

// WorstSR returns min over users of SR@T and the index of that user
// (MASP paper, §4; ties: the first). byUser[u][i] is case i against user u.
func WorstSR(byUser [][]Trace, T int) (float64, int) {
	return worst(byUser, func(trs []Trace) float64 { return SR(trs, T) })
}

// WorstRCSR returns min over users of RCSR@T and that user's index.
func WorstRCSR(byUser [][]Trace, T int, tauQ float64) (float64, int) {
	return worst(byUser, func(trs []Trace) float64 { return RCSR(trs, T, tauQ) })
}

func worst(byUser [][]Trace, f func([]Trace) float64) (float64, int) {
	best, at := math.Inf(1), -1
	for u, trs := range byUser {
		if v := f(trs); v < best {
			best, at = v, u
		}
	}
	return best, at
}

// Metric names a per-dialogue indicator the summaries bootstrap.
type Metric int

// The metrics.
const (
	MetricSR Metric = iota
	MetricAT
	MetricRCSR
)

// String returns "SR", "AT" or "RCSR".
func (m Metric) String() string { return [...]string{"SR", "AT", "RCSR"}[m] }

// value returns the metric's per-dialogue value.
func (m Metric) value(tr Trace, T int, tauQ float64) float64 {
	switch m {
	case MetricAT:
		return float64(tr.Turns(T))
	case MetricRCSR:
		return b2f(tr.RCSuccess(T, tauQ))
	}
	return b2f(tr.Success(T))
}

// CI returns the bootstrap interval (stats.Bootstrap with o: percentile,
// 10,000 resamples and level 0.95 by default) of metric m's mean over trs.
func CI(trs []Trace, m Metric, T int, tauQ float64, o stats.BootstrapOptions) (stats.CI, error) {
	v := make([]float64, len(trs))
	for i, tr := range trs {
		v[i] = m.value(tr, T, tauQ)
	}
	return stats.Bootstrap(len(v), func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += v[i]
		}
		return s / float64(len(idx))
	}, o)
}

// WorstCI returns the bootstrap interval of min over users of metric m's
// mean (WorstSR for MetricSR, WorstRCSR for MetricRCSR). Cases are
// resampled together across users (paired: user u's dialogue i is case i
// for every u), so each replicate is the worst user on one resample of
// cases. Errors: users with different numbers of dialogues, none, and
// those of stats.Bootstrap.
func WorstCI(byUser [][]Trace, m Metric, T int, tauQ float64, o stats.BootstrapOptions) (stats.CI, error) {
	n, err := checkAligned(byUser)
	if err != nil {
		return stats.CI{}, err
	}
	v := make([][]float64, len(byUser))
	for u, trs := range byUser {
		v[u] = make([]float64, n)
		for i, tr := range trs {
			v[u][i] = m.value(tr, T, tauQ)
		}
	}
	return stats.Bootstrap(n, func(idx []int) float64 {
		lo := math.Inf(1)
		for u := range v {
			s := 0.0
			for _, i := range idx {
				s += v[u][i]
			}
			lo = math.Min(lo, s/float64(len(idx)))
		}
		return lo
	}, o)
}

// PairedDiffCI returns the paired bootstrap interval of mean(m(a_i) -
// m(b_i)) over cases i (stats.PairedDiffCI; the MASP paper's Appendix A.4 reports
// these with 10,000 resamples). a and b must be the same cases in the same
// order.
func PairedDiffCI(a, b []Trace, m Metric, T int, tauQ float64, o stats.BootstrapOptions) (stats.CI, error) {
	if len(a) != len(b) {
		return stats.CI{}, fmt.Errorf("masp: PairedDiffCI: %d and %d dialogues", len(a), len(b))
	}
	va, vb := make([]float64, len(a)), make([]float64, len(b))
	for i := range a {
		va[i], vb[i] = m.value(a[i], T, tauQ), m.value(b[i], T, tauQ)
	}
	return stats.PairedDiffCI(va, vb, o)
}
