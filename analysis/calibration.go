package analysis

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/tagger"
)

// ReliabilityBin is one bin of a reliability diagram.
type ReliabilityBin struct {
	// Lo and Hi bound the bin's beliefs: [Lo, Hi), the last bin [Lo, 1].
	Lo, Hi float64
	// N counts the asks whose prior belief falls in the bin.
	N int
	// MeanBelief is the mean prior belief B_{t-1} of those asks, in [0, 1];
	// NaN when N is 0.
	MeanBelief float64
	// AcceptRate is the share of those asks answered with a full accept, in
	// [0, 1]; NaN when N is 0.
	AcceptRate float64
}

// AskReliability is the reliability diagram of the belief just before a
// commitment ask against that ask's answer: does B_{t-1}, read before a
// turn whose persuader acts include a commitment ask, predict P(accept |
// ask)? A faithful belief is calibrated: among asks made at B ≈ 0.7, about
// 70 % are accepted (simulator v2; the belief of the Probe-RPO paper,
// §3.2).
type AskReliability struct {
	// Bins are equal-width bins of B_{t-1} over [0, 1], lowest first.
	Bins []ReliabilityBin
	// N counts the asks scored (with a readable prior belief).
	N int
	// Unread counts asks left out because B_{t-1} was missing.
	Unread int
	// Failed counts failed episodes left out (decision.TermFailed).
	Failed int
	// ECE is the expected calibration error sum_b (N_b / N) |MeanBelief_b -
	// AcceptRate_b| in [0, 1] (Naeini et al. 2015; Guo et al. 2017); NaN
	// when N is 0.
	ECE float64
	// Brier is the mean squared error (B_{t-1} - [accept])^2 over the asks,
	// in [0, 1]; NaN when N is 0.
	Brier float64
}

// askAct is the tagger's name of a commitment ask, as episode.Turn.Acts
// records it.
var askAct = tagger.Commitment.String()

// AskReliabilityOf bins the prior belief of every commitment ask in eps.
// An ask is a turn t whose Acts include "commitment"; its prior belief is
// B_{t-1} (B_0 for t = 1) and its outcome is whether turn t's decision is
// decision.Accept (a conditional yes counts as not accepted). bins is the
// number of equal-width bins over [0, 1]; it returns an error when bins < 1.
//
// Choice: equal-width bins (not equal-mass), so diagrams of different
// persuaders share their bin edges; empty bins carry NaN and weigh nothing
// in the ECE.
func AskReliabilityOf(eps []*episode.Episode, bins int) (AskReliability, error) {
	if bins < 1 {
		return AskReliability{}, errors.New("analysis: reliability needs at least one bin")
	}
	kept, failed := Scored(eps)
	r := AskReliability{Bins: make([]ReliabilityBin, bins), Failed: failed}
	sumB := make([]float64, bins)
	acc := make([]int, bins)
	brier := 0.0
	for _, ep := range kept {
		prev := ep.B0
		for _, t := range ep.Turns {
			if slices.Contains(t.Acts, askAct) {
				if prev == nil {
					r.Unread++
				} else {
					b := math.Min(math.Max(*prev, 0), 1)
					k := min(int(b*float64(bins)), bins-1)
					y := 0.0
					if t.Decision == decision.Accept {
						y = 1
						acc[k]++
					}
					r.Bins[k].N++
					sumB[k] += b
					brier += (b - y) * (b - y)
					r.N++
				}
			}
			prev = t.Belief
		}
	}
	r.ECE, r.Brier = math.NaN(), math.NaN()
	if r.N > 0 {
		r.ECE, r.Brier = 0, brier/float64(r.N)
	}
	for k := range r.Bins {
		bn := &r.Bins[k]
		bn.Lo, bn.Hi = float64(k)/float64(bins), float64(k+1)/float64(bins)
		bn.MeanBelief, bn.AcceptRate = math.NaN(), math.NaN()
		if bn.N > 0 {
			bn.MeanBelief = sumB[k] / float64(bn.N)
			bn.AcceptRate = float64(acc[k]) / float64(bn.N)
			r.ECE += float64(bn.N) / float64(r.N) * math.Abs(bn.MeanBelief-bn.AcceptRate)
		}
	}
	return r, nil
}

// Table renders the reliability diagram with the ECE and Brier score.
func (r AskReliability) Table() Table {
	t := Table{Title: "Belief before a commitment ask vs the ask's answer (reliability diagram)",
		Header: []string{"B_{t-1}", "asks", "mean B", "accept%", "gap"},
		Notes: []string{fmt.Sprintf("asks %d, ECE %s, Brier %s; accept%%: share of asks answered with a full accept",
			r.N, num(r.ECE, 3, false), num(r.Brier, 3, false))}}
	for _, b := range r.Bins {
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%.2f-%.2f", b.Lo, b.Hi), strconv.Itoa(b.N),
			num(b.MeanBelief, 3, false), pct(b.AcceptRate), num(b.AcceptRate-b.MeanBelief, 3, true)})
	}
	if r.Unread > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d asks without a readable prior belief left out", r.Unread))
	}
	t.Notes = append(t.Notes, failedNote(r.Failed)...)
	return t
}
