package persuhmm

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
	"github.com/persuarena/persuarena/tagger"
)

// Result is one persuader's test on a task list.
type Result struct {
	Name string
	// Won[i] reports whether test task i ended in the persuadee's accept
	// (the simulator's Win Rate judge).
	Won []bool
	// Tokens is the test dialogues' engine tokens (prompt + completion).
	Tokens int
	// Transcripts[i] is test task i's visible dialogue, for the LLM
	// judges (JudgeResult, PreferResults).
	Transcripts [][]episode.Message
}

// WinRate returns the share of tasks won, in [0, 1] (0 for none).
func (r Result) WinRate() float64 {
	if len(r.Won) == 0 {
		return 0
	}
	n := 0
	for _, w := range r.Won {
		if w {
			n++
		}
	}
	return float64(n) / float64(len(r.Won))
}

// Test plays one episode per task (seed episode.Seed(seed, id, 0)) with
// per against pee and records wins. Errors: Run's, or a failed episode.
func Test(ctx context.Context, per episode.Persuader, tasks []Task, pee episode.Persuadee, cfg episode.Config, seed uint64) (Result, error) {
	r := Result{Name: per.Name(), Won: make([]bool, len(tasks)), Transcripts: make([][]episode.Message, len(tasks))}
	for i, t := range tasks {
		ep, err := episode.Run(ctx, cfg, t.Scenario, per, pee, episode.Seed(seed, t.Scenario.ID, 0))
		if err != nil {
			return r, err
		}
		if ep.Error != "" {
			return r, fmt.Errorf("persuhmm: test episode %s failed: %s", t.Scenario.ID, ep.Error)
		}
		r.Won[i] = ep.Terminal == decision.TermAccept
		r.Transcripts[i] = ep.Transcript()
		u := ep.InitialProbeUsage
		for _, tr := range ep.Turns {
			u = u.Add(tr.PersuaderUsage).Add(tr.PersuadeeUsage).Add(tr.ProbeUsage)
		}
		r.Tokens += u.PromptTokens + u.CompletionTokens
	}
	return r, nil
}

// noSkills is ablation 0 (no persuasion skills): every turn states the
// plan and asks for the decision, with no diagnosis, evidence or
// autonomy.
type noSkills struct{}

func (noSkills) Name() string { return "no-skills" }
func (noSkills) Start(_ context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	return noSkillsSession{pub, seed}, nil
}

type noSkillsSession struct {
	pub  scenario.Public
	seed uint64
}

func (s noSkillsSession) Say(_ context.Context, tr []episode.Message) (episode.Utterance, error) {
	return baseline.Realise(s.pub, tagger.ActSet(0).With(tagger.Plan).With(tagger.Commitment), tr, s.seed)
}

// Paired compares a with b on the same tasks: the exact McNemar p-value
// over discordant pairs (stats.McNemarExact), with aOnly the tasks a won
// and b lost and bOnly the converse.
func Paired(a, b Result) (aOnly, bOnly int, p float64) {
	for i := range min(len(a.Won), len(b.Won)) {
		switch {
		case a.Won[i] && !b.Won[i]:
			aOnly++
		case !a.Won[i] && b.Won[i]:
			bOnly++
		}
	}
	return aOnly, bOnly, stats.McNemarExact(aOnly, bOnly)
}

// AblationConfig configures Ablate and CrossDomain.
type AblationConfig struct {
	Learn, Test []Task
	Persuadee   episode.Persuadee
	Encoder     embed.Encoder
	Learning    LearnConfig
	Hier        HierOptions
	// TopK for test-time retrieval (0: the whole subtree).
	TopK int
	// Progress, when set, gets one line per finished step.
	Progress io.Writer
}

// Row is one line of the ablation table.
type Row struct {
	Result
	// LearnTokens is the learning run's tokens (components and
	// dialogues); Strategies the memory's size.
	LearnTokens, Strategies int
}

// Ablation is the PersuHMM paper's Table 4 on one test set, with the
// built-in persuaders as baselines.
type Ablation struct {
	Rows      []Row
	Baselines []Result
}

