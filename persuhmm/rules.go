package persuhmm

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/tagger"
)

// The embedded path: every component as a documented rule, no language
// model. A strategy is a recipe (one act set per turn) aimed at one probe
// of the Probe-RPO paper's basis: "ca" (concern addressed), "pe"
// (persuasive case), "ac" (acceptance).

// DefaultTarget is the embedded stage goal, as a share of the way to even
// odds (Progress): a stage that takes its probe a quarter of the way from
// where it found it to P(Yes) = 1/2, in log-odds, scores 5; an eighth of
// the way scores 3. From P(Yes) 0.05 a quarter of the way is about 0.10.
//
// Choice: the share is measured to even odds because that is the one point
// of a probe's scale that a steeper or shallower read-out (p = σ(k·x), any
// k > 0) leaves in place, so scores do not depend on the read-out. A
// quarter: the whole way and half the way leave the embedded learner with
// no strategy on the first four train tasks (docs/persuhmm.md).
const DefaultTarget = 0.25

// Met is the lowest stage score that counts as a goal met (4 of 1..5).
const Met = 4

// goalOrder is the embedded plan's stage order, after the paper's
// engage → guide → convince steps.
var goalOrder = []string{"ca", "pe", "ac"}

// defaultRecipe is the task-alone plan's recipe per goal (ablation 1 and
// an empty subtree).
var defaultRecipe = map[string][]string{
	"ca": {"diagnostic"},
	"pe": {"evidence+plan"},
	"ac": {"commitment+autonomy"},
}

var goalWords = map[string]string{
	"ca": "the persuadee feels their worries are understood",
	"pe": "the persuadee finds the case convincing",
	"ac": "the persuadee moves towards accepting the proposal",
}

// categoryOfGoal is the embedded classifier. Choice: a recipe aimed at
// feeling understood is emotional, at a convincing case logical, at
// acceptance behavioral.
var categoryOfGoal = map[string]Category{"ca": Emotional, "pe": Logical, "ac": Behavioral}

var actPhrase = map[tagger.Act]string{
	tagger.Diagnostic: "ask an open question about what holds them back",
	tagger.Evidence:   "give concrete figures or results",
	tagger.Plan:       "lay out who does what and by when",
	tagger.Commitment: "ask for a decision or a first step",
	tagger.Autonomy:   "leave the choice clearly with them",
}

// ParseActSet reads a "+"-joined list of act names ("evidence+plan").
// Errors: an unknown or empty name.
func ParseActSet(s string) (tagger.ActSet, error) {
	var a tagger.ActSet
	for _, n := range strings.Split(s, "+") {
		act, ok := tagger.ParseAct(strings.TrimSpace(n))
		if !ok {
			return 0, fmt.Errorf("persuhmm: unknown act %q in %q", n, s)
		}
		a = a.With(act)
	}
	return a, nil
}

// ActSetString writes a as ParseActSet reads it.
func ActSetString(a tagger.ActSet) string { return strings.Join(a.Strings(), "+") }

// RecipeText describes a recipe aimed at goal in words (the embedded
// strategy generator's text).
func RecipeText(recipe []string, goal string) string {
	var turns []string
	for _, r := range recipe {
		a, err := ParseActSet(r)
		if err != nil {
			continue
		}
		var ps []string
		for _, act := range tagger.Acts {
			if a.Has(act) {
				ps = append(ps, actPhrase[act])
			}
		}
		turns = append(turns, strings.Join(ps, " and "))
	}
	return fmt.Sprintf("So that %s: %s.", goalWords[goal], strings.Join(turns, "; then "))
}

// NewEmbeddedComponents returns the embedded path's components with
// stage target target (<= 0: DefaultTarget) and minimum support
// minSupport (<= 0: 2) patterns per new strategy.
func NewEmbeddedComponents(target float64, minSupport int) Components {
	if target <= 0 {
		target = DefaultTarget
	}
	if minSupport <= 0 {
		minSupport = 2
	}
	r := rules{target: target, support: minSupport}
	return Components{Name: "embedded", Steps: r, Goals: r, Analyst: r, Generator: r, Refiner: r, Summariser: r, Guide: embeddedGuide{}}
}

// NewDirectAnalyst is the embedded analyst of the direct-comparison
// ablation (PersuHMM paper Table 4, row 2): no stage scores; when the
// whole dialogue was accepted, every stage's strategy counts one success
// (L1) and every stage without a memory strategy and every off-plan turn
// becomes an L2 pattern; otherwise nothing is learned.
func NewDirectAnalyst(target float64) PatternAnalyst {
	if target <= 0 {
		target = DefaultTarget
	}
	return direct{rules{target: target, support: 2}}
}

