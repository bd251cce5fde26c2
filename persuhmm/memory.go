// Package persuhmm is the PersuHMM paper's hierarchical meta-strategy
// memory and the learning loop that fills it.
//
// The memory is a tree domain → category {logical, emotional, behavioral}
// → strategy. Each strategy keeps its text, its domain and category, a
// success count n_succ, n_d (the number of learning tasks of its domain
// seen since the strategy was created), its validity V = n_succ / n_d and
// up to W success patterns kept maximally diverse by embedding distance.
// After learning, K-means over domain and strategy embeddings adds macro
// domains and macro-strategies (Hierarchise).
//
// The learning loop (Learn) follows the paper's meta-layer / task-layer
// design in batches of B tasks: a step generator writes a plan of (step,
// stage goal, strategy) triples from the task's retrieved subtree; a
// persuader guided by the plan talks with the persuadee; a goal evaluator
// scores each stage goal 1-5; a pattern analyst turns the scores into L1
// (strategy, pattern) pairs, which update validity and patterns at once,
// and L2 patterns; at the end of each batch a strategy generator abstracts
// new strategies from the L2 patterns and a strategy refiner merges or
// inserts them and handles overflow above U strategies per domain.
//
// Every LLM-shaped component has two implementations behind one interface
// (Components): prompted LLM roles (NewLLMComponents) and an embedded path
// with no language model (NewEmbeddedComponents), in which a strategy is an
// act-level recipe the template realiser of package baseline can voice,
// a stage goal is a target movement of one probe (CA, PE or AC) read from
// the persuadee's probe trajectory, and the analyst, generator and refiner
// are the documented rules of rules.go. docs/persuhmm.md describes both.
//
// RunLearn and RunAblate (specs LearnSpec and AblateSpec) are the one-call
// entry points of the "persuarena memory" commands.
package persuhmm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/internal/atomicfile"
	"github.com/persuarena/persuarena/internal/filelimit"
)

// Category is a strategy's kind in the memory tree (PersuHMM paper §3.1).
type Category string

// The three categories.
const (
	Logical    Category = "logical"
	Emotional  Category = "emotional"
	Behavioral Category = "behavioral"
)

// Categories lists the categories in tree order.
var Categories = []Category{Logical, Emotional, Behavioral}

// ParseCategory returns the category named s (case-insensitive); ok is
// false for any other string.
func ParseCategory(s string) (Category, bool) {
	for _, c := range Categories {
		if strings.EqualFold(strings.TrimSpace(s), string(c)) {
			return c, true
		}
	}
	return "", false
}

// Defaults of the PersuHMM paper's learning setup (§4.1).
const (
	// DefaultB is the batch size B (tasks per meta-layer update).
	DefaultB = 10
	// DefaultU is the per-domain strategy cap U.
	DefaultU = 24
	// DefaultW is the number W of success patterns kept per strategy.
	DefaultW = 3
	// DefaultNd is the validation threshold N_d: a strategy's validity
	// counts in overflow handling only when n_d > N_d.
	DefaultNd = 15
)

// Version is the memory file format version (Memory.Version).
const Version = 1

// Pattern is one success pattern: a short description of the domain, the
// background, the persuader's action, the persuadee's response, the
// follow-up and the goal reached (PersuHMM paper §3.2, Pattern Analyst).
// Recipe and Goal are set on the embedded path (act sets per turn, e.g.
// ["diagnostic+autonomy"], and the probe id moved), empty for LLM-written
// patterns.
type Pattern struct {
	Text   string   `json:"text"`
	Domain string   `json:"domain,omitempty"`
	Recipe []string `json:"recipe,omitempty"`
	Goal   string   `json:"goal,omitempty"`
}

// Strategy is one leaf of the memory tree.
type Strategy struct {
	// ID is unique within the memory ("d3-s12": creation order).
	ID       string   `json:"id"`
	Text     string   `json:"text"`
	Domain   string   `json:"domain"`
	Category Category `json:"category"`
	// Recipe is the embedded path's act-level recipe: one act set per
	// turn, each a "+"-joined list of tagger act names
	// ("diagnostic+autonomy"). Empty for strategies written by an LLM.
	Recipe []string `json:"recipe,omitempty"`
	// Goal is the probe id ("ca", "pe", "ac") the recipe aims to move;
	// empty for LLM strategies.
	Goal string `json:"goal,omitempty"`
	// Succ is n_succ, the number of learning tasks in which the strategy
	// achieved a stage goal (at most one per task).
	Succ int `json:"n_succ"`
	// ND is n_d, the number of learning tasks of the strategy's domain
	// since the strategy was created (see NewStrategy for the start).
	ND int `json:"n_d"`
	// Patterns holds at most W success patterns (AddPattern).
	Patterns []Pattern `json:"patterns"`
	// Macro is the id of the macro-strategy whose cluster holds the
	// strategy, "" when none (Hierarchise).
	Macro string `json:"macro,omitempty"`
}

