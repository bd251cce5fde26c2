package fakeengine

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/llm"
)

// mapPaths are JSON objects used as maps (token -> logprob): their keys
// are data, not fields.
var mapPaths = []string{"choices[].logprobs.top_logprobs[]"}

// shape collects path -> JSON types of v ("a.b", "a[]" for elements).
func shape(v any, path string, out map[string]map[string]bool) {
	add := func(t string) {
		if out[path] == nil {
			out[path] = map[string]bool{}
		}
		out[path][t] = true
	}
	switch x := v.(type) {
	case map[string]any:
		add("object")
		if slices.Contains(mapPaths, path) {
			for _, e := range x {
				shape(e, path+".*", out)
			}
			return
		}
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			shape(e, p, out)
		}
	case []any:
		add("array")
		elem := path + "[]"
		if path == "" {
			elem = "" // a top-level list (llama-server batches) holds root objects
		}
		for _, e := range x {
			shape(e, elem, out)
		}
	case nil:
		add("null")
	case string:
		add("string")
	case float64:
		add("number")
	case bool:
		add("bool")
	}
}

func shapeOf(t *testing.T, raw []byte) map[string]map[string]bool {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("bad JSON %s: %v", raw, err)
	}
	out := map[string]map[string]bool{}
	shape(v, "", out)
	return out
}