type rules struct {
	target  float64
	support int
}

// Plan picks, for each goal in the order ca, pe, ac, the subtree strategy
// aimed at it of highest validity among those validated (n_d > DefaultNd),
// else among all (ties: more successes, then memory order); with probability 1/4 per stage (seeded) a uniformly random one
// of those aimed at it instead, so that other strategies are tried during
// learning. A goal no subtree strategy aims at gets the task-alone recipe
// (diagnostic; evidence+plan; commitment+autonomy).
func (r rules) Plan(_ context.Context, task Task, sub Subtree, seed uint64) (Plan, llm.Usage, error) {
	var p Plan
	for gi, g := range goalOrder {
		var cands []*Strategy
		for _, s := range sub.Strategies {
			if s.Goal == g && len(s.Recipe) > 0 {
				cands = append(cands, s)
			}
		}
		st := Stage{Goal: goalWords[g], Probe: g, Target: r.target, Recipe: defaultRecipe[g]}
		if len(cands) > 0 {
			best := cands[0]
			for _, s := range cands[1:] {
				if planBetter(s, best) {
					best = s
				}
			}
			if z := episode.Mix(seed ^ uint64(gi+1)); seed != 0 && z%4 == 0 {
				best = cands[(z>>8)%uint64(len(cands))]
			}
			st.Strategy, st.StrategyText, st.Recipe = best.ID, best.Text, slices.Clone(best.Recipe)
		}
		st.Step = RecipeText(st.Recipe, g)
		p.Stages = append(p.Stages, st)
	}
	return p, llm.Usage{}, nil
}

// planBetter: validated strategies (n_d > DefaultNd) first, then higher
// validity, then more successes. Choice: without it a fresh strategy (V =
// 1 from its few source patterns) would win every plan.
func planBetter(a, b *Strategy) bool {
	if va, vb := a.ND > DefaultNd, b.ND > DefaultNd; va != vb {
		return va
	}
	if a.Validity() != b.Validity() {
		return a.Validity() > b.Validity()
	}
	return a.Succ > b.Succ
}

// Progress is how far a probe's P(Yes) went from a to b toward even odds,
// as a share of the way in log-odds: (logit b − logit a) / (0 − logit a),
// for a < 1/2; ok is false when a ≥ 1/2 (already at even odds: no way
// left to measure). Negative when the probe fell; above 1 past even odds.
// a and b are clamped to [1e-12, 1 − 1e-12] so that logits stay finite.
//
// Choice: the PersuHMM paper's goal evaluator is a language model scoring
// how far a stage met its goal; the embedded one reads the stage's probe.
// A rise in p itself depends on how steep the read-out is (the same
// change of the persuadee's state moves a σ(6x) probe far more than a
// σ(2x) one near its floor), so the share is taken in log-odds relative
// to even odds, which is the same for every read-out σ(k·(x − c)), k > 0.
func Progress(a, b float64) (share float64, ok bool) {
	a, b = min(max(a, 1e-12), 1-1e-12), min(max(b, 1e-12), 1-1e-12)
	la := math.Log(a / (1 - a))
	if la >= 0 {
		return 0, false
	}
	return (math.Log(b/(1-b)) - la) / -la, true
}

// reading returns p of probe id after turn t (0: the initial read-out),
// ok false when missing.
func reading(ep *episode.Episode, t int, id string) (float64, bool) {
	var rs []probe.Reading
	if t == 0 {
		rs = ep.Initial
	} else if t <= len(ep.Turns) {
		rs = ep.Turns[t-1].Probes
	}
	for _, r := range rs {
		if r.Probe == id && r.OK {
			return r.P, true
		}
	}
	return 0, false
}

