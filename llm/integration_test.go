package llm_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/probe"
)

// TestRealEngine runs against a real server when PERSUARENA_TEST_BASE_URL
// is set (docs/engines.md): PERSUARENA_TEST_MODEL names the served model,
// PERSUARENA_TEST_ENGINE the profile (default vllm), and
// PERSUARENA_TEST_API_KEY the key, if any. Skipped otherwise. It fails
// when chat log-probs cannot be read, unless PERSUARENA_TEST_NO_LOGPROBS=1.
func TestRealEngine(t *testing.T) {
	base := os.Getenv("PERSUARENA_TEST_BASE_URL")
	if base == "" {
		t.Skip("set PERSUARENA_TEST_BASE_URL (and PERSUARENA_TEST_MODEL, PERSUARENA_TEST_ENGINE) to run against a real engine")
	}
	engine := llm.Engine(os.Getenv("PERSUARENA_TEST_ENGINE"))
	if engine == "" {
		engine = llm.VLLM
	}
	b := llm.Backend{Name: "real", BaseURL: base, Engine: engine, Model: os.Getenv("PERSUARENA_TEST_MODEL"), Timeout: 5 * time.Minute}
	if os.Getenv("PERSUARENA_TEST_API_KEY") != "" {
		b.APIKeyEnv = "PERSUARENA_TEST_API_KEY"
	}
	c, err := llm.NewClient(b)
	if err != nil {
		t.Fatal(err)
	}
	caps, err := c.Detect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("capabilities: %+v", caps)
	// Probes need log-probs: an engine that cannot give them fails this
	// test (it used to skip the assertions and pass) unless the run says
	// it expects none.
	if !caps.ChatLogprobs && os.Getenv("PERSUARENA_TEST_NO_LOGPROBS") != "1" {
		t.Fatalf("chat log-probs cannot be read from this engine (notes %q); set PERSUARENA_TEST_NO_LOGPROBS=1 if that is expected", caps.Notes)
	}

	one := 1.0
	q := []llm.Message{{Role: "user", Content: "Is the sky usually blue on a clear day? Answer with Yes or No only."}}
	r, err := c.Chat(ctx, llm.ChatRequest{Messages: q, Logprobs: caps.ChatLogprobs, TopLogprobs: 10, Thinking: &off,
		Sampling: llm.Sampling{MaxTokens: 1, Temperature: &one}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chat: %q usage %+v latency %.0f ms", r.Content, r.Usage, r.LatencyMS)
	if r.Usage.Requests != 1 || r.Usage.PromptTokens <= 0 {
		t.Fatalf("usage %+v", r.Usage)
	}
	if caps.ChatLogprobs {
		if len(r.Top) == 0 {
			t.Fatal("no candidates")
		}
		rd := probe.Read("sky", probe.Answer{Top: r.Top[0]})
		t.Logf("P(Yes) = %.3f (readable %v) from %+v", rd.P, rd.OK, r.Top[0])
		if !rd.OK || rd.P < 0.5 {
			t.Errorf("a capable model should favour Yes: %+v", rd)
		}
	}
	if caps.Tokenize {
		ids, err := c.Tokenize(ctx, "Yes")
		if err != nil || len(ids) == 0 {
			t.Fatalf("tokenize: %v %v", ids, err)
		}
		t.Logf("tokenize(Yes) = %v", ids)
	}
	if caps.ApplyTemplate {
		p, err := c.RenderChat(ctx, llm.TemplateRequest{Messages: q, AddGenerationPrompt: true, Thinking: &off})
		if err != nil || !strings.Contains(p, "sky") {
			t.Fatalf("template: %q %v", p, err)
		}
		if caps.PromptLists && caps.CompletionLogprobs {
			cr, err := c.Complete(ctx, llm.CompletionRequest{Prompts: []string{p, p}, Logprobs: 5,
				Sampling: llm.Sampling{MaxTokens: 1, Temperature: &one}})
			if err != nil || len(cr.Choices) != 2 {
				t.Fatalf("complete: %+v %v", cr, err)
			}
			t.Logf("complete usage %+v (cached tokens reported: %v)", cr.Usage, caps.CachedTokens)
		}
	}
}
