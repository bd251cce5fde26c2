package embed

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (tol %g)", name, got, want, tol)
	}
}

func norm(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func TestTokens(t *testing.T) {
	got := strings.Join(Tokens("I don't trust THE charity's ads—really, 100%!"), "|")
	if want := "i|don't|trust|the|charity's|ads|really|100"; got != want {
		t.Errorf("Tokens = %q, want %q", got, want)
	}
}

// One token: one feature with weight 1 at bucket h mod d, sign from the top
// bit of h; three distinct features: each coordinate +-1/sqrt(3).
func TestHashedTFIDFHand(t *testing.T) {
	h := NewHashedTFIDF(0)
	v := h.Embed("hello")
	x := hash64("hello")
	want := 1.0
	if x>>63 == 1 {
		want = -1
	}
	for i, c := range v {
		if i == int(x%256) {
			near(t, "hello bucket", c, want, 0)
		} else if c != 0 {
			t.Fatalf("coordinate %d = %v, want 0", i, c)
		}
	}
	v = h.Embed("Hello, world")
	buckets := map[int]bool{}
	for _, f := range []string{"hello", "world", "hello world"} {
		buckets[int(hash64(f)%256)] = true
	}
	if len(buckets) != 3 {
		t.Skip("features collide at d = 256; hand values do not apply")
	}
	for i, c := range v {
		if buckets[i] {
			near(t, "two-word coordinate", math.Abs(c), 1/math.Sqrt(3), 1e-15)
		} else if c != 0 {
			t.Fatalf("coordinate %d = %v, want 0", i, c)
		}
	}
	// Sublinear tf: "yes yes" has "yes" twice (1 + ln 2) and "yes yes" once.
	v = h.Embed("yes yes")
	i1, i2 := int(hash64("yes")%256), int(hash64("yes yes")%256)
	if i1 != i2 {
		r := math.Abs(v[i1]) / math.Abs(v[i2])
		near(t, "tf ratio", r, 1+math.Ln2, 1e-12)
	}
}

func TestHashedTFIDFNormAndDeterminism(t *testing.T) {
	texts := []string{"The user doubts that the charity spends money well.", "I want to help children!", "x", "   "}
	a, err := NewHashedTFIDF(64).Encode(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := (&HashedTFIDF{D: 64}).Encode(context.Background(), texts)
	for i := range texts {
		if len(a[i]) != 64 {
			t.Fatalf("dimension %d", len(a[i]))
		}
		want := 1.0
		if i == 3 {
			want = 0 // no tokens: the zero vector
		}
		near(t, "norm "+texts[i], norm(a[i]), want, 1e-12)
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				t.Fatalf("text %d coordinate %d differs between encoders", i, j)
			}
		}
	}
	// Similar texts are closer than unrelated ones.
	c := NewHashedTFIDF(0)
	x, y, z := c.Embed("the user intends to donate now"), c.Embed("the user intends to donate today"), c.Embed("seller wants a higher price for the bike")
	if dot(x, y) <= dot(x, z) {
		t.Errorf("cos(similar) %v <= cos(unrelated) %v", dot(x, y), dot(x, z))
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Fit: a feature in every document gets idf ln(3/3)+1 = 1, one in one
// document of two ln(3/2)+1.
func TestHashedTFIDFFit(t *testing.T) {
	h := NewHashedTFIDF(0)
	if err := h.Fit([]string{"alpha beta", "alpha"}); err != nil {
		t.Fatal(err)
	}
	ia, ib := int(hash64("alpha")%256), int(hash64("beta")%256)
	iab := int(hash64("alpha beta") % 256)
	if ia == ib || ia == iab {
		t.Skip("collision")
	}
	near(t, "idf(alpha)", h.IDF[ia], 1, 1e-15)
	near(t, "idf(beta)", h.IDF[ib], math.Log(1.5)+1, 1e-15)
	near(t, "idf(empty bucket)", h.IDF[(ia+1)%256], math.Log(3)+1, 1e-15)
	if err := h.Fit(nil); err == nil {
		t.Error("empty corpus accepted")
	}
}

func TestMemo(t *testing.T) {
	var calls int
	var mu sync.Mutex
	inner := encFunc(func(texts []string) [][]float64 {
		mu.Lock()
		calls += len(texts)
		mu.Unlock()
		return NewHashedTFIDF(8).mustEncode(texts)
	})
	m := NewMemo(inner)
	a, _ := m.Encode(context.Background(), []string{"a b", "c"})
	b, _ := m.Encode(context.Background(), []string{"c", "a b", "d"})
	if calls != 3 {
		t.Errorf("inner encoded %d texts, want 3", calls)
	}
	if &a[0][0] != &b[1][0] {
		t.Error("cached vector not reused")
	}
}

type encFunc func([]string) [][]float64

func (f encFunc) Encode(_ context.Context, texts []string) ([][]float64, error) { return f(texts), nil }

func (h *HashedTFIDF) mustEncode(texts []string) [][]float64 {
	out, _ := h.Encode(context.Background(), texts)
	return out
}

// The OpenAI-compatible shape: data items may come out of order; vectors
// are normalised; the key comes from the named environment variable and is
// sent as a bearer token; batches are split.
func TestHTTPEncoderOpenAI(t *testing.T) {
	t.Setenv("TEST_EMB_KEY", "sk-secret-123")
	var reqs []map[string]any
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, "not found", 404)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-secret-123" {
			http.Error(w, "bad key", 401)
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		reqs = append(reqs, body)
		mu.Unlock()
		in := body["input"].([]any)
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var data []item
		for i := len(in) - 1; i >= 0; i-- { // reversed order
			s := in[i].(string)
			data = append(data, item{"embedding", i, []float64{float64(len(s)), 0, 0, 1}})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body["model"],
			"usage": map[string]int{"prompt_tokens": 3, "total_tokens": 3}})
	}))
	defer srv.Close()
	e := &HTTPEncoder{BaseURL: srv.URL + "/v1/", Model: "qwen3-embed", APIKeyEnv: "TEST_EMB_KEY", BatchSize: 2}
	out, err := e.Encode(context.Background(), []string{"abc", "a", "abcdefg"})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0]["model"] != "qwen3-embed" || reqs[0]["encoding_format"] != "float" {
		t.Fatalf("requests %v", reqs)
	}
	for i, n := range []float64{3, 1, 7} {
		near(t, "norm", norm(out[i]), 1, 1e-12)
		near(t, "first coordinate", out[i][0], n/math.Sqrt(n*n+1), 1e-12)
	}
	// A wrong key: the error names the status but never the key.
	t.Setenv("TEST_EMB_KEY", "sk-wrong-456")
	_, err = e.Encode(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "sk-wrong-456") {
		t.Errorf("error %v", err)
	}
}

