package bayespersuasion

import (
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/stats"
)

// EvalConfig configures Eval.
type EvalConfig struct {
	Claims   []*Claim
	Senders  []SenderRole
	Receiver ReceiverRole
	// Settings defaults to Static and Dynamic.
	Settings []Setting
	// Rollouts per claim, sender and setting; 0 means 20.
	Rollouts int
	Seed     uint64
}

// Summary is one row of the eval table: a sender in a setting.
type Summary struct {
	Sender   string  `json:"sender"`
	Setting  Setting `json:"setting"`
	Episodes int     `json:"episodes"`
	Failed   int     `json:"failed"`
	// MeanGain is the mean of Result.Gain over scored episodes.
	MeanGain float64 `json:"mean_gain"`
	// Share is sum Gain / sum OptimalGain over scored episodes of claims
	// with a positive optimal gain (a ratio of means, so claims with a
	// small optimum do not dominate).
	Share float64 `json:"share"`
	// AcceptRate is the share of episodes ending in acceptance.
	AcceptRate float64 `json:"accept_rate"`
}

// Pair is a paired comparison of two senders in one setting over the
// same (claim, rollout) worlds.
type Pair struct {
	A       string  `json:"a"`
	B       string  `json:"b"`
	Setting Setting `json:"setting"`
	// N is the number of worlds compared; Dropped the worlds left out
	// because either side's episode failed.
	N       int `json:"n"`
	Dropped int `json:"dropped,omitempty"`
	// Diff is mean(gain A - gain B) with a paired bootstrap 95% interval.
	Diff stats.CI `json:"diff"`
	// WilcoxonP is the two-sided signed-rank p-value of the gain
	// differences (NaN when every difference is 0).
	WilcoxonP float64 `json:"wilcoxon_p"`
	// McNemarP is the exact McNemar p-value on acceptance (AOnly: A
	// accepted and B did not; BOnly the reverse).
	McNemarP     float64 `json:"mcnemar_p"`
	AOnly, BOnly int     `json:"-"`
}

// Report is Eval's result.
type Report struct {
	Receiver string    `json:"receiver"`
	Claims   int       `json:"claims"`
	Rollouts int       `json:"rollouts"`
	Results  []Result  `json:"-"`
	Rows     []Summary `json:"rows"`
	Pairs    []Pair    `json:"pairs"`
	// References are the exact benchmarks averaged over the claims, as
	// gains over the prior: optimal, full disclosure of the state, no
	// disclosure (0), the pool disclosed whole and the pool's best subset.
	Optimal, Full, None, PoolAll, PoolBest float64
}

