package report

import (
	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
)

// Advantages computes the Probe-RPO paper's Figure 7(c) data: for each
// arm and step, the mean |A_out_i| and mean |λ·A_dense_{i,t}| over every
// turn of the rollouts of its GRPO groups, with grpo.Analyze (Probe-RPO
// paper, Eq. 3) and λ = cfg.Lambda. Groups are grpo.Key's, as
// analysis.DeadGroups forms them (one scenario of one arm at one step,
// failed rollouts dropped, groups of fewer than 2 scored rollouts left
// out); o.Step and o.Outcome mean what they mean there. A missing dense reward is NaN, which grpo leaves out of
// the group statistics.
//
// Choice: the means pool turns, not groups, so a long group weighs more,
// as it does in the policy-gradient loss.
//
// Errors: those of grpo.Analyze (a bad cfg).
func Advantages(eps []*episode.Episode, o analysis.GroupOptions, cfg grpo.Config) (AdvantageTerms, error) {
	eps, _ = analysis.Scored(eps)
	step := o.Step
	if step == nil {
		step = func(*episode.Episode) int { return 0 }
	}
	var groups grpo.Groups[*episode.Episode]
	for _, ep := range eps {
		groups.Add(grpo.KeyOf(ep, step(ep)), ep)
	}
	acc := newAdvantageAcc(o, cfg)
	for _, k := range groups.Keys() {
		acc.add(analysis.Arm{Persuader: k.Persuader, Persuadee: k.Persuadee}, k.Step, groups.Members(k))
	}
	if acc.err != nil {
		return AdvantageTerms{}, acc.err
	}
	arms, labels := analysis.Arms(eps)
	return acc.terms(arms, labels), nil
}
