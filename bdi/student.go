package bdi

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/tagger"
)

// NumFeatures is the length of Features' vector.
const NumFeatures = 19

// FeatureNames names Features' coordinates, in order.
var FeatureNames = [NumFeatures]string{
	"turns/8",
	"share_diagnostic", "share_evidence", "share_plan", "share_commitment", "share_autonomy",
	"mean_pressure",
	"last_diagnostic", "last_evidence", "last_plan", "last_commitment", "last_autonomy",
	"last_pressured",
	"reply_positive", "reply_negative", "reply_hedge", "reply_question",
	"mean_reply_tone", "reply_length",
}

// Cue phrases of persuadee replies (matched on whole tokens).
var (
	posCues   = []string{"yes", "sure", "okay", "ok", "sounds good", "i'll", "i will", "happy to", "makes sense", "thank", "thanks", "good point", "that helps", "fair", "i agree", "interesting", "glad", "better"}
	negCues   = []string{"no", "not", "don't", "won't", "can't", "never", "rather not", "doubt", "worried", "worry", "scam", "pushy", "pressure", "stop", "worse", "too much", "too high", "too low"}
	hedgeCues = []string{"maybe", "not sure", "but", "i guess", "perhaps", "i don't know", "might", "depends"}
)

func cueCount(padded string, cues []string) int {
	n := 0
	for _, c := range cues {
		n += strings.Count(padded, " "+c+" ")
	}
	return n
}

// Features returns the student's observable features of a history (the
// visible transcript only, MASP paper, Eq. 10), NumFeatures values named by
// FeatureNames: the number of persuader turns / 8; the share of persuader
// turns with each of the five acts (tagger); mean pressure markers per
// persuader turn; the acts and pressure of the latest persuader turn; cue
// counts (positive, negative, hedging; each capped at 3 and divided by 3)
// and a question mark in the latest persuadee reply; the mean (positive -
// negative) / 3 over all replies; the latest reply's length in tokens / 50
// (capped at 1). An empty history gives all zeros.
func Features(history []episode.Message) []float64 {
	f := make([]float64, NumFeatures)
	var nP, nR int
	var press, tone float64
	var lastTags tagger.Tags
	var lastReply string
	for _, m := range history {
		if m.Speaker == episode.PersuaderSpeaker {
			tg := tagger.Tag(m.Text)
			nP++
			for k, a := range tagger.Acts {
				if tg.Acts.Has(a) {
					f[1+k]++
				}
			}
			press += float64(tg.Pressure)
			lastTags = tg
			continue
		}
		nR++
		p := " " + strings.Join(embed.Tokens(m.Text), " ") + " "
		tone += (math.Min(float64(cueCount(p, posCues)), 3) - math.Min(float64(cueCount(p, negCues)), 3)) / 3
		lastReply = m.Text
	}
	if nP > 0 {
		f[0] = float64(nP) / 8
		for k := range tagger.Acts {
			f[1+k] /= float64(nP)
		}
		f[6] = press / float64(nP)
		for k, a := range tagger.Acts {
			if lastTags.Acts.Has(a) {
				f[7+k] = 1
			}
		}
		if lastTags.Pressure > 0 {
			f[12] = 1
		}
	}
	if nR > 0 {
		toks := embed.Tokens(lastReply)
		p := " " + strings.Join(toks, " ") + " "
		f[13] = math.Min(float64(cueCount(p, posCues)), 3) / 3
		f[14] = math.Min(float64(cueCount(p, negCues)), 3) / 3
		f[15] = math.Min(float64(cueCount(p, hedgeCues)), 3) / 3
		if strings.Contains(lastReply, "?") {
			f[16] = 1
		}
		f[17] = tone / float64(nR)
		f[18] = math.Min(float64(len(toks))/50, 1)
	}
	return f
}

// Example is one training pair of the student: a history prefix and the
// teacher's state vector z for it (length 3d + 3).
type Example struct {
	History []episode.Message
	Z       []float64
}

// DefaultLambda is the student's default ridge penalty. Choice: 1 on
// standardised features, a mild penalty for a few hundred examples.
const DefaultLambda = 1.0

// Student is the history-only mentalizer M(h_t) (MASP paper, Eq. 10): a
// linear ridge regression from Features to the whole vector z, fitted to
// teacher vectors by minimising the A-weighted loss of Eq. 21,
// sum_t ||M(h_t) - z_t||_A^2, plus Lambda ||W||^2. The loss separates by
// output coordinate; with weight a_j (1/(3d) for text coordinates, 1 for
// the scalars) each column solves (X'X + (Lambda / a_j) I) w_j = X'y_j on
// standardised, centred features (the intercept is the mean target, not
// penalised). Predict renormalises each text block to unit length and
// clips the scalars to their ranges, so z-hat lies where teacher vectors
// lie. The fields are exported so a fitted student can be stored as JSON.
type Student struct {
	// D is the text embedding dimension d; Alpha the weights the targets
	// were built with; Lambda the ridge penalty.
	D      int     `json:"d"`
	Alpha  Alpha   `json:"alpha"`
	Lambda float64 `json:"lambda"`
	// Mean and Std standardise the features (Std 1 for a constant one);
	// YMean is the intercept, the mean target vector.
	Mean  []float64 `json:"mean"`
	Std   []float64 `json:"std"`
	YMean []float64 `json:"y_mean"`
	// W is NumFeatures x (3d + 3), row-major.
	W [][]float64 `json:"w"`
}