// Validity returns V = n_succ / n_d in [0, 1], 0 when n_d = 0 (PersuHMM
// paper §3.2). Choice: values above 1 (possible after merges) are capped
// at 1.
func (s *Strategy) Validity() float64 {
	if s.ND <= 0 {
		return 0
	}
	return math.Min(1, float64(s.Succ)/float64(s.ND))
}

// MacroStrategy summarises a cluster of a domain's strategies (PersuHMM
// paper §3.3, Strategy Clustering).
type MacroStrategy struct {
	ID      string   `json:"id"`
	Text    string   `json:"text"`
	Members []string `json:"members"` // strategy ids
}

// Domain is one persuasion domain of the tree.
type Domain struct {
	Name       string          `json:"name"`
	Strategies []*Strategy     `json:"strategies"`
	Macros     []MacroStrategy `json:"macros,omitempty"`
	// Seen is the number of learning tasks of this domain.
	Seen int `json:"seen"`
}

// MacroDomain groups domains (PersuHMM paper §3.3, Domain Clustering).
type MacroDomain struct {
	Name    string   `json:"name"`
	Domains []string `json:"domains"`
}

// Memory is the meta-strategy memory. Domains are kept sorted by name.
// A Memory is not safe for concurrent mutation.
type Memory struct {
	Version      int           `json:"version"`
	Domains      []*Domain     `json:"domains"`
	MacroDomains []MacroDomain `json:"macro_domains,omitempty"`
	// NextID numbers new strategies and macro-strategies.
	NextID int `json:"next_id"`
	// Learn is the state of an interrupted or finished learning run
	// (resumption); nil for a memory never learned.
	Learn *LearnState `json:"learn,omitempty"`
}

// New returns an empty memory.
func New() *Memory { return &Memory{Version: Version} }

// Domain returns the domain called name, nil when absent.
func (m *Memory) Domain(name string) *Domain {
	i, ok := slices.BinarySearchFunc(m.Domains, name, func(d *Domain, n string) int { return strings.Compare(d.Name, n) })
	if !ok {
		return nil
	}
	return m.Domains[i]
}

// EnsureDomain returns the domain called name, adding it when absent.
func (m *Memory) EnsureDomain(name string) *Domain {
	i, ok := slices.BinarySearchFunc(m.Domains, name, func(d *Domain, n string) int { return strings.Compare(d.Name, n) })
	if ok {
		return m.Domains[i]
	}
	d := &Domain{Name: name}
	m.Domains = slices.Insert(m.Domains, i, d)
	return d
}

// Strategy returns the strategy with id, nil when absent.
func (m *Memory) Strategy(id string) *Strategy {
	for _, d := range m.Domains {
		for _, s := range d.Strategies {
			if s.ID == id {
				return s
			}
		}
	}
	return nil
}

// NumStrategies returns the number of strategies over all domains.
func (m *Memory) NumStrategies() int {
	n := 0
	for _, d := range m.Domains {
		n += len(d.Strategies)
	}
	return n
}

func (m *Memory) newID(prefix string) string {
	m.NextID++
	return fmt.Sprintf("%s%d", prefix, m.NextID)
}

// SeeTask records one learning task of domain: the domain's Seen and the
// n_d of every strategy already in it grow by one. Strategies created
// later in the same task do not count it.
func (m *Memory) SeeTask(domain string) {
	d := m.EnsureDomain(domain)
	d.Seen++
	for _, s := range d.Strategies {
		s.ND++
	}
}

// Succeed records that strategy s reached a stage goal with pattern p in
// the current task: n_succ grows by one (the caller calls it at most once
// per strategy and task) and p is offered to the pattern list (AddPattern).
func Succeed(ctx context.Context, s *Strategy, p Pattern, w int, enc embed.Encoder) error {
	s.Succ++
	return AddPattern(ctx, s, p, w, enc)
}

