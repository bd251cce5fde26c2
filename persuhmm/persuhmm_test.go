package persuhmm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// vecs is a hand-made encoder: each text maps to a fixed vector.
type vecs map[string][]float64

func (v vecs) Encode(_ context.Context, ts []string) ([][]float64, error) {
	out := make([][]float64, len(ts))
	for i, t := range ts {
		out[i] = v[t]
		if out[i] == nil {
			out[i] = []float64{0, 0, 0}
		}
	}
	return out, nil
}

var ctx = context.Background()

// Validity counts successes over domain occurrences after creation.
func TestValidityAccounting(t *testing.T) {
	m := New()
	m.SeeTask("health") // before the strategy exists: not counted
	d := m.Domain("health")
	s := &Strategy{ID: "s1", Text: "x", Domain: "health", Category: Logical}
	d.Strategies = append(d.Strategies, s)
	for i := 0; i < 4; i++ {
		m.SeeTask("health")
	}
	m.SeeTask("money") // another domain: not counted
	enc := vecs{}
	if err := Succeed(ctx, s, Pattern{Text: "p1"}, 3, enc); err != nil {
		t.Fatal(err)
	}
	if err := Succeed(ctx, s, Pattern{Text: "p2"}, 3, enc); err != nil {
		t.Fatal(err)
	}
	if s.ND != 4 || s.Succ != 2 || s.Validity() != 0.5 || d.Seen != 5 {
		t.Fatalf("n_d %d n_succ %d V %v seen %d, want 4 2 0.5 5", s.ND, s.Succ, s.Validity(), d.Seen)
	}
	if (&Strategy{}).Validity() != 0 {
		t.Fatal("V with n_d = 0 must be 0")
	}
}

// The pattern list drops the pattern whose removal leaves the largest
// minimum pairwise distance; ties go to the oldest.
func TestDiversePatterns(t *testing.T) {
	enc := vecs{
		"a":  {1, 0, 0},
		"a2": {0.99, 0.141, 0},
		"b":  {0, 1, 0},
		"c":  {0, 0, 1},
	}
	s := &Strategy{}
	for _, p := range []string{"a", "b", "c"} {
		if err := AddPattern(ctx, s, Pattern{Text: p}, 3, enc); err != nil {
			t.Fatal(err)
		}
	}
	if err := AddPattern(ctx, s, Pattern{Text: "a2"}, 3, enc); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, p := range s.Patterns {
		got = append(got, p.Text)
	}
	// removing a leaves {b, c, a2}: min distance 1 - cos(a2, b) = 0.859;
	// removing a2 leaves {a, b, c}: min distance 1. So a2 goes.
	if !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("kept %v, want [a b c]", got)
	}
	// a duplicate text is ignored
	if err := AddPattern(ctx, s, Pattern{Text: "b"}, 3, enc); err != nil || len(s.Patterns) != 3 {
		t.Fatalf("duplicate changed the list: %v %v", s.Patterns, err)
	}
	// two equal vectors: removing either leaves the same spread, the
	// oldest goes
	if got := diverse([][]float64{{1, 0}, {1, 0}, {0, 1}, {-1, 0}}, 3); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Fatalf("diverse = %v, want [1 2 3] (one of the two equal vectors, the oldest, goes)", got)
	}
}

// Overflow: similar groups keep the most valid validated member, else the
// largest n_d; then the lowest validity goes until U remain.
func TestOverflow(t *testing.T) {
	mk := func(id, goal, first string, succ, nd int) *Strategy {
		return &Strategy{ID: id, Text: id, Domain: "d", Category: Logical, Goal: goal, Recipe: []string{first}, Succ: succ, ND: nd}
	}
	d := &Domain{Name: "d", Strategies: []*Strategy{
		mk("g1a", "ca", "diagnostic", 9, 10),  // V 0.9 but n_d 10 <= N_d 15: not validated
		mk("g1b", "ca", "diagnostic", 12, 20), // V 0.6 validated: kept
		mk("g1c", "ca", "diagnostic", 10, 20), // V 0.5 validated
		mk("g2a", "pe", "evidence", 2, 5),     // unvalidated group: largest n_d kept
		mk("g2b", "pe", "evidence", 1, 8),
		mk("x", "ac", "commitment", 1, 10), // V 0.1
		mk("y", "ac", "plan", 3, 10),       // V 0.3
		mk("z", "ac", "autonomy", 5, 10),   // V 0.5
	}}
	r := NewEmbeddedComponents(0, 0).Refiner
	if _, err := Overflow(ctx, d, r, 4, 15); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range d.Strategies {
		ids = append(ids, s.ID)
	}
	// after groups: g1b, g2b, x, y, z (5 > 4): x (V 0.1) goes
	if !reflect.DeepEqual(ids, []string{"g1b", "g2b", "y", "z"}) {
		t.Fatalf("kept %v", ids)
	}
}

