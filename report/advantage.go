package report

import (
	"math"
	"slices"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/reward"
)

// Advantages computes seed 000 Figure 7(c)'s data: for each arm and step,
// the mean |A_out_i| and mean |λ·A_dense_{i,t}| over every turn of the
// rollouts of its GRPO groups, with grpo.Analyze (SPEC §2, seed 000 Eq. 3)
// and λ = cfg.Lambda. Groups are formed as analysis.DeadGroups forms them
// (one scenario of one arm at one step, failed rollouts dropped, groups of
// fewer than 2 scored rollouts left out); o.Step and o.Outcome mean what
// they mean there. A missing dense reward is NaN, which grpo leaves out of
// the group statistics.
//
// Choice: the means pool turns, not groups, so a long group weighs more,
// as it does in the policy-gradient loss.
//
// Errors: those of grpo.Analyze (a bad cfg).
func Advantages(eps []*episode.Episode, o analysis.GroupOptions, cfg grpo.Config) (AdvantageTerms, error) {
	eps, _ = analysis.Scored(eps)
	out := AdvantageTerms{Lambda: cfg.Lambda}
	step := o.Step
	if step == nil {
		step = func(*episode.Episode) int { return 0 }
	}
	outcome := o.Outcome
	if outcome == nil {
		outcome = func(ep *episode.Episode) float64 { return ep.OutcomeReward(reward.DefaultStrategyWeight) }
	}
	type key struct {
		arm      analysis.Arm
		step     int
		scenario string
	}
	groups := map[key][]*episode.Episode{}
	var order []key
	for _, ep := range eps {
		k := key{analysis.ArmOf(ep), step(ep), ep.ScenarioID}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], ep)
	}
	arms, labels := analysis.Arms(eps)
	for i, a := range arms {
		var steps []int
		for _, k := range order {
			if k.arm == a && !slices.Contains(steps, k.step) {
				steps = append(steps, k.step)
			}
		}
		slices.Sort(steps)
		all := AdvantagePoint{Arm: a, Label: labels[i], Step: -1}
		var allOut, allDense float64
		for _, s := range steps {
			p := AdvantagePoint{Arm: a, Label: labels[i], Step: s}
			var sumOut, sumDense float64
			for _, k := range order {
				g := groups[k]
				if k.arm != a || k.step != s || len(g) < 2 {
					continue
				}
				rOut := make([]float64, len(g))
				dense := make([][]float64, len(g))
				turns := 0
				for j, ep := range g {
					rOut[j] = outcome(ep)
					dense[j] = make([]float64, len(ep.Turns))
					for t, tu := range ep.Turns {
						dense[j][t] = math.NaN()
						if tu.Dense != nil {
							dense[j][t] = *tu.Dense
						}
					}
					turns += len(ep.Turns)
				}
				_, st, err := grpo.Analyze(rOut, dense, cfg)
				if err != nil {
					return AdvantageTerms{}, err
				}
				p.Groups++
				p.Turns += turns
				sumOut += st.MeanAbsOut * float64(turns)
				sumDense += st.MeanAbsDense * float64(turns)
			}
			all.Groups += p.Groups
			all.Turns += p.Turns
			allOut += sumOut
			allDense += sumDense
			p.MeanAbsOut, p.MeanAbsDense = ratio(sumOut, p.Turns), ratio(sumDense, p.Turns)
			if p.Groups > 0 {
				out.Points = append(out.Points, p)
			}
		}
		all.MeanAbsOut, all.MeanAbsDense = ratio(allOut, all.Turns), ratio(allDense, all.Turns)
		if all.Groups > 0 {
			out.Overall = append(out.Overall, all)
		}
	}
	return out, nil
}

func ratio(sum float64, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
