// Package embed turns texts into unit-length embeddings E(.) (MASP paper,
// Eq. 7): the Encoder interface, the model-free HashedTFIDF default, an
// HTTP client of OpenAI- and Ollama-style embeddings endpoints
// (HTTPEncoder, ForBackend) and a memoising wrapper (Memo). The MASP mind
// model (package bdi) and PersuHMM's memory (package persuhmm) encode
// their texts through it; it knows nothing of either.
package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/persuarena/persuarena/llm"
)

// Encoder turns texts into embeddings E(.) (MASP paper, Eq. 7). Every returned
// vector has the same length d and unit L2 norm (an empty or token-free
// text may give the zero vector), one per input text, in input order.
// Implementations must be safe for concurrent use.
type Encoder interface {
	Encode(ctx context.Context, texts []string) ([][]float64, error)
}

// DefaultHashDim is the default embedding dimension d of HashedTFIDF.
// Choice: 256 buckets keep z small (771 coordinates) while BDI texts of a
// sentence or two rarely collide; the metric A divides the text block by
// 3d, so d does not change the scale of progress.
const DefaultHashDim = 256

// HashedTFIDF is the embedded default encoder: it needs no model and is
// deterministic. A text is lower-cased and split into word tokens (runs of
// letters and digits; an apostrophe between letters stays inside the word).
// Its features are the unigrams and the adjacent-token bigrams. Each
// feature f with count tf gets the sublinear weight 1 + ln(tf) times idf of
// its bucket, and is added to bucket h(f) mod D with sign +1 or -1 from the
// top bit of h(f), where h is 64-bit FNV-1a (signed feature hashing,
// Weinberger et al. 2009, so collisions cancel in expectation rather than
// pile up). The vector is then L2-normalised; a text without tokens gives
// the zero vector.
//
// Choice: idf is 1 everywhere unless Fit is called (idf-free by default),
// so z of a given text never depends on which corpus was seen; Fit sets
// the smoothed idf ln((1 + N) / (1 + df)) + 1 per bucket (scikit-learn's
// smooth_idf) from N documents.
type HashedTFIDF struct {
	// D is the number of buckets (the dimension d); <= 0 means
	// DefaultHashDim.
	D int
	// IDF holds one weight per bucket after Fit; nil means all 1.
	IDF []float64
}

// NewHashedTFIDF returns an idf-free hashed encoder of dimension d (<= 0:
// DefaultHashDim).
func NewHashedTFIDF(d int) *HashedTFIDF {
	if d <= 0 {
		d = DefaultHashDim
	}
	return &HashedTFIDF{D: d}
}

func (h *HashedTFIDF) dim() int {
	if h.D <= 0 {
		return DefaultHashDim
	}
	return h.D
}

// Tokens splits text into lower-case word tokens as HashedTFIDF does.
func Tokens(text string) []string {
	var out []string
	var b strings.Builder
	rs := []rune(strings.ToLower(text))
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case (r == '\'' || r == '’') && b.Len() > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]):
			b.WriteRune('\'')
		default:
			flush()
		}
	}
	flush()
	return out
}

// features returns the unigram and bigram features of text with counts,
// in first-occurrence order (so sums are order-stable).
func features(text string) ([]string, map[string]int) {
	toks := Tokens(text)
	counts := map[string]int{}
	var order []string
	add := func(f string) {
		if counts[f] == 0 {
			order = append(order, f)
		}
		counts[f]++
	}
	for i, t := range toks {
		add(t)
		if i > 0 {
			add(toks[i-1] + " " + t)
		}
	}
	return order, counts
}

func hash64(s string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(s))
	return f.Sum64()
}

// Embed returns the unit-normalised embedding of one text (zero vector
// when the text has no tokens).
func (h *HashedTFIDF) Embed(text string) []float64 {
	d := h.dim()
	v := make([]float64, d)
	order, counts := features(text)
	for _, f := range order {
		x := hash64(f)
		i := int(x % uint64(d))
		w := 1 + math.Log(float64(counts[f]))
		if h.IDF != nil {
			w *= h.IDF[i]
		}
		if x>>63 == 1 {
			w = -w
		}
		v[i] += w
	}
	Normalise(v)
	return v
}

