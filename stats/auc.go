// Package stats holds the small statistics the project reports: ROC AUC
// (Mann-Whitney; pooled within strata), bootstrap confidence intervals (percentile, basic, BCa;
// paired differences), Wilson score intervals for proportions, Cohen's
// kappa (unweighted and weighted), and the paired tests used to compare
// two persuaders on the same scenarios: McNemar's test on a binary outcome
// and the Wilcoxon signed-rank test on a score; and an exact,
// order-independent Sum for run tables. docs/stats.md describes each.
// Everything is deterministic: resampling draws from an explicitly
// seeded PCG (math/rand/v2). Distribution functions come from the
// standard library (math.Erfc, math.Erfcinv, math.Lgamma).
package stats

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// ErrEmptyClass is returned (wrapped) by AUC and AUCCI when one of the two
// classes has no member, and by StratifiedAUC when no stratum has both, so
// the AUC is undefined.
var ErrEmptyClass = errors.New("stats: AUC needs at least one positive and one negative")

// AUC returns the area under the ROC curve of scores against labels (true =
// positive), in [0, 1]: the probability that a random positive scores
// higher than a random negative, ties counting 1/2. This is the
// Mann-Whitney U statistic divided by P*N (Hanley & McNeil 1982, Eq. 2;
// equal to sklearn's roc_auc_score):
//
//	AUC = (R_pos - P(P+1)/2) / (P N)
//
// where R_pos is the sum of the (mid-)ranks of the positives among all
// scores, P the number of positives and N of negatives. Tied scores get
// their average rank, which is what counts a tied pair as 1/2.
//
// Errors: len(scores) != len(labels); a NaN score; ErrEmptyClass when P or
// N is 0. Runs in O(n log n).
func AUC(scores []float64, labels []bool) (float64, error) {
	if len(scores) != len(labels) {
		return 0, fmt.Errorf("stats: AUC: %d scores but %d labels", len(scores), len(labels))
	}
	for i, s := range scores {
		if math.IsNaN(s) {
			return 0, fmt.Errorf("stats: AUC: score %d is NaN", i)
		}
	}
	return aucIdx(scores, labels, nil)
}

// aucIdx computes the AUC of the sample scores[idx[i]] (or all of scores when
// idx is nil); an index may repeat (bootstrap resamples).
func aucIdx(scores []float64, labels []bool, idx []int) (float64, error) {
	n := len(scores)
	if idx != nil {
		n = len(idx)
	}
	type pt struct {
		s   float64
		pos bool
	}
	pts := make([]pt, n)
	var np, nn float64
	for i := range pts {
		j := i
		if idx != nil {
			j = idx[i]
		}
		pts[i] = pt{scores[j], labels[j]}
		if labels[j] {
			np++
		} else {
			nn++
		}
	}
	if np == 0 || nn == 0 {
		return 0, ErrEmptyClass
	}
	sort.Slice(pts, func(a, b int) bool { return pts[a].s < pts[b].s })
	// Sum of mid-ranks (1-based) of the positives.
	var rpos float64
	for i := 0; i < len(pts); {
		j := i
		for j < len(pts) && pts[j].s == pts[i].s {
			j++
		}
		mid := float64(i+1+j) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			if pts[k].pos {
				rpos += mid
			}
		}
		i = j
	}
	return (rpos - np*(np+1)/2) / (np * nn), nil
}

// StratifiedAUC returns the AUC of scores against labels counting only the
// positive/negative pairs within one stratum (strata[i] names scores[i]'s):
// the concordant pairs of every stratum, ties 1/2, summed and divided by
// the number of within-stratum pairs, Σ_s U_s / Σ_s P_s·N_s, in [0, 1]. It
// is what discrimination is left once whatever separates the strata is
// set aside: a score that only ranks the strata scores 1/2. Pairs are
// pooled across strata as the concordance index is with strata (Harrell,
// Lee & Mark 1996; R survival's concordance(), "comparisons are only made
// within strata"); a stratum with one class adds no pair.
//
// Errors: lengths differ; a NaN score; ErrEmptyClass when no stratum has
// both a positive and a negative.
func StratifiedAUC(scores []float64, labels []bool, strata []string) (float64, error) {
	if len(scores) != len(labels) || len(scores) != len(strata) {
		return 0, fmt.Errorf("stats: StratifiedAUC: %d scores, %d labels, %d strata", len(scores), len(labels), len(strata))
	}
	for i, s := range scores {
		if math.IsNaN(s) {
			return 0, fmt.Errorf("stats: StratifiedAUC: score %d is NaN", i)
		}
	}
	members := map[string][]int{}
	var names []string
	for i, s := range strata {
		if _, ok := members[s]; !ok {
			names = append(names, s)
		}
		members[s] = append(members[s], i)
	}
	var u, pairs float64
	for _, s := range names { // first-seen order: the sum does not depend on map order
		idx := members[s]
		var pos int
		for _, i := range idx {
			if labels[i] {
				pos++
			}
		}
		n := float64(pos) * float64(len(idx)-pos)
		if n == 0 {
			continue
		}
		a, err := aucIdx(scores, labels, idx)
		if err != nil {
			return 0, err
		}
		u += a * n
		pairs += n
	}
	if pairs == 0 {
		return 0, fmt.Errorf("stats: StratifiedAUC: no stratum has both classes: %w", ErrEmptyClass)
	}
	return u / pairs, nil
}
