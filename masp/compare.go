package masp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/tablefmt"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
	"github.com/persuarena/persuarena/store"
)

// CompareOptions configures Compare.
type CompareOptions struct {
	// T is the turn budget of SR@T and RCSR@T; <= 0 means DefaultT.
	T int
	// TauQ is tau_q of RCSR; <= 0 means DefaultTauQ.
	TauQ float64
	// Episode tells how success and q are read from stored episodes
	// (EpisodeDialogue: scenarios for the transcript rules, or a
	// rationality judge).
	Episode EpisodeOptions
	// Seed, Resamples (0: DefaultResamples) and Level (0: 0.95) configure
	// the paired bootstrap.
	Seed      uint64
	Resamples int
	Level     float64
}

// Comparison is the paired comparison of two arms' MASP metrics (MASP
// paper, §4, Appendix A.4) on the pairs of an analysis.Comparison: each
// side's SR@T, AT and RCSR@T, and paired bootstrap intervals of the
// differences A - B.
type Comparison struct {
	T    int
	TauQ float64
	// N is the number of pairs (analysis.Comparison.N).
	N int
	// SRA, SRB, ATA, ATB, RCSRA, RCSRB are each side's figures over the
	// pairs: SR and RCSR in [0, 1], AT in turns (failures count T).
	SRA, SRB, ATA, ATB, RCSRA, RCSRB float64
	// DSR, DAT and DRCSR are the paired bootstrap intervals of the
	// differences A - B (PairedDiffCI).
	DSR, DAT, DRCSR stats.CI
	Seed            uint64
}

