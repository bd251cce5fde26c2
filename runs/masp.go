package runs

import (
	"context"
	"fmt"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
)

// SetMASP is the MASP paper's report of one scenario set of an eval run.
type SetMASP struct {
	Set     string       `json:"set"`
	Report  *masp.Report `json:"report"`
	Dropped int          `json:"dropped,omitempty"`
	// Rationality says where q came from: "transcript rules" or the judge
	// role.
	Rationality string `json:"rationality"`
}

// MASPT is T of the MASP metrics: spec.MASPT when set, else
// min(masp.DefaultT, Tmax).
func MASPT(spec EvalSpec) int {
	if spec.MASPT > 0 {
		return spec.MASPT
	}
	tmax := spec.Tmax
	if tmax <= 0 {
		tmax = episode.DefaultTmax
	}
	return min(masp.DefaultT, tmax)
}

// maspOfEpisodes computes one masp.Report per set on the run's stored
// episodes (masp.EpisodeResults), with the judge role as rationality
// judge when there is one. The worst case is left out with a single
// persuadee.
func maspOfEpisodes(ctx context.Context, eps []*episode.Episode, plan *EvalPlan) ([]SetMASP, error) {
	spec := plan.Spec
	o := masp.EpisodeOptions{Scenarios: map[string]*scenario.Scenario{}, Workers: spec.Workers}
	rat := "transcript rules"
	if spec.Judge != "" {
		role, c, err := plan.Registry.Role(spec.Judge)
		if err != nil {
			return nil, err
		}
		o.Rationality = &masp.LLMRationalityJudge{Engine: c, Sampling: role.Sampling, Thinking: role.Thinking}
		rat = spec.Judge
	}
	setOf := map[string]string{}
	for _, s := range plan.Sets {
		for i := range s.Scenarios {
			o.Scenarios[s.Scenarios[i].ID] = &s.Scenarios[i]
			setOf[s.Scenarios[i].ID] = s.Name
		}
	}
	pn, un := plan.names()
	ec := masp.EvalConfig{T: MASPT(spec), Bootstrap: stats.BootstrapOptions{Resamples: 10000, Seed: spec.Seed}}
	var out []SetMASP
	for _, s := range plan.Sets {
		var sub []*episode.Episode
		for _, ep := range eps {
			if setOf[ep.ScenarioID] == s.Name {
				sub = append(sub, ep)
			}
		}
		res, dropped, err := masp.EpisodeResults(ctx, sub, pn, un, o)
		if err != nil {
			return nil, fmt.Errorf("--metrics masp, set %s: %w", s.Name, err)
		}
		rep, err := res.Report(ec)
		if err != nil {
			return nil, fmt.Errorf("--metrics masp, set %s: %w", s.Name, err)
		}
		rep.Title = "MASP metrics, set " + s.Name
		if len(plan.Persuadees) < 2 {
			rep.Worst = nil
		}
		out = append(out, SetMASP{Set: s.Name, Report: rep, Dropped: dropped, Rationality: rat})
	}
	return out, nil
}

// names lists the plan's persuader and persuadee names, in order.
func (p *EvalPlan) names() (persuaders, persuadees []string) {
	for _, r := range p.Persuaders {
		persuaders = append(persuaders, r.Name())
	}
	for _, r := range p.Persuadees {
		persuadees = append(persuadees, r.Name())
	}
	return persuaders, persuadees
}
