package grpo

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/persuarena/persuarena/episode"
)

var updateFixture = flag.Bool("update", false, "rewrite testdata/probe_rpo_groups.json from AnalyzeParts")

// fixturePath is the golden file shared with the Python estimator:
// python/tests/test_verl_advantage.py reads it and must reproduce every
// advantage to 1e-9 (persuarena.verl.advantage, the probe_rpo estimator).
const fixturePath = "testdata/probe_rpo_groups.json"

// fixtureCase is one group of the fixture. JSON has no NaN: null stands
// for a failed rollout's R_out and for a missing dense reward.
type fixtureCase struct {
	Name      string       `json:"name"`
	Lambda    float64      `json:"lambda"`
	Eps       float64      `json:"eps"`
	StdDDOF   int          `json:"std_ddof"`
	DenseMode DenseMode    `json:"dense_mode"`
	ROut      []*float64   `json:"r_out"`
	Dense     [][]*float64 `json:"dense"`
	// Want is AnalyzeParts' output: A_out_i, A_dense_{i,t} (unscaled by
	// λ) and A_{i,t}.
	Want struct {
		Out   []float64   `json:"a_out"`
		Dense [][]float64 `json:"a_dense"`
		A     [][]float64 `json:"a"`
	} `json:"want"`
}

func nullable(xs ...float64) []*float64 {
	out := make([]*float64, len(xs))
	for i, x := range xs {
		if !math.IsNaN(x) {
			out[i] = &xs[i]
		}
	}
	return out
}

func fromNullable(xs []*float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.NaN()
		if x != nil {
			out[i] = *x
		}
	}
	return out
}

// fixtureCases are hand-made groups covering what the Python estimator
// must get right: a dead group (the docs/grpo.md worked example),
// unequal lengths, missing probes and a failed rollout, λ = 0 (plain
// GRPO: A = A_out on every turn), a single scored rollout, tied dense
// rewards, and the dense modes (scaled by default; length-only, pooled,
// turn and rtg-per-turn on TestDenseModesHand's group).
func fixtureCases() []fixtureCase {
	nan := math.NaN()
	type spec struct {
		name   string
		lambda float64
		eps    float64
		ddof   int
		mode   DenseMode
		rOut   []float64
		dense  [][]float64
	}
	modesGroup := [][]float64{{0.3, 0.1}, {0.2}, {0.1, nan, 0}}
	specs := []spec{
		{"dead group (docs/grpo.md worked example)", 0.5, 1e-6, 0, DenseScaled,
			[]float64{1, 1, 1, 1}, [][]float64{{0.2, 0}, {0.1, nan, -0.1}, {-0.2}, {nan}}},
		{"unequal lengths, mixed outcomes", 0.5, 1e-6, 1, DenseScaled,
			[]float64{3, 1, -1, -3}, [][]float64{{0.4, 0.3, 0.1, 0.05}, {0.2, -0.1, 0.3}, {-0.1, 0.05}, {-0.3}}},
		{"lambda 0 is outcome GRPO", 0, 1e-6, 1, DenseScaled,
			[]float64{3, 1, -1, -3}, [][]float64{{0.4, 0.3, 0.1, 0.05}, {0.2, -0.1, 0.3}, {-0.1, 0.05}, {-0.3}}},
		{"missing probes and a failed rollout", 0.5, 1e-6, 1, DenseScaled,
			[]float64{3, nan, 0, -1}, [][]float64{{nan, 0.25, 0.125}, {0.5, 0.5}, {0.1, nan}, {-0.2, nan, 0.05}}},
		{"one scored rollout", 0.5, 1e-6, 1, DenseScaled,
			[]float64{2, nan}, [][]float64{{0.3, 0.2}, {0.1}}},
		{"tied dense rewards", 1, 1e-6, 1, DenseScaled,
			[]float64{3, -1, 1}, [][]float64{{0.1, 0.1}, {0.1}, {0.1, 0.1, 0.1}}},
		{"scaled (TestDenseModesHand)", 0.5, 0, 1, DenseScaled, []float64{3, 1, -1}, modesGroup},
		{"length-only control (TestDenseModesHand)", 0.5, 0, 1, DenseLengthOnly, []float64{3, 1, -1}, modesGroup},
		{"pooled (TestDenseModesHand)", 0.5, 0, 1, DensePooled, []float64{3, 1, -1}, modesGroup},
		{"turn (TestDenseModesHand)", 0.5, 0, 1, DenseTurn, []float64{3, 1, -1}, modesGroup},
		{"rtg-per-turn (TestDenseModesHand)", 0.5, 1e-6, 1, DenseRTGPerTurn, []float64{3, 1, -1}, modesGroup},
	}
	out := make([]fixtureCase, len(specs))
	for k, s := range specs {
		c := fixtureCase{Name: s.name, Lambda: s.lambda, Eps: s.eps, StdDDOF: s.ddof, DenseMode: s.mode, ROut: nullable(s.rOut...)}
		for _, row := range s.dense {
			c.Dense = append(c.Dense, nullable(row...))
		}
		out[k] = c
	}
	return out
}

