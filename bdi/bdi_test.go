package bdi

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/embed"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (tol %g)", name, got, want, tol)
	}
}

func dot(a, b []float64) (s float64) {
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(v []float64) float64 { return math.Sqrt(dot(v, v)) }

func TestValidateNamesField(t *testing.T) {
	ok := State{Belief: "b", Desire: "d", Intention: "i", Receptivity: 0.5, Confidence: 0.5, Valence: 0}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mod  func(*State)
		want string
	}{
		{func(s *State) { s.Receptivity = 1.01 }, "receptivity = 1.01 outside [0, 1]"},
		{func(s *State) { s.Receptivity = -0.1 }, "receptivity"},
		{func(s *State) { s.Confidence = math.NaN() }, "confidence = NaN"},
		{func(s *State) { s.Valence = -1.5 }, "valence = -1.5 outside [-1, 1]"},
		{func(s *State) { s.Valence = 1 }, ""},
		{func(s *State) { s.Intention = "  " }, "intention is empty"},
	} {
		s := ok
		c.mod(&s)
		err := s.Validate()
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: unexpected %v", s, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", s, err, c.want)
		}
	}
}

// ||x||_A^2 for d = 1, x = [1, 2, 3, 4, 5, 6]: (1 + 4 + 9) / 3 + 16 + 25 + 36.
func TestNormAHand(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6}
	near(t, "NormA", NormA(x, 1), 14.0/3+77, 1e-12)
	y := []float64{1, 0, 0, 0, 0, 2}
	near(t, "InnerA", InnerA(x, y, 1), 1.0/3+12, 1e-12)
	near(t, "DistA", DistA(x, y, 1), (0+4+9)/3.0+16+25+16, 1e-12)
}

// Eq. 13 with d = 1, z0 = 0 and z* = [3, 0, 0, 1, 0, 0]: the denominator is
// 9/3 + 1 = 4 (+1e-6).
func TestProgressHand(t *testing.T) {
	z0 := make([]float64, 6)
	zs := []float64{3, 0, 0, 1, 0, 0}
	near(t, "text move", Progress([]float64{3, 0, 0, 0, 0, 0}, z0, zs, 1), 3/(4+1e-6), 1e-15)
	near(t, "scalar move", Progress([]float64{0, 0, 0, 1, 0, 0}, z0, zs, 1), 1/(4+1e-6), 1e-15)
	near(t, "away", Progress([]float64{0, 0, 0, -2, 0, 0}, z0, zs, 1), -2/(4+1e-6), 1e-15)
	near(t, "delta", DeltaProgress(zs, []float64{3, 0, 0, 0, 0, 0}, z0, zs, 1), 1/(4+1e-6), 1e-15)
}

func encodeState(t *testing.T, s State, a Alpha) []float64 {
	t.Helper()
	z, err := Vector(context.Background(), s, embed.NewHashedTFIDF(0), a)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// The progress identities on real encoded states: z = z0 gives 0,
// z = z* gives 1 up to epsilon, an A-orthogonal move gives 0.
func TestProgressIdentities(t *testing.T) {
	target, _ := Target(P4G)
	start := State{Belief: "The user doubts the charity is honest.", Desire: "The user wants to keep the money.",
		Intention: "The user intends to decline.", Receptivity: 0.2, Confidence: 0.7, Valence: -0.3}
	z0 := encodeState(t, start, DefaultAlpha)
	zs := encodeState(t, target, DefaultAlpha)
	d, err := TextDim(z0)
	if err != nil || d != embed.DefaultHashDim {
		t.Fatalf("TextDim %d %v", d, err)
	}
	if got := Progress(z0, z0, zs, d); got != 0 {
		t.Errorf("s(z0) = %v, want 0", got)
	}
	den := NormA(sub(zs, z0), d)
	near(t, "s(z*)", Progress(zs, z0, zs, d), den/(den+1e-6), 1e-15)
	near(t, "s(z*) ~ 1", Progress(zs, z0, zs, d), 1, 1e-5)
	// A move w with w^T A (z* - z0) = 0: take any vector and remove its
	// A-projection on the direction.
	dir := sub(zs, z0)
	w := make([]float64, len(z0))
	for i := range w {
		w[i] = math.Sin(float64(i + 1))
	}
	k := InnerA(w, dir, d) / NormA(dir, d)
	for i := range w {
		w[i] -= k * dir[i]
	}
	near(t, "w orthogonal", InnerA(w, dir, d), 0, 1e-12)
	z := make([]float64, len(z0))
	for i := range z {
		z[i] = z0[i] + w[i]
	}
	near(t, "s(orthogonal move)", Progress(z, z0, zs, d), 0, 1e-12)
	// Halfway along the direction gives one half.
	for i := range z {
		z[i] = z0[i] + 0.5*dir[i]
	}
	near(t, "s(halfway)", Progress(z, z0, zs, d), 0.5*den/(den+1e-6), 1e-12)
}

func sub(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

// Eq. 8 pre-scales the scalars by sqrt(alpha).
func TestScalarPrescaling(t *testing.T) {
	s := State{Belief: "b", Desire: "d", Intention: "i", Receptivity: 0.5, Confidence: 0.25, Valence: -0.5}
	z := encodeState(t, s, Alpha{Rho: 4, C: 9, V: 16})
	d := embed.DefaultHashDim
	near(t, "rho coord", z[3*d], 2*0.5, 0)
	near(t, "c coord", z[3*d+1], 3*0.25, 0)
	near(t, "v coord", z[3*d+2], 4*-0.5, 0)
	z1 := encodeState(t, s, DefaultAlpha)
	near(t, "rho coord alpha 1", z1[3*d], 0.5, 0)
	// In the metric, the scalar part of ||z||_A^2 is alpha-weighted.
	text := 3.0 / float64(3*d) // three unit blocks
	near(t, "NormA alpha", NormA(z, d), text+4*0.25+9*0.0625+16*0.25, 1e-12)
	if _, err := Assemble([]float64{1}, []float64{1}, []float64{1}, s, Alpha{Rho: -1}); err == nil || !strings.Contains(err.Error(), "alpha_rho") {
		t.Errorf("negative alpha: %v", err)
	}
	if _, err := Assemble([]float64{1}, []float64{1, 0}, []float64{1}, s, DefaultAlpha); err == nil {
		t.Error("unequal embeddings accepted")
	}
}

func TestTargets(t *testing.T) {
	want := map[Task][3]float64{P4G: {1.0, 0.8, 0.5}, ESConv: {1.0, 0.7, 0.4}, CB: {0.8, 0.7, 0.3}, ED: {0.8, 0.6, 0.3}}
	for _, task := range Tasks {
		s, err := Target(task)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := [3]float64{s.Receptivity, s.Confidence, s.Valence}; got != want[task] {
			t.Errorf("%s scalars %v, want %v", task, got, want[task])
		}
	}
	if _, err := Target("chess"); err == nil {
		t.Error("unknown task accepted")
	}
	if got := GoalPhrase("Donate part of your task payment to Save the Children: any amount from $0 up to your full $2."); got != "donate part of their task payment to Save the Children" {
		t.Errorf("GoalPhrase %q", got)
	}
	if got := GoalPhrase(" .!"); got != "go ahead with the proposal" {
		t.Errorf("GoalPhrase of punctuation = %q", got)
	}
	if tk, err := ParseTask("CraigslistBargain"); err != nil || tk != CB {
		t.Errorf("ParseTask %v %v", tk, err)
	}
}