// Strongest returns the baseline of highest win rate (ties: the first).
func (a Ablation) Strongest() Result {
	best := a.Baselines[0]
	for _, b := range a.Baselines[1:] {
		if b.WinRate() > best.WinRate() {
			best = b
		}
	}
	return best
}

func (c AblationConfig) say(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}

// learnMemory learns a fresh memory with comp and returns it.
func learnMemory(ctx context.Context, c AblationConfig, tasks []Task, comp Components) (*Memory, error) {
	m := New()
	lc := c.Learning
	lc.Checkpoint, lc.Progress = "", nil
	if err := Learn(ctx, m, tasks, c.Persuadee, comp, c.Encoder, lc); err != nil {
		return nil, err
	}
	return m, nil
}

// Ablate runs the five ablations of the PersuHMM paper's Table 4 with the
// embedded components: (0) no persuasion skills; (1) plans from the task
// alone, no memory; (2) a memory learned by judging whole dialogues
// (NewDirectAnalyst); (3) the full loop without hierarchy; (4) the full
// loop with Hierarchise and hierarchy-aware retrieval; then every built-in
// persuader on the same test tasks. Errors: Learn's, Hierarchise's or
// Test's.
func Ablate(ctx context.Context, c AblationConfig) (Ablation, error) {
	var a Ablation
	ec := c.Learning.Episode
	seed := c.Learning.Seed
	comp := NewEmbeddedComponents(0, 0)
	test := func(p episode.Persuader, learnTokens, n int) error {
		r, err := Test(ctx, p, c.Test, c.Persuadee, ec, seed)
		if err != nil {
			return err
		}
		a.Rows = append(a.Rows, Row{Result: r, LearnTokens: learnTokens, Strategies: n})
		c.say("%-22s win rate %.3f", r.Name, r.WinRate())
		return nil
	}
	if err := test(noSkills{}, 0, 0); err != nil {
		return a, err
	}
	if err := test(NewMemoryPersuader("plan-without-memory", New(), c.Encoder, RetrieveOptions{}, comp), 0, 0); err != nil {
		return a, err
	}
	dcomp := comp
	dcomp.Analyst = NewDirectAnalyst(0)
	dm, err := learnMemory(ctx, c, c.Learn, dcomp)
	if err != nil {
		return a, err
	}
	if err := test(NewMemoryPersuader("direct-comparison", dm, c.Encoder, RetrieveOptions{TopK: c.TopK}, comp), dm.Learn.Tokens(), dm.NumStrategies()); err != nil {
		return a, err
	}
	fm, err := learnMemory(ctx, c, c.Learn, comp)
	if err != nil {
		return a, err
	}
	if err := test(NewMemoryPersuader("no-hierarchy", fm, c.Encoder, RetrieveOptions{TopK: c.TopK}, comp), fm.Learn.Tokens(), fm.NumStrategies()); err != nil {
		return a, err
	}
	hu, err := fm.Hierarchise(ctx, c.Encoder, comp.Summariser, c.Hier)
	if err != nil {
		return a, err
	}
	if err := test(NewMemoryPersuader("full", fm, c.Encoder, RetrieveOptions{TopK: c.TopK, Hierarchy: true}, comp), fm.Learn.Tokens()+hu.PromptTokens+hu.CompletionTokens, fm.NumStrategies()); err != nil {
		return a, err
	}
	for _, n := range baseline.Names() {
		p, err := baseline.New(n)
		if err != nil {
			return a, err
		}
		r, err := Test(ctx, p, c.Test, c.Persuadee, ec, seed)
		if err != nil {
			return a, err
		}
		a.Baselines = append(a.Baselines, r)
		c.say("%-22s win rate %.3f", r.Name, r.WinRate())
	}
	return a, nil
}