// Score is the embedded goal evaluator: a stage's score is 1 + round(4 ·
// clamp(g / Target, 0, 1)), where g is Progress of the stage probe's p_k
// from the read-out before the stage's first turn to the one after its
// last (the share of the way to even odds, in log-odds); a stage on
// acceptance ("ac") whose turns include the persuadee's accept scores 5; a
// stage never reached scores 1, or 3 when the persuadee had already
// accepted.
//
// Choice: a stage that finds its probe at or above even odds scores 3
// when it ends there too (the goal held; nothing says the stage met it)
// and 1 when it ends below.
func (r rules) Score(_ context.Context, _ Task, plan Plan, d Dialogue) ([]int, llm.Usage, error) {
	ep := d.Episode
	out := make([]int, len(plan.Stages))
	for j, st := range plan.Stages {
		first, last := -1, -1
		for i, s := range d.Stage {
			if s == j {
				if first < 0 {
					first = i + 1
				}
				last = i + 1
			}
		}
		if first < 0 {
			out[j] = 1
			if ep.Terminal == decision.TermAccept {
				out[j] = 3
			}
			continue
		}
		if st.Probe == "ac" && ep.Turns[last-1].Decision == decision.Accept {
			out[j] = 5
			continue
		}
		a, ok1 := reading(ep, first-1, st.Probe)
		b, ok2 := reading(ep, last, st.Probe)
		if !ok1 || !ok2 {
			out[j] = 1
			continue
		}
		g, ok := Progress(a, b)
		if !ok {
			out[j] = 1
			if b >= 0.5 {
				out[j] = 3
			}
			continue
		}
		out[j] = 1 + int(math.Round(4*math.Min(1, math.Max(0, g/r.target))))
	}
	return out, llm.Usage{}, nil
}

// patternText writes a success pattern as the PersuHMM paper defines one:
// domain, background, the persuader's action, the persuadee's response,
// the follow-up and the goal reached.
func patternText(task Task, d Dialogue, turn int, recipe []string, goal string, share float64) string {
	ep := d.Episode
	bg := ""
	if task.Scenario != nil {
		bg = firstWords(task.Scenario.Background, 14)
	}
	resp, follow := "", "none"
	if turn >= 1 && turn <= len(ep.Turns) {
		resp = firstWords(ep.Turns[turn-1].Persuadee, 16)
		if turn < len(d.Acts) && d.Acts[turn] != 0 {
			follow = ActSetString(d.Acts[turn])
		}
	}
	return fmt.Sprintf("domain: %s; background: %s; persuader: %s; persuadee: %s; follow-up: %s; goal: %s (%.2f of the way to even odds)",
		strings.Join(task.Domains, ", "), bg, strings.Join(recipe, " then "), resp, follow, goalWords[goal], share)
}

func firstWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) > n {
		w = append(w[:n], "...")
	}
	return strings.Join(w, " ")
}

// Analyse is the embedded pattern analyst. L1: every stage scored >= Met
// with a memory strategy gives (strategy, pattern). L2: every stage scored
// >= Met without one (absent from the memory), and every off-plan turn
// whose largest Progress of a probe reaches half the target, gives a
// pattern with its recipe and goal (the probe that went furthest). Choice: the simulator's
// tasks have no reference dialogue, so the embedded analyst never reads
// one; the LLM analyst does.
func (r rules) Analyse(_ context.Context, task Task, plan Plan, scores []int, d Dialogue) (Analysis, llm.Usage, error) {
	var a Analysis
	dom := task.Domains[0]
	for j, st := range plan.Stages {
		if j >= len(scores) || scores[j] < Met {
			continue
		}
		last := 0
		for i, s := range d.Stage {
			if s == j {
				last = i + 1
			}
		}
		p := Pattern{Text: patternText(task, d, last, st.Recipe, st.Probe, r.target*float64(scores[j]-1)/4),
			Domain: dom, Recipe: slices.Clone(st.Recipe), Goal: st.Probe}
		if st.Strategy != "" {
			a.L1 = append(a.L1, L1{Strategy: st.Strategy, Pattern: p})
		} else {
			a.L2 = append(a.L2, p)
		}
	}
	for i, s := range d.Stage {
		if s >= 0 || d.Acts[i] == 0 {
			continue
		}
		best, rise := "", 0.0
		for _, g := range goalOrder {
			x, ok1 := reading(d.Episode, i, g)
			y, ok2 := reading(d.Episode, i+1, g)
			if !ok1 || !ok2 {
				continue
			}
			if p, ok := Progress(x, y); ok && p > rise {
				best, rise = g, p
			}
		}
		if best == "" || rise < r.target/2 {
			continue
		}
		rec := []string{ActSetString(d.Acts[i])}
		a.L2 = append(a.L2, Pattern{Text: patternText(task, d, i+1, rec, best, rise), Domain: dom, Recipe: rec, Goal: best})
	}
	return a, llm.Usage{}, nil
}

type direct struct{ rules }

