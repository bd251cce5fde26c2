package grpo

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// modeGroup has a non-zero pooled mean, so the modes differ. Non-missing
// rewards {0.3, 0.1, 0.2, 0.1, 0}: mean m = 0.14, squared deviations sum
// to 0.052, sample std s = sqrt(0.052/4) = 0.11401754250991379.
var modeGroup = [][]float64{
	{0.3, 0.1},
	{0.2},
	{0.1, nan, 0.0},
}

func modeCfg(m DenseMode) Config {
	c := DefaultConfig()
	c.Eps = 0 // exact hand values
	c.DenseMode = m
	return c
}

func TestDenseModesHand(t *testing.T) {
	s := math.Sqrt(0.052 / 4)
	for _, tc := range []struct {
		mode DenseMode
		want [][]float64
	}{
		// (B_T - B_{t-1})/s: sums of r/s over turns >= t.
		{DenseScaled, [][]float64{{0.4 / s, 0.1 / s}, {0.2 / s}, {0.1 / s, 0, 0}}},
		// Sums of (r - 0.14)/s; a missing turn adds nothing.
		{DensePooled, [][]float64{{0.12 / s, -0.04 / s}, {0.06 / s}, {-0.18 / s, -0.14 / s, -0.14 / s}}},
		// -m·(non-missing turns >= t)/s.
		{DenseLengthOnly, [][]float64{{-0.28 / s, -0.14 / s}, {-0.14 / s}, {-0.28 / s, -0.14 / s, -0.14 / s}}},
		// Own turn only.
		{DenseTurn, [][]float64{{0.3 / s, 0.1 / s}, {0.2 / s}, {0.1 / s, 0, 0}}},
		// Raw reward-to-go {0.4, 0.1}, {0.2}, {0.1, 0, 0}; turn 1 over all
		// three (mean 7/30, sample std 0.152753), turn 2 over rollouts 0
		// and 2 ({0.1, 0}: ±1/sqrt 2), turn 3 has one rollout alive: 0.
		{DenseRTGPerTurn, [][]float64{
			{1.0910894511799618, 1 / math.Sqrt2},
			{-0.21821789023599253},
			{-0.8728715609439697, -1 / math.Sqrt2, 0}}},
	} {
		got, err := DenseAdvantages(modeGroup, modeCfg(tc.mode))
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.want {
			nearSlice(t, string(tc.mode)+" rollout "+string(rune('0'+i)), got[i], tc.want[i], 1e-12)
		}
	}
	// Literal values of the scaled and pooled first turns.
	a, _ := DenseAdvantages(modeGroup, modeCfg(DenseScaled))
	near(t, "scaled A[0][0]", a[0][0], 3.5082320772281173, 1e-12)
	p, _ := DenseAdvantages(modeGroup, modeCfg(DensePooled))
	near(t, "pooled A[2][0]", p[2][0], -1.5787044347526527, 1e-12)
}

// TestPooledIsScaledPlusLength checks the telescoping identity behind the
// default: pooled = scaled + length-only, on random groups with missing
// rewards and ε > 0.
func TestPooledIsScaledPlusLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		g := make([][]float64, 2+rng.IntN(6))
		for i := range g {
			g[i] = make([]float64, rng.IntN(11))
			for k := range g[i] {
				g[i][k] = rng.Float64()*0.6 - 0.2
				if rng.IntN(8) == 0 {
					g[i][k] = nan
				}
			}
		}
		cfg := DefaultConfig()
		cfg.StdDDOF = trial % 2
		run := func(m DenseMode) [][]float64 {
			cfg.DenseMode = m
			a, err := DenseAdvantages(g, cfg)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		pooled, scaled, length := run(DensePooled), run(DenseScaled), run(DenseLengthOnly)
		for i := range g {
			for k := range g[i] {
				if d := pooled[i][k] - (scaled[i][k] + length[i][k]); math.Abs(d) > 1e-9 {
					t.Fatalf("trial %d: pooled %v != scaled %v + length %v at (%d, %d)", trial, pooled[i][k], scaled[i][k], length[i][k], i, k)
				}
			}
		}
	}
}