// The shared fixture is what AnalyzeParts computes: rewritten with
// go test ./grpo -run TestProbeRPOFixture -update, and otherwise checked
// bit for bit, so a change to the Go advantages fails here until the
// fixture (and with it the Python golden test) follows.
func TestProbeRPOFixture(t *testing.T) {
	cases := fixtureCases()
	for k := range cases {
		c := &cases[k]
		cfg := DefaultConfig()
		cfg.Lambda, cfg.Eps, cfg.StdDDOF, cfg.DenseMode = c.Lambda, c.Eps, c.StdDDOF, c.DenseMode
		dense := make([][]float64, len(c.Dense))
		for i, row := range c.Dense {
			dense[i] = fromNullable(row)
		}
		p, err := AnalyzeParts(fromNullable(c.ROut), dense, cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		c.Want.Out, c.Want.Dense, c.Want.A = p.Out, p.Dense, p.A
		if c.Lambda == 0 {
			for i, row := range p.A {
				for _, a := range row {
					if a != p.Out[i] {
						t.Fatalf("%s: λ = 0 gave A %v, A_out %v", c.Name, a, p.Out[i])
					}
				}
			}
		}
	}
	got, err := json.MarshalIndent(cases, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateFixture {
		if err := os.WriteFile(fixturePath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatalf("%v (write it with go test ./grpo -run TestProbeRPOFixture -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: AnalyzeParts now gives other advantages; rerun with -update and check python/tests/test_verl_advantage.py", fixturePath)
	}
	// Spot values from docs/grpo.md: the worked example's r0 turn 1 is
	// 0.2/s with s = sqrt(0.1/5) + 1e-6, and TestDenseModesHand's scaled
	// first entry is 3.5082321.
	s := math.Sqrt(0.1/5) + 1e-6
	if d := cases[0].Want.Dense[0][0]; math.Abs(d-0.2/s) > 1e-12 {
		t.Fatalf("worked example A_dense[0][0] = %v, want %v", d, 0.2/s)
	}
	if d := cases[6].Want.Dense[0][0]; math.Abs(d-3.5082321) > 1e-7 {
		t.Fatalf("scaled first entry %v, want 3.5082321", d)
	}
}

// shuffleFixturePath is the golden file of the belief-shuffled control
// for the Python estimator (persuarena.verl.advantage.shuffle_dense and
// step_seed must reproduce it exactly).
const shuffleFixturePath = "testdata/probe_rpo_shuffle.json"

type shuffleFixture struct {
	// Seed is ShuffleDense's seed; Groups the input (null = missing) and
	// Want its output.
	Seed   uint64         `json:"seed"`
	Groups [][][]*float64 `json:"groups"`
	Want   [][][]*float64 `json:"want"`
	// Mix holds [z, episode.Mix(z)] pairs (as decimal strings: JSON
	// numbers lose uint64 precision) and StepSeeds [run seed, step,
	// seed] triples of train's per-step shuffle seed
	// Mix(seed ^ Mix(step + 0x5f1e)) (train/train.go).
	Mix       [][2]string `json:"mix"`
	StepSeeds [][3]string `json:"step_seeds"`
}

// The belief-shuffled control's fixture: ShuffleDense on hand-made
// groups of mixed lengths (with a missing probe, a length only one group
// has, and the prefix rule), rewritten with -update like
// TestProbeRPOFixture and otherwise checked byte for byte.
func TestShuffleFixture(t *testing.T) {
	nan := math.NaN()
	groups := [][][]float64{
		{{0.1, 0.2}, {0.3}, {0.4, nan, 0.5}},
		{{-0.1, -0.2}, {-0.3}, {0.05, 0.06, 0.07, 0.08}},
		{{0.7}, {0.8, 0.9}, {1, 0.5}},
		{{0.25, 0.125, 0.0625}},
	}
	fx := shuffleFixture{Seed: 0x5eed}
	conv := func(gs [][][]float64) [][][]*float64 {
		out := make([][][]*float64, len(gs))
		for g, grp := range gs {
			for _, row := range grp {
				out[g] = append(out[g], nullable(slices.Clone(row)...))
			}
		}
		return out
	}
	fx.Groups = conv(groups)
	fx.Want = conv(ShuffleDense(groups, fx.Seed))
	for _, z := range []uint64{0, 1, 0x5f1e, math.MaxUint64} {
		fx.Mix = append(fx.Mix, [2]string{strconv.FormatUint(z, 10), strconv.FormatUint(episode.Mix(z), 10)})
	}
	for _, c := range [][2]uint64{{0, 0}, {7, 3}, {math.MaxUint64, 181}} {
		s := episode.Mix(c[0] ^ episode.Mix(c[1]+0x5f1e))
		fx.StepSeeds = append(fx.StepSeeds, [3]string{strconv.FormatUint(c[0], 10), strconv.FormatUint(c[1], 10), strconv.FormatUint(s, 10)})
	}
	got, err := json.MarshalIndent(fx, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateFixture {
		if err := os.WriteFile(shuffleFixturePath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(shuffleFixturePath)
	if err != nil {
		t.Fatalf("%v (write it with go test ./grpo -run TestShuffleFixture -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: ShuffleDense now shuffles differently; rerun with -update and check python/tests/test_verl_advantage.py", shuffleFixturePath)
	}
	// Every shuffled row keeps its length, and the single 4-turn row of
	// group 1 (no other group has 4 turns or more) keeps its own rewards.
	for g := range groups {
		for i := range groups[g] {
			if len(fx.Want[g][i]) != len(groups[g][i]) {
				t.Fatalf("group %d row %d: %d turns became %d", g, i, len(groups[g][i]), len(fx.Want[g][i]))
			}
		}
	}
	if *fx.Want[1][2][3] != 0.08 {
		t.Fatalf("the only 4-turn row changed: %v", fx.Want[1][2])
	}
}
