package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3/option"
)

// Tokenize returns the token ids of text without special tokens (no BOS),
// so a single word such as " Yes" maps to its own id(s): vLLM POST
// /tokenize, SGLang POST /v1/tokenize, llama-server POST /tokenize.
// ErrUnsupported on Ollama and OpenAI. Requests are retried like Chat but
// not counted in any Usage.
func (c *Client) Tokenize(ctx context.Context, text string) ([]int, error) {
	var path string
	var under bool // path is under /v1
	var body map[string]any
	switch c.prof.Engine {
	case VLLM:
		path, under = "/tokenize", false
		body = map[string]any{"model": c.b.Model, "prompt": text, "add_special_tokens": false}
	case SGLang:
		path, under = "/v1/tokenize", true
		body = map[string]any{"model": c.b.Model, "prompt": text, "add_special_tokens": false}
	case LlamaCpp:
		path, under = "/tokenize", false
		body = map[string]any{"content": text, "add_special": false}
	default:
		return nil, c.errNoEndpoint("tokenize")
	}
	var ids []int
	err := c.call(ctx, nil, func(actx context.Context, rep *replica) error {
		raw, err := c.sendNative(actx, "POST", rep.nativeURL(strings.TrimPrefix(path, "/v1"), under), path, body)
		if err != nil {
			return err
		}
		ids, err = parseTokens(raw)
		return err
	})
	return ids, err
}

// parseTokens reads {"tokens": [...]} where entries are ids or
// llama-server's {"id", "piece"} objects.
func parseTokens(raw []byte) ([]int, error) {
	var b struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("%w: tokenize: %v", ErrMalformed, err)
	}
	ids := make([]int, len(b.Tokens))
	for i, t := range b.Tokens {
		if err := json.Unmarshal(t, &ids[i]); err != nil {
			var o struct {
				ID *int `json:"id"`
			}
			if err := json.Unmarshal(t, &o); err != nil || o.ID == nil {
				return nil, fmt.Errorf("%w: tokenize: token %d: %s", ErrMalformed, i, t)
			}
			ids[i] = *o.ID
		}
	}
	return ids, nil
}

