package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/stats"
)

// MASPCompareOptions configures CompareMASP.
type MASPCompareOptions struct {
	// T is the turn budget of SR@T and RCSR@T; <= 0 means masp.DefaultT.
	T int
	// TauQ is tau_q of RCSR; <= 0 means masp.DefaultTauQ.
	TauQ float64
	// Episode tells how success and q are read from stored episodes
	// (masp.EpisodeDialogue: scenarios for the transcript rules, or a
	// rationality judge).
	Episode masp.EpisodeOptions
	// Seed, Resamples (0: DefaultResamples) and Level (0: 0.95) configure
	// the paired bootstrap.
	Seed      uint64
	Resamples int
	Level     float64
}

// MASPComparison is the paired comparison of two arms' MASP metrics (MASP
// paper, §4, Appendix A.4) on the pairs of a Comparison: each side's SR@T, AT
// and RCSR@T, and paired bootstrap intervals of the differences A - B.
type MASPComparison struct {
	T    int
	TauQ float64
	// N is the number of pairs (Comparison.N).
	N int
	// SRA, SRB, ATA, ATB, RCSRA, RCSRB are each side's figures over the
	// pairs: SR and RCSR in [0, 1], AT in turns (failures count T).
	SRA, SRB, ATA, ATB, RCSRA, RCSRB float64
	// DSR, DAT and DRCSR are the paired bootstrap intervals of the
	// differences A - B (masp.PairedDiffCI).
	DSR, DAT, DRCSR stats.CI
	Seed            uint64
}

// CompareMASP computes MASP's metrics for the pairs c holds (Compare's
// output on a and b: the same (scenario, rollout) keys, failed sides
// dropped) and their paired differences. Each episode is read with
// masp.EpisodeDialogue: success is a full acceptance by turn T, q comes
// from the transcript rules or o.Episode.Rationality.
//
// Errors: a pair of c missing from a or b, ctx's, the bootstrap's.
func CompareMASP(ctx context.Context, a, b []*episode.Episode, c Comparison, o MASPCompareOptions) (MASPComparison, error) {
	T, tq := o.T, o.TauQ
	if T <= 0 {
		T = masp.DefaultT
	}
	if tq <= 0 {
		tq = masp.DefaultTauQ
	}
	m := MASPComparison{T: T, TauQ: tq, N: c.N, Seed: o.Seed}
	traces := func(side string, eps []*episode.Episode) ([]masp.Trace, error) {
		byKey := map[PairKey]*episode.Episode{}
		for _, ep := range eps {
			byKey[PairKey{ep.ScenarioID, ep.Rollout}] = ep
		}
		out := make([]masp.Trace, len(c.Pairs))
		for i, p := range c.Pairs {
			ep := byKey[PairKey{p.ScenarioID, p.Rollout}]
			if ep == nil {
				return nil, fmt.Errorf("compare: side %s lacks scenario %s rollout %d", side, p.ScenarioID, p.Rollout)
			}
			d, err := masp.EpisodeDialogue(ctx, ep, o.Episode)
			if err != nil {
				return nil, err
			}
			out[i] = d.Trace()
		}
		return out, nil
	}
	ta, err := traces("A", a)
	if err != nil {
		return m, err
	}
	tb, err := traces("B", b)
	if err != nil {
		return m, err
	}
	m.SRA, m.SRB = masp.SR(ta, T), masp.SR(tb, T)
	m.ATA, m.ATB = masp.AT(ta, T), masp.AT(tb, T)
	m.RCSRA, m.RCSRB = masp.RCSR(ta, T, tq), masp.RCSR(tb, T, tq)
	bo := stats.BootstrapOptions{Resamples: o.Resamples, Level: o.Level, Seed: o.Seed}
	if bo.Resamples == 0 {
		bo.Resamples = DefaultResamples
	}
	if m.DSR, err = masp.PairedDiffCI(ta, tb, masp.MetricSR, T, tq, bo); err != nil {
		return m, fmt.Errorf("compare: ΔSR interval: %w", err)
	}
	if m.DAT, err = masp.PairedDiffCI(ta, tb, masp.MetricAT, T, tq, bo); err != nil {
		return m, fmt.Errorf("compare: ΔAT interval: %w", err)
	}
	if m.DRCSR, err = masp.PairedDiffCI(ta, tb, masp.MetricRCSR, T, tq, bo); err != nil {
		return m, fmt.Errorf("compare: ΔRCSR interval: %w", err)
	}
	return m, nil
}

// Table renders the MASP comparison as a "measure / value" table.
func (m MASPComparison) Table() Table {
	level := strconv.FormatFloat(100*m.DSR.Level, 'g', -1, 64) + "%"
	t := strconv.Itoa(m.T)
	f3 := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	diff := func(ci stats.CI, prec int) string {
		return fmt.Sprintf("%s, %s CI %s", num(ci.Estimate, prec, true), level, ciText(ci, prec))
	}
	return Table{Title: "MASP metrics, A − B (MASP paper)", Header: []string{"measure", "value"},
		Rows: [][]string{
			{"SR@" + t + " A / B", f3(m.SRA) + " / " + f3(m.SRB)},
			{"ΔSR@" + t, diff(m.DSR, 3)},
			{"AT A / B", num(m.ATA, 2, false) + " / " + num(m.ATB, 2, false)},
			{"ΔAT", diff(m.DAT, 2)},
			{"RCSR@" + t + " A / B", f3(m.RCSRA) + " / " + f3(m.RCSRB)},
			{"ΔRCSR@" + t, diff(m.DRCSR, 3)},
		},
		Notes: []string{fmt.Sprintf("on the %d pairs above; success = full acceptance by turn %s; RCSR needs mean q >= %.2f up to the success turn; paired %s bootstrap, %d resamples, seed %d",
			m.N, t, m.TauQ, m.DSR.Method, m.DSR.Resamples, m.Seed)},
	}
}

// MarshalJSON encodes m with snake_case keys and NaN as null.
func (m MASPComparison) MarshalJSON() ([]byte, error) {
	ci := func(x stats.CI) map[string]any {
		return map[string]any{"estimate": nan(x.Estimate), "lo": nan(x.Lo), "hi": nan(x.Hi), "method": x.Method, "level": x.Level, "resamples": x.Resamples}
	}
	return json.Marshal(map[string]any{"t": m.T, "tau_q": m.TauQ, "pairs": m.N,
		"sr_a": nan(m.SRA), "sr_b": nan(m.SRB), "at_a": nan(m.ATA), "at_b": nan(m.ATB), "rcsr_a": nan(m.RCSRA), "rcsr_b": nan(m.RCSRB),
		"delta_sr": ci(m.DSR), "delta_at": ci(m.DAT), "delta_rcsr": ci(m.DRCSR), "seed": m.Seed})
}
