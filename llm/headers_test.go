package llm_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/persuarena/persuarena/llm"
)

// Requests through openai-go's services carry the key as a bearer token
// (and no Authorization header without a key), the model in the body, and
// never the environment's organisation or project headers.
func TestOpenAIRequestHeaders(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s auth=%q org=%q proj=%q", r.Method, r.URL.Path,
			r.Header.Get("Authorization"), r.Header.Get("OpenAI-Organization"), r.Header.Get("OpenAI-Project")))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/models":
			io.WriteString(w, `{"object":"list","data":[{"id":"m1","object":"model"},{"id":"m2","object":"model"}]}`)
		case "/v1/chat/completions":
			io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
		case "/v1/completions":
			io.WriteString(w, `{"id":"x","object":"text_completion","model":"m1","choices":[{"index":0,"finish_reason":"stop","text":"yo"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-env")
	t.Setenv("OPENAI_API_KEY", "sk-env")
	t.Setenv("PERSUARENA_TEST_KEY", "sk-test")
	ctx := context.Background()
	for _, keyEnv := range []string{"PERSUARENA_TEST_KEY", ""} {
		seen = nil
		c, err := llm.NewClient(llm.Backend{Name: "b", BaseURL: srv.URL + "/v1", Engine: llm.VLLM, Model: "m1", APIKeyEnv: keyEnv})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := c.Models(ctx)
		if err != nil || fmt.Sprint(ids) != "[m1 m2]" {
			t.Fatalf("Models: %v, %v", ids, err)
		}
		if r, err := c.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "hello"}}}); err != nil || r.Content != "hi" {
			t.Fatalf("Chat: %+v, %v", r, err)
		}
		if r, err := c.Complete(ctx, llm.CompletionRequest{Prompts: []string{"hello"}}); err != nil || r.Choices[0].Text != "yo" {
			t.Fatalf("Complete: %+v, %v", r, err)
		}
		auth := ""
		if keyEnv != "" {
			auth = "Bearer sk-test"
		}
		want := []string{
			fmt.Sprintf(`GET /v1/models auth=%q org="" proj=""`, auth),
			fmt.Sprintf(`POST /v1/chat/completions auth=%q org="" proj=""`, auth),
			fmt.Sprintf(`POST /v1/completions auth=%q org="" proj=""`, auth),
		}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Errorf("key env %q: requests\n%v\nwant\n%v", keyEnv, seen, want)
		}
	}
}
