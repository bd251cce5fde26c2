// Package bdi is MASP's model of a persuadee's mind (MASP paper, §3.2-3.3):
// the six-field BDI state (belief, desire and intention texts plus
// receptivity, confidence and valence), its vector z (Eq. 8) built from
// unit-normalised text embeddings, the weighted metric A (Eq. 11),
// user-relative progress s_t and its increment (Eq. 13-14), per-task target
// states (Appendix B.2), the mentalizers that label states (teacher, Eq. 9)
// and estimate them from history alone (student, Eq. 10, 21), and the BDI
// cache and prior with nearest-neighbour rendering (Appendix B.2, B.5).
//
// Everything here is deterministic: the default encoder (embed.HashedTFIDF)
// needs no model and the student is a closed-form ridge regression.
package bdi

import (
	"fmt"
	"math"
	"strings"
)

// State is one BDI mental state m_t = (B, D, I, rho, c, v) (MASP paper, Eq.
// 6). Belief, Desire and Intention are free text about the user; Receptivity
// rho in [0, 1] is openness to the other side's proposals, Confidence c in
// [0, 1] is commitment to / certainty of the current stance, Valence v in
// [-1, 1] is emotional tone (negative .. positive).
type State struct {
	Belief      string  `json:"belief"`
	Desire      string  `json:"desire"`
	Intention   string  `json:"intention"`
	Receptivity float64 `json:"receptivity"`
	Confidence  float64 `json:"confidence"`
	Valence     float64 `json:"valence"`
}

// Validate reports the first field out of range as an error naming it:
// receptivity or confidence outside [0, 1], valence outside [-1, 1], a NaN,
// or an empty text field.
func (s State) Validate() error {
	in := func(name string, v, lo, hi float64) error {
		if math.IsNaN(v) || v < lo || v > hi {
			return fmt.Errorf("bdi: %s = %g outside [%g, %g]", name, v, lo, hi)
		}
		return nil
	}
	for _, f := range []struct{ name, v string }{{"belief", s.Belief}, {"desire", s.Desire}, {"intention", s.Intention}} {
		if strings.TrimSpace(f.v) == "" {
			return fmt.Errorf("bdi: %s is empty", f.name)
		}
	}
	return firstNil(in("receptivity", s.Receptivity, 0, 1), in("confidence", s.Confidence, 0, 1),
		in("valence", s.Valence, -1, 1))
}

