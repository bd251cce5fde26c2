package persuhmm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/scenario"
)

// LLMPersuaderFunc builds the LLM persuader for one task: style is the
// plan and subtree written as conduct instructions (for example
// llmagent.Persuader's Style field).
type LLMPersuaderFunc func(style string) episode.Persuader

// NewLLMComponents returns the prompted LLM implementation of every
// component, all asking eng for one JSON object (one repair request on an
// invalid answer) with sampling sm; persuader voices the plans. The
// prompts are the project's own wording of the PersuHMM paper's
// component descriptions.
func NewLLMComponents(eng llm.Chatter, sm llm.Sampling, persuader LLMPersuaderFunc) Components {
	r := llmRoles{eng: eng, sm: sm}
	return Components{Name: "llm", Steps: r, Goals: r, Analyst: r, Generator: r, Refiner: r, Summariser: r, Guide: llmGuide{persuader}}
}

type llmRoles struct {
	eng llm.Chatter
	sm  llm.Sampling
}

// ask sends system and user, decodes the JSON object of the answer into
// out (the text between the first '{' and the last '}'), and asks once
// for a repair when it does not decode. Errors: the engine's, or the
// decode error after the repair.
func (r llmRoles) ask(ctx context.Context, system, user string, out any) (llm.Usage, error) {
	msgs := []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}
	var usage llm.Usage
	for try := 0; ; try++ {
		resp, err := r.eng.Chat(ctx, llm.ChatRequest{Messages: msgs, Sampling: r.sm})
		if resp != nil {
			usage = usage.Add(resp.Usage)
		}
		if err != nil {
			return usage, err
		}
		text := resp.Content
		i, j := strings.Index(text, "{"), strings.LastIndex(text, "}")
		var derr error
		if i < 0 || j < i {
			derr = fmt.Errorf("no JSON object in the answer")
		} else if derr = json.Unmarshal([]byte(text[i:j+1]), out); derr == nil {
			return usage, nil
		}
		if try == 1 {
			return usage, fmt.Errorf("persuhmm: invalid answer after one repair: %w", derr)
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Content: text},
			llm.Message{Role: "user", Content: "That answer could not be read (" + derr.Error() + "). Reply with the JSON object only."})
	}
}

func dialogueText(ms []episode.Message) string {
	var b strings.Builder
	for _, m := range ms {
		who := "Persuadee"
		if m.Speaker == episode.PersuaderSpeaker {
			who = "Persuader"
		}
		fmt.Fprintf(&b, "%s: %s\n", who, strings.TrimSpace(m.Text))
	}
	return b.String()
}

func planText(p Plan) string {
	var b strings.Builder
	for i, s := range p.Stages {
		fmt.Fprintf(&b, "%d. step: %s | stage goal: %s | strategy: %s %s\n", i+1, s.Step, s.Goal, s.Strategy, s.StrategyText)
	}
	return b.String()
}

func taskText(t Task) string {
	return fmt.Sprintf("Domains: %s\nProposal: %s\nBackground: %s\n", strings.Join(t.Domains, ", "), t.Scenario.Proposal, t.Scenario.Background)
}

const stepSystem = `You plan persuasive conversations. Given a task and a tree of learned persuasion strategies, write a short plan: a sequence of steps that engage the other person, guide them towards the goal and finally win their agreement. Each step has a stage goal (a visible change in the person's state, feelings, view or behaviour) and names the one strategy it uses, by its id from the tree, or "" when it uses none. Answer with JSON only: {"stages": [{"step": "...", "goal": "...", "strategy": "id or empty"}]}`

// Plan asks for the (step, stage goal, strategy) triples.
func (r llmRoles) Plan(ctx context.Context, task Task, sub Subtree, _ uint64) (Plan, llm.Usage, error) {
	var p Plan
	u, err := r.ask(ctx, stepSystem, taskText(task)+"Strategy tree:\n"+sub.Text(), &p)
	if err == nil && len(p.Stages) == 0 {
		err = fmt.Errorf("persuhmm: the plan has no stages")
	}
	for i := range p.Stages {
		if s := sub.strategyByID(p.Stages[i].Strategy); s.ID == "" {
			p.Stages[i].Strategy = ""
		} else {
			p.Stages[i].StrategyText = s.Text
		}
	}
	return p, u, err
}

const goalSystem = `You judge how far each stage goal of a persuasion plan was reached in a conversation. Score every goal with an integer from 1 (not at all) to 5 (fully reached), judging only from explicit changes in the persuadee's attitude, actions they took or commitments they made. Answer with JSON only: {"scores": [n, ...]} with one score per goal, in order.`