func (r direct) Analyse(_ context.Context, task Task, plan Plan, _ []int, d Dialogue) (Analysis, llm.Usage, error) {
	var a Analysis
	if d.Episode.Terminal != decision.TermAccept {
		return a, llm.Usage{}, nil
	}
	dom := task.Domains[0]
	for j, st := range plan.Stages {
		last := 0
		for i, s := range d.Stage {
			if s == j {
				last = i + 1
			}
		}
		p := Pattern{Text: patternText(task, d, last, st.Recipe, st.Probe, 0), Domain: dom, Recipe: slices.Clone(st.Recipe), Goal: st.Probe}
		if st.Strategy != "" {
			a.L1 = append(a.L1, L1{Strategy: st.Strategy, Pattern: p})
		} else {
			a.L2 = append(a.L2, p)
		}
	}
	for i, s := range d.Stage {
		if s < 0 && d.Acts[i] != 0 {
			rec := []string{ActSetString(d.Acts[i])}
			// Choice: an off-plan turn of an accepted dialogue is credited
			// to the goal of the stage it interrupted (the next planned).
			g := "ac"
			for k := i + 1; k < len(d.Stage); k++ {
				if d.Stage[k] >= 0 {
					g = plan.Stages[d.Stage[k]].Probe
					break
				}
			}
			a.L2 = append(a.L2, Pattern{Text: patternText(task, d, i+1, rec, g, 0), Domain: dom, Recipe: rec, Goal: g})
		}
	}
	return a, llm.Usage{}, nil
}

func recipeKey(domain, goal string, recipe []string) string {
	return domain + "\x00" + goal + "\x00" + strings.Join(recipe, " ")
}

// Generate is the embedded strategy generator: L2 patterns are grouped by
// (domain, goal, recipe); every group of at least minSupport patterns
// becomes one strategy (text: RecipeText) with those patterns, in order
// of first appearance. Strategies of one domain differ by construction;
// the same recipe may recur across domains.
func (r rules) Generate(_ context.Context, ps []Pattern) ([]NewStrategy, llm.Usage, error) {
	var order []string
	groups := map[string][]Pattern{}
	for _, p := range ps {
		if len(p.Recipe) == 0 || p.Goal == "" {
			continue
		}
		k := recipeKey(p.Domain, p.Goal, p.Recipe)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], p)
	}
	var out []NewStrategy
	for _, k := range order {
		g := groups[k]
		if len(g) < r.support {
			continue
		}
		p := g[0]
		out = append(out, NewStrategy{Text: RecipeText(p.Recipe, p.Goal), Domain: p.Domain, Recipe: slices.Clone(p.Recipe), Goal: p.Goal, Patterns: g})
	}
	return out, llm.Usage{}, nil
}

// Same: identical when goal and recipe are equal.
func (r rules) Same(_ context.Context, s NewStrategy, dom []*Strategy) (int, llm.Usage, error) {
	for i, x := range dom {
		if x.Goal == s.Goal && slices.Equal(x.Recipe, s.Recipe) {
			return i, llm.Usage{}, nil
		}
	}
	return -1, llm.Usage{}, nil
}

// Classify: by goal (categoryOfGoal); logical when the goal is unknown.
func (r rules) Classify(_ context.Context, s NewStrategy) (Category, llm.Usage, error) {
	if c, ok := categoryOfGoal[s.Goal]; ok {
		return c, llm.Usage{}, nil
	}
	return Logical, llm.Usage{}, nil
}

// Groups: strategies are similar when they aim at the same goal and open
// with the same act set (one can stand in for the other's first turn);
// groups of two or more, in memory order.
func (r rules) Groups(_ context.Context, dom []*Strategy) ([][]int, llm.Usage, error) {
	var order []string
	g := map[string][]int{}
	for i, s := range dom {
		first := ""
		if len(s.Recipe) > 0 {
			first = s.Recipe[0]
		}
		k := s.Goal + "\x00" + first
		if _, ok := g[k]; !ok {
			order = append(order, k)
		}
		g[k] = append(g[k], i)
	}
	var out [][]int
	for _, k := range order {
		if len(g[k]) > 1 {
			out = append(out, g[k])
		}
	}
	return out, llm.Usage{}, nil
}

// MacroDomain: the member names joined with " / ".
func (r rules) MacroDomain(_ context.Context, ds []string) (string, llm.Usage, error) {
	return strings.Join(ds, " / "), llm.Usage{}, nil
}

// MacroStrategy: the text of the most valid member (ties: larger n_d,
// then the earlier); never dissolves.
func (r rules) MacroStrategy(_ context.Context, ms []*Strategy) (string, bool, llm.Usage, error) {
	best := ms[0]
	for _, s := range ms[1:] {
		if better(s, best) {
			best = s
		}
	}
	return best.Text, true, llm.Usage{}, nil
}