// WriteAblation prints the ablation table as Markdown: win rate, learning
// and test tokens, memory size and the paired test against the strongest
// built-in persuader.
func WriteAblation(w io.Writer, a Ablation) error {
	best := a.Strongest()
	var b strings.Builder
	fmt.Fprintf(&b, "| # | variant | win rate | learn tokens | test tokens | strategies | vs %s (+/-) | McNemar p |\n|---|---|---|---|---|---|---|---|\n", best.Name)
	for i, r := range a.Rows {
		x, y, p := Paired(r.Result, best)
		fmt.Fprintf(&b, "| %d | %s | %.3f (%d/%d) | %d | %d | %d | +%d / -%d | %.3g |\n", i, r.Name, r.WinRate(), wins(r.Result), len(r.Won), r.LearnTokens, r.Tokens, r.Strategies, x, y, p)
	}
	b.WriteString("\n| built-in | win rate |\n|---|---|\n")
	for _, r := range a.Baselines {
		fmt.Fprintf(&b, "| %s | %.3f (%d/%d) |\n", r.Name, r.WinRate(), wins(r), len(r.Won))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func wins(r Result) int {
	n := 0
	for _, w := range r.Won {
		if w {
			n++
		}
	}
	return n
}

// CrossRow is one learning domain of the cross-domain table.
type CrossRow struct {
	Domain string
	// In is the full model on the test tasks of Domain, Out on the other
	// domains' test tasks; Plain is the plan without memory and Best the
	// strongest built-in on those other tasks.
	In, Out, Plain, Best Result
	Strategies           int
}

// CrossDomain learns one memory per domain of c.Learn (full loop and
// Hierarchise) from that domain's tasks only and tests it on the test
// tasks of that domain and of all the others, beside the plan without
// memory and the built-in persuader best on c.Test (strongest). Domains
// come sorted. Errors: as Ablate.
func CrossDomain(ctx context.Context, c AblationConfig, strongest string) ([]CrossRow, error) {
	var doms []string
	for _, t := range c.Learn {
		if !slices.Contains(doms, t.Domains[0]) {
			doms = append(doms, t.Domains[0])
		}
	}
	slices.Sort(doms)
	comp := NewEmbeddedComponents(0, 0)
	ec, seed := c.Learning.Episode, c.Learning.Seed
	best, err := baseline.New(strongest)
	if err != nil {
		return nil, err
	}
	var out []CrossRow
	for _, d := range doms {
		var learn, in, others []Task
		for _, t := range c.Learn {
			if t.Domains[0] == d {
				learn = append(learn, t)
			}
		}
		for _, t := range c.Test {
			if t.Domains[0] == d {
				in = append(in, t)
			} else {
				others = append(others, t)
			}
		}
		m, err := learnMemory(ctx, c, learn, comp)
		if err != nil {
			return nil, err
		}
		if _, err := m.Hierarchise(ctx, c.Encoder, comp.Summariser, c.Hier); err != nil {
			return nil, err
		}
		full := NewMemoryPersuader("full", m, c.Encoder, RetrieveOptions{TopK: c.TopK, Hierarchy: true}, comp)
		row := CrossRow{Domain: d, Strategies: m.NumStrategies()}
		if row.In, err = Test(ctx, full, in, c.Persuadee, ec, seed); err != nil {
			return nil, err
		}
		if row.Out, err = Test(ctx, full, others, c.Persuadee, ec, seed); err != nil {
			return nil, err
		}
		if row.Plain, err = Test(ctx, NewMemoryPersuader("plan-without-memory", New(), c.Encoder, RetrieveOptions{}, comp), others, c.Persuadee, ec, seed); err != nil {
			return nil, err
		}
		if row.Best, err = Test(ctx, best, others, c.Persuadee, ec, seed); err != nil {
			return nil, err
		}
		c.say("cross-domain %-24s in %.3f out %.3f", d, row.In.WinRate(), row.Out.WinRate())
		out = append(out, row)
	}
	return out, nil
}

// WriteCross prints the cross-domain table as Markdown.
func WriteCross(w io.Writer, rows []CrossRow) error {
	var b strings.Builder
	b.WriteString("| learned on | strategies | in-domain win rate | other domains: full | plan without memory | strongest built-in | full vs built-in (+/-) | McNemar p |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		x, y, p := Paired(r.Out, r.Best)
		fmt.Fprintf(&b, "| %s | %d | %.3f (%d) | %.3f (%d) | %.3f | %s %.3f | +%d / -%d | %.3g |\n", r.Domain, r.Strategies,
			r.In.WinRate(), len(r.In.Won), r.Out.WinRate(), len(r.Out.Won), r.Plain.WinRate(), r.Best.Name, r.Best.WinRate(), x, y, p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