// Detokenize returns the text of ids: vLLM POST /detokenize (answer
// "prompt"), SGLang POST /v1/detokenize (answer "text"), llama-server POST
// /detokenize (answer "content"). ErrUnsupported elsewhere.
func (c *Client) Detokenize(ctx context.Context, ids []int) (string, error) {
	var path string
	var under bool // path is under /v1
	var body map[string]any
	switch c.prof.Engine {
	case VLLM:
		path, under = "/detokenize", false
		body = map[string]any{"model": c.b.Model, "tokens": ids}
	case SGLang:
		path, under = "/v1/detokenize", true
		body = map[string]any{"model": c.b.Model, "tokens": ids}
	case LlamaCpp:
		path, under = "/detokenize", false
		body = map[string]any{"tokens": ids}
	default:
		return "", c.errNoEndpoint("detokenize")
	}
	var text string
	err := c.call(ctx, nil, func(actx context.Context, rep *replica) error {
		raw, err := c.sendNative(actx, "POST", rep.nativeURL(strings.TrimPrefix(path, "/v1"), under), path, body)
		if err != nil {
			return err
		}
		var b struct {
			Prompt  *string `json:"prompt"`
			Text    *string `json:"text"`
			Content *string `json:"content"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("%w: detokenize: %v", ErrMalformed, err)
		}
		switch {
		case b.Prompt != nil:
			text = *b.Prompt
		case b.Text != nil:
			text = *b.Text
		case b.Content != nil:
			text = *b.Content
		default:
			return fmt.Errorf("%w: detokenize: no prompt/text/content field", ErrMalformed)
		}
		return nil
	})
	return text, err
}

// TemplateRequest asks for a chat rendered with the model's template.
type TemplateRequest struct {
	Messages []Message
	// AddGenerationPrompt appends the assistant header.
	AddGenerationPrompt bool
	// Thinking, when non-nil, sets chat_template_kwargs.enable_thinking
	// (Qwen3 with false appends an empty think block after the header).
	Thinking *bool
}

// ApplyTemplate renders msgs with the served model's chat template, as
// RenderChat with Thinking nil.
func (c *Client) ApplyTemplate(ctx context.Context, msgs []Message, addGenerationPrompt bool) (string, error) {
	return c.RenderChat(ctx, TemplateRequest{Messages: msgs, AddGenerationPrompt: addGenerationPrompt})
}

// RenderChat renders a chat with the served model's template, without
// inference: llama-server POST /apply-template (one request); vLLM POST
// /tokenize with messages then POST /detokenize (two requests; the text
// round-trips through the tokenizer). ErrUnsupported on SGLang, Ollama and
// OpenAI, which document no such endpoint.
func (c *Client) RenderChat(ctx context.Context, r TemplateRequest) (string, error) {
	if len(r.Messages) == 0 {
		return "", fmt.Errorf("llm: template request without messages")
	}
	body := map[string]any{"messages": r.Messages, "add_generation_prompt": r.AddGenerationPrompt}
	if r.Thinking != nil {
		body["chat_template_kwargs"] = map[string]any{"enable_thinking": *r.Thinking}
	}
	switch c.prof.Engine {
	case LlamaCpp:
		var text string
		err := c.call(ctx, nil, func(actx context.Context, rep *replica) error {
			raw, err := c.sendNative(actx, "POST", rep.nativeURL("/apply-template", false), "/apply-template", body)
			if err != nil {
				return err
			}
			var b struct {
				Prompt *string `json:"prompt"`
			}
			if err := json.Unmarshal(raw, &b); err != nil || b.Prompt == nil {
				return fmt.Errorf("%w: apply-template: want {\"prompt\": ...}", ErrMalformed)
			}
			text = *b.Prompt
			return nil
		})
		return text, err
	case VLLM:
		body["model"] = c.b.Model
		body["add_special_tokens"] = false
		var ids []int
		err := c.call(ctx, nil, func(actx context.Context, rep *replica) error {
			raw, err := c.sendNative(actx, "POST", rep.nativeURL("/tokenize", false), "/tokenize", body)
			if err != nil {
				return err
			}
			ids, err = parseTokens(raw)
			return err
		})
		if err != nil {
			return "", err
		}
		return c.Detokenize(ctx, ids)
	}
	return "", c.errNoEndpoint("chat-template rendering")
}

// Health checks llama-server's GET /health (503 while the model loads,
// retried with backoff); other engines answer nil without a request.
func (c *Client) Health(ctx context.Context) error {
	if c.prof.Engine != LlamaCpp {
		return nil
	}
	return c.call(ctx, nil, func(actx context.Context, rep *replica) error {
		_, err := c.sendNative(actx, "GET", rep.nativeURL("/health", false), "/health", nil)
		return err
	})
}

// Models lists the served model ids (GET /v1/models through openai-go).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	var ids []string
	err := c.call(ctx, nil, func(actx context.Context, rep *replica) error {
		raw, err := c.sendOA("/v1/models", func(o ...option.RequestOption) error {
			_, err := rep.oa.Models.List(actx, o...)
			return err
		})
		if err != nil {
			return err
		}
		var b struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("%w: models: %v", ErrMalformed, err)
		}
		ids = ids[:0]
		for _, m := range b.Data {
			ids = append(ids, m.ID)
		}
		return nil
	})
	return ids, err
}

// Preflight checks that the backend answers before a run starts: Health
// (llama-server's /health; nil elsewhere) and then Models (GET /v1/models),
// with the client's retries. The error names the backend and its base URL
// and wraps the underlying transport or HTTP error (e.g. "connection
// refused"), so a run can fail fast instead of storing every episode as
// failed behind an open circuit breaker.
func (c *Client) Preflight(ctx context.Context) error {
	if err := c.Health(ctx); err != nil {
		return fmt.Errorf("llm: preflight of backend %q at %s: %w", c.b.Name, c.b.urlList(), err)
	}
	if _, err := c.Models(ctx); err != nil {
		return fmt.Errorf("llm: preflight of backend %q at %s: %w", c.b.Name, c.b.urlList(), err)
	}
	return nil
}