// conforms reports fields of got absent from, or typed unlike, the
// fixtures (null is compatible with any type, as fields are nullable).
func conforms(t *testing.T, got []byte, fixtures ...string) []string {
	t.Helper()
	want := map[string]map[string]bool{}
	for _, f := range fixtures {
		raw, err := os.ReadFile(filepath.Join("..", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		for p, ts := range shapeOf(t, raw) {
			if want[p] == nil {
				want[p] = map[string]bool{}
			}
			for ty := range ts {
				want[p][ty] = true
			}
		}
	}
	var bad []string
	for p, ts := range shapeOf(t, got) {
		w, ok := want[p]
		if !ok {
			bad = append(bad, p+" (absent)")
			continue
		}
		for ty := range ts {
			if !w[ty] && ty != "null" && !w["null"] {
				bad = append(bad, p+" ("+ty+")")
			}
		}
	}
	slices.Sort(bad)
	return bad
}

func post(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	method := http.MethodGet
	if body != nil {
		b, _ := json.Marshal(body)
		rd, method = bytes.NewReader(b), http.MethodPost
	}
	req, _ := http.NewRequest(method, url, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// TestShapesMatchFixtures: every field the fake sends, per engine and
// endpoint, appears in the golden fixture of that engine (llm/testdata,
// README names the source of each shape).
func TestShapesMatchFixtures(t *testing.T) {
	yes := func(Request) Reply {
		return Reply{Text: "Yes.", FirstToken: map[string]float64{"Yes": 0.7, "No": 0.2, " Yes": 0.1}}
	}
	msgs := []map[string]any{{"role": "user", "content": "Is it clear?"}}
	chat := map[string]any{"model": "fake-model", "messages": msgs, "logprobs": true, "top_logprobs": 3}
	plainChat := map[string]any{"model": "fake-model", "messages": msgs}
	comp := map[string]any{"model": "fake-model", "prompt": []string{"a?", "b?", "c?"}, "max_tokens": 1, "logprobs": 3}
	long := map[string]any{"model": "fake-model", "messages": []map[string]any{{"role": "user", "content": strings.Repeat("w ", 200)}}}
	cases := []struct {
		name     string
		engine   llm.Engine
		opts     []Option
		path     string
		body     any
		status   int
		fixtures []string
	}{
		{"vllm chat", llm.VLLM, nil, "/v1/chat/completions", chat, 200, []string{"vllm_chat_logprobs.json"}},
		{"vllm chat cached", llm.VLLM, []Option{WithCacheReport(true)}, "/v1/chat/completions", plainChat, 200, []string{"vllm_chat_logprobs.json", "vllm_chat_cached.json"}},
		{"vllm completions", llm.VLLM, nil, "/v1/completions", comp, 200, []string{"vllm_completions_batch.json"}},
		{"vllm token ids", llm.VLLM, []Option{WithCacheReport(true)}, "/v1/completions",
			map[string]any{"model": "fake-model", "prompt": "q?", "max_tokens": 1, "logprobs": 1, "logprob_token_ids": []int{9454, 2753}, "return_tokens_as_token_ids": true},
			200, []string{"vllm_completions_token_ids.json"}},
		{"vllm context", llm.VLLM, []Option{WithContextWindow(64)}, "/v1/chat/completions", long, 400, []string{"vllm_error_context_length.json"}},
		{"vllm max logprobs", llm.VLLM, nil, "/v1/chat/completions", map[string]any{"model": "fake-model", "messages": msgs, "logprobs": true, "top_logprobs": 50}, 400, []string{"vllm_error_max_logprobs.json"}},
		{"vllm tokenize", llm.VLLM, nil, "/tokenize", map[string]any{"model": "fake-model", "prompt": "Yes"}, 200, []string{"vllm_tokenize.json"}},
		{"vllm detokenize", llm.VLLM, nil, "/detokenize", map[string]any{"model": "fake-model", "tokens": []int{9454}}, 200, []string{"vllm_detokenize.json"}},
		{"sglang chat", llm.SGLang, nil, "/v1/chat/completions", plainChat, 200, []string{"sglang_chat_reasoning.json"}},
		{"sglang completions", llm.SGLang, []Option{WithCacheReport(true)}, "/v1/completions", comp, 200, []string{"sglang_completions_cached.json"}},
		{"sglang context", llm.SGLang, []Option{WithContextWindow(64)}, "/v1/chat/completions", long, 400, []string{"sglang_error_context_length.json"}},
		{"sglang tokenize", llm.SGLang, nil, "/v1/tokenize", map[string]any{"model": "fake-model", "prompt": "Yes"}, 200, []string{"sglang_tokenize.json"}},
		{"sglang detokenize", llm.SGLang, nil, "/v1/detokenize", map[string]any{"tokens": []int{9454}}, 200, []string{"sglang_detokenize.json"}},
		{"llama completion", llm.LlamaCpp, nil, "/completion", map[string]any{"prompt": "q?", "n_predict": 1, "n_probs": 3, "post_sampling_probs": false}, 200, []string{"llamacpp_completion.json"}},
		{"llama batch", llm.LlamaCpp, nil, "/completion", map[string]any{"prompt": []string{"a?", "b?"}, "n_predict": 1, "n_probs": 2}, 200, []string{"llamacpp_completion.json", "llamacpp_completion_batch.json"}},
		{"llama post-sampling", llm.LlamaCpp, nil, "/completion", map[string]any{"prompt": "q?", "n_predict": 1, "n_probs": 2, "post_sampling_probs": true}, 200, []string{"llamacpp_completion.json", "llamacpp_completion_post_sampling.json"}},
		{"llama chat", llm.LlamaCpp, nil, "/v1/chat/completions", chat, 200, []string{"llamacpp_chat_logprobs.json"}},
		{"llama context", llm.LlamaCpp, []Option{WithContextWindow(64)}, "/v1/chat/completions", long, 400, []string{"llamacpp_error_context.json"}},
		{"llama loading", llm.LlamaCpp, []Option{WithLoading(1)}, "/health", nil, 503, []string{"llamacpp_health_loading.json"}},
		{"llama tokenize", llm.LlamaCpp, nil, "/tokenize", map[string]any{"content": "Yes"}, 200, []string{"llamacpp_tokenize.json"}},
		{"llama pieces", llm.LlamaCpp, nil, "/tokenize", map[string]any{"content": " Yes\n", "with_pieces": true}, 200, []string{"llamacpp_tokenize_pieces.json"}},
		{"llama template", llm.LlamaCpp, nil, "/apply-template", map[string]any{"messages": msgs}, 200, []string{"llamacpp_apply_template.json"}},
		{"ollama chat", llm.Ollama, nil, "/v1/chat/completions", chat, 200, []string{"ollama_chat_logprobs.json"}},
		{"ollama version", llm.Ollama, nil, "/api/version", nil, 200, []string{"ollama_version.json"}},
		{"openai chat", llm.OpenAI, nil, "/v1/chat/completions", chat, 200, []string{"openai_chat_logprobs.json"}},
		{"openai context", llm.OpenAI, []Option{WithContextWindow(64)}, "/v1/chat/completions", long, 400, []string{"openai_error_context.json"}},
	}
	for _, tc := range cases {
		s := New(tc.engine, append(tc.opts, WithHandler(yes))...)
		status, raw := post(t, s.Root+tc.path, tc.body)
		s.Close()
		if status != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, status, tc.status, raw)
			continue
		}
		if bad := conforms(t, raw, tc.fixtures...); len(bad) > 0 {
			t.Errorf("%s: fields not in %v: %v\n%s", tc.name, tc.fixtures, bad, raw)
		}
	}
}

// A request field of the wrong JSON type is refused with a 400 naming it,
// before the model is looked up, as an engine's typed request model
// refuses it.
func TestWrongTypedFieldsRefused(t *testing.T) {
	msgs := []map[string]any{{"role": "user", "content": "Hi"}}
	for _, tc := range []struct {
		path, field string
		body        map[string]any
	}{
		{"/v1/chat/completions", "logprobs", map[string]any{"model": "fake-model", "messages": msgs, "logprobs": "yes"}},
		{"/v1/chat/completions", "add_generation_prompt", map[string]any{"model": "fake-model", "messages": msgs, "add_generation_prompt": "no"}},
		{"/v1/chat/completions", "continue_final_message", map[string]any{"model": "other", "messages": msgs, "continue_final_message": 1}},
		{"/v1/completions", "return_tokens_as_token_ids", map[string]any{"model": "fake-model", "prompt": "q?", "return_tokens_as_token_ids": 1}},
		{"/v1/completions", "logprob_token_ids", map[string]any{"model": "other", "prompt": "q?", "logprob_token_ids": []any{1.5}}},
		{"/v1/completions", "logprob_token_ids", map[string]any{"model": "fake-model", "prompt": "q?", "logprob_token_ids": []any{1e12}}},
	} {
		s := New(llm.VLLM)
		status, raw := post(t, s.Root+tc.path, tc.body)
		s.Close()
		if status != 400 || !strings.Contains(string(raw), tc.field) {
			t.Errorf("%s %v: status %d, %s", tc.path, tc.body, status, raw)
		}
	}
}
