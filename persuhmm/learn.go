package persuhmm

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
)

// LearnState is the resumable state of a learning run, saved in the memory
// file after every batch.
type LearnState struct {
	// Seed and TaskSet (FNV-64a of the task ids in order) identify the
	// run; a resume with others is refused.
	Seed    uint64 `json:"seed"`
	TaskSet string `json:"task_set"`
	// Done is the number of tasks processed (whole batches).
	Done  int `json:"done"`
	Total int `json:"total"`
	// Pending holds L2 patterns not yet turned into strategies.
	Pending []Pattern `json:"pending,omitempty"`
	// Tokens: the components' engine usage and the dialogues' (persuader
	// and persuadee, probes included).
	ComponentUsage llm.Usage     `json:"component_usage"`
	DialogueUsage  episode.Usage `json:"dialogue_usage"`
	// Accepted counts learning dialogues the persuadee accepted.
	Accepted int `json:"accepted"`
}

// Tokens returns the learning run's total tokens (prompt + completion).
func (s *LearnState) Tokens() int {
	return s.ComponentUsage.PromptTokens + s.ComponentUsage.CompletionTokens + s.DialogueUsage.PromptTokens + s.DialogueUsage.CompletionTokens
}

// LearnConfig configures Learn.
type LearnConfig struct {
	// B is the batch size (0: DefaultB); Refine holds U, W and N_d.
	B      int
	Refine RefineOptions
	// Retrieve controls the subtree of each task.
	Retrieve RetrieveOptions
	// Seed orders the tasks (a seeded shuffle) and seeds every episode.
	Seed uint64
	// Explore is the guided persuader's per-turn exploration chance
	// during learning; 0 means DefaultExplore, < 0 none.
	Explore float64
	// Episode configures the dialogues (Tmax, probes).
	Episode episode.Config
	// Checkpoint, when set, is the memory file saved after each batch.
	Checkpoint string
	// Progress, when set, is called after each batch.
	Progress func(LearnState)
	// PendingCap bounds the carried L2 patterns (0: 20 B, oldest dropped).
	PendingCap int
}

// DefaultExplore is the learning-time exploration chance per turn.
//
// Choice: the PersuHMM paper's LLM persuader departs from its plan by
// itself; the embedded persuader does so by a 0.25 chance of a random act
// set per turn, which is what gives its analyst patterns absent from the
// plan.
const DefaultExplore = 0.25

