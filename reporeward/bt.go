package reporeward

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/internal/atomicfile"
	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/tagger"
)

// Pair is one pairwise preference: Chosen was preferred to Rejected (as
// a judge's comparison or an outcome pair says). One JSONL line
// {"chosen": "...", "rejected": "..."}.
type Pair struct {
	Chosen   string `json:"chosen"`
	Rejected string `json:"rejected"`
}

// ReadPairs reads preference pairs, one JSON object a line (blank lines
// skipped). Errors name name:line: malformed JSON, an empty chosen or
// rejected text; no pairs is an error.
func ReadPairs(name string, r io.Reader) ([]Pair, error) {
	var out []Pair
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			continue
		}
		var p Pair
		dec := json.NewDecoder(strings.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		switch {
		case strings.TrimSpace(p.Chosen) == "":
			return nil, fmt.Errorf("%s:%d: chosen: missing", name, line)
		case strings.TrimSpace(p.Rejected) == "":
			return nil, fmt.Errorf("%s:%d: rejected: missing", name, line)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no preference pairs", name)
	}
	return out, nil
}

// BTDim is the hashed TF-IDF dimension of the Bradley–Terry features.
// Choice: 128 buckets (package bdi's encoder), plus the five tagged
// persuasion acts and the pressure-marker count.
const BTDim = 128

// BT is the embedded Bradley–Terry reward model: score(x) = w·φ(x), where
// φ is the hashed TF-IDF embedding of the text (package bdi) followed by
// the five tagged acts (0/1) and the pressure-marker count (package
// tagger), and P(a preferred to b) = σ(score(a) − score(b)) (Bradley and
// Terry 1952; the REPO paper's preference-trained reward model). Safe
// for concurrent use once trained.
type BT struct {
	W []float64 `json:"w"`
}

// BTFeatures returns φ(text), of length BTDim + tagger.NumActs + 1.
func BTFeatures(text string) []float64 {
	x := embed.NewHashedTFIDF(BTDim).Embed(text)
	tg := tagger.Tag(text)
	for _, a := range tagger.Acts {
		v := 0.0
		if tg.Acts.Has(a) {
			v = 1
		}
		x = append(x, v)
	}
	return append(x, float64(tg.Pressure))
}

// ScoreText returns w·φ(text).
func (m *BT) ScoreText(text string) float64 {
	x := BTFeatures(text)
	s := 0.0
	for i := range min(len(x), len(m.W)) {
		s += m.W[i] * x[i]
	}
	return s
}

// Score is ScoreText of the agent's utterances of the conversation (the
// partner's replies are not the policy's doing).
func (m *BT) Score(_ context.Context, in Input) (float64, error) {
	var b strings.Builder
	for _, msg := range in.Transcript {
		if msg.Speaker == "persuader" {
			b.WriteString(msg.Text)
			b.WriteByte('\n')
		}
	}
	return m.ScoreText(b.String()), nil
}

// BTConfig configures TrainBT.
type BTConfig struct {
	// Epochs of full-batch gradient descent (0: 300), LR the step size
	// (0: 0.5), L2 the ridge penalty (0: 1e-3).
	Epochs int
	LR, L2 float64
	// Heldout is the share of pairs held out for accuracy (0: 0.2; the
	// split is a seeded permutation), Seed its seed.
	Heldout float64
	Seed    uint64
}

// BTReport is what TrainBT measured: pair counts and pairwise accuracy
// (the share of pairs whose chosen text scores higher) on the training
// and held-out pairs.
type BTReport struct {
	Train, Heldout       int
	TrainAcc, HeldoutAcc float64
}

// TrainBT fits a Bradley–Terry model to pairs by L2-regularised logistic
// regression on feature differences (full-batch gradient descent, w = 0
// at the start), holding out cfg.Heldout of them. Deterministic for a
// seed. Errors: fewer than two pairs.
func TrainBT(pairs []Pair, cfg BTConfig) (*BT, BTReport, error) {
	if len(pairs) < 2 {
		return nil, BTReport{}, fmt.Errorf("bradley-terry: %d pairs, want >= 2", len(pairs))
	}
	if cfg.Epochs == 0 {
		cfg.Epochs = 300
	}
	if cfg.LR == 0 {
		cfg.LR = 0.5
	}
	if cfg.L2 == 0 {
		cfg.L2 = 1e-3
	}
	if cfg.Heldout == 0 {
		cfg.Heldout = 0.2
	}
	perm := rand.New(rand.NewPCG(cfg.Seed, 0xb7)).Perm(len(pairs))
	nh := min(len(pairs)-1, int(math.Round(cfg.Heldout*float64(len(pairs)))))
	diffs := make([][]float64, len(pairs))
	for i, p := range pairs {
		a, b := BTFeatures(p.Chosen), BTFeatures(p.Rejected)
		for k := range a {
			a[k] -= b[k]
		}
		diffs[i] = a
	}
	train, held := perm[nh:], perm[:nh]
	d := len(diffs[0])
	w := make([]float64, d)
	g := make([]float64, d)
	for range cfg.Epochs {
		clear(g)
		for _, i := range train {
			z := dot(w, diffs[i])
			// d/dw of -log σ(z) is -(1 - σ(z))·x
			c := 1 - sigmoid(z)
			for k, x := range diffs[i] {
				g[k] -= c * x
			}
		}
		n := float64(len(train))
		for k := range w {
			w[k] -= cfg.LR * (g[k]/n + cfg.L2*w[k])
		}
	}
	acc := func(idx []int) float64 {
		if len(idx) == 0 {
			return math.NaN()
		}
		ok := 0
		for _, i := range idx {
			if dot(w, diffs[i]) > 0 {
				ok++
			}
		}
		return float64(ok) / float64(len(idx))
	}
	return &BT{W: w}, BTReport{Train: len(train), Heldout: len(held), TrainAcc: acc(train), HeldoutAcc: acc(held)}, nil
}

// LoadBT reads a model written by (*BT).Save. Errors: the file's, bad
// JSON, a weight vector of the wrong length.
func LoadBT(path string) (*BT, error) {
	b, err := filelimit.ReadFile(path, filelimit.Data)
	if err != nil {
		return nil, fmt.Errorf("bradley-terry model: %w", err)
	}
	var m BT
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("bradley-terry model %s: %w", path, err)
	}
	if want := BTDim + tagger.NumActs + 1; len(m.W) != want {
		return nil, fmt.Errorf("bradley-terry model %s: %d weights, want %d", path, len(m.W), want)
	}
	return &m, nil
}

// Save writes the model as JSON, atomically.
func (m *BT) Save(path string) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, b)
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