// Encode embeds each text (Encoder). It never fails except on a cancelled
// ctx.
func (h *HashedTFIDF) Encode(ctx context.Context, texts []string) ([][]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float64, len(texts))
	for i, t := range texts {
		out[i] = h.Embed(t)
	}
	return out, nil
}

// Fit sets IDF from docs: per bucket, ln((1 + N) / (1 + df)) + 1 where df
// counts the documents with a feature in that bucket. It returns an error
// for an empty corpus.
func (h *HashedTFIDF) Fit(docs []string) error {
	if len(docs) == 0 {
		return errors.New("embed: HashedTFIDF.Fit: empty corpus")
	}
	d := h.dim()
	df := make([]float64, d)
	seen := make([]bool, d)
	for _, doc := range docs {
		clear(seen)
		order, _ := features(doc)
		for _, f := range order {
			seen[hash64(f)%uint64(d)] = true
		}
		for i, s := range seen {
			if s {
				df[i]++
			}
		}
	}
	idf := make([]float64, d)
	n := float64(len(docs))
	for i := range idf {
		idf[i] = math.Log((1+n)/(1+df[i])) + 1
	}
	h.D, h.IDF = d, idf
	return nil
}

// Memo wraps an Encoder with an in-memory cache keyed by text, so repeated
// texts (targets, templated states) are encoded once. Safe for concurrent
// use.
type Memo struct {
	// Enc is the wrapped encoder.
	Enc Encoder
	mu  sync.Mutex
	m   map[string][]float64
}

// NewMemo returns a caching wrapper around enc.
func NewMemo(enc Encoder) *Memo { return &Memo{Enc: enc, m: map[string][]float64{}} }

