package reporeward

import (
	"cmp"
	"math"
)

// REPO composes the heterogeneous reward as the REPO paper's secondary
// notes report it: E = clip(E_judge + E_func, -n, n) and R = R_model·(1 +
// sign(R_model)·E/n), n > 0. With E in [-n, n], R lies between 0 and
// 2·R_model: good conduct (E > 0) moves R away from 0 when R_model > 0
// and towards 0 when R_model < 0; R_model = 0 gives R = 0 whatever E.
//
// Choice: sign(0) = 0 (so R = 0 for R_model = 0).
func REPO(rModel, eJudge, eFunc, n float64) (e, r float64) {
	e = math.Max(-n, math.Min(n, eJudge+eFunc))
	return e, rModel * (1 + float64(cmp.Compare(rModel, 0))*e/n)
}

// Weighted is the documented alternative: E = clip(E_judge + E_func, -n,
// n) as in REPO, and R = wModel·R_model + wJudge·E_judge/n + wFunc·E_func/n
// (rewards good conduct even when R_model is 0).
func Weighted(rModel, eJudge, eFunc, n, wModel, wJudge, wFunc float64) (e, r float64) {
	e = math.Max(-n, math.Min(n, eJudge+eFunc))
	return e, wModel*rModel + wJudge*eJudge/n + wFunc*eFunc/n
}

// Compose is REPO or Weighted as s.Composition says, with s.N and
// s.Weights.
func (s *Spec) Compose(rModel, eJudge, eFunc float64) (e, r float64) {
	if s.Composition == ComposeWeighted {
		return Weighted(rModel, eJudge, eFunc, s.N, s.Weights.Model, s.Weights.Judge, s.Weights.Func)
	}
	return REPO(rModel, eJudge, eFunc, s.N)
}

// Unit maps a judge score v on scale [lo, hi] to 2(v-lo)/(hi-lo) - 1 in
// [-1, 1] (clamped).
func Unit(v, lo, hi float64) float64 {
	return math.Max(-1, math.Min(1, 2*(v-lo)/(hi-lo)-1))
}