// firstNil returns the first non-nil error (so Validate reports one field).
func firstNil(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Text renders s as the short control block the paper prepends to a
// role's prompt (MASP paper, Appendix B.5): three labelled text lines and
// the scalars to two decimals.
func (s State) Text() string {
	return fmt.Sprintf("Belief: %s\nDesire: %s\nIntention: %s\nReceptivity: %.2f\nConfidence: %.2f\nValence: %+.2f",
		s.Belief, s.Desire, s.Intention, s.Receptivity, s.Confidence, s.Valence)
}

// Alpha holds the scalar importance weights alpha_rho, alpha_c, alpha_v of
// the latent metric (MASP paper, Eq. 8, 11), each >= 0. They enter z as
// sqrt(alpha) pre-scaling of the scalar coordinates, so A's scalar entries
// stay 1.
type Alpha struct{ Rho, C, V float64 }

// DefaultAlpha is (1, 1, 1): the paper gives no values; the released code
// (Tecitomous/MASP-Proactive-Dialogue, src/masp/mind/bdi_schema.py,
// BDITaskConfig alpha_rho = alpha_c = alpha_v = 1.0) uses one each.
var DefaultAlpha = Alpha{Rho: 1, C: 1, V: 1}

// Dim returns the length of z for text embeddings of dimension d: 3d + 3.
func Dim(d int) int { return 3*d + 3 }

// Assemble builds z = [e_B; e_D; e_I; sqrt(a_rho) rho; sqrt(a_c) c;
// sqrt(a_v) v] (MASP paper, Eq. 8) from three embeddings of equal length d
// (unit-normalised by the encoder) and the state's scalars. It returns an
// error when the embeddings differ in length or are empty, or an alpha is
// negative or NaN.
func Assemble(eB, eD, eI []float64, s State, a Alpha) ([]float64, error) {
	d := len(eB)
	if d == 0 || len(eD) != d || len(eI) != d {
		return nil, fmt.Errorf("bdi: embeddings of lengths %d, %d, %d; want three equal non-zero lengths", len(eB), len(eD), len(eI))
	}
	for _, f := range []struct {
		n string
		v float64
	}{{"alpha_rho", a.Rho}, {"alpha_c", a.C}, {"alpha_v", a.V}} {
		if !(f.v >= 0) {
			return nil, fmt.Errorf("bdi: %s = %g, want >= 0", f.n, f.v)
		}
	}
	z := make([]float64, 0, Dim(d))
	z = append(z, eB...)
	z = append(z, eD...)
	z = append(z, eI...)
	return append(z, math.Sqrt(a.Rho)*s.Receptivity, math.Sqrt(a.C)*s.Confidence, math.Sqrt(a.V)*s.Valence), nil
}

// InnerA returns x^T A y for A = diag(I_3d / (3d), 1, 1, 1) (MASP paper, Eq.
// 11): the text block (first 3d coordinates) is averaged, the three (already
// sqrt(alpha)-scaled) scalar coordinates count fully. x and y must have
// length 3d + 3; it panics otherwise (a programming error).
func InnerA(x, y []float64, d int) float64 {
	if len(x) != Dim(d) || len(y) != Dim(d) {
		panic(fmt.Sprintf("bdi: InnerA on lengths %d and %d, want 3*%d+3", len(x), len(y), d))
	}
	var t, s float64
	for i := range 3 * d {
		t += x[i] * y[i]
	}
	for i := 3 * d; i < len(x); i++ {
		s += x[i] * y[i]
	}
	return t/float64(3*d) + s
}

// NormA returns ||x||_A^2 = x^T A x (MASP paper, Eq. 12).
func NormA(x []float64, d int) float64 { return InnerA(x, x, d) }

// DistA returns ||x - y||_A^2, the mentalization error of Eq. 15 when x is
// the student estimate z-hat and y the teacher state z.
func DistA(x, y []float64, d int) float64 {
	if len(x) != len(y) {
		panic(fmt.Sprintf("bdi: DistA on lengths %d and %d", len(x), len(y)))
	}
	diff := make([]float64, len(x))
	for i := range x {
		diff[i] = x[i] - y[i]
	}
	return NormA(diff, d)
}

// EpsProg is epsilon_prog of Eq. 13 (MASP paper: 1e-6).
const EpsProg = 1e-6

// Progress returns user-relative progress (MASP paper, Eq. 13)
//
//	s = ((z - z0)^T A (z* - z0)) / ((z* - z0)^T A (z* - z0) + 1e-6),
//
// the A-projection of the move from the user's own start z0 onto the
// direction to the target z*: 0 at z0, about 1 at z*, 0 for a move
// A-orthogonal to z* - z0, negative for a move away. All three vectors
// must have length 3d + 3 (InnerA panics otherwise).
//
// Note: the released code clamps the denominator at epsilon instead of
// adding it (rewards.py progress_score); the two differ by at most 1e-6
// relative and only when z0 is far from z*.
func Progress(z, z0, zStar []float64, d int) float64 {
	dz := make([]float64, len(z))
	dt := make([]float64, len(z))
	for i := range z {
		dz[i] = z[i] - z0[i]
		dt[i] = zStar[i] - z0[i]
	}
	return InnerA(dz, dt, d) / (NormA(dt, d) + EpsProg)
}

// DeltaProgress returns Delta s_t = s_{t+1} - s_t (MASP paper, Eq. 14) for
// consecutive states z_t (prev) and z_{t+1} (next) of one user.
func DeltaProgress(next, prev, z0, zStar []float64, d int) float64 {
	return Progress(next, z0, zStar, d) - Progress(prev, z0, zStar, d)
}