// taskSet fingerprints the task ids in order.
func taskSet(tasks []Task) string {
	h := fnv.New64a()
	for _, t := range tasks {
		if t.Scenario != nil {
			h.Write([]byte(t.Scenario.ID))
		}
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// ErrResume is wrapped when a memory's learning state does not match the
// run being resumed.
var ErrResume = errors.New("cannot resume")

// Learn runs the PersuHMM paper's iterative learning (§3.2) over tasks on
// m against pee, in batches of B: for each task, SeeTask for its domains,
// Retrieve, comp.Steps.Plan, one episode with comp.Guide's persuader,
// comp.Goals.Score, comp.Analyst.Analyse, and L1 pairs applied at once
// (Succeed, at most once per strategy and task); after each batch,
// comp.Generator over the pending L2 patterns, Refine, and a checkpoint.
// A memory whose Learn state matches (same seed and tasks) resumes after
// its last finished batch; a finished one returns at once. The same
// memory, tasks, seed and components give the same memory. Errors: a
// mismatched resume (ErrResume), a failed episode's role error, a
// component's or the checkpoint's error; a cancelled ctx returns
// ctx.Err() with the last checkpoint intact.
func Learn(ctx context.Context, m *Memory, tasks []Task, pee episode.Persuadee, comp Components, enc embed.Encoder, cfg LearnConfig) error {
	if err := comp.check(); err != nil {
		return err
	}
	if cfg.B <= 0 {
		cfg.B = DefaultB
	}
	if cfg.Explore == 0 {
		cfg.Explore = DefaultExplore
	} else if cfg.Explore < 0 {
		cfg.Explore = 0
	}
	if cfg.PendingCap <= 0 {
		cfg.PendingCap = 20 * cfg.B
	}
	ts := taskSet(tasks)
	if m.Learn == nil {
		m.Learn = &LearnState{Seed: cfg.Seed, TaskSet: ts, Total: len(tasks)}
	} else if m.Learn.Seed != cfg.Seed || m.Learn.TaskSet != ts {
		return fmt.Errorf("persuhmm: %w: the memory was learned with seed %d on task set %s, not seed %d on %s", ErrResume, m.Learn.Seed, m.Learn.TaskSet, cfg.Seed, ts)
	}
	st := m.Learn
	order := rand.New(rand.NewPCG(cfg.Seed, 0x5eed)).Perm(len(tasks))
	for st.Done < len(tasks) {
		end := min(st.Done+cfg.B, len(tasks))
		for _, ti := range order[st.Done:end] {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := learnTask(ctx, m, tasks[ti], pee, comp, enc, cfg); err != nil {
				return err
			}
		}
		news, u, err := comp.Generator.Generate(ctx, st.Pending)
		st.ComponentUsage = st.ComponentUsage.Add(u)
		if err != nil {
			return fmt.Errorf("persuhmm: strategy generator: %w", err)
		}
		used := map[string]bool{}
		for _, ns := range news {
			for _, p := range ns.Patterns {
				used[p.Text] = true
			}
		}
		_, _, u, err = m.Refine(ctx, news, comp.Refiner, enc, cfg.Refine)
		st.ComponentUsage = st.ComponentUsage.Add(u)
		if err != nil {
			return err
		}
		var keep []Pattern
		for _, p := range st.Pending {
			if !used[p.Text] {
				keep = append(keep, p)
			}
		}
		if len(keep) > cfg.PendingCap {
			keep = keep[len(keep)-cfg.PendingCap:]
		}
		st.Pending = keep
		st.Done = end
		if cfg.Checkpoint != "" {
			if err := m.Save(cfg.Checkpoint); err != nil {
				return err
			}
		}
		if cfg.Progress != nil {
			cfg.Progress(*st)
		}
	}
	return nil
}

func learnTask(ctx context.Context, m *Memory, task Task, pee episode.Persuadee, comp Components, enc embed.Encoder, cfg LearnConfig) error {
	st := m.Learn
	for _, d := range task.Domains {
		m.SeeTask(d)
	}
	sub, err := m.Retrieve(ctx, enc, task, cfg.Retrieve)
	if err != nil {
		return err
	}
	seed := episode.Seed(cfg.Seed, task.Scenario.ID, 0)
	plan, u, err := comp.Steps.Plan(ctx, task, sub, seed)
	st.ComponentUsage = st.ComponentUsage.Add(u)
	if err != nil {
		return fmt.Errorf("persuhmm: step generator on %s: %w", task.Scenario.ID, err)
	}
	d := Dialogue{}
	per := comp.Guide.Persuader(task, plan, sub, cfg.Explore, &d)
	ep, err := episode.Run(ctx, cfg.Episode, task.Scenario, per, pee, seed)
	if err != nil {
		return err
	}
	if ep.Error != "" {
		return fmt.Errorf("persuhmm: episode %s failed: %s", task.Scenario.ID, ep.Error)
	}
	d.Episode = ep
	for _, t := range ep.Turns {
		st.DialogueUsage = st.DialogueUsage.Add(t.PersuaderUsage).Add(t.PersuadeeUsage).Add(t.ProbeUsage)
	}
	st.DialogueUsage = st.DialogueUsage.Add(ep.InitialProbeUsage)
	if ep.Terminal == "accept" {
		st.Accepted++
	}
	scores, u, err := comp.Goals.Score(ctx, task, plan, d)
	st.ComponentUsage = st.ComponentUsage.Add(u)
	if err != nil {
		return fmt.Errorf("persuhmm: goal evaluator on %s: %w", task.Scenario.ID, err)
	}
	an, u, err := comp.Analyst.Analyse(ctx, task, plan, scores, d)
	st.ComponentUsage = st.ComponentUsage.Add(u)
	if err != nil {
		return fmt.Errorf("persuhmm: pattern analyst on %s: %w", task.Scenario.ID, err)
	}
	done := map[string]bool{}
	w := cfg.Refine.withDefaults().W
	for _, p := range an.L1 {
		s := m.Strategy(p.Strategy)
		if s == nil {
			continue
		}
		if done[s.ID] {
			if err := AddPattern(ctx, s, p.Pattern, w, enc); err != nil {
				return err
			}
			continue
		}
		done[s.ID] = true
		if err := Succeed(ctx, s, p.Pattern, w, enc); err != nil {
			return err
		}
	}
	st.Pending = append(st.Pending, an.L2...)
	return nil
}