// Refine merges an identical strategy and inserts a new one with its
// category; new strategies start at n_succ = n_d = their pattern count.
func TestRefineMergeInsert(t *testing.T) {
	m := New()
	d := m.EnsureDomain("d")
	d.Strategies = []*Strategy{{ID: "s0", Text: "t", Domain: "d", Category: Emotional, Goal: "ca", Recipe: []string{"diagnostic"}, Succ: 1, ND: 4}}
	news := []NewStrategy{
		{Text: "same", Domain: "d", Goal: "ca", Recipe: []string{"diagnostic"}, Patterns: []Pattern{{Text: "p1"}, {Text: "p2"}}},
		{Text: "new", Domain: "d", Goal: "pe", Recipe: []string{"evidence"}, Patterns: []Pattern{{Text: "p3"}, {Text: "p4"}, {Text: "p5"}}},
	}
	ins, mer, _, err := m.Refine(ctx, news, NewEmbeddedComponents(0, 0).Refiner, vecs{}, RefineOptions{})
	if err != nil || ins != 1 || mer != 1 {
		t.Fatalf("inserted %d merged %d err %v", ins, mer, err)
	}
	if s := d.Strategies[0]; s.Succ != 3 || len(s.Patterns) != 2 {
		t.Fatalf("merged strategy %+v", s)
	}
	if s := d.Strategies[1]; s.Category != Logical || s.Succ != 3 || s.ND != 3 || len(s.Patterns) != 3 {
		t.Fatalf("inserted strategy %+v", s)
	}
}

// Retrieval: a dense domain stands alone; a sparse one pulls in its macro
// siblings; an unknown one the nearest domain; top-k pulls in the
// macro-strategy's members.
func TestRetrieveBackoff(t *testing.T) {
	m := New()
	add := func(dom string, ids ...string) {
		d := m.EnsureDomain(dom)
		for _, id := range ids {
			d.Strategies = append(d.Strategies, &Strategy{ID: id, Text: id, Domain: dom, Category: Logical})
		}
	}
	add("health", "h1", "h2", "h3")
	add("sport", "p1")
	add("money", "m1", "m2", "m3")
	m.MacroDomains = []MacroDomain{{Name: "body", Domains: []string{"health", "sport"}}, {Name: "cash", Domains: []string{"money"}}}
	enc := vecs{"money": {1, 0, 0}, "taxes": {1, 0, 0}, "health": {0, 1, 0}, "sport": {0, 0.9, 0.1}}
	ids := func(s Subtree) []string {
		var out []string
		for _, x := range s.Strategies {
			out = append(out, x.ID)
		}
		return out
	}
	task := func(doms ...string) Task {
		return Task{Scenario: &scenario.Scenario{Proposal: "q"}, Domains: doms}
	}
	for _, tc := range []struct {
		doms []string
		hier bool
		want []string
	}{
		{[]string{"health"}, true, []string{"h1", "h2", "h3"}},
		{[]string{"sport"}, true, []string{"p1", "h1", "h2", "h3"}},
		{[]string{"sport"}, false, []string{"p1", "h1", "h2", "h3"}}, // nearest by name: health
		{[]string{"taxes"}, false, []string{"m1", "m2", "m3"}},
	} {
		s, err := m.Retrieve(ctx, enc, task(tc.doms...), RetrieveOptions{Hierarchy: tc.hier})
		if err != nil || !reflect.DeepEqual(ids(s), tc.want) {
			t.Errorf("%v hier %v: %v %v, want %v", tc.doms, tc.hier, ids(s), err, tc.want)
		}
	}
	// top-1 by similarity to the task text "q", then the macro subtree
	for _, s := range m.Domain("health").Strategies {
		s.Macro = ""
	}
	m.Domain("health").Strategies[1].Macro = "m9"
	m.Domain("health").Strategies[2].Macro = "m9"
	m.Domain("health").Macros = []MacroStrategy{{ID: "m9", Text: "macro", Members: []string{"h2", "h3"}}}
	enc["q"] = []float64{0, 0, 1}
	enc["h2"] = []float64{0, 0, 1}
	s, _ := m.Retrieve(ctx, enc, task("health"), RetrieveOptions{TopK: 1, Hierarchy: true})
	if !reflect.DeepEqual(ids(s), []string{"h2", "h3"}) || len(s.Macros) != 1 {
		t.Errorf("top-1 with hierarchy: %v macros %d, want [h2 h3] 1", ids(s), len(s.Macros))
	}
	s, _ = m.Retrieve(ctx, enc, task("health"), RetrieveOptions{TopK: 1})
	if !reflect.DeepEqual(ids(s), []string{"h2"}) {
		t.Errorf("top-1 flat: %v, want [h2]", ids(s))
	}
}

