package llm_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
)

// canned answers every request with one body, without a network.
type canned []byte

func (c canned) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(c)), Request: r}, nil
}

func benchMsgs() []llm.Message {
	long := "I have been thinking about what you said regarding the new bus route, and I still worry about the early pick-up time. "
	return []llm.Message{
		{Role: "system", Content: "You are Dana, a careful parent of two. Stay in character and end every reply with a decision line."},
		{Role: "user", Content: long + long},
		{Role: "assistant", Content: long},
		{Role: "user", Content: "Has the other person really understood what worries me about this? Answer Yes or No."},
	}
}

// BenchmarkChatClientOnly is the client's CPU per chat request with
// logprobs (request building through openai-go, retry loop, parsing of a
// vLLM-shaped answer), the network replaced by a canned answer.
func BenchmarkChatClientOnly(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "vllm_chat_logprobs.json"))
	if err != nil {
		b.Fatal(err)
	}
	c, err := llm.NewClient(llm.Backend{Name: "b", BaseURL: "http://bench.invalid/v1", Engine: llm.VLLM, Model: "Qwen/Qwen3-14B"},
		llm.WithHTTPClient(&http.Client{Transport: canned(body)}))
	if err != nil {
		b.Fatal(err)
	}
	req := llm.ChatRequest{Messages: benchMsgs(), Logprobs: true, TopLogprobs: 20, Thinking: &off, Sampling: llm.Sampling{MaxTokens: 1}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompleteClientOnly is the client's CPU per batched 3-prompt
// completion (the vLLM probe path), network replaced by a canned answer.
func BenchmarkCompleteClientOnly(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "vllm_completions_batch.json"))
	if err != nil {
		b.Fatal(err)
	}
	c, err := llm.NewClient(llm.Backend{Name: "b", BaseURL: "http://bench.invalid/v1", Engine: llm.VLLM, Model: "Qwen/Qwen3-14B"},
		llm.WithHTTPClient(&http.Client{Transport: canned(body)}))
	if err != nil {
		b.Fatal(err)
	}
	p := fakeengine.Template(benchMsgs(), true, &off, false)
	req := llm.CompletionRequest{Prompts: []string{p, p, p}, Logprobs: 1, TokenIDs: []int{9454, 2753, 7414, 2308},
		Sampling: llm.Sampling{MaxTokens: 1}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChatFakeEngine is one chat request over loopback HTTP to the
// fake engine: client and fake server CPU together.
func BenchmarkChatFakeEngine(b *testing.B) {
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(yesHandler))
	defer srv.Close()
	c, err := llm.NewClient(srv.Backend("b"))
	if err != nil {
		b.Fatal(err)
	}
	req := llm.ChatRequest{Messages: benchMsgs(), Logprobs: true, TopLogprobs: 5, Thinking: &off}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