// TestScaledIsBeliefGain: for a complete belief trajectory the scaled
// advantage of turn t is (B_T - B_{t-1})/(s + ε), whatever the length.
func TestScaledIsBeliefGain(t *testing.T) {
	beliefs := [][]float64{{0.2, 0.5, 0.45, 0.9}, {0.3, 0.35}, {0.5, 0.1, 0.2, 0.3, 0.8, 0.7}}
	dense := make([][]float64, len(beliefs))
	var all []float64
	for i, b := range beliefs {
		for k := 1; k < len(b); k++ {
			dense[i] = append(dense[i], b[k]-b[k-1])
		}
		all = append(all, dense[i]...)
	}
	_, std, _ := moments(all, 1)
	cfg := DefaultConfig()
	a, err := DenseAdvantages(dense, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range beliefs {
		T := len(b) - 1
		for k := range dense[i] {
			near(t, "gain", a[i][k], (b[T]-b[k])/(std+cfg.Eps), 1e-9)
		}
	}
}

func TestDenseModesTiesAndErrors(t *testing.T) {
	for _, m := range DenseModes {
		for _, d := range [][][]float64{
			{{0.1, 0.1}, {0.1}, {0.1, 0.1, 0.1}}, // all equal: no relative information
			{{0.3, -0.2, 0.1}, {nan, nan}, {}},   // one rollout with rewards
		} {
			a, err := DenseAdvantages(d, modeCfg(m))
			if err != nil {
				t.Fatal(err)
			}
			for i := range d {
				exactZeros(t, string(m), a[i])
			}
		}
	}
	cfg := DefaultConfig()
	cfg.DenseMode = "mean-free"
	if _, err := DenseAdvantages(modeGroup, cfg); !errors.Is(err, ErrConfig) {
		t.Fatalf("unknown mode: err = %v, want ErrConfig", err)
	}
	if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
		t.Fatalf("Validate unknown mode: err = %v", err)
	}
	if _, err := ParseDenseMode("pooled"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseDenseMode("Scaled"); !errors.Is(err, ErrConfig) {
		t.Fatalf("ParseDenseMode(Scaled): %v", err)
	}
}

func TestConfigJSONLegacy(t *testing.T) {
	// A configuration stored before dense modes existed trained with the
	// pooled form; it must resume that way.
	var c Config
	if err := json.Unmarshal([]byte(`{"lambda":0.5,"g":4,"scenarios_per_step":16,"epochs":2,"learning_rate":0.01,"kl_beta":0.05,"entropy_coef":0.01,"clip_eps":0.2,"eps":1e-6,"strategy_weight":1,"std_ddof":1,"seed":3}`), &c); err != nil {
		t.Fatal(err)
	}
	if c.DenseMode != DensePooled || c.SeparateThreshold != 0.1 || c.Seed != 3 {
		t.Fatalf("legacy config = %+v", c)
	}
	// A round trip keeps every field.
	d := DefaultConfig()
	d.Seed, d.SeparateThreshold = 9, 0
	raw, _ := json.Marshal(d)
	var e Config
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	if e != d {
		t.Fatalf("round trip %+v != %+v", e, d)
	}
}

func TestShuffleDense(t *testing.T) {
	groups := [][][]float64{
		{{1, 1}, {2}, {3, 3, 3}},
		{{4, 4}, {5}},
		{{6}, {7, 7, 7, 7}},
	}
	a := ShuffleDense(groups, 7)
	if !reflect.DeepEqual(a, ShuffleDense(groups, 7)) {
		t.Fatal("same seed, different shuffle")
	}
	want := [][][]float64{
		// {1,1}: the only other length-2 row is {4,4}; {2}: {5} or {6};
		// {3,3,3}: no other length 3, so the prefix of {7,7,7,7}.
		{{4, 4}, nil, {7, 7, 7}},
		// {4,4} <- {1,1}; {5} <- {2} or {6}.
		{{1, 1}, nil},
		// {6} <- {2} or {5}; {7,7,7,7} is the longest: kept.
		{nil, {7, 7, 7, 7}},
	}
	for g := range groups {
		for i := range groups[g] {
			if len(a[g][i]) != len(groups[g][i]) {
				t.Fatalf("group %d rollout %d: length %d, want %d", g, i, len(a[g][i]), len(groups[g][i]))
			}
			if want[g][i] != nil && !reflect.DeepEqual(a[g][i], want[g][i]) {
				t.Errorf("group %d rollout %d = %v, want %v", g, i, a[g][i], want[g][i])
			}
			if len(a[g][i]) == 1 && (a[g][i][0] == groups[g][i][0] || a[g][i][0] > 6) {
				t.Errorf("group %d rollout %d drew %v from its own group", g, i, a[g][i])
			}
		}
	}
	// The input is untouched and the output does not alias it.
	a[0][0][0] = 99
	if groups[1][0][0] != 4 || groups[0][0][0] != 1 {
		t.Fatal("ShuffleDense aliased or modified its input")
	}
}

func TestGroupStatsSeparationAndLength(t *testing.T) {
	cfg := DefaultConfig() // λ 0.5, threshold 0.1, scaled
	cfg.Eps = 0
	// Dead group (all conditional). Belief gains: rollout 0 gains 0.3 in
	// 1 turn, rollout 1 gains 0.2 over 3 turns, rollout 2 gains 0 over 2.
	dense := [][]float64{{0.3}, {0.1, 0.05, 0.05}, {0.1, -0.1}}
	p, err := AnalyzeParts([]float64{1, 1, 1}, dense, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := p.Stats
	// Pooled sample std of {0.3, 0.1, 0.05, 0.05, 0.1, -0.1}.
	_, s, _ := moments([]float64{0.3, 0.1, 0.05, 0.05, 0.1, -0.1}, 1)
	a1 := []float64{0.3 / s, 0.2 / s, 0}
	for i := range a1 {
		near(t, "A_dense turn 1", p.Dense[i][0], a1[i], 1e-12)
	}
	if !st.Dead || !st.Separated || !st.Mixed || !st.ShortestTop {
		t.Fatalf("stats = %+v, want dead, separated, mixed, shortest on top", st)
	}
	// corr((0.3, 0.2, 0)/s, (1, 3, 2)): the 1/s scale drops out.
	near(t, "LengthCorr", st.LengthCorr, pearson([]float64{0.3, 0.2, 0}, []float64{1, 3, 2}), 1e-12)
	// By hand: sxy = -0.1, sxx = 0.14/3, syy = 2.
	near(t, "LengthCorr literal", st.LengthCorr, -0.1/math.Sqrt(0.28/3), 1e-12)

	// A threshold above λ·(max - min) = 0.5·0.3/s = 1.39 leaves it unseparated.
	cfg.SeparateThreshold = 1.4
	if p, _ := AnalyzeParts([]float64{1, 1, 1}, dense, cfg); p.Stats.Separated {
		t.Fatalf("threshold 1.4: separated, want not")
	}
	// λ = 0: the dense term has no weight, nothing is separated.
	cfg.SeparateThreshold, cfg.Lambda = 0.1, 0
	if p, _ := AnalyzeParts([]float64{1, 1, 1}, dense, cfg); p.Stats.Separated {
		t.Fatalf("λ = 0: separated, want not")
	}
	// Pooled mode on the same group ranks by shortness: the 1-turn
	// rollout pays one m/s, the 3-turn one three.
	cfg.Lambda, cfg.DenseMode = 0.5, DensePooled
	p, _ = AnalyzeParts([]float64{1, 1, 1}, dense, cfg)
	if !p.Stats.ShortestTop || p.Stats.LengthCorr > -0.6 {
		t.Fatalf("pooled stats = %+v, want shortest on top and a strongly negative length correlation", p.Stats)
	}
	// Equal lengths: not mixed, never shortest-on-top; constant lengths
	// give no correlation.
	p, _ = AnalyzeParts([]float64{3, 3}, [][]float64{{0.2, 0.1}, {0.1, 0.0}}, cfg)
	if p.Stats.Mixed || p.Stats.ShortestTop || !math.IsNaN(p.Stats.LengthCorr) {
		t.Fatalf("equal lengths: %+v", p.Stats)
	}
}

// *DenseMode is a flag value: Set accepts the known modes and rejects
// others without changing the value.
func TestDenseModeFlagValue(t *testing.T) {
	m := DenseScaled
	if err := m.Set("pooled"); err != nil || m.String() != "pooled" || m.Type() != "mode" {
		t.Fatalf("Set(pooled): %v, %q", err, m.String())
	}
	if err := m.Set("bogus"); err == nil || !strings.Contains(err.Error(), `"bogus"`) || m != DensePooled {
		t.Fatalf("Set(bogus): %v, %q", err, m)
	}
	var nilMode *DenseMode
	if nilMode.String() != "" {
		t.Fatal("nil String")
	}
}