// Encode returns cached embeddings and encodes the rest in one call.
func (c *Memo) Encode(ctx context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	var miss []string
	var at []int
	c.mu.Lock()
	for i, t := range texts {
		if v, ok := c.m[t]; ok {
			out[i] = v
		} else {
			miss = append(miss, t)
			at = append(at, i)
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	got, err := c.Enc.Encode(ctx, miss)
	if err != nil {
		return nil, err
	}
	if len(got) != len(miss) {
		return nil, fmt.Errorf("embed: encoder returned %d embeddings for %d texts", len(got), len(miss))
	}
	c.mu.Lock()
	for k, i := range at {
		out[i] = got[k]
		c.m[miss[k]] = got[k]
	}
	c.mu.Unlock()
	return out, nil
}

// EmbeddingStyle selects the wire format of an HTTPEncoder.
type EmbeddingStyle string

// The two embedding APIs.
const (
	// StyleOpenAI is POST {base}/v1/embeddings with {"model", "input":
	// [...], "encoding_format": "float"} answering {"data": [{"index",
	// "embedding": [...]}]}: OpenAI, vLLM pooling models (--task embed /
	// --runner pooling), llama-server started with --embeddings, and
	// Ollama's OpenAI-compatible endpoint.
	StyleOpenAI EmbeddingStyle = "openai"
	// StyleOllama is Ollama's native POST {base}/api/embed with {"model",
	// "input": [...]} answering {"embeddings": [[...], ...]}.
	StyleOllama EmbeddingStyle = "ollama"
)

// HTTPEncoder calls an embeddings endpoint over net/http and
// L2-normalises what it returns (the MASP paper's Eq. 7 normalises every
// component embedding). The API key is read from the environment variable
// named by APIKeyEnv at each call and sent as "Authorization: Bearer ...";
// it never appears in errors or logs. Safe for concurrent use.
type HTTPEncoder struct {
	// BaseURL is the server root, e.g. "http://localhost:8000" or
	// "http://localhost:8000/v1" (a trailing /v1 is accepted for
	// StyleOpenAI), or "http://localhost:11434" for Ollama.
	BaseURL string
	// Model is the embedding model name sent with each request.
	Model string
	// Style is the wire format; "" means StyleOpenAI.
	Style EmbeddingStyle
	// APIKeyEnv names the environment variable holding the API key; ""
	// or an unset variable sends no Authorization header.
	APIKeyEnv string
	// BatchSize is the most texts per request; <= 0 means 64.
	BatchSize int
	// Timeout bounds each request; <= 0 means 60 s.
	Timeout time.Duration
	// Client is the HTTP client; nil means http.DefaultClient.
	Client *http.Client
}

func (e *HTTPEncoder) url() string {
	base := strings.TrimRight(e.BaseURL, "/")
	if e.Style == StyleOllama {
		return base + "/api/embed"
	}
	if strings.HasSuffix(base, "/v1") {
		return base + "/embeddings"
	}
	return base + "/v1/embeddings"
}

// Encode sends texts in batches and returns unit-normalised embeddings in
// input order. Errors name the URL and HTTP status (with at most 200 bytes
// of the response body), a malformed response, a count or index mismatch,
// or embeddings of unequal length.
func (e *HTTPEncoder) Encode(ctx context.Context, texts []string) ([][]float64, error) {
	bs := e.BatchSize
	if bs <= 0 {
		bs = 64
	}
	out := make([][]float64, 0, len(texts))
	for i := 0; i < len(texts); i += bs {
		got, err := e.batch(ctx, texts[i:min(i+bs, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	for i, v := range out {
		if len(v) != len(out[0]) {
			return nil, fmt.Errorf("embed: %s: embedding %d has length %d, embedding 0 has %d", e.url(), i, len(v), len(out[0]))
		}
		Normalise(v)
	}
	return out, nil
}

// Normalise scales v in place to unit L2 norm; the zero vector stays zero.
func Normalise(v []float64) {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	if n > 0 {
		n = math.Sqrt(n)
		for i := range v {
			v[i] /= n
		}
	}
}

func (e *HTTPEncoder) batch(ctx context.Context, texts []string) ([][]float64, error) {
	body := map[string]any{"model": e.Model, "input": texts}
	if e.Style != StyleOllama {
		body["encoding_format"] = "float"
	}
	raw, _ := json.Marshal(body)
	to := e.Timeout
	if to <= 0 {
		to = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	u := e.url()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("embed: embeddings request to %s: %w", u, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.APIKeyEnv != "" {
		if key := os.Getenv(e.APIKeyEnv); key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	hc := e.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embed: embeddings request to %s failed: %w", u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("embed: embeddings response from %s: %w", u, err)
	}
	if resp.StatusCode/100 != 2 {
		snip := string(data)
		if len(snip) > 200 {
			snip = snip[:200] + "..."
		}
		return nil, fmt.Errorf("embed: embeddings request to %s: HTTP %d: %s", u, resp.StatusCode, strings.TrimSpace(snip))
	}
	var vecs [][]float64
	if e.Style == StyleOllama {
		var r struct {
			Embeddings [][]float64 `json:"embeddings"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("embed: embeddings response from %s: %w", u, err)
		}
		vecs = r.Embeddings
	} else {
		var r struct {
			Data []struct {
				Index     *int      `json:"index"`
				Embedding []float64 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("embed: embeddings response from %s: %w", u, err)
		}
		vecs = make([][]float64, len(r.Data))
		for k, item := range r.Data {
			i := k
			if item.Index != nil {
				i = *item.Index
			}
			if i < 0 || i >= len(vecs) || vecs[i] != nil {
				return nil, fmt.Errorf("embed: embeddings response from %s: bad or repeated index %d", u, i)
			}
			vecs[i] = item.Embedding
		}
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed: embeddings response from %s: %d embeddings for %d texts", u, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return nil, fmt.Errorf("embed: embeddings response from %s: embedding %d is empty", u, i)
		}
	}
	return vecs, nil
}

// ForBackend returns the Encoder on the embeddings endpoint of backend b:
// POST {base_url}/embeddings in the OpenAI-compatible shape (HTTPEncoder
// with StyleOpenAI: vLLM and SGLang pooling models, llama-server with
// --embeddings, Ollama, OpenAI), with b's model, API key variable and
// timeout. Embeddings are unit-normalised and memoised by text (Memo). The
// endpoint is not contacted until the first Encode; its errors name the
// URL and status.
func ForBackend(b llm.Backend) Encoder {
	return NewMemo(&HTTPEncoder{BaseURL: b.BaseURL, Model: b.Model, Style: StyleOpenAI, APIKeyEnv: b.APIKeyEnv, Timeout: b.Timeout})
}
