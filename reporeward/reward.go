package reporeward

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// Prefix marks a reward spec where one is named (--reward repo:SPEC).
const Prefix = "repo:"

// Rater is an LLM judge asked for one rubric score in [lo, hi]
// (*llmagent.Judge implements it). Safe for concurrent use.
type Rater interface {
	Rate(ctx context.Context, system, user string, lo, hi float64) (float64, episode.Usage, error)
}

// Reward is a reward spec ready to score episodes: it implements
// episode.Rewarder (episode.Config.Rewarder). Safe for concurrent use.
type Reward struct {
	Spec  *Spec
	Model Model
	Judge Rater
	Pack  *Pack
}

// New builds spec's reward: its model (Outcome, Constant, HTTPModel, or
// the BT model at spec.Model.Path, relative to the spec file) and pack.
// judge rates the rubrics. Errors: a spec with rubrics and no judge,
// LoadBT's, LoadPack's.
func New(spec *Spec, judge Rater) (*Reward, error) {
	r := &Reward{Spec: spec, Judge: judge}
	if spec.NeedsJudge() && judge == nil {
		return nil, fmt.Errorf("reward spec %s: its judge rubrics need an LLM judge (--judge llm:ROLE)", spec.Name)
	}
	switch m := spec.Model; m.Kind {
	case ModelOutcome:
		r.Model = Outcome{}
	case ModelConstant:
		r.Model = Constant(m.Value)
	case ModelHTTP:
		r.Model = &HTTPModel{URL: m.URL, API: m.API, Model: m.Model}
	case ModelBT:
		p := m.Path
		if !filepath.IsAbs(p) && !strings.HasPrefix(spec.file, "builtin:") {
			p = filepath.Join(filepath.Dir(spec.file), p)
		}
		bt, err := LoadBT(p)
		if err != nil {
			return nil, err
		}
		r.Model = bt
	}
	if spec.Model.Scale != 1 {
		r.Model = Scaled{r.Model, spec.Model.Scale}
	}
	pack, err := LoadPack(spec.Pack)
	if err != nil {
		return nil, err
	}
	r.Pack = pack
	return r, nil
}

// Resolve is LoadSpec and New for a --reward reference "repo:SPEC" (a
// built-in spec name or a YAML file). Errors: a reference without the
// prefix, LoadSpec's and New's.
func Resolve(ref string, judge Rater) (*Reward, error) {
	name, ok := strings.CutPrefix(ref, Prefix)
	if !ok {
		return nil, fmt.Errorf("--reward %q: want repo:SPEC (a built-in spec: %s, or a YAML file)", ref, strings.Join(BuiltinSpecs, ", "))
	}
	s, err := LoadSpec(name)
	if err != nil {
		return nil, err
	}
	return New(s, judge)
}