// Eval plays every claim × sender × setting × rollout against the
// receiver (Play, same worlds for every sender) and summarises. Episodes
// run in order, one at a time. Errors: a claim whose Optimum fails, a
// cancelled ctx, a receiver Readout error.
func Eval(ctx context.Context, cfg EvalConfig) (*Report, error) {
	if cfg.Rollouts <= 0 {
		cfg.Rollouts = 20
	}
	if len(cfg.Settings) == 0 {
		cfg.Settings = []Setting{Static, Dynamic}
	}
	rep := &Report{Receiver: cfg.Receiver.Name(), Claims: len(cfg.Claims), Rollouts: cfg.Rollouts}
	bench := make([]Benchmarks, len(cfg.Claims))
	for i, c := range cfg.Claims {
		b, err := Optimum(c)
		if err != nil {
			return nil, err
		}
		bench[i] = b
		n := float64(len(cfg.Claims))
		rep.Optimal += b.OptimalGain() / n
		rep.Full += (b.Full - b.Prior) / n
		rep.PoolAll += (b.PoolAll - b.Prior) / n
		rep.PoolBest += (b.PoolBest - b.Prior) / n
	}
	// gains[setting][sender] lists per-world gains in a fixed order.
	type key struct {
		st Setting
		s  int
	}
	gains := map[key][]float64{}
	acc := map[key][]bool{}
	failed := map[key][]bool{}
	for _, st := range cfg.Settings {
		for si, snd := range cfg.Senders {
			row := Summary{Sender: snd.Name(), Setting: st}
			var gsum, osum float64
			for ci, c := range cfg.Claims {
				for k := range cfg.Rollouts {
					r, err := Play(ctx, c, bench[ci], snd, cfg.Receiver, st, EpisodeSeed(cfg.Seed, c, k))
					if err != nil {
						return nil, err
					}
					r.Rollout = k
					rep.Results = append(rep.Results, r)
					row.Episodes++
					kk := key{st, si}
					gains[kk] = append(gains[kk], tieGain(r.Gain))
					acc[kk] = append(acc[kk], r.Terminal == decision.TermAccept)
					failed[kk] = append(failed[kk], r.Error != "")
					if r.Error != "" {
						row.Failed++
						continue
					}
					row.MeanGain += r.Gain
					if r.Terminal == decision.TermAccept {
						row.AcceptRate++
					}
					if r.OptimalGain >= 1e-9 {
						gsum += r.Gain
						osum += r.OptimalGain
					}
				}
			}
			if n := row.Episodes - row.Failed; n > 0 {
				row.MeanGain /= float64(n)
				row.AcceptRate /= float64(n)
			}
			row.Share = math.NaN()
			if osum > 0 {
				row.Share = gsum / osum
			}
			rep.Rows = append(rep.Rows, row)
		}
		for a := range cfg.Senders {
			for b := a + 1; b < len(cfg.Senders); b++ {
				// Choice: a world where either sender's episode failed is
				// left out of the pair (Pair.Dropped counts them), so both
				// sides are compared on the same scored worlds, as the
				// per-sender rows leave failures out of their means.
				ka, kb := key{st, a}, key{st, b}
				var ga, gb []float64
				var aa, ab []bool
				p := Pair{A: cfg.Senders[a].Name(), B: cfg.Senders[b].Name(), Setting: st, WilcoxonP: math.NaN()}
				for i := range gains[ka] {
					if failed[ka][i] || failed[kb][i] {
						p.Dropped++
						continue
					}
					ga, gb = append(ga, gains[ka][i]), append(gb, gains[kb][i])
					aa, ab = append(aa, acc[ka][i]), append(ab, acc[kb][i])
				}
				p.N = len(ga)
				if p.N == 0 {
					p.Diff = stats.CI{Estimate: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
					p.McNemarP = math.NaN()
					rep.Pairs = append(rep.Pairs, p)
					continue
				}
				ci, err := stats.PairedDiffCI(ga, gb, stats.BootstrapOptions{Resamples: 2000, Seed: cfg.Seed})
				if err != nil {
					return nil, fmt.Errorf("bayes: paired bootstrap %s vs %s: %w", p.A, p.B, err)
				}
				p.Diff = ci
				if w, err := stats.WilcoxonPaired(ga, gb, stats.WilcoxonOptions{}); err == nil {
					p.WilcoxonP = w.P
				}
				for i, x := range aa {
					y := ab[i]
					if x && !y {
						p.AOnly++
					} else if y && !x {
						p.BOnly++
					}
				}
				p.McNemarP = stats.McNemarExact(p.AOnly, p.BOnly)
				rep.Pairs = append(rep.Pairs, p)
			}
		}
	}
	return rep, nil
}

// Write prints the report as two aligned tables: per sender and setting,
// then the paired tests.
func (r *Report) Write(w io.Writer) error {
	fmt.Fprintf(w, "Bayesian persuasion against receiver %s: %d claims × %d rollouts\n", r.Receiver, r.Claims, r.Rollouts)
	fmt.Fprintf(w, "reference gains (exact, mean over claims): optimal %.3f  full disclosure %.3f  no disclosure %.3f  pool all %.3f  pool best %.3f\n\n",
		r.Optimal, r.Full, r.None, r.PoolAll, r.PoolBest)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "sender\tsetting\tepisodes\tfailed\tmean gain\tshare of optimum\taccept")
	for _, s := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.3f\t%.3f\t%.3f\n", s.Sender, s.Setting, s.Episodes, s.Failed, s.MeanGain, s.Share, s.AcceptRate)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Pairs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\npaired tests (same worlds): gain difference A - B")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "A\tB\tsetting\tn\tmean diff\t95% CI\tWilcoxon p\tMcNemar p (accept)")
	dropped := 0
	for _, p := range r.Pairs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%+.3f\t[%+.3f, %+.3f]\t%s\t%s\n", p.A, p.B, p.Setting, p.N, p.Diff.Estimate, p.Diff.Lo, p.Diff.Hi, fmtP(p.WilcoxonP), fmtP(p.McNemarP))
		dropped += p.Dropped
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if dropped > 0 {
		_, err := fmt.Fprintf(w, "(%d paired worlds left out: either side's episode failed)\n", dropped)
		return err
	}
	return nil
}

func fmtP(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%.3g", p)
}

// BuiltinSenders returns the built-in senders for claims, in table order:
// none, full, greedy and optimal (whose signals come from Optimum).
// Errors: Optimum's.
func BuiltinSenders(claims []*Claim) ([]SenderRole, error) {
	bench := make(map[string]Benchmarks, len(claims))
	for _, c := range claims {
		b, err := Optimum(c)
		if err != nil {
			return nil, err
		}
		bench[c.ID] = b
	}
	return []SenderRole{StrategySender(NoDisclosure), StrategySender(FullDisclosure), StrategySender(Greedy), StrategySender(OptimalSignal(bench))}, nil
}

// tieGain rounds a gain to 1e-9 for the paired tests.
//
// Choice: two senders that disclose the same items in another order reach
// the same posterior up to floating-point rounding (about 1e-16); without
// rounding, the signed-rank test would rank those rounding errors and call
// identical play significantly different. Gains are in the units of the
// sender's values (at most a few units), so 1e-9 loses nothing real.
func tieGain(g float64) float64 { return math.Round(g*1e9) / 1e9 }
