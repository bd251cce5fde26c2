package grpo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// DenseMode selects how DenseAdvantages turns a group's dense rewards
// r_{i,t} = B_t - B_{t-1} into per-turn advantages. docs/grpo.md compares
// the modes.
type DenseMode string

const (
	// DenseScaled (the default) scales the group's dense rewards by their
	// pooled std without subtracting their mean, r~ = r/(std_G(r) + ε),
	// and gives turn t the sum of r~ over turns >= t. Because r is a
	// difference of beliefs the sum telescopes (when every probe is
	// readable throughout; a turn whose r_t used fewer probes,
	// episode.Turn.DenseProbes, breaks the chain there):
	//
	//	A_dense_{i,t} = (B_{T,i} - B_{t-1,i}) / (s + ε)
	//
	// the belief gained from turn t to the end. The -B_{t-1} part depends
	// only on the history before turn t, so it is a baseline (Williams
	// 1992) and adds no bias whatever the episode's length.
	//
	// Choice: the Probe-RPO paper's Eq. 3 does not say how the dense term
	// is normalised; this is the unbiased reading (see DensePooled).
	DenseScaled DenseMode = "scaled"
	// DensePooled is DeepSeekMath §4.1.3's process-supervision form:
	// r~ = (r - m)/(s + ε) with the pooled mean m and std s, then the sum
	// over turns >= t. For difference rewards it equals DenseScaled plus
	// DenseLengthOnly, i.e. a cost of m/(s + ε) for every remaining turn:
	// length-biased. Kept as a documented, non-default option (and to
	// reproduce runs made before the default changed).
	DensePooled DenseMode = "pooled"
	// DenseTurn gives each turn its own scaled reward only,
	// A_dense_{i,t} = r_{i,t}/(s + ε), no reward-to-go.
	DenseTurn DenseMode = "turn"
	// DenseRTGPerTurn takes the raw reward-to-go R_{i,t} = Σ_{t'>=t}
	// r_{i,t'} and normalises it, per turn t, across the group's rollouts
	// still alive at t (those with more than t turns): (R_{i,t} -
	// mean)/(std + ε).
	DenseRTGPerTurn DenseMode = "rtg-per-turn"
	// DenseLengthOnly is a control, not a method: -m·n_{i,t}/(s + ε),
	// where n_{i,t} counts the rollout's non-missing dense rewards at
	// turns >= t. It is the length term DensePooled adds to DenseScaled;
	// training on it alone tests whether a λ > 0 effect is credit
	// assignment or a preference for short (m > 0) or long episodes.
	DenseLengthOnly DenseMode = "length-only"
)

// DenseModes lists every DenseMode in documentation order.
var DenseModes = []DenseMode{DenseScaled, DensePooled, DenseTurn, DenseRTGPerTurn, DenseLengthOnly}

// ParseDenseMode returns the DenseMode named s. Errors: ErrConfig
// (wrapped) naming the known modes for any other s.
func ParseDenseMode(s string) (DenseMode, error) {
	m := DenseMode(s)
	if !slices.Contains(DenseModes, m) {
		return "", fmt.Errorf("%w: dense mode %q, want one of %v", ErrConfig, s, DenseModes)
	}
	return m, nil
}

// String returns the mode's name ("" for the zero value, which configs
// read as DenseScaled). With Set and Type it makes *DenseMode a command-line
// flag value (flag.Value, pflag.Value).
func (m *DenseMode) String() string {
	if m == nil {
		return ""
	}
	return string(*m)
}

