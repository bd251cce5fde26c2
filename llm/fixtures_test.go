package llm

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/persuarena/persuarena/probe"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestParseVLLMChatLogprobs(t *testing.T) {
	r, cached, err := parseChat(fixture(t, "vllm_chat_logprobs.json"), true, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "Yes." || r.Reasoning != "" || r.FinishReason != "stop" || cached {
		t.Fatalf("got %+v cached=%v", r, cached)
	}
	if r.Usage != (Usage{PromptTokens: 57, CompletionTokens: 2}) {
		t.Fatalf("usage %+v", r.Usage)
	}
	if len(r.Top) != 2 || len(r.Top[0]) != 5 || len(r.Top[1]) != 1 {
		t.Fatalf("top shape %v", r.Top)
	}
	// Duplicate "Yes" dropped by Pool; "" ignored; -9999 "yes" is zero mass.
	y, n := probe.Pool(probe.Answer{Top: r.Top[0]})
	if !near(y, 0.75) || !near(n, 0.2) {
		t.Fatalf("pool yes=%v no=%v, want 0.75 0.2", y, n)
	}
	for _, c := range r.Top[0] {
		if c.ID != -1 {
			t.Fatalf("vLLM string tokens carry no id: %+v", c)
		}
	}
}

func TestParseCachedUsage(t *testing.T) {
	r, cached, err := parseChat(fixture(t, "vllm_chat_cached.json"), false, false)
	if err != nil || !cached || r.Usage.CachedTokens != 96 || r.Usage.PromptTokens != 120 || r.Top != nil {
		t.Fatalf("%+v cached=%v err=%v", r, cached, err)
	}
	// Logprobs requested but null: typed error, never a guess.
	if _, _, err := parseChat(fixture(t, "vllm_chat_cached.json"), true, true); !errors.Is(err, ErrLogprobsUnavailable) {
		t.Fatalf("want ErrLogprobsUnavailable, got %v", err)
	}
	r, cached, err = parseChat(fixture(t, "openai_chat_logprobs.json"), true, true)
	if err != nil || !cached || r.Usage.CachedTokens != 1024 {
		t.Fatalf("openai: %+v %v %v", r, cached, err)
	}
	y, n := probe.Pool(probe.Answer{Top: r.Top[0]})
	if !near(y, math.Exp(-1.3190403)) || !near(n, math.Exp(-0.31725305)) {
		t.Fatalf("openai pool %v %v", y, n)
	}
}