// Score asks for one 1..5 score per stage goal; scores outside 1..5 are
// clamped, a wrong count is an error.
func (r llmRoles) Score(ctx context.Context, task Task, plan Plan, d Dialogue) ([]int, llm.Usage, error) {
	var out struct{ Scores []int }
	u, err := r.ask(ctx, goalSystem, taskText(task)+"Plan:\n"+planText(plan)+"Conversation:\n"+dialogueText(d.Episode.Transcript()), &out)
	if err != nil {
		return nil, u, err
	}
	if len(out.Scores) != len(plan.Stages) {
		return nil, u, fmt.Errorf("persuhmm: %d scores for %d stage goals", len(out.Scores), len(plan.Stages))
	}
	for i, s := range out.Scores {
		out.Scores[i] = min(5, max(1, s))
	}
	return out.Scores, u, nil
}

const analystSystem = `You extract success patterns from persuasion conversations. A success pattern is one concise sentence giving the domain, the background, what the persuader did, how the persuadee responded, how the persuader followed up, and the goal finally reached. List (a) for every stage goal scored 4 or 5, the strategy id used and its pattern; (b) patterns for goals that failed in our conversation but were reached in the reference conversation, and for helpful moves that were not in the plan, from either conversation. Answer with JSON only: {"l1": [{"strategy": "id", "pattern": "..."}], "l2": ["...", ...]}`

// Analyse asks for the L1 pairs and L2 patterns, reading the reference
// dialogue when the task has one.
func (r llmRoles) Analyse(ctx context.Context, task Task, plan Plan, scores []int, d Dialogue) (Analysis, llm.Usage, error) {
	var out struct {
		L1 []struct{ Strategy, Pattern string }
		L2 []string
	}
	user := taskText(task) + "Plan:\n" + planText(plan) + fmt.Sprintf("Scores: %v\n", scores) + "Our conversation:\n" + dialogueText(d.Episode.Transcript())
	if len(task.Reference) > 0 {
		user += "Reference conversation:\n" + dialogueText(task.Reference)
	}
	u, err := r.ask(ctx, analystSystem, user, &out)
	var a Analysis
	for _, p := range out.L1 {
		a.L1 = append(a.L1, L1{Strategy: p.Strategy, Pattern: Pattern{Text: p.Pattern, Domain: task.Domains[0]}})
	}
	for _, p := range out.L2 {
		a.L2 = append(a.L2, Pattern{Text: p, Domain: task.Domains[0]})
	}
	return a, u, err
}

const generatorSystem = `You abstract persuasion strategies from success patterns. Find persuasion principles or skills that several patterns share and state each as one strategy: a short instruction a persuader can follow. Give each strategy the domain it belongs to and the numbers of the patterns it comes from. Strategies of the same domain must differ from one another; similar strategies may appear in different domains. Answer with JSON only: {"strategies": [{"text": "...", "domain": "...", "patterns": [1, 2]}]}`

// Generate asks for new strategies over the numbered patterns; pattern
// numbers out of range are ignored.
func (r llmRoles) Generate(ctx context.Context, ps []Pattern) ([]NewStrategy, llm.Usage, error) {
	if len(ps) == 0 {
		return nil, llm.Usage{}, nil
	}
	var b strings.Builder
	for i, p := range ps {
		fmt.Fprintf(&b, "%d. [%s] %s\n", i+1, p.Domain, p.Text)
	}
	var out struct {
		Strategies []struct {
			Text, Domain string
			Patterns     []int
		}
	}
	u, err := r.ask(ctx, generatorSystem, "Success patterns:\n"+b.String(), &out)
	var news []NewStrategy
	for _, s := range out.Strategies {
		ns := NewStrategy{Text: strings.TrimSpace(s.Text), Domain: strings.TrimSpace(s.Domain)}
		for _, k := range s.Patterns {
			if k >= 1 && k <= len(ps) {
				ns.Patterns = append(ns.Patterns, ps[k-1])
			}
		}
		news = append(news, ns)
	}
	return news, u, err
}

func numbered(dom []*Strategy) string {
	var b strings.Builder
	for i, s := range dom {
		fmt.Fprintf(&b, "%d. %s (validity %.2f, patterns: %d)\n", i+1, s.Text, s.Validity(), len(s.Patterns))
		for _, p := range s.Patterns {
			fmt.Fprintf(&b, "   - %s\n", p.Text)
		}
	}
	return b.String()
}

const sameSystem = `You decide whether a new persuasion strategy is the same as one already stored for its domain: the same method for the same goal, only worded differently. Answer with JSON only: {"same": n} with the number of the identical stored strategy, or 0 when none is identical.`

