package persuhmm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/scenario"
)

// Roles resolves the role names of a learning, ablation or comparison
// run: Persuadee a persuadee name (sim, sim-soft, sim:FILE, llm:ROLE,
// ...), Persuader a persuader name (hmm:FILE, script, llm:ROLE, ...),
// Role an llm:ROLE reference to its role and client, Judge an llm:ROLE
// reference to an LLM judge with samples samples per question.
// *roles.Registry implements it; package roles imports this package (for
// hmm:FILE persuaders), so the methods used are named here. Errors are the
// resolver's (an unknown name, a role missing from the configuration).
type Roles interface {
	Persuadee(name string) (episode.Persuadee, error)
	Persuader(name string) (episode.Persuader, error)
	Role(ref string) (llm.Role, *llm.Client, error)
	Judge(ref string, samples int) (*llmagent.Judge, error)
}

// Encoder resolves a text encoder name: "" or "tfidf" the embedded
// hashed TF-IDF (embed.NewHashedTFIDF), llm:ROLE the /v1/embeddings
// endpoint of the role's backend and model (embed.ForBackend).
// Errors: an unknown name, or the resolver's.
func Encoder(name string, r Roles) (embed.Encoder, error) {
	switch {
	case name == "" || name == "tfidf":
		return embed.NewHashedTFIDF(0), nil
	case strings.HasPrefix(name, "llm:"):
		_, c, err := r.Role(name)
		if err != nil {
			return nil, fmt.Errorf("--encoder: %w", err)
		}
		return embed.ForBackend(c.Backend()), nil
	}
	return nil, fmt.Errorf("unknown encoder %q (want tfidf or llm:ROLE)", name)
}

// LearnSpec is one PersuHMM paper learning run (RunLearn): the tasks, the
// memory file and the loop's sizes. Zero sizes take the package defaults.
type LearnSpec struct {
	// Out is the memory file, saved after every batch; an existing one is
	// loaded and its learning resumed (Learn). Required.
	Out string
	// Scenarios are scenario set references (built-in names or JSONL
	// files) whose Split ("" all) gives the tasks, unless DailyPersuasion
	// names a DailyPersuasion JSON file to learn on instead.
	Scenarios       []string
	Split           string
	DailyPersuasion string
	// Tasks > 0 keeps only the first Tasks tasks.
	Tasks int
	// B is the batch size, U the strategies per domain, W the success
	// patterns per strategy, Nd the validation threshold N_d (0:
	// DefaultB, DefaultU, DefaultW, DefaultNd; the PersuHMM paper's 10,
	// 24, 3, 15).
	B, U, W, Nd int
	// MacroDomains is Hierarchise's K-means cluster count (0: 21/35 of
	// the domains, as the PersuHMM paper); NoHierarchy skips Hierarchise.
	MacroDomains int
	NoHierarchy  bool
	// Persuadee is the persuadee name, resolved by Roles.
	Persuadee string
	// LLM, when set, is an llm:ROLE reference: every component, and the
	// guided persuader, runs as that role (NewLLMComponents); "" runs the
	// embedded rules (NewEmbeddedComponents).
	LLM string
	// Encoder names the text encoder of retrieval and K-means (Encoder:
	// "" the hashed TF-IDF, llm:ROLE an engine's /v1/embeddings).
	Encoder string
	// Roles resolves Persuadee and LLM. Required.
	Roles Roles
	// Seed orders the tasks and seeds the episodes and K-means; Tmax is
	// the maximum persuader turns per episode (0: episode.DefaultTmax).
	Seed uint64
	Tmax int
}