// AddPattern offers p to s's pattern list of at most w patterns (w <= 0:
// DefaultW), keeping the list maximally diverse (PersuHMM paper §3.2):
// a pattern whose text is already in the list is ignored; while the list
// is longer than w, the pattern removed is the one whose removal leaves
// the largest minimum pairwise cosine distance 1 - cos(e_i, e_j) among the
// rest, ties going to the oldest (lowest index). Errors: the encoder's.
func AddPattern(ctx context.Context, s *Strategy, p Pattern, w int, enc embed.Encoder) error {
	if w <= 0 {
		w = DefaultW
	}
	for _, q := range s.Patterns {
		if q.Text == p.Text {
			return nil
		}
	}
	s.Patterns = append(s.Patterns, p)
	if len(s.Patterns) <= w {
		return nil
	}
	texts := make([]string, len(s.Patterns))
	for i, q := range s.Patterns {
		texts[i] = q.Text
	}
	vs, err := enc.Encode(ctx, texts)
	if err != nil {
		return fmt.Errorf("persuhmm: embedding patterns: %w", err)
	}
	keep := diverse(vs, w)
	out := make([]Pattern, len(keep))
	for i, k := range keep {
		out[i] = s.Patterns[k]
	}
	s.Patterns = out
	return nil
}

// diverse returns the indices (ascending) of w of vs kept by removing, one
// at a time, the vector whose removal maximises the minimum pairwise
// cosine distance of the rest (ties: the lowest index).
func diverse(vs [][]float64, w int) []int {
	idx := make([]int, len(vs))
	for i := range idx {
		idx[i] = i
	}
	for len(idx) > w {
		best, bestMin := -1, -1.0
		for r := range idx {
			m := math.Inf(1)
			for a := range idx {
				for b := a + 1; b < len(idx); b++ {
					if a == r || b == r {
						continue
					}
					m = math.Min(m, 1-cosine(vs[idx[a]], vs[idx[b]]))
				}
			}
			if m > bestMin+1e-12 {
				best, bestMin = r, m
			}
		}
		idx = slices.Delete(idx, best, best+1)
	}
	return idx
}

// cosine returns the cosine similarity of a and b (0 when either is zero).
func cosine(a, b []float64) float64 {
	var d, na, nb float64
	for i := range min(len(a), len(b)) {
		d += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

// Save writes m to path as indented JSON, atomically (readers see the old
// file or the new one). Errors name path.
func (m *Memory) Save(path string) error {
	m.Version = Version
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("persuhmm: %s: %w", path, err)
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// ErrVersion is wrapped by Load for a file of another format version.
var ErrVersion = errors.New("unsupported memory version")

// Load reads a memory written by Save. Errors: the file's, a JSON error
// naming the file, ErrVersion (wrapped) for another version, or a strategy
// with an empty id or text, an unknown category or a domain out of place
// (naming the strategy).
func Load(path string) (*Memory, error) {
	b, err := filelimit.ReadFile(path, filelimit.Memory)
	if err != nil {
		return nil, fmt.Errorf("persuhmm: %w", err)
	}
	var m Memory
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("persuhmm: %s: %w", path, err)
	}
	if m.Version != Version {
		return nil, fmt.Errorf("persuhmm: %s: version %d: %w (want %d)", path, m.Version, ErrVersion, Version)
	}
	slices.SortFunc(m.Domains, func(a, b *Domain) int { return strings.Compare(a.Name, b.Name) })
	for di, d := range m.Domains {
		for si, s := range d.Strategies {
			at := fmt.Sprintf("%s: domains[%d].strategies[%d]", path, di, si)
			switch {
			case s == nil || s.ID == "" || strings.TrimSpace(s.Text) == "":
				return nil, fmt.Errorf("persuhmm: %s: empty id or text", at)
			case s.Domain != d.Name:
				return nil, fmt.Errorf("persuhmm: %s (%s): domain %q in domain %q", at, s.ID, s.Domain, d.Name)
			}
			if _, ok := ParseCategory(string(s.Category)); !ok {
				return nil, fmt.Errorf("persuhmm: %s (%s): unknown category %q", at, s.ID, s.Category)
			}
		}
	}
	return &m, nil
}

// Stats summarises a memory.
type Stats struct {
	Domains, Strategies, Patterns, MacroDomains, MacroStrategies int
	// PerCategory counts strategies by category.
	PerCategory map[Category]int
	// MeanValidity is the mean V over strategies with n_d > 0 (NaN when
	// none).
	MeanValidity float64
	// TasksLearned is the number of learning tasks recorded.
	TasksLearned int
}

// Stats returns m's summary.
func (m *Memory) Stats() Stats {
	st := Stats{Domains: len(m.Domains), MacroDomains: len(m.MacroDomains), PerCategory: map[Category]int{}}
	var sum float64
	var n int
	for _, d := range m.Domains {
		st.MacroStrategies += len(d.Macros)
		st.TasksLearned += d.Seen
		for _, s := range d.Strategies {
			st.Strategies++
			st.Patterns += len(s.Patterns)
			st.PerCategory[s.Category]++
			if s.ND > 0 {
				sum += s.Validity()
				n++
			}
		}
	}
	st.MeanValidity = math.NaN()
	if n > 0 {
		st.MeanValidity = sum / float64(n)
	}
	return st
}