// FitStudent fits a Student to examples (see Student) with ridge penalty
// lambda (<= 0: DefaultLambda) and the alphas used to build the targets.
// Errors: no examples, or targets of unequal or malformed length.
func FitStudent(examples []Example, a Alpha, lambda float64) (*Student, error) {
	if len(examples) == 0 {
		return nil, errors.New("bdi: FitStudent: no examples")
	}
	if lambda <= 0 {
		lambda = DefaultLambda
	}
	d, err := TextDim(examples[0].Z)
	if err != nil {
		return nil, fmt.Errorf("bdi: FitStudent: example 0: %w", err)
	}
	n, p, k := len(examples), NumFeatures, Dim(d)
	X := make([][]float64, n)
	Y := make([][]float64, n)
	for i, ex := range examples {
		if len(ex.Z) != k {
			return nil, fmt.Errorf("bdi: FitStudent: example %d has length %d, want %d", i, len(ex.Z), k)
		}
		X[i] = Features(ex.History)
		Y[i] = append([]float64(nil), ex.Z...)
	}
	st := &Student{D: d, Alpha: a, Lambda: lambda, Mean: make([]float64, p), Std: make([]float64, p), YMean: make([]float64, k)}
	col := make([]float64, n)
	for j := range p {
		for i := range n {
			col[i] = X[i][j]
		}
		m, s := meanStd(col)
		if s == 0 {
			s = 1
		}
		st.Mean[j], st.Std[j] = m, s
		for i := range n {
			X[i][j] = (X[i][j] - m) / s
		}
	}
	for j := range k {
		for i := range n {
			col[i] = Y[i][j]
		}
		m, _ := meanStd(col)
		st.YMean[j] = m
		for i := range n {
			Y[i][j] -= m
		}
	}
	// X'X (p x p) and X'Y (p x k).
	xtx := make([][]float64, p)
	xty := make([][]float64, p)
	for a := range p {
		xtx[a] = make([]float64, p)
		xty[a] = make([]float64, k)
		for i := range n {
			xa := X[i][a]
			if xa == 0 {
				continue
			}
			for b := range p {
				xtx[a][b] += xa * X[i][b]
			}
			for j := range k {
				xty[a][j] += xa * Y[i][j]
			}
		}
	}
	st.W = make([][]float64, p)
	for i := range st.W {
		st.W[i] = make([]float64, k)
	}
	solve := func(pen float64, cols []int) error {
		L, err := cholesky(xtx, pen)
		if err != nil {
			return err
		}
		b := make([]float64, p)
		for _, j := range cols {
			for i := range p {
				b[i] = xty[i][j]
			}
			w := cholSolve(L, b)
			for i := range p {
				st.W[i][j] = w[i]
			}
		}
		return nil
	}
	text := make([]int, 3*d)
	for j := range text {
		text[j] = j
	}
	if err := solve(lambda*float64(3*d), text); err != nil {
		return nil, err
	}
	if err := solve(lambda, []int{3 * d, 3*d + 1, 3*d + 2}); err != nil {
		return nil, err
	}
	return st, nil
}

// cholesky returns the lower factor L of A + pen I (L L' = A + pen I), or
// an error when that matrix is not positive definite.
func cholesky(A [][]float64, pen float64) ([][]float64, error) {
	p := len(A)
	L := make([][]float64, p)
	for i := range L {
		L[i] = make([]float64, p)
	}
	for i := range p {
		for j := 0; j <= i; j++ {
			s := A[i][j]
			if i == j {
				s += pen
			}
			for m := range j {
				s -= L[i][m] * L[j][m]
			}
			if i == j {
				if s <= 0 {
					return nil, errors.New("bdi: FitStudent: normal equations are not positive definite")
				}
				L[i][i] = math.Sqrt(s)
			} else {
				L[i][j] = s / L[j][j]
			}
		}
	}
	return L, nil
}

// cholSolve solves L L' x = b.
func cholSolve(L [][]float64, b []float64) []float64 {
	p := len(L)
	y := make([]float64, p)
	for i := range p {
		s := b[i]
		for m := range i {
			s -= L[i][m] * y[m]
		}
		y[i] = s / L[i][i]
	}
	x := make([]float64, p)
	for i := p - 1; i >= 0; i-- {
		s := y[i]
		for m := i + 1; m < p; m++ {
			s -= L[m][i] * x[m]
		}
		x[i] = s / L[i][i]
	}
	return x
}

func meanStd(x []float64) (m, s float64) {
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)))
}

// Predict returns z-hat for a history (length 3d + 3; see Student).
func (st *Student) Predict(history []episode.Message) []float64 {
	x := Features(history)
	for j := range x {
		x[j] = (x[j] - st.Mean[j]) / st.Std[j]
	}
	z := append([]float64(nil), st.YMean...)
	for i, xi := range x {
		if xi == 0 {
			continue
		}
		for j, w := range st.W[i] {
			z[j] += xi * w
		}
	}
	d := st.D
	for b := range 3 {
		embed.Normalise(z[b*d : (b+1)*d])
	}
	for k, f := range []struct{ a, lo, hi float64 }{{st.Alpha.Rho, 0, 1}, {st.Alpha.C, 0, 1}, {st.Alpha.V, -1, 1}} {
		if f.a > 0 {
			r := math.Sqrt(f.a)
			z[3*d+k] = r * clamp(z[3*d+k]/r, f.lo, f.hi)
		}
	}
	return z
}

// Scalars returns the student's receptivity, confidence and valence for a
// history, undoing the sqrt(alpha) pre-scaling (0 where an alpha is 0).
func (st *Student) Scalars(history []episode.Message) (rho, c, v float64) {
	z := st.Predict(history)
	d := st.D
	out := [3]float64{}
	for k, a := range []float64{st.Alpha.Rho, st.Alpha.C, st.Alpha.V} {
		if a > 0 {
			out[k] = z[3*d+k] / math.Sqrt(a)
		}
	}
	return out[0], out[1], out[2]
}

func clamp(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }
