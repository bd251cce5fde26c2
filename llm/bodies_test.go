package llm_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/llm"
)

// Engine fields (response format, thinking switch, token-id log-probs and
// a role's sampling extras, one overriding a standard field and one key
// that needs escaping) are merged into the request bodies in sorted key
// order after the standard fields: byte-for-byte reproducible bodies
// (testdata/bodies.txt).
func TestRequestBodies(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, r.URL.Path+" "+string(b))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/chat/completions" {
			io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"{\"reply\":\"hi\"}"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
			return
		}
		io.WriteString(w, `{"id":"x","object":"text_completion","model":"m1","choices":[{"index":0,"finish_reason":"length","text":" Yes","logprobs":{"tokens":[" Yes"],"token_logprobs":[-0.1],"top_logprobs":[{" Yes":-0.1," No":-2.4}]}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := llm.NewClient(llm.Backend{Name: "b", BaseURL: srv.URL + "/v1", Engine: llm.VLLM, Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	temp, off := 0.7, false
	s := llm.Sampling{Temperature: &temp, MaxTokens: 64, Extra: map[string]any{"top_k": 20, "temperature": 0.5, "a.b": []int{1, 2}}}
	if _, err := c.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"}},
		Sampling: s, JSONSchema: json.RawMessage(`{"type":"object"}`), Thinking: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(ctx, llm.CompletionRequest{Prompts: []string{"Q? A:"}, Sampling: s, Logprobs: 5, TokenIDs: []int{9454, 2753}}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(bodies, "\n") + "\n"
	if os.Getenv("PERSUARENA_WRITE_BODIES") != "" {
		os.WriteFile("testdata/bodies.txt", []byte(got), 0o644)
	}
	want, err := os.ReadFile("testdata/bodies.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("request bodies:\n%s\nwant:\n%s", got, want)
	}
}
