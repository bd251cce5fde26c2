package persuhmm

import (
	"context"
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// Task is one persuasion task of the learning or test set.
type Task struct {
	// Scenario is what the episode plays (the persuader sees its Public
	// view only).
	Scenario *scenario.Scenario
	// Domains are the task's memory domains (at least one; DomainsOf).
	Domains []string
	// Reference is a reference dialogue when the data has one
	// (DailyPersuasion's first session); the LLM pattern analyst reads it.
	Reference []episode.Message
}

// Text is the task description used for plans and retrieval: the
// proposal and the public background.
func (t Task) Text() string {
	if t.Scenario == nil {
		return ""
	}
	return strings.TrimSpace(t.Scenario.Proposal + " " + t.Scenario.Background)
}

// DomainsOf returns the memory domains of a public scenario.
//
// Choice: an arena scenario's memory domain is its family (healthcare,
// financial advising, ...): the arena's Domain field is nearly unique per
// scenario, while the PersuHMM paper's domains (DailyPersuasion's 35) each
// hold hundreds of tasks, as the families do. A scenario without a family
// (an imported DailyPersuasion task) uses its Domain.
func DomainsOf(pub scenario.Public) []string {
	if pub.Family != "" {
		return []string{string(pub.Family)}
	}
	if pub.Domain != "" {
		return []string{pub.Domain}
	}
	return []string{"general"}
}

// TasksFromScenarios wraps scenarios as tasks with DomainsOf domains.
func TasksFromScenarios(ss []scenario.Scenario) []Task {
	out := make([]Task, len(ss))
	for i := range ss {
		out[i] = Task{Scenario: &ss[i], Domains: DomainsOf(ss[i].Public())}
	}
	return out
}

// Stage is one (step, stage goal, strategy) triple of a plan.
type Stage struct {
	// Step says how the persuader engages the persuadee at this stage.
	Step string `json:"step"`
	// Goal is the stage goal: a change in the persuadee's state,
	// emotion, view or behaviour.
	Goal string `json:"goal"`
	// Strategy is the id of the memory strategy applied, "" when the step
	// uses none (a plan from the task alone).
	Strategy string `json:"strategy,omitempty"`
	// StrategyText is the strategy's text (or the step's own method).
	StrategyText string `json:"strategy_text,omitempty"`
	// Probe and Target (embedded path): the stage goal as a target
	// Progress of the probe's p_k over the stage, a share of the way to
	// even odds in log-odds (DefaultTarget: a quarter of it).
	Probe  string  `json:"probe,omitempty"`
	Target float64 `json:"target,omitempty"`
	// Recipe (embedded path): the act set of each of the stage's turns.
	Recipe []string `json:"recipe,omitempty"`
}

// Plan is the step generator's output P_i.
type Plan struct {
	Stages []Stage `json:"stages"`
}

// Dialogue is one played task: the episode and what the guided persuader
// recorded of each turn.
type Dialogue struct {
	Episode *episode.Episode
	// Stage[t-1] is the plan stage turn t played, -1 when off plan.
	Stage []int
	// Acts[t-1] is the act set the persuader meant at turn t (embedded
	// path; 0 for an LLM persuader).
	Acts []tagger.ActSet
	// Strategy[t-1] is the memory strategy an off-plan turn used ("" for
	// exploration or none).
	Strategy []string
}

// L1 is one (strategy, pattern) pair of the pattern analyst's first list.
type L1 struct {
	Strategy string  `json:"strategy"`
	Pattern  Pattern `json:"pattern"`
}

// Analysis is the pattern analyst's output: L1 pairs for stage goals met
// with a memory strategy, L2 patterns for goals met only in the reference
// dialogue or absent from the plan.
type Analysis struct {
	L1 []L1      `json:"l1"`
	L2 []Pattern `json:"l2"`
}

// NewStrategy is one strategy proposed by the strategy generator, with
// the patterns it was abstracted from.
type NewStrategy struct {
	Text     string    `json:"text"`
	Domain   string    `json:"domain"`
	Category Category  `json:"category,omitempty"`
	Recipe   []string  `json:"recipe,omitempty"`
	Goal     string    `json:"goal,omitempty"`
	Patterns []Pattern `json:"patterns"`
}

// StepGenerator writes a plan for a task from its retrieved subtree
// (PersuHMM paper §3.2, Step Generator). seed makes a sampling
// implementation reproducible.
type StepGenerator interface {
	Plan(ctx context.Context, task Task, sub Subtree, seed uint64) (Plan, llm.Usage, error)
}

// GoalEvaluator scores each stage goal of plan in the dialogue with an
// integer in 1..5 (one per stage, in order) from explicit changes in the
// persuadee's attitude, actions or commitments.
type GoalEvaluator interface {
	Score(ctx context.Context, task Task, plan Plan, d Dialogue) ([]int, llm.Usage, error)
}

// PatternAnalyst summarises success patterns from the scores, the dialogue
// and the task's reference dialogue.
type PatternAnalyst interface {
	Analyse(ctx context.Context, task Task, plan Plan, scores []int, d Dialogue) (Analysis, llm.Usage, error)
}

// StrategyGenerator abstracts new strategies, each with its domain, from
// accumulated L2 patterns; patterns it does not use stay for later
// batches. Strategies of one domain must differ.
type StrategyGenerator interface {
	Generate(ctx context.Context, patterns []Pattern) ([]NewStrategy, llm.Usage, error)
}

// Refiner holds the strategy refiner's judgements; Refine applies them.
type Refiner interface {
	// Same returns the index in domain of a strategy identical to s, or
	// -1.
	Same(ctx context.Context, s NewStrategy, domain []*Strategy) (int, llm.Usage, error)
	// Classify returns s's category.
	Classify(ctx context.Context, s NewStrategy) (Category, llm.Usage, error)
	// Groups returns groups (indices into domain) of similar strategies:
	// those with similar methods for similar goals that could replace one
	// another in their success patterns.
	Groups(ctx context.Context, domain []*Strategy) ([][]int, llm.Usage, error)
}

// Summariser names macro domains and writes macro-strategies
// (Hierarchise).
type Summariser interface {
	// MacroDomain names a group of domains.
	MacroDomain(ctx context.Context, domains []string) (string, llm.Usage, error)
	// MacroStrategy returns an abstract strategy capturing the shared
	// methods and goals of members, or ok = false to dissolve the cluster.
	MacroStrategy(ctx context.Context, members []*Strategy) (text string, ok bool, usage llm.Usage, err error)
}

// Guide builds the persuader guided by a plan and its subtree. The
// persuader's sessions record what they meant per turn into d (Stage,
// Acts, Strategy); explore in [0, 1] is the per-turn chance of an
// off-plan exploratory move (0 at test time).
type Guide interface {
	Persuader(task Task, plan Plan, sub Subtree, explore float64, d *Dialogue) episode.Persuader
}

// Components is one implementation of every LLM-shaped part of the loop.
type Components struct {
	// Name is "embedded" or "llm".
	Name       string
	Steps      StepGenerator
	Goals      GoalEvaluator
	Analyst    PatternAnalyst
	Generator  StrategyGenerator
	Refiner    Refiner
	Summariser Summariser
	Guide      Guide
}

func (c Components) check() error {
	if c.Steps == nil || c.Goals == nil || c.Analyst == nil || c.Generator == nil || c.Refiner == nil || c.Summariser == nil || c.Guide == nil {
		return fmt.Errorf("persuhmm: components %q: every component must be set", c.Name)
	}
	return nil
}
