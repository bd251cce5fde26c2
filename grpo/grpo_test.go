package grpo

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

var nan = math.NaN()

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) != math.IsNaN(want) {
		t.Errorf("%s = %.15g, want %.15g (±%g)", name, got, want, tol)
	}
}

func nearSlice(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s has %d entries, want %d: %v", name, len(got), len(want), got)
	}
	for i := range want {
		near(t, name+"["+string(rune('0'+i))+"]", got[i], want[i], tol)
	}
}

// exactZeros fails unless every entry is +0 exactly.
func exactZeros(t *testing.T, name string, xs []float64) {
	t.Helper()
	for i, x := range xs {
		if math.Float64bits(x) != 0 {
			t.Errorf("%s[%d] = %v (bits %x), want exactly +0", name, i, x, math.Float64bits(x))
		}
	}
}

func cfgDDOF(ddof int) Config {
	c := DefaultConfig()
	c.StdDDOF = ddof
	return c
}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	want := Config{Lambda: 0.5, G: 4, ScenariosPerStep: 16, Epochs: 2, LearningRate: 1e-5,
		KLBeta: 0.05, EntropyCoef: 0.01, ClipEps: 0.2, Eps: 1e-6, StrategyWeight: 1, StdDDOF: 1,
		DenseMode: DenseScaled, SeparateThreshold: 0.1}
	if c != want {
		t.Fatalf("DefaultConfig() = %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*Config){
		func(c *Config) { c.Lambda = -0.1 },
		func(c *Config) { c.Lambda = math.NaN() },
		func(c *Config) { c.G = 1 },
		func(c *Config) { c.ScenariosPerStep = 0 },
		func(c *Config) { c.Epochs = 0 },
		func(c *Config) { c.LearningRate = 0 },
		func(c *Config) { c.KLBeta = -1 },
		func(c *Config) { c.EntropyCoef = math.Inf(1) },
		func(c *Config) { c.ClipEps = 1 },
		func(c *Config) { c.Eps = -1e-9 },
		func(c *Config) { c.StrategyWeight = -1 },
		func(c *Config) { c.StdDDOF = 2 },
		func(c *Config) { c.DenseMode = "" },
		func(c *Config) { c.SeparateThreshold = -0.1 },
	}
	for i, f := range bad {
		c := DefaultConfig()
		f(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("case %d: Validate() = %v, want ErrConfig", i, err)
		}
	}
}

func TestOutcomeAdvantagesHand(t *testing.T) {
	r := []float64{3, 1, -1, -3} // accept, conditional, pending, reject
	// Population std sqrt((9+1+1+9)/4) = sqrt 5.
	a, err := OutcomeAdvantages(r, cfgDDOF(0))
	if err != nil {
		t.Fatal(err)
	}
	nearSlice(t, "ddof0", a, []float64{1.341640186500142, 0.44721339550004735, -0.44721339550004735, -1.341640186500142}, 1e-12)
	// Sample std sqrt(20/3).
	a, err = OutcomeAdvantages(r, cfgDDOF(1))
	if err != nil {
		t.Fatal(err)
	}
	nearSlice(t, "ddof1", a, []float64{1.1618945538623993, 0.3872981846207998, -0.3872981846207998, -1.1618945538623993}, 1e-12)
}

func TestOutcomeAdvantagesStdZero(t *testing.T) {
	for _, r := range [][]float64{
		{1, 1, 1, 1},
		{0.1, 0.1, 0.1},        // mean is 0.10000000000000002: residue must not leak
		{-3, -3, -3, -3, -3},   // dead reject group
		{1e6 + 0.1, 1e6 + 0.1}, // large magnitude
		{2},                    // group of one
		{},                     // empty
		{nan, nan},             // every rollout failed
		{1, nan},               // one scored rollout left
	} {
		a, err := OutcomeAdvantages(r, DefaultConfig())
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		if len(a) != len(r) {
			t.Fatalf("%v: %d advantages", r, len(a))
		}
		exactZeros(t, "tied", a)
	}
}