// Reward scores a finished episode (episode.Rewarder): per persuader turn,
// the rule functions on its utterance, the SOP stage it reached and the
// per-turn rubrics, composed with the episode's R_model; per episode,
// R_model, every rubric and rule, E_judge, E_func, E and R. Components:
// "r_model", "e_judge", "e_func", "e", "r", "judge.NAME" (the raw score
// on the rubric's scale; per-turn rubrics: their mean), "func.NAME" (in
// [-1, 0]), "sop.reached" and "sop.skipped" (stage counts); per turn also
// "sop.stage" (1-based, 0 before any stage).
//
// Choice: a per-turn rule's episode value is its minimum over the turns
// (a guardrail broken once counts); the SOP rule's episode value is -1
// when a stage was skipped, else minus the share of stages not reached;
// a require rule has only an episode value (-1 when no utterance matches).
//
// Errors: the model's and the judge's (with the usage spent so far).
func (r *Reward) Reward(ctx context.Context, pub scenario.Public, ep *episode.Episode, transcript []episode.Message) (*episode.RewardVector, episode.Usage, error) {
	s := r.Spec
	facts, hasFacts := r.Pack.Facts[pub.ID]
	tr := NewTracker(&r.Pack.SOP)
	var usage episode.Usage
	rModel, err := r.Model.Score(ctx, Input{Public: pub, Episode: ep, Transcript: transcript})
	if err != nil {
		return nil, usage, err
	}
	v := &episode.RewardVector{Spec: s.Name}
	ruleEp := make([]float64, len(s.Rules))
	turnJudge := make([][]float64, len(s.Judges)) // per rubric, per turn
	// judge calls run concurrently; results land by index
	type call struct {
		rubric, turn int // turn -1: episode
	}
	var calls []call
	for k, j := range s.Judges {
		if j.Per == "turn" {
			turnJudge[k] = make([]float64, len(ep.Turns))
			for i := range ep.Turns {
				calls = append(calls, call{k, i})
			}
		} else {
			calls = append(calls, call{k, -1})
		}
	}
	scores := make([]float64, len(calls))
	errs := make([]error, len(calls))
	usages := make([]episode.Usage, len(calls))
	// Every call runs (all at once) and every failure is reported with
	// the usage of all of them, so a call's error is kept, not returned
	// to the pool, which would cancel the others.
	poolErr := parallel.Each(ctx, len(calls), len(calls), func(ctx context.Context, ci int) error {
		c := calls[ci]
		sys, user := rubricPrompt(s.Judges[c.rubric], pub, transcript, c.turn)
		scores[ci], usages[ci], errs[ci] = r.Judge.Rate(ctx, sys, user, s.Judges[c.rubric].Scale[0], s.Judges[c.rubric].Scale[1])
		return nil
	})
	for _, u := range usages {
		usage = usage.Add(u)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, usage, err
	}
	if poolErr != nil { // ctx ended before every call started
		return nil, usage, poolErr
	}
	epJudge := make([]float64, len(s.Judges))
	for ci, c := range calls {
		if c.turn < 0 {
			epJudge[c.rubric] = scores[ci]
		} else {
			turnJudge[c.rubric][c.turn] = scores[ci]
		}
	}
	used := make([]bool, len(s.Rules)) // require rules: some utterance matched
	for i := range ep.Turns {
		t := &ep.Turns[i]
		step := tr.Observe(t.Persuader, t.Acts)
		tw := episode.TurnReward{T: t.T}
		var eJ, eF float64
		for k, j := range s.Judges {
			if j.Per != "turn" {
				continue
			}
			x := turnJudge[k][i]
			tw.Components = append(tw.Components, episode.RewardComponent{Name: "judge." + j.Name, Value: x})
			eJ += j.Weight * Unit(x, j.Scale[0], j.Scale[1])
		}
		for k := range s.Rules {
			rule := &s.Rules[k]
			val, applies := r.rule(rule, facts, hasFacts, t.Persuader, step)
			if rule.Kind == RuleRequire {
				used[k] = used[k] || applies
				continue
			}
			if i == 0 || val < ruleEp[k] {
				ruleEp[k] = val
			}
			tw.Components = append(tw.Components, episode.RewardComponent{Name: "func." + rule.Name, Value: val})
			eF += rule.Weight * val
		}
		e, rr := s.Compose(rModel, eJ, eF)
		tw.R = rr
		tw.Components = append(tw.Components,
			episode.RewardComponent{Name: "sop.stage", Value: float64(step.Stage + 1)},
			episode.RewardComponent{Name: "e_judge", Value: eJ}, episode.RewardComponent{Name: "e_func", Value: eF},
			episode.RewardComponent{Name: "e", Value: e}, episode.RewardComponent{Name: "r", Value: rr})
		v.Turns = append(v.Turns, tw)
	}
	var eJ, eF float64
	var comps []episode.RewardComponent
	for k, j := range s.Judges {
		x := epJudge[k]
		if j.Per == "turn" {
			x = mean(turnJudge[k])
			if len(ep.Turns) == 0 {
				x = j.Scale[0]
			}
		}
		comps = append(comps, episode.RewardComponent{Name: "judge." + j.Name, Value: x})
		eJ += j.Weight * Unit(x, j.Scale[0], j.Scale[1])
	}
	n := len(r.Pack.SOP.Stages)
	for k := range s.Rules {
		rule := &s.Rules[k]
		val := ruleEp[k]
		switch rule.Kind {
		case RuleRequire:
			val = 0
			if !used[k] {
				val = -1
			}
		case RuleSOP:
			val = -1
			if tr.Skips() == 0 && n > 0 {
				val = -float64(n-tr.Reached()) / float64(n)
			}
		}
		comps = append(comps, episode.RewardComponent{Name: "func." + rule.Name, Value: val})
		eF += rule.Weight * val
	}
	e, rr := s.Compose(rModel, eJ, eF)
	v.R = rr
	v.Components = append([]episode.RewardComponent{
		{Name: "r_model", Value: rModel}, {Name: "e_judge", Value: eJ}, {Name: "e_func", Value: eF},
		{Name: "e", Value: e}, {Name: "r", Value: rr},
		{Name: "sop.reached", Value: float64(tr.Reached())}, {Name: "sop.skipped", Value: float64(tr.Skips())},
	}, comps...)
	return v, usage, nil
}