// Compare computes MASP's metrics for the pairs c holds
// (analysis.CompareOutcomes' output on a and b: the same (scenario, rollout) keys, failed sides
// dropped) and their paired differences. Each episode is read with
// EpisodeDialogue: success is a full acceptance by turn T, q comes
// from the transcript rules or o.Episode.Rationality.
//
// Errors: a pair of c missing from a or b, ctx's, the bootstrap's.
func Compare(ctx context.Context, a, b []*episode.Episode, c analysis.Comparison, o CompareOptions) (Comparison, error) {
	T, tq := o.T, o.TauQ
	if T <= 0 {
		T = DefaultT
	}
	if tq <= 0 {
		tq = DefaultTauQ
	}
	m := Comparison{T: T, TauQ: tq, N: c.N, Seed: o.Seed}
	traces := func(side string, eps []*episode.Episode) ([]Trace, error) {
		byKey := map[analysis.PairKey]*episode.Episode{}
		for _, ep := range eps {
			byKey[analysis.PairKey{ScenarioID: ep.ScenarioID, Rollout: ep.Rollout}] = ep
		}
		out := make([]Trace, len(c.Pairs))
		for i, p := range c.Pairs {
			ep := byKey[analysis.PairKey{ScenarioID: p.ScenarioID, Rollout: p.Rollout}]
			if ep == nil {
				return nil, fmt.Errorf("compare: side %s lacks scenario %s rollout %d", side, p.ScenarioID, p.Rollout)
			}
			d, err := EpisodeDialogue(ctx, ep, o.Episode)
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
	m.SRA, m.SRB = SR(ta, T), SR(tb, T)
	m.ATA, m.ATB = AT(ta, T), AT(tb, T)
	m.RCSRA, m.RCSRB = RCSR(ta, T, tq), RCSR(tb, T, tq)
	bo := stats.BootstrapOptions{Resamples: o.Resamples, Level: o.Level, Seed: o.Seed}
	if bo.Resamples == 0 {
		bo.Resamples = analysis.DefaultResamples
	}
	if m.DSR, err = PairedDiffCI(ta, tb, MetricSR, T, tq, bo); err != nil {
		return m, fmt.Errorf("compare: ΔSR interval: %w", err)
	}
	if m.DAT, err = PairedDiffCI(ta, tb, MetricAT, T, tq, bo); err != nil {
		return m, fmt.Errorf("compare: ΔAT interval: %w", err)
	}
	if m.DRCSR, err = PairedDiffCI(ta, tb, MetricRCSR, T, tq, bo); err != nil {
		return m, fmt.Errorf("compare: ΔRCSR interval: %w", err)
	}
	return m, nil
}

// Table renders the MASP comparison as a "measure / value" table.
func (m Comparison) Table() analysis.Table {
	level := strconv.FormatFloat(100*m.DSR.Level, 'g', -1, 64) + "%"
	t := strconv.Itoa(m.T)
	f3 := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	diff := func(ci stats.CI, prec int) string {
		return fmt.Sprintf("%s, %s CI %s", tablefmt.Num(ci.Estimate, prec, true), level, tablefmt.Interval(ci.Lo, ci.Hi, prec))
	}
	return analysis.Table{Title: "MASP metrics, A − B (MASP paper)", Header: []string{"measure", "value"},
		Rows: [][]string{
			{"SR@" + t + " A / B", f3(m.SRA) + " / " + f3(m.SRB)},
			{"ΔSR@" + t, diff(m.DSR, 3)},
			{"AT A / B", tablefmt.Num(m.ATA, 2, false) + " / " + tablefmt.Num(m.ATB, 2, false)},
			{"ΔAT", diff(m.DAT, 2)},
			{"RCSR@" + t + " A / B", f3(m.RCSRA) + " / " + f3(m.RCSRB)},
			{"ΔRCSR@" + t, diff(m.DRCSR, 3)},
		},
		Notes: []string{fmt.Sprintf("on the %d pairs above; success = full acceptance by turn %s; RCSR needs mean q >= %.2f up to the success turn; paired %s bootstrap, %d resamples, seed %d",
			m.N, t, m.TauQ, m.DSR.Method, m.DSR.Resamples, m.Seed)},
	}
}

// MarshalJSON encodes m with snake_case keys and NaN as null.
func (m Comparison) MarshalJSON() ([]byte, error) {
	ci := func(x stats.CI) map[string]any {
		return map[string]any{"estimate": tablefmt.JSONFloat(x.Estimate), "lo": tablefmt.JSONFloat(x.Lo), "hi": tablefmt.JSONFloat(x.Hi), "method": x.Method, "level": x.Level, "resamples": x.Resamples}
	}
	return json.Marshal(map[string]any{"t": m.T, "tau_q": m.TauQ, "pairs": m.N,
		"sr_a": tablefmt.JSONFloat(m.SRA), "sr_b": tablefmt.JSONFloat(m.SRB), "at_a": tablefmt.JSONFloat(m.ATA), "at_b": tablefmt.JSONFloat(m.ATB), "rcsr_a": tablefmt.JSONFloat(m.RCSRA), "rcsr_b": tablefmt.JSONFloat(m.RCSRB),
		"delta_sr": ci(m.DSR), "delta_at": ci(m.DAT), "delta_rcsr": ci(m.DRCSR), "seed": m.Seed})
}

func init() { analysis.RegisterPairMetrics("masp", storedPairs{}) }

// storedPairs is the MASP comparison of two stored arms, registered with
// package analysis as --metrics masp (analysis.CompareStored).
type storedPairs struct{}

// ComparePairs implements analysis.PairMetrics: Compare with T =
// o.MASPT (0: min(DefaultT, side A's stored Tmax)), o's seed and
// resamples, and the scenarios of both runs' stored sets for the
// transcript rules; a set that no longer resolves is skipped and a note
// on the table says the rules ran without its concerns. It returns the
// Comparison (the JSON value) and its table. Errors: Compare's.
func (storedPairs) ComparePairs(ctx context.Context, st store.Reader, refs [2]string, a, b []*episode.Episode, c analysis.Comparison, o analysis.CompareStoredOptions) (any, analysis.Table, error) {
	mo := CompareOptions{T: o.MASPT, Seed: o.Seed, Resamples: o.Resamples,
		Episode: EpisodeOptions{Scenarios: map[string]*scenario.Scenario{}}}
	var missing []string
	for i, ref := range refs {
		run, err := st.GetRun(ctx, strings.SplitN(ref, ":", 2)[0])
		if err != nil {
			continue
		}
		cfg, ok := runplan.DecodeGrid(run.Config)
		if !ok {
			continue
		}
		if i == 0 && mo.T == 0 && cfg.Tmax > 0 {
			mo.T = min(DefaultT, cfg.Tmax)
		}
		for _, s := range cfg.Scenarios {
			ss, err := runplan.ResolveSet(ctx, s)
			if err != nil {
				missing = append(missing, s)
				continue
			}
			for k := range ss {
				mo.Episode.Scenarios[ss[k].ID] = &ss[k]
			}
		}
	}
	m, err := Compare(ctx, a, b, c, mo)
	if err != nil {
		return nil, analysis.Table{}, err
	}
	t := m.Table()
	if len(missing) > 0 {
		t.Notes = append(t.Notes, "scenario sets not found ("+strings.Join(missing, ", ")+"): q rules ran without their concerns")
	}
	return m, t, nil
}