func TestOutcomeAdvantagesNaNExcluded(t *testing.T) {
	a, err := OutcomeAdvantages([]float64{3, nan, -3}, cfgDDOF(0))
	if err != nil {
		t.Fatal(err)
	}
	// Scored {3, -3}: mean 0, population std 3.
	nearSlice(t, "adv", a, []float64{0.9999996666667778, 0, -0.9999996666667778}, 1e-12)
	exactZeros(t, "failed", a[1:2])
	if _, err := OutcomeAdvantages([]float64{1, math.Inf(1)}, DefaultConfig()); !errors.Is(err, ErrReward) {
		t.Fatalf("infinite reward: err = %v, want ErrReward", err)
	}
	bad := DefaultConfig()
	bad.StdDDOF = 3
	if _, err := OutcomeAdvantages([]float64{1, 2}, bad); !errors.Is(err, ErrConfig) {
		t.Fatalf("ddof 3: err = %v, want ErrConfig", err)
	}
}

// The dense group used by several tests: pooled non-missing rewards
// {0.2, 0, 0.1, -0.1, -0.2}, mean 0, sum of squares 0.1.
var denseGroup = [][]float64{
	{0.2, 0.0},
	{0.1, nan, -0.1},
	{-0.2},
	{nan},
}

func TestDenseAdvantagesHand(t *testing.T) {
	for _, tc := range []struct {
		ddof int
		std  float64
	}{
		{0, 0.1 * math.Sqrt2},    // sqrt(0.1/5)
		{1, 0.15811388300841897}, // sqrt(0.1/4)
	} {
		a, err := DenseAdvantages(denseGroup, cfgDDOF(tc.ddof))
		if err != nil {
			t.Fatal(err)
		}
		s := tc.std + 1e-6
		// Reverse sums of r~ = r/s; a missing turn adds 0.
		nearSlice(t, "rollout0", a[0], []float64{0.2 / s, 0}, 1e-12)
		nearSlice(t, "rollout1", a[1], []float64{0, -0.1 / s, -0.1 / s}, 1e-12)
		nearSlice(t, "rollout2", a[2], []float64{-0.2 / s}, 1e-12)
		nearSlice(t, "rollout3", a[3], []float64{0}, 0)
	}
	// Literal check for ddof 1: 0.2/(0.158113883... + 1e-6).
	a, _ := DenseAdvantages(denseGroup, cfgDDOF(1))
	near(t, "A_dense[0][0]", a[0][0], 1.264903064117948, 1e-12)
	near(t, "A_dense[1][1]", a[1][1], -0.632451532058974, 1e-12)
}