// K-means separates two obvious blobs, and Hierarchise builds macro
// domains and K = N - 4 strategy clusters with the most valid member's
// text.
func TestKMeansHierarchy(t *testing.T) {
	pts := [][]float64{{0, 0}, {0, 0.1}, {0.1, 0}, {5, 5}, {5, 5.1}, {5.1, 5}}
	l := KMeans(pts, 2, 7)
	if l[0] != l[1] || l[1] != l[2] || l[3] != l[4] || l[4] != l[5] || l[0] == l[3] {
		t.Fatalf("labels %v", l)
	}
	if !reflect.DeepEqual(KMeans(pts, 2, 7), l) {
		t.Fatal("not deterministic")
	}
	m := New()
	d := m.EnsureDomain("a")
	texts := []string{"u1", "u2", "u3", "w1", "w2", "w3"}
	enc := vecs{"u1": {1, 0, 0}, "u2": {0.98, 0.2, 0}, "u3": {0.98, 0, 0.2}, "w1": {0, 1, 0}, "w2": {0, 0, 1}, "w3": {0, 0.7, 0.7}}
	for i, x := range texts {
		d.Strategies = append(d.Strategies, &Strategy{ID: x, Text: x, Domain: "a", Category: Logical, Succ: i, ND: 10})
	}
	m.EnsureDomain("b").Strategies = []*Strategy{{ID: "b1", Text: "b1", Domain: "b", Category: Logical}}
	if _, err := m.Hierarchise(ctx, enc, NewEmbeddedComponents(0, 0).Summariser, HierOptions{MacroDomains: 1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if len(m.MacroDomains) != 1 || m.MacroDomains[0].Name != "a / b" {
		t.Fatalf("macro domains %+v", m.MacroDomains)
	}
	// K = 2: the u cluster {u1,u2,u3} and the w cluster; macro text is the
	// most valid member's (u3: V 0.2; w3: V 0.5)
	var got []string
	for _, mac := range d.Macros {
		got = append(got, mac.Text+":"+slices.Concat(mac.Members)[0])
	}
	slices.Sort(got)
	if !reflect.DeepEqual(got, []string{"u3:u1", "w3:w1"}) {
		t.Fatalf("macros %v", got)
	}
}

// Save and Load round-trip; another version is refused.
func TestPersistence(t *testing.T) {
	m := New()
	m.EnsureDomain("d").Strategies = []*Strategy{{ID: "s1", Text: "t", Domain: "d", Category: Behavioral, Recipe: []string{"plan"}, Goal: "ac", Succ: 2, ND: 5, Patterns: []Pattern{{Text: "p"}}}}
	m.Learn = &LearnState{Seed: 3, Done: 10, Total: 20}
	p := filepath.Join(t.TempDir(), "mem.json")
	if err := m.Save(p); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, got, m)
	}
	m.Version = 0
	b := *m
	b.Version = 9
	if err := writeRaw(p, &b); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); !errors.Is(err, ErrVersion) {
		t.Fatalf("want ErrVersion, got %v", err)
	}
}

// A learning run interrupted after two batches and resumed gives the same
// memory as one uninterrupted run; a resume with another seed is refused.
func TestLearnResume(t *testing.T) {
	ss, err := scenario.ResolveSplit(scenario.Train, "arena")
	if err != nil {
		t.Fatal(err)
	}
	tasks := TasksFromScenarios(ss[:60])
	pee := sim.New(sim.Config{})
	comp := NewEmbeddedComponents(0, 0)
	enc := embed.NewHashedTFIDF(0)
	whole := New()
	if err := Learn(ctx, whole, tasks, pee, comp, enc, LearnConfig{Seed: 5}); err != nil {
		t.Fatal(err)
	}
	if whole.NumStrategies() == 0 || whole.Learn.Done != 60 {
		t.Fatalf("learned %d strategies, done %d", whole.NumStrategies(), whole.Learn.Done)
	}
	p := filepath.Join(t.TempDir(), "mem.json")
	cctx, cancel := context.WithCancel(ctx)
	part := New()
	batches := 0
	err = Learn(cctx, part, tasks, pee, comp, enc, LearnConfig{Seed: 5, Checkpoint: p, Progress: func(LearnState) {
		if batches++; batches == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want cancel, got %v", err)
	}
	resumed, err := Load(p)
	if err != nil || resumed.Learn.Done != 20 {
		t.Fatalf("checkpoint: %v done %d", err, resumed.Learn.Done)
	}
	if err := Learn(ctx, resumed, tasks, pee, comp, enc, LearnConfig{Seed: 5, Checkpoint: p}); err != nil {
		t.Fatal(err)
	}
	final, _ := Load(p)
	wp := filepath.Join(t.TempDir(), "whole.json")
	whole.Save(wp)
	want, _ := Load(wp)
	if !reflect.DeepEqual(final, want) {
		t.Fatal("resumed memory differs from the uninterrupted one")
	}
	if err := Learn(ctx, final, tasks, pee, comp, enc, LearnConfig{Seed: 6}); !errors.Is(err, ErrResume) {
		t.Fatalf("want ErrResume, got %v", err)
	}
}

func writeRaw(p string, m *Memory) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}