func TestParseReasoningContentNull(t *testing.T) {
	r, _, err := parseChat(fixture(t, "sglang_chat_reasoning.json"), false, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "" || r.Reasoning == "" || r.FinishReason != "length" {
		t.Fatalf("%+v", r)
	}
	r, _, err = parseChat(fixture(t, "ollama_chat_logprobs.json"), true, true)
	if err != nil || r.Content != "Yes" || r.Reasoning != "Short answer wanted." || len(r.Top) != 1 {
		t.Fatalf("ollama: %+v %v", r, err)
	}
}

func TestParseLlamaChat(t *testing.T) {
	r, cached, err := parseChat(fixture(t, "llamacpp_chat_logprobs.json"), true, true)
	if err != nil {
		t.Fatal(err)
	}
	if !cached || r.Usage.CachedTokens != 64 || r.Usage.PromptTokens != 80 {
		t.Fatalf("timings.cache_n not read: %+v %v", r.Usage, cached)
	}
	if r.Top[0][0].ID != 2753 || r.Top[0][1].ID != 9454 || r.Top[0][1].Token != "Yes" {
		t.Fatalf("ids %+v", r.Top[0])
	}
}

func TestParseNonFinite(t *testing.T) {
	r, _, err := parseChat(fixture(t, "nonfinite_logprobs.txt"), true, true)
	if err != nil {
		t.Fatal(err)
	}
	top := r.Top[0]
	if len(top) != 6 { // the sampled "Yes" is already in the list
		t.Fatalf("top %+v", top)
	}
	y, n := probe.Pool(probe.Answer{Top: top})
	if y != 0 || n != 0 {
		t.Fatalf("non-finite values must carry no mass: yes=%v no=%v", y, n)
	}
	if top[5].Token != "NaN-Infinity" || top[5].Logprob != -0.5 {
		t.Fatalf("string contents must not be rewritten: %+v", top[5])
	}
	if p := probe.Read("x", probe.Answer{Top: top}); p.OK {
		t.Fatalf("unreadable probe read as %+v", p)
	}
}

func TestParseVLLMCompletionsBatch(t *testing.T) {
	chs, u, cached, err := parseCompletions(fixture(t, "vllm_completions_batch.json"), 3, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cached || u != (Usage{PromptTokens: 300, CompletionTokens: 3}) {
		t.Fatalf("usage %+v %v", u, cached)
	}
	want := []float64{0.61 / 1.01, 0.2 / 1.0, -1} // " Yes" adds 0.01 to choice 0
	for i, ch := range chs {
		if ch.Index != i || ch.FinishReason != "length" {
			t.Fatalf("choice %d: %+v", i, ch)
		}
		rd := probe.Read("p", probe.Answer{Top: ch.Top[0]})
		if want[i] < 0 {
			if rd.OK {
				t.Fatalf("choice %d readable: %+v", i, rd)
			}
			continue
		}
		if !rd.OK || !near(rd.P, want[i]) {
			t.Fatalf("choice %d: p=%v ok=%v want %v", i, rd.P, rd.OK, want[i])
		}
	}
	// Duplicate key kept by the parser, dropped by Pool.
	if len(chs[1].Top[0]) != 3 {
		t.Fatalf("duplicate keys must survive parsing: %+v", chs[1].Top[0])
	}
	if _, _, _, err := parseCompletions(fixture(t, "vllm_completions_batch.json"), 2, true, nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("choice count mismatch: %v", err)
	}
}

func TestParseTokenIDKeys(t *testing.T) {
	names := map[int]string{9454: "Yes", 7414: " Yes", 2753: "No"}
	chs, u, cached, err := parseCompletions(fixture(t, "vllm_completions_token_ids.json"), 1, true, names)
	if err != nil {
		t.Fatal(err)
	}
	if !cached || u.CachedTokens != 96 {
		t.Fatalf("usage %+v", u)
	}
	top := chs[0].Top[0]
	if len(top) != 4 || top[0].ID != 9454 || top[0].Token != "Yes" || top[3].ID != 2308 || top[3].Token != "" {
		t.Fatalf("token ids: %+v", top)
	}
	y, n := probe.Pool(probe.Answer{Top: top})
	if !near(y, 0.7+0.02) || !near(n, 0.3) {
		t.Fatalf("pool %v %v", y, n)
	}
}

func TestParseSGLangCompletions(t *testing.T) {
	chs, u, cached, err := parseCompletions(fixture(t, "sglang_completions_cached.json"), 2, true, nil)
	if err != nil || !cached || u.CachedTokens != 384 || len(chs) != 2 {
		t.Fatalf("%+v %+v %v %v", chs, u, cached, err)
	}
	if rd := probe.Read("p", probe.Answer{Top: chs[0].Top[0]}); !near(rd.P, 0.5) {
		t.Fatalf("p=%v", rd.P)
	}
}

func TestParseLlamaCompletion(t *testing.T) {
	chs, u, cached, err := parseLlamaCompletion(fixture(t, "llamacpp_completion.json"), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if !cached || u != (Usage{PromptTokens: 58, CompletionTokens: 1, CachedTokens: 48}) {
		t.Fatalf("usage %+v", u)
	}
	if chs[0].Text != "Yes" || chs[0].FinishReason != "length" || chs[0].Top[0][2].ID != 7414 {
		t.Fatalf("%+v", chs[0])
	}
	y, n := probe.Pool(probe.Answer{Top: chs[0].Top[0]})
	if !near(y, 0.7+0.01) || !near(n, 0.3) {
		t.Fatalf("pool %v %v", y, n)
	}
	chs, u, _, err = parseLlamaCompletion(fixture(t, "llamacpp_completion_batch.json"), 2, true)
	if err != nil || chs[0].Text != "No" || chs[1].Text != "Yes" || u.PromptTokens != 121 || u.CachedTokens != 48 {
		t.Fatalf("batch %+v %+v %v", chs, u, err)
	}
}

// TestParsePostSamplingIsArtefact: probabilities of exactly 1.0 and 0.0
// are what the samplers leave (the probe's logit bias pins "Yes"), never a
// raw softmax; in the current top_probs shape and in the older probs shape
// of llama.cpp issue #7197 (the engine bug-report fixture) the choice
// carries an *ArtefactError and no log-probs, so the probe is unreadable
// rather than P(Yes) = 1. The same older shape with real probabilities
// (llamacpp_completion_legacy.json) is still read.
func TestParsePostSamplingIsArtefact(t *testing.T) {
	for _, f := range []string{"llamacpp_completion_post_sampling.json", "llamacpp_completion_legacy_post_sampling.json"} {
		chs, _, _, err := parseLlamaCompletion(fixture(t, f), 1, true)
		if err != nil {
			t.Fatalf("%s: %v (want the artefact on the choice, not a failed request)", f, err)
		}
		c := chs[0]
		var ae *ArtefactError
		if c.Top != nil || !errors.As(c.Artefact, &ae) || !errors.Is(c.Artefact, ErrArtefact) {
			t.Fatalf("%s: top %v artefact %v, want no log-probs and an *ArtefactError", f, c.Top, c.Artefact)
		}
		const want = `llm: engine artefact: /completion position 0: post-sampling probabilities ("Yes" exactly 1, every other candidate 0): post_sampling_probs: false not honoured (llama.cpp #7197)`
		if c.Artefact.Error() != want {
			t.Fatalf("%s: reason\n%s\nwant\n%s", f, c.Artefact, want)
		}
	}
	chs, _, _, err := parseLlamaCompletion(fixture(t, "llamacpp_completion_legacy.json"), 1, true)
	if err != nil || chs[0].Artefact != nil {
		t.Fatalf("legacy 0.6/0.3/0.05: %v %v", chs[0].Artefact, err)
	}
}

func TestParseTokenizeShapes(t *testing.T) {
	for _, f := range []string{"vllm_tokenize.json", "sglang_tokenize.json", "llamacpp_tokenize.json"} {
		ids, err := parseTokens(fixture(t, f))
		if err != nil || len(ids) != 1 || ids[0] != 9454 {
			t.Fatalf("%s: %v %v", f, ids, err)
		}
	}
	ids, err := parseTokens(fixture(t, "llamacpp_tokenize_pieces.json"))
	if err != nil || len(ids) != 2 || ids[0] != 7414 || ids[1] != 198 {
		t.Fatalf("pieces: %v %v", ids, err)
	}
}

func TestContextLengthBodies(t *testing.T) {
	for _, f := range []string{"vllm_error_context_length.json", "vllm_error_context_length_legacy.json",
		"sglang_error_context_length.json", "llamacpp_error_context.json", "openai_error_context.json"} {
		if !isContextLength(400, fixture(t, f)) {
			t.Errorf("%s not recognised as a context-length error", f)
		}
	}
	for _, f := range []string{"vllm_error_max_logprobs.json", "openai_error_rate_limit.json", "llamacpp_health_loading.json"} {
		if isContextLength(400, fixture(t, f)) {
			t.Errorf("%s wrongly taken for a context-length error", f)
		}
	}
	if isContextLength(500, fixture(t, "vllm_error_context_length.json")) {
		t.Error("only 400/413/422 are context-length errors")
	}
}

// TestParseEmptyTopIsUnavailable: top_logprobs asked for but answered with
// empty lists leaves only the sampled token (log-prob 0); reading it would
// give P(Yes) = 1 on every probe (hardening issue), so it is unavailable.
func TestParseEmptyTopIsUnavailable(t *testing.T) {
	if _, _, err := parseChat(fixture(t, "proxy_chat_empty_top.json"), true, true); !errors.Is(err, ErrLogprobsUnavailable) {
		t.Fatalf("empty top lists: err %v, want ErrLogprobsUnavailable", err)
	}
	// Without top_logprobs asked for, the sampled token's log-prob is all
	// there is and is returned as such.
	r, _, err := parseChat(fixture(t, "proxy_chat_empty_top.json"), true, false)
	if err != nil || len(r.Top) != 1 || len(r.Top[0]) != 1 || r.Top[0][0].Token != "Yes" {
		t.Fatalf("%+v %v", r, err)
	}
}

// TestParseLlamaLegacyShape reads llama-server's older completion
// probabilities (content, probs[].tok_str/prob): P(Yes) pools "Yes" and
// " Yes" (0.6 + 0.05), P(No) = 0.3; no timings.cache_n means no cache
// figure, whatever tokens_cached says.
func TestParseLlamaLegacyShape(t *testing.T) {
	chs, u, cached, err := parseLlamaCompletion(fixture(t, "llamacpp_completion_legacy.json"), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if cached || u.CachedTokens != 0 || u.PromptTokens != 58 {
		t.Fatalf("usage %+v cached=%v", u, cached)
	}
	y, n := probe.Pool(probe.Answer{Top: chs[0].Top[0]})
	if !near(y, 0.65) || !near(n, 0.3) {
		t.Fatalf("pool yes=%v no=%v, want 0.65 0.3", y, n)
	}
}

// TestParseLlamaNoCandidates: n_probs asked for, the sampled token present
// but no candidate list: unavailable, never P(sampled) = 1.
func TestParseLlamaNoCandidates(t *testing.T) {
	raw := []byte(`{"content":"Yes","tokens_predicted":1,"tokens_evaluated":9,"completion_probabilities":[{"id":9454,"token":"Yes","logprob":0.0,"top_logprobs":[]}]}`)
	if _, _, _, err := parseLlamaCompletion(raw, 1, true); !errors.Is(err, ErrLogprobsUnavailable) {
		t.Fatalf("err %v", err)
	}
}

// TestParseReplacementCharIsUnreadable: llama-server answers a probe whose
// sampled token is an incomplete UTF-8 byte with content "\uFFFD" and no
// log-probs, on /completion and on chat; that is one unreadable position,
// never an error that fails the episode (docs/engines.md).
func TestParseReplacementCharIsUnreadable(t *testing.T) {
	chs, _, _, err := parseLlamaCompletion([]byte(`{"content":"\uFFFD","tokens_predicted":1,"tokens_evaluated":9,"completion_probabilities":[]}`), 1, true)
	if err != nil || len(chs[0].Top) != 1 || len(chs[0].Top[0]) != 0 {
		t.Fatalf("completion: %+v %v", chs, err)
	}
	r, _, err := parseChat([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"\uFFFD"},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":1}}`), true, true)
	if err != nil || len(r.Top) != 1 || len(r.Top[0]) != 0 {
		t.Fatalf("chat: %+v %v", r, err)
	}
	// Other text without log-probs is still "unavailable".
	if _, _, _, err := parseLlamaCompletion([]byte(`{"content":"Yes\uFFFD","tokens_predicted":1,"completion_probabilities":[]}`), 1, true); !errors.Is(err, ErrLogprobsUnavailable) {
		t.Fatalf("mixed text: %v", err)
	}
}