func TestDenseAdvantagesAllEqualAndMissing(t *testing.T) {
	for _, d := range [][][]float64{
		{{0.1, 0.1}, {0.1}, {0.1, 0.1, 0.1}},   // all-equal dense rewards
		{{0, 0}, {0, 0}},                       // nobody moved
		{{nan, nan}, {nan}},                    // every probe read-out missing
		{{0.3, -0.2, 0.1}, {nan, nan}, {}},     // only one rollout has rewards
		{{0.1, nan}, {nan, 0.1}, {0.1}, {nan}}, // equal where present
	} {
		a, err := DenseAdvantages(d, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		for i := range d {
			if len(a[i]) != len(d[i]) {
				t.Fatalf("%v: row %d has %d entries", d, i, len(a[i]))
			}
			exactZeros(t, "dense", a[i])
		}
	}
	if _, err := DenseAdvantages([][]float64{{0.1}, {math.Inf(-1)}}, DefaultConfig()); !errors.Is(err, ErrReward) {
		t.Fatalf("infinite dense: err = %v, want ErrReward", err)
	}
}

func TestCombineLambdaZeroIsOutcomeGRPO(t *testing.T) {
	r := []float64{3, 1, 1, -3}
	dense := [][]float64{{0.2, -0.4}, {0.1, nan, 0.3}, {}, {-0.5}}
	cfg := DefaultConfig()
	cfg.Lambda = 0
	aOut, err := OutcomeAdvantages(r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	adv, _, err := Analyze(r, dense, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A NaN and a -0 in the dense term must not change anything at λ = 0.
	weird := [][]float64{{nan, math.Copysign(0, -1)}, {nan, nan, 1}, {}, {math.Inf(1)}}
	for _, got := range [][][]float64{adv, Combine(aOut, weird, 0)} {
		for i := range dense {
			if len(got[i]) != len(dense[i]) {
				t.Fatalf("row %d: %d entries, want %d", i, len(got[i]), len(dense[i]))
			}
			for tt, x := range got[i] {
				if math.Float64bits(x) != math.Float64bits(aOut[i]) {
					t.Errorf("A[%d][%d] = %v, want A_out = %v bit for bit", i, tt, x, aOut[i])
				}
			}
		}
	}
	// And λ = 0.5 does change it.
	got := Combine(aOut, [][]float64{{1, 2}, {0, 0, 0}, {}, {-1}}, 0.5)
	near(t, "A[0][1]", got[0][1], aOut[0]+1, 1e-15)
	near(t, "A[3][0]", got[3][0], aOut[3]-0.5, 1e-15)
}

func TestAnalyzeDeadGroupSeparated(t *testing.T) {
	cfg := cfgDDOF(0)
	r := []float64{1, 1, 1, 1} // all conditional: dead
	adv, st, err := Analyze(r, denseGroup, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Dead || !st.Separated || st.Scored != 4 {
		t.Fatalf("stats = %+v, want dead, separated, 4 scored", st)
	}
	s := 0.1*math.Sqrt2 + 1e-6
	// A_out = 0, so A = 0.5·A_dense.
	nearSlice(t, "A0", adv[0], []float64{0.5 * 0.2 / s, 0}, 1e-12)
	nearSlice(t, "A1", adv[1], []float64{0, -0.05 / s, -0.05 / s}, 1e-12)
	nearSlice(t, "A2", adv[2], []float64{-0.1 / s}, 1e-12)
	nearSlice(t, "A3", adv[3], []float64{0}, 0)
	if st.MeanAbsOut != 0 {
		t.Errorf("MeanAbsOut = %v, want 0", st.MeanAbsOut)
	}
	// 7 turns; |λ·A_dense| sums to 0.5·(0.2 + 0.1 + 0.1 + 0.2)/s.
	near(t, "MeanAbsDense", st.MeanAbsDense, 0.5*0.6/s/7, 1e-12)
	// 0.3/(7·0.14142235623730950) by hand:
	near(t, "MeanAbsDense literal", st.MeanAbsDense, 0.3030436205, 1e-9)
}

func TestAnalyzeDeadNotSeparated(t *testing.T) {
	cfg := DefaultConfig()
	// Identical non-zero trajectories: A_dense identical, not separated.
	same := [][]float64{{0.1, -0.1}, {0.1, -0.1}, {0.1, -0.1}, {0.1, -0.1}}
	adv, st, err := Analyze([]float64{-1, -1, -1, -1}, same, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Dead || st.Separated {
		t.Fatalf("stats = %+v, want dead, not separated", st)
	}
	if adv[0][1] >= 0 || adv[0][0] != 0 {
		t.Fatalf("A[0] = %v, want [0, <0]", adv[0])
	}
	// All-equal dense rewards with different lengths: all zero, not separated.
	_, st, err = Analyze([]float64{3, 3, 3}, [][]float64{{0.1}, {0.1, 0.1, 0.1}, {0.1, nan}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Dead || st.Separated || st.MeanAbsDense != 0 {
		t.Fatalf("stats = %+v, want dead, not separated, no dense contribution", st)
	}
	// A live group is never "separated".
	_, st, err = Analyze([]float64{3, 1}, [][]float64{{0.3}, {-0.3}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Dead || st.Separated {
		t.Fatalf("stats = %+v, want live", st)
	}
	// One scored rollout is a singleton, not a dead group.
	_, st, err = Analyze([]float64{3, nan}, [][]float64{{0.3}, {-0.3}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Dead || st.Scored != 1 {
		t.Fatalf("stats = %+v, want 1 scored, not dead", st)
	}
}

func TestAnalyzeFailedRolloutExcluded(t *testing.T) {
	cfg := cfgDDOF(0)
	cfg.Lambda = 1
	// Rollout 1 failed: its huge dense rewards must not enter the stats.
	r := []float64{3, nan, -3}
	dense := [][]float64{{0.1}, {5, -5}, {-0.1}}
	adv, st, err := Analyze(r, dense, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Outcome: ±3/(3+1e-6). Dense pool {0.1, -0.1}: std 0.1.
	ao := 3 / (3 + 1e-6)
	ad := 0.1 / (0.1 + 1e-6)
	nearSlice(t, "A0", adv[0], []float64{ao + ad}, 1e-12)
	exactZeros(t, "A1 (failed)", adv[1])
	if len(adv[1]) != 2 {
		t.Fatalf("failed rollout has %d advantages, want 2", len(adv[1]))
	}
	nearSlice(t, "A2", adv[2], []float64{-ao - ad}, 1e-12)
	if st.Scored != 2 || st.Dead {
		t.Fatalf("stats = %+v", st)
	}
	near(t, "MeanAbsOut", st.MeanAbsOut, ao, 1e-12)
	near(t, "MeanAbsDense", st.MeanAbsDense, ad, 1e-12)

	if _, _, err := Analyze([]float64{1}, [][]float64{{0}, {0}}, cfg); !errors.Is(err, ErrReward) {
		t.Fatalf("shape mismatch: err = %v, want ErrReward", err)
	}
	cfg.Lambda = -1
	if _, _, err := Analyze([]float64{1}, [][]float64{{0}}, cfg); !errors.Is(err, ErrConfig) {
		t.Fatalf("negative lambda: err = %v, want ErrConfig", err)
	}
}

func TestClippedSurrogateSides(t *testing.T) {
	l := math.Log
	for _, tc := range []struct {
		name            string
		logp, old, adv  float64
		want            float64
		clippedIsChosen bool
	}{
		{"ratio 1.5, A>0: capped at 1.2", l(0.6), l(0.4), 2, 1.2 * 2, true},
		{"ratio 0.5, A<0: floored at 0.8", l(0.2), l(0.4), -1, 0.8 * -1, true},
		{"ratio 0.5, A>0: unclipped", l(0.2), l(0.4), 2, 0.5 * 2, false},
		{"ratio 1.5, A<0: unclipped", l(0.6), l(0.4), -1, 1.5 * -1, false},
		{"ratio 1.1, inside", l(0.44), l(0.4), 3, 1.1 * 3, false},
	} {
		got := ClippedSurrogate(tc.logp, tc.old, tc.adv, 0.2)
		near(t, tc.name, got, tc.want, 1e-12)
	}
}

func TestKL3AndEntropyHand(t *testing.T) {
	// d = log 0.25 - log 0.5 = -ln 2: 0.5 + ln 2 - 1.
	near(t, "KL3(log .5, log .25)", KL3(math.Log(0.5), math.Log(0.25)), 0.1931471805599454, 1e-15)
	near(t, "KL3(log .5, log 1)", KL3(math.Log(0.5), 0), 2-math.Ln2-1, 1e-15) // 0.3068528...
	near(t, "KL3 equal", KL3(-1.3, -1.3), 0, 0)
	near(t, "H(.5,.5)", Entropy([]float64{0.5, 0.5}), math.Ln2, 1e-15)
	near(t, "H(1,0)", Entropy([]float64{1, 0}), 0, 0)
	// -(0.25 ln 0.25 + 0.75 ln 0.75) = 0.5623351446188083.
	near(t, "H(.25,.75)", Entropy([]float64{0.25, 0.75}), 0.5623351446188083, 1e-15)
	if !math.IsNaN(Entropy([]float64{1.5, -0.5})) {
		t.Error("Entropy with a negative entry is not NaN")
	}
}

func TestLossHand(t *testing.T) {
	l := math.Log
	batch := []Sample{
		// ratio 1.5, A = 2: surrogate 2.4; KL3(log .6, log .5) = 5/6 + ln 1.2 - 1.
		{Logp: l(0.6), OldLogp: l(0.4), RefLogp: l(0.5), Adv: 2, Entropy: 0.5},
		// ratio 0.5, A = -1: surrogate -0.8; KL 0.
		{Logp: l(0.2), OldLogp: l(0.4), RefLogp: l(0.2), Adv: -1, Entropy: 0.2},
	}
	lt, err := Loss(batch, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	kl := 5.0/6 + math.Log(1.2) - 1 // 0.015654885...
	near(t, "KL", lt.KL, kl/2, 1e-15)
	near(t, "Surrogate", lt.Surrogate, (2.4-0.8)/2, 1e-12)
	near(t, "Entropy", lt.Entropy, 0.35, 1e-15)
	near(t, "ClipFrac", lt.ClipFrac, 1, 0)
	// -((2.4 - 0.05·0.0156549 + 0.005) + (-0.8 + 0.002))/2
	near(t, "Loss", lt.Loss, -0.8031086279, 1e-9)
	if lt.N != 2 {
		t.Errorf("N = %d", lt.N)
	}
	if _, err := Loss(nil, DefaultConfig()); !errors.Is(err, ErrEmptyBatch) {
		t.Errorf("empty batch: err = %v", err)
	}
	if _, err := Loss([]Sample{{Adv: math.Inf(1)}}, DefaultConfig()); !errors.Is(err, ErrReward) {
		t.Errorf("infinite advantage: err = %v", err)
	}
	bad := DefaultConfig()
	bad.ClipEps = 0
	if _, err := Loss(batch, bad); !errors.Is(err, ErrConfig) {
		t.Errorf("clip 0: err = %v", err)
	}
}

func TestAnalyzePartsTerms(t *testing.T) {
	cfg := cfgDDOF(0)
	r := []float64{3, nan, -3}
	dense := [][]float64{{0.1}, {5, -5}, {-0.1}}
	p, err := AnalyzeParts(r, dense, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ao := 3 / (3 + 1e-6)
	ad := 0.1 / (0.1 + 1e-6)
	nearSlice(t, "Out", p.Out, []float64{ao, 0, -ao}, 1e-12)
	nearSlice(t, "Dense0", p.Dense[0], []float64{ad}, 1e-12)
	exactZeros(t, "Dense1 (failed)", p.Dense[1])
	nearSlice(t, "A0", p.A[0], []float64{ao + 0.5*ad}, 1e-12)
	adv, st, _ := Analyze(r, dense, cfg)
	// LengthCorr is NaN here (two scored rollouts with one turn each).
	if !math.IsNaN(st.LengthCorr) || !math.IsNaN(p.Stats.LengthCorr) {
		t.Fatalf("LengthCorr = %v, %v, want NaN (equal lengths)", st.LengthCorr, p.Stats.LengthCorr)
	}
	st.LengthCorr, p.Stats.LengthCorr = 0, 0
	if !reflect.DeepEqual(adv, p.A) || st != p.Stats {
		t.Fatalf("Analyze disagrees with AnalyzeParts: %v %+v", adv, st)
	}
}

// BenchmarkAnalyze is one Probe-RPO-paper-sized group: G = 4 rollouts of 10 turns.
func BenchmarkAnalyze(b *testing.B) {
	r := []float64{3, 1, -1, 1}
	dense := make([][]float64, 4)
	for i := range dense {
		dense[i] = make([]float64, 10)
		for t := range dense[i] {
			dense[i][t] = float64((i*7+t*3)%11-5) / 50
		}
	}
	cfg := DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Analyze(r, dense, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