// Validate checks what RunLearn needs before it loads anything: a memory
// file, a role resolver and non-negative sizes. Errors name the field.
func (s LearnSpec) Validate() error {
	switch {
	case s.Out == "":
		return errors.New("persuhmm: learn: no memory file (Out)")
	case s.Roles == nil:
		return errors.New("persuhmm: learn: no role resolver (Roles)")
	case s.B < 0 || s.U < 0 || s.W < 0 || s.Tmax < 0 || s.MacroDomains < 0:
		return fmt.Errorf("persuhmm: learn: negative size (B %d, U %d, W %d, Tmax %d, MacroDomains %d)", s.B, s.U, s.W, s.Tmax, s.MacroDomains)
	}
	return nil
}

// RunLearn runs the PersuHMM paper's learning loop for spec: it loads the
// tasks (LoadTasks), resolves the persuadee and components through
// spec.Roles, resumes spec.Out when it exists (saying "resuming FILE" on
// log; nil discards), learns (Learn, one progress line per batch on log), hierarchises
// unless spec.NoHierarchy and saves, and returns the memory. Errors:
// Validate's, LoadTasks', the resolver's, Load's, Learn's, Hierarchise's
// and Save's.
func RunLearn(ctx context.Context, spec LearnSpec, log io.Writer) (*Memory, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	tasks, err := LoadTasks(spec.Scenarios, spec.Split, spec.DailyPersuasion, spec.Tasks)
	if err != nil {
		return nil, err
	}
	pee, err := spec.Roles.Persuadee(spec.Persuadee)
	if err != nil {
		return nil, err
	}
	comp := NewEmbeddedComponents(0, 0)
	if spec.LLM != "" {
		role, c, err := spec.Roles.Role(spec.LLM)
		if err != nil {
			return nil, err
		}
		comp = NewLLMComponents(c, role.Sampling, func(style string) episode.Persuader {
			p := llmagent.NewPersuader(spec.LLM, c, role)
			p.Style = style
			return p
		})
	}
	enc, err := Encoder(spec.Encoder, spec.Roles)
	if err != nil {
		return nil, err
	}
	m := New()
	if _, err := os.Stat(spec.Out); err == nil {
		if m, err = Load(spec.Out); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "resuming %s\n", spec.Out)
	}
	err = Learn(ctx, m, tasks, pee, comp, enc, LearnConfig{
		B: spec.B, Refine: RefineOptions{U: spec.U, W: spec.W, Nd: spec.Nd}, Seed: spec.Seed,
		Episode: episode.Config{Tmax: spec.Tmax}, Checkpoint: spec.Out,
		Progress: func(s LearnState) {
			fmt.Fprintf(log, "tasks %d/%d  accepted %d  pending patterns %d  tokens %d\n", s.Done, s.Total, s.Accepted, len(s.Pending), s.Tokens())
		},
	})
	if err != nil {
		return nil, err
	}
	if !spec.NoHierarchy {
		u, err := m.Hierarchise(ctx, enc, comp.Summariser, HierOptions{MacroDomains: spec.MacroDomains, Seed: spec.Seed})
		if err != nil {
			return nil, err
		}
		m.Learn.ComponentUsage = m.Learn.ComponentUsage.Add(u)
		if err := m.Save(spec.Out); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// LoadTasks reads learning or test tasks: the DailyPersuasion JSON file
// dp when set (LoadDailyPersuasion), else the split ("" all) of the
// scenario sets (built-in names or JSONL files, TasksFromScenarios); n > 0
// keeps the first n. Errors: the loader's, or no tasks at all.
func LoadTasks(sets []string, split, dp string, n int) ([]Task, error) {
	var tasks []Task
	if dp != "" {
		t, err := LoadDailyPersuasion(dp)
		if err != nil {
			return nil, err
		}
		tasks = t
	} else {
		ss, err := scenario.ResolveSplit(scenario.Split(split), sets...)
		if err != nil {
			return nil, err
		}
		tasks = TasksFromScenarios(ss)
	}
	if n > 0 && n < len(tasks) {
		tasks = tasks[:n]
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("no tasks in %v (split %q)", sets, split)
	}
	return tasks, nil
}

// WriteTree writes m as its tree: one line per macro domain (name and
// member domains), then each domain's subtree (Subtree.Text) followed by
// its count of learning tasks. Errors: w's.
func (m *Memory) WriteTree(w io.Writer) error {
	for _, md := range m.MacroDomains {
		if _, err := fmt.Fprintf(w, "macro domain %q: %v\n", md.Name, md.Domains); err != nil {
			return err
		}
	}
	for _, d := range m.Domains {
		sub := Subtree{Domains: []string{d.Name}, Strategies: d.Strategies, Macros: d.Macros}
		if _, err := fmt.Fprintf(w, "%s(%d learning tasks)\n", sub.Text(), d.Seen); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSONL writes m as JSON lines, one strategy a line in domain order:
// the Strategy's fields plus "validity" (V = n_succ / n_d, Validity).
// Errors: the encoder's or w's.
func (m *Memory) WriteJSONL(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, d := range m.Domains {
		for _, s := range d.Strategies {
			row := struct {
				*Strategy
				Validity float64 `json:"validity"`
			}{s, s.Validity()}
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteStats writes m's summary (Stats) on one line, and a second line
// with the learning state (tasks done, accepted dialogues, tokens,
// component requests) when m has one. Errors: w's.
func (m *Memory) WriteStats(w io.Writer) error {
	s := m.Stats()
	_, err := fmt.Fprintf(w, "domains %d  strategies %d (logical %d, emotional %d, behavioral %d)  patterns %d  macro domains %d  macro-strategies %d  mean validity %.3f  learning tasks %d\n",
		s.Domains, s.Strategies, s.PerCategory[Logical], s.PerCategory[Emotional], s.PerCategory[Behavioral],
		s.Patterns, s.MacroDomains, s.MacroStrategies, s.MeanValidity, s.TasksLearned)
	if err == nil && m.Learn != nil {
		_, err = fmt.Fprintf(w, "learning: %d/%d tasks, %d accepted, tokens %d (components %d requests)\n", m.Learn.Done, m.Learn.Total, m.Learn.Accepted, m.Learn.Tokens(), m.Learn.ComponentUsage.Requests)
	}
	return err
}

// AblateSpec is one PersuHMM paper ablation (RunAblate) on the embedded
// path: learn on the train split of Scenarios, test on its val and
// held-out splits.
type AblateSpec struct {
	// Scenarios are scenario set references (built-in names or JSONL
	// files); Tasks > 0 learns on only the first Tasks train tasks.
	Scenarios []string
	Tasks     int
	// Persuadee is the persuadee name, resolved by Roles (required).
	Persuadee string
	Roles     Roles
	// TopK is the test-time retrieval size (0: the whole subtree).
	TopK int
	// Encoder names the text encoder (Encoder; "" the hashed TF-IDF).
	Encoder string
	// Cross adds the cross-domain table (CrossDomain).
	Cross bool
	// Seed orders the tasks and seeds the episodes and K-means; Tmax is
	// the maximum persuader turns per episode (0: episode.DefaultTmax).
	Seed uint64
	Tmax int
}

// RunAblate runs the ablation of spec (Ablate) and writes to out a header
// line (task counts, persuadee, seed), the ablation table (WriteAblation)
// and, with spec.Cross, the cross-domain table against the strongest
// baseline (CrossDomain, WriteCross); progress lines go to log (nil: none). Errors:
// LoadTasks', the resolver's, Ablate's, CrossDomain's and out's.
func RunAblate(ctx context.Context, spec AblateSpec, out, log io.Writer) error {
	if spec.Roles == nil {
		return errors.New("persuhmm: ablate: no role resolver (Roles)")
	}
	learn, err := LoadTasks(spec.Scenarios, string(scenario.Train), "", spec.Tasks)
	if err != nil {
		return err
	}
	val, err := LoadTasks(spec.Scenarios, string(scenario.Val), "", 0)
	if err != nil {
		return err
	}
	held, err := LoadTasks(spec.Scenarios, string(scenario.Heldout), "", 0)
	if err != nil {
		return err
	}
	pee, err := spec.Roles.Persuadee(spec.Persuadee)
	if err != nil {
		return err
	}
	enc, err := Encoder(spec.Encoder, spec.Roles)
	if err != nil {
		return err
	}
	c := AblationConfig{Learn: learn, Test: append(val, held...), Persuadee: pee, Encoder: enc,
		Learning: LearnConfig{Seed: spec.Seed, Episode: episode.Config{Tmax: spec.Tmax}}, Hier: HierOptions{Seed: spec.Seed},
		TopK: spec.TopK, Progress: log}
	a, err := Ablate(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "learn %d tasks, test %d tasks, persuadee %s, seed %d\n\n", len(learn), len(c.Test), spec.Persuadee, spec.Seed)
	if err := WriteAblation(out, a); err != nil {
		return err
	}
	if !spec.Cross {
		return nil
	}
	rows, err := CrossDomain(ctx, c, a.Strongest().Name)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	return WriteCross(out, rows)
}

// CompareSpec is one LLM-judged comparison of two persuaders (RunCompare):
// the PersuHMM paper's judge scores and pairwise preference.
type CompareSpec struct {
	// A and B are persuader names (hmm:FILE, built-ins, llm:ROLE, ...).
	A, B string
	// Persuadee is the persuadee name.
	Persuadee string
	// Judges are one or more llm:ROLE judges; Samples the samples per
	// question (<= 1: one).
	Judges  []string
	Samples int
	// Scenarios, Split, DailyPersuasion and Tasks select the tasks
	// (LoadTasks).
	Scenarios       []string
	Split           string
	DailyPersuasion string
	Tasks           int
	// Roles resolves every name. Required.
	Roles Roles
	// Seed seeds the episodes; Tmax is the maximum persuader turns (0:
	// episode.DefaultTmax).
	Seed uint64
	Tmax int
}

// RunCompare plays spec.A and spec.B on the tasks of spec, has every judge
// rate and compare them (Compare) and writes a header line and the tables
// (WriteComparison) to out; a progress line goes to log (nil: none).
// Errors: no judge or resolver, LoadTasks', the resolver's, Compare's and
// out's.
func RunCompare(ctx context.Context, spec CompareSpec, out, log io.Writer) error {
	if spec.Roles == nil {
		return errors.New("persuhmm: compare: no role resolver (Roles)")
	}
	if len(spec.Judges) == 0 {
		return errors.New("persuhmm: compare: no judge (want --judge llm:ROLE)")
	}
	if log == nil {
		log = io.Discard
	}
	tasks, err := LoadTasks(spec.Scenarios, spec.Split, spec.DailyPersuasion, spec.Tasks)
	if err != nil {
		return err
	}
	var pers [2]episode.Persuader
	for i, n := range []string{spec.A, spec.B} {
		if pers[i], err = spec.Roles.Persuader(n); err != nil {
			return err
		}
	}
	pee, err := spec.Roles.Persuadee(spec.Persuadee)
	if err != nil {
		return err
	}
	var judges []*llmagent.Judge
	for _, ref := range spec.Judges {
		j, err := spec.Roles.Judge(ref, spec.Samples)
		if err != nil {
			return err
		}
		judges = append(judges, j)
	}
	fmt.Fprintf(log, "comparing %s and %s on %d tasks against %s\n", spec.A, spec.B, len(tasks), spec.Persuadee)
	c, err := Compare(ctx, pers[0], pers[1], tasks, pee, judges, episode.Config{Tmax: spec.Tmax}, spec.Seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d tasks, persuadee %s, judges %s, seed %d\n\n", len(tasks), spec.Persuadee, strings.Join(spec.Judges, ", "), spec.Seed)
	return WriteComparison(out, c)
}