// Same asks whether s repeats a stored strategy.
func (r llmRoles) Same(ctx context.Context, s NewStrategy, dom []*Strategy) (int, llm.Usage, error) {
	if len(dom) == 0 {
		return -1, llm.Usage{}, nil
	}
	var out struct{ Same int }
	u, err := r.ask(ctx, sameSystem, "New strategy: "+s.Text+"\nStored strategies:\n"+numbered(dom), &out)
	if err != nil || out.Same < 1 || out.Same > len(dom) {
		return -1, u, err
	}
	return out.Same - 1, u, nil
}

const classifySystem = `You sort persuasion strategies into one of three kinds: "logical" (reasons, facts, plans), "emotional" (feelings, empathy, relationships) or "behavioral" (small steps, commitments, habits, actions). Answer with JSON only: {"category": "logical|emotional|behavioral"}`

// Classify asks for the category. Errors: an unknown category.
func (r llmRoles) Classify(ctx context.Context, s NewStrategy) (Category, llm.Usage, error) {
	var out struct{ Category string }
	u, err := r.ask(ctx, classifySystem, "Strategy: "+s.Text, &out)
	if err != nil {
		return "", u, err
	}
	c, ok := ParseCategory(out.Category)
	if !ok {
		return "", u, fmt.Errorf("persuhmm: unknown category %q", out.Category)
	}
	return c, u, nil
}

const groupsSystem = `You find groups of similar persuasion strategies within one domain. Two strategies are similar when they use similar methods to reach similar goals and either could stand in for the other in its success patterns without changing the effect. Answer with JSON only: {"groups": [[n, m, ...], ...]} using the strategies' numbers; leave out strategies that have no similar one.`

// Groups asks for groups of similar strategies.
func (r llmRoles) Groups(ctx context.Context, dom []*Strategy) ([][]int, llm.Usage, error) {
	var out struct{ Groups [][]int }
	u, err := r.ask(ctx, groupsSystem, "Strategies:\n"+numbered(dom), &out)
	var gs [][]int
	for _, g := range out.Groups {
		var x []int
		for _, k := range g {
			if k >= 1 && k <= len(dom) {
				x = append(x, k-1)
			}
		}
		gs = append(gs, x)
	}
	return gs, u, err
}

const macroDomainSystem = `You name a group of persuasion domains with one short, broader domain name that covers them all. Answer with JSON only: {"name": "..."}`

// MacroDomain asks for a macro-domain name.
func (r llmRoles) MacroDomain(ctx context.Context, ds []string) (string, llm.Usage, error) {
	var out struct{ Name string }
	u, err := r.ask(ctx, macroDomainSystem, "Domains: "+strings.Join(ds, "; "), &out)
	if err == nil && strings.TrimSpace(out.Name) == "" {
		out.Name = strings.Join(ds, " / ")
	}
	return strings.TrimSpace(out.Name), u, err
}

const macroStrategySystem = `You decide whether a cluster of persuasion strategies can be summed up by one higher-level strategy that captures the methods and goals all of them share. If it can, write it; if they have too little in common, say so. Answer with JSON only: {"macro": "..."} or {"macro": ""} to keep them apart.`

// MacroStrategy asks for a macro-strategy or dissolution.
func (r llmRoles) MacroStrategy(ctx context.Context, ms []*Strategy) (string, bool, llm.Usage, error) {
	var out struct{ Macro string }
	u, err := r.ask(ctx, macroStrategySystem, "Strategies:\n"+numbered(ms), &out)
	t := strings.TrimSpace(out.Macro)
	return t, err == nil && t != "", u, err
}

type llmGuide struct{ f LLMPersuaderFunc }

// Persuader writes the plan and the subtree into the persuader's conduct
// instructions; the LLM persuader records no per-turn stages (the LLM
// goal evaluator reads the dialogue instead).
func (g llmGuide) Persuader(task Task, plan Plan, sub Subtree, _ float64, d *Dialogue) episode.Persuader {
	style := "Be honest and respectful; never pressure or deceive. Follow this plan, step by step:\n" + planText(plan) +
		"If the person reacts in a way the plan did not expect, you may use any other strategy from this tree:\n" + sub.Text()
	return recording{g.f(style), d}
}

type recording struct {
	episode.Persuader
	d *Dialogue
}

func (r recording) Start(ctx context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	s, err := r.Persuader.Start(ctx, pub, seed)
	if err != nil {
		return nil, err
	}
	return recSession{s, r.d}, nil
}

type recSession struct {
	episode.PersuaderSession
	d *Dialogue
}

func (s recSession) Say(ctx context.Context, tr []episode.Message) (episode.Utterance, error) {
	if s.d != nil {
		s.d.Stage = append(s.d.Stage, -1)
		s.d.Acts = append(s.d.Acts, 0)
		s.d.Strategy = append(s.d.Strategy, "")
	}
	return s.PersuaderSession.Say(ctx, tr)
}