// rule evaluates one rule on one utterance: its value and, for require
// rules, whether a pattern matched. Figure rules without the scenario's
// facts pass.
func (r *Reward) rule(rule *RuleSpec, f Facts, hasFacts bool, text string, step StageStep) (float64, bool) {
	switch rule.Kind {
	case RuleForbid:
		return CheckForbid(rule.res, text).Value, false
	case RuleRequire:
		return 0, CheckForbid(rule.res, text).Value < 0
	case RuleCommission:
		if hasFacts {
			return CheckCommission(f, text).Value, false
		}
	case RuleFigures:
		if hasFacts {
			return CheckFigures(f, rule.Tolerance, text).Value, false
		}
	case RuleLength:
		return CheckLength(rule.MaxWords, text).Value, false
	case RuleSOP:
		if len(step.Skipped) > 0 {
			return -1, false
		}
	}
	return 0, false
}

// rubricPrompt writes a rubric's system and user prompts: the rubric and
// answer format, then the scenario's public facts and the conversation
// (for a per-turn rubric, up to and including the agent's turn-th
// utterance, which is to be rated).
func rubricPrompt(j RubricSpec, pub scenario.Public, tr []episode.Message, turn int) (string, string) {
	lo, hi := fmt.Sprint(j.Scale[0]), fmt.Sprint(j.Scale[1])
	sys := "You are an experienced reviewer of business negotiations. A hotel's business development agent is negotiating with a distribution partner. " +
		strings.TrimSpace(j.Prompt) + "\nAnswer with one JSON object: {\"score\": a number from " + lo + " (worst) to " + hi + " (best), \"reason\": one short sentence}."
	var b strings.Builder
	fmt.Fprintf(&b, "Agent: %s (%s). Partner: %s (%s).\nWhat the agent proposes: %s\nContext: %s\n\n",
		pub.Persuader.Name, pub.Persuader.Role, pub.Persuadee.Name, pub.Persuadee.Role, pub.Proposal, pub.Background)
	if turn < 0 {
		b.WriteString("The conversation:\n")
		b.WriteString(RenderTranscript(tr))
		b.WriteString("\nRate the agent's conduct over the whole conversation.")
		return sys, b.String()
	}
	k, seen := 0, 0
	for ; k < len(tr); k++ {
		if tr[k].Speaker == episode.PersuaderSpeaker {
			if seen == turn {
				break
			}
			seen++
		}
	}
	b.WriteString("The conversation so far:\n")
	b.WriteString(RenderTranscript(tr[:k]))
	if k < len(tr) {
		b.WriteString("\nThe agent's message to rate:\nAgent: " + strings.TrimSpace(tr[k].Text) + "\n")
	}
	b.WriteString("\nRate only that message.")
	return sys, b.String()
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

var _ episode.Rewarder = (*Reward)(nil)

// actsOf returns the tagger's act names of text (for utterances outside an
// episode: the bad-case suite).
func actsOf(text string) []string { return tagger.Tag(text).Acts.Strings() }