func TestHTTPEncoderOllamaAndErrors(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/api/embed":
			if !strings.Contains(string(b), `"input":["one","two"]`) {
				http.Error(w, "bad body "+string(b), 400)
				return
			}
			io.WriteString(w, `{"model":"nomic-embed-text","embeddings":[[3,4],[0,2]]}`)
		case "/v1/embeddings":
			io.WriteString(w, `{"data":[{"index":0,"embedding":[1,0]}]}`) // one vector for two texts
		}
	}))
	defer srv.Close()
	e := &HTTPEncoder{BaseURL: srv.URL, Model: "nomic-embed-text", Style: StyleOllama}
	out, err := e.Encode(context.Background(), []string{"one", "two"})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "ollama[0][0]", out[0][0], 0.6, 1e-15)
	near(t, "ollama[1][1]", out[1][1], 1, 1e-15)
	if auth != "" {
		t.Errorf("Authorization sent without a key env: %q", auth)
	}
	e = &HTTPEncoder{BaseURL: srv.URL, Model: "m"}
	if _, err := e.Encode(context.Background(), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "1 embeddings for 2 texts") {
		t.Errorf("count mismatch: %v", err)
	}
}

// ForBackend on the fake engine's /v1/embeddings: the unit-normalised
// fakeengine.Embedding of each text, in order, one request for both and
// none for a repeat (memoised).
func TestForBackendFakeEngine(t *testing.T) {
	srv := fakeengine.New(llm.VLLM)
	t.Cleanup(srv.Close)
	c, err := llm.NewClient(srv.Backend("fake"))
	if err != nil {
		t.Fatal(err)
	}
	enc := ForBackend(c.Backend())
	ctx := context.Background()
	got, err := enc.Encode(ctx, []string{"save the shelter", "walk more"})
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"save the shelter", "walk more"} {
		want := fakeengine.Embedding(text)
		norm := 0.0
		for _, x := range want {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		if len(got[i]) != fakeengine.EmbeddingDim {
			t.Fatalf("text %d: length %d", i, len(got[i]))
		}
		for k := range want {
			if math.Abs(got[i][k]-want[k]/norm) > 1e-12 {
				t.Fatalf("text %d component %d: %v, want %v", i, k, got[i][k], want[k]/norm)
			}
		}
	}
	if _, err := enc.Encode(ctx, []string{"walk more"}); err != nil {
		t.Fatal(err)
	}
	if n := srv.Stats().Requests["/v1/embeddings"]; n != 1 {
		t.Errorf("%d embeddings requests, want 1", n)
	}
}