// Set parses s with ParseDenseMode; an unknown mode is an error naming the
// known ones and leaves m unchanged.
func (m *DenseMode) Set(s string) error {
	v, err := ParseDenseMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Type names the flag value's kind in help text.
func (*DenseMode) Type() string { return "mode" }

// DenseAdvantages returns the process-supervised dense advantage of every
// persuader turn of one group (Probe-RPO paper Eq. 3, dense term),
// computed as cfg.DenseMode says (DenseScaled by default; see DenseMode).
// dense[i][t] is r_t = B_t - B_{t-1} of rollout i's persuader turn t+1
// (0-based index t), NaN when the probe read-out is missing. The result
// has dense's shape (rows of different lengths are fine).
//
// Choice: a missing r_t is left out of the group statistics and adds 0 to
// the sums; the turn still gets the sum of its later turns. All-equal
// dense rewards (within TieTolerance), or non-missing rewards from fewer
// than two rollouts, give exact zeros in every mode: a group-relative
// term needs at least two rollouts to compare.
//
// Errors: ErrReward (wrapped) for an infinite r_t; ErrConfig for a bad
// cfg.Eps, cfg.StdDDOF or cfg.DenseMode.
func DenseAdvantages(dense [][]float64, cfg Config) ([][]float64, error) {
	if err := cfg.checkNorm(); err != nil {
		return nil, err
	}
	var vals []float64
	rollouts := 0
	for i, row := range dense {
		has := false
		for t, r := range row {
			if math.IsInf(r, 0) {
				return nil, fmt.Errorf("%w: dense reward of rollout %d turn %d is %v", ErrReward, i, t+1, r)
			}
			if !math.IsNaN(r) {
				vals = append(vals, r)
				has = true
			}
		}
		if has {
			rollouts++
		}
	}
	adv := make([][]float64, len(dense))
	for i, row := range dense {
		adv[i] = make([]float64, len(row))
	}
	mean, std, tied := moments(vals, cfg.StdDDOF)
	if rollouts < 2 || tied {
		return adv, nil
	}
	s := std + cfg.Eps
	switch cfg.DenseMode {
	case DenseScaled, DenseTurn:
		for i, row := range dense {
			for t, r := range row {
				if !math.IsNaN(r) {
					adv[i][t] = r / s
				}
			}
		}
	case DensePooled:
		for i, row := range dense {
			for t, r := range row {
				if !math.IsNaN(r) {
					adv[i][t] = (r - mean) / s
				}
			}
		}
	case DenseLengthOnly:
		for i, row := range dense {
			for t, r := range row {
				if !math.IsNaN(r) {
					adv[i][t] = -mean / s
				}
			}
		}
	case DenseRTGPerTurn:
		rtgPerTurn(dense, adv, cfg)
		return adv, nil
	}
	if cfg.DenseMode != DenseTurn {
		for i := range adv {
			reverseCumsum(adv[i])
		}
	}
	return adv, nil
}

// reverseCumsum replaces x[t] by Σ_{t' >= t} x[t'] (the reward-to-go).
func reverseCumsum(x []float64) {
	acc := 0.0
	for t := len(x) - 1; t >= 0; t-- {
		acc += x[t]
		x[t] = acc
	}
}

// rtgPerTurn fills adv (dense's shape, zeroed) with DenseRTGPerTurn: the
// raw reward-to-go of each turn (missing rewards add 0), normalised per
// turn index across the rollouts that reached it.
func rtgPerTurn(dense, adv [][]float64, cfg Config) {
	rtg := make([][]float64, len(dense))
	longest := 0
	for i, row := range dense {
		rtg[i] = make([]float64, len(row))
		for t, r := range row {
			if !math.IsNaN(r) {
				rtg[i][t] = r
			}
		}
		reverseCumsum(rtg[i])
		longest = max(longest, len(row))
	}
	var alive []int
	var xs []float64
	for t := range longest {
		alive, xs = alive[:0], xs[:0]
		for i, row := range rtg {
			if t < len(row) {
				alive = append(alive, i)
				xs = append(xs, row[t])
			}
		}
		for k, z := range normalize(xs, cfg.Eps, cfg.StdDDOF) {
			adv[alive[k]][t] = z
		}
	}
}

// ShuffleDense is the belief-shuffled control of a training step (the
// λ study of docs/results.md): it returns a copy of groups (groups[g][i]
// is rollout i's dense rewards in group g) in which every rollout's dense
// rewards are replaced by those of a rollout of another group with the
// same number of turns, drawn uniformly with replacement from a PCG
// seeded with seed. The dense term then still sees realistic belief
// trajectories and the true episode lengths, but no link between a
// rollout's actions and its belief: a gain that survives this control is
// not credit assignment.
//
// Choice: when no other group has a rollout of that length, the prefix of
// a longer rollout of another group is used; when there is none either
// (the batch's single longest length lives in one group), the rollout
// keeps its own rewards. The input is not modified.
func ShuffleDense(groups [][][]float64, seed uint64) [][][]float64 {
	type ref struct{ g, i int }
	byLen := map[int][]ref{}
	longest := 0
	for g, grp := range groups {
		for i, row := range grp {
			byLen[len(row)] = append(byLen[len(row)], ref{g, i})
			longest = max(longest, len(row))
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5b0f1e))
	out := make([][][]float64, len(groups))
	var cands []ref
	for g, grp := range groups {
		out[g] = make([][]float64, len(grp))
		for i, row := range grp {
			src := row
			// Same length first, then longer lengths in increasing order.
			for l := len(row); l <= longest; l++ {
				cands = cands[:0]
				for _, r := range byLen[l] {
					if r.g != g {
						cands = append(cands, r)
					}
				}
				if len(cands) > 0 {
					r := cands[rng.IntN(len(cands))]
					src = groups[r.g][r.i][:len(row)]
					break
				}
			}
			out[g][i] = slices.Clone(src)
		}
	}
	return out
}
