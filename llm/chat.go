package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// CallError is returned by Chat and Complete when a call fails; Usage
// counts the HTTP requests (and tokens, if any answer was read) spent on
// it, so failed calls are still accounted. errors.Is / As see through it.
type CallError struct {
	Usage Usage
	Err   error
}

// Error is the underlying error's text.
func (e *CallError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *CallError) Unwrap() error { return e.Err }

// UsageOf returns the usage carried by a CallError in err's chain (zero
// otherwise).
func UsageOf(err error) Usage {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Usage
	}
	return Usage{}
}

// maxTop returns the top-logprobs cap for chat (completions when comp):
// Backend.MaxTopLogprobs when set, else the profile's, lowered to what
// Detect found.
func (c *Client) maxTop(comp bool) int {
	n := c.prof.MaxTopLogprobs
	if c.b.MaxTopLogprobs > 0 {
		n = c.b.MaxTopLogprobs
	}
	if comp && c.prof.MaxCompletionLogprobs > 0 {
		n = min(n, c.prof.MaxCompletionLogprobs)
	}
	c.cmu.Lock()
	if c.caps != nil && c.caps.MaxTopLogprobs > 0 {
		n = min(n, c.caps.MaxTopLogprobs)
	}
	c.cmu.Unlock()
	return n
}

// chatMessages converts messages to openai-go params.
func chatMessages(ms []Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	if len(ms) == 0 {
		return nil, errors.New("llm: chat request without messages")
	}
	out := make([]openai.ChatCompletionMessageParamUnion, len(ms))
	for i, m := range ms {
		switch m.Role {
		case "system":
			out[i] = openai.SystemMessage(m.Content)
		case "user":
			out[i] = openai.UserMessage(m.Content)
		case "assistant":
			out[i] = openai.AssistantMessage(m.Content)
		default:
			return nil, fmt.Errorf("llm: messages[%d].role %q: want system, user or assistant", i, m.Role)
		}
	}
	return out, nil
}

// chatParams builds the request; engine-specific fields become extra JSON
// fields (openai-go merges them after the standard ones in sorted key
// order, so requests are byte-for-byte reproducible; a key that is a
// standard field replaces it in place).
func (c *Client) chatParams(r ChatRequest) (openai.ChatCompletionNewParams, error) {
	msgs, err := chatMessages(r.Messages)
	if err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	p := openai.ChatCompletionNewParams{Model: c.b.Model, Messages: msgs}
	s := r.Sampling
	if s.Temperature != nil {
		p.Temperature = openai.Float(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = openai.Float(*s.TopP)
	}
	if s.Seed != nil {
		p.Seed = openai.Int(*s.Seed)
	}
	if s.MaxTokens > 0 { // never <= 0 (docs/engines.md); omitted means engine default
		p.MaxTokens = openai.Int(int64(s.MaxTokens))
	}
	if len(r.Stop) > 0 {
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: r.Stop}
	}
	if r.Logprobs {
		if !c.prof.ChatLogprobs {
			return p, unsupported(c.b, "chat log-probs", "")
		}
		p.Logprobs = openai.Bool(true)
		if k := min(max(r.TopLogprobs, 0), c.maxTop(false)); k > 0 {
			p.TopLogprobs = openai.Int(int64(k))
		}
	}
	extra := map[string]any{}
	if r.JSONSchema != nil {
		if !json.Valid(r.JSONSchema) {
			return p, errors.New("llm: JSONSchema is not valid JSON")
		}
		extra["response_format"] = map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "reply", "schema": r.JSONSchema, "strict": true}}
	}
	if r.Thinking != nil {
		switch {
		case c.prof.ThinkingKwargs:
			extra["chat_template_kwargs"] = map[string]any{"enable_thinking": *r.Thinking}
		case c.prof.Engine == Ollama && !*r.Thinking:
			extra["reasoning_effort"] = "none"
		}
	}
	if r.ContinueFinalMessage {
		if r.Messages[len(r.Messages)-1].Role != "assistant" {
			return p, errors.New("llm: ContinueFinalMessage needs a final assistant message")
		}
		switch {
		case c.prof.ContinueFinal:
			extra["continue_final_message"] = true
			extra["add_generation_prompt"] = false
		case c.prof.Engine == OpenAI:
			return p, unsupported(c.b, "continuing the final assistant message", "")
		}
	}
	for k, v := range s.Extra {
		extra[k] = v
	}
	p.SetExtraFields(extra)
	return p, nil
}

// Chat sends one chat completion and returns its first choice. With
// r.Logprobs, Top holds the candidates of every generated position, and a
// response without log-probs is ErrLogprobsUnavailable. A context-length
// 400 is ErrContextLength and is not retried;
// 429, 5xx, connection errors, timeouts and malformed bodies are retried
// (Backend.MaxRetries); other 4xx are returned as *HTTPError. On failure
// the error is a *CallError carrying the usage spent.
func (c *Client) Chat(ctx context.Context, r ChatRequest) (*ChatResponse, error) {
	start := time.Now()
	p, err := c.chatParams(r)
	if err != nil {
		return nil, err
	}
	body, err := chatRequestBody(r.Messages, &p)
	if err != nil {
		return nil, err
	}
	var u Usage
	v, err := c.callHedged(ctx, &u, "/v1/chat/completions", func(actx context.Context, rep *replica) (any, error) {
		raw, err := c.sendOA("/v1/chat/completions", func(o ...option.RequestOption) error {
			_, err := rep.oa.Chat.Completions.New(actx, rawChat, append(o, option.WithRequestBody("application/json", body))...)
			return err
		})
		if err != nil {
			return nil, err
		}
		resp, cached, err := parseChat(raw, r.Logprobs, r.Logprobs && p.TopLogprobs.Valid())
		if cached {
			c.sawCached.Store(true)
		}
		if err != nil {
			return nil, err
		}
		return resp, nil
	})
	if err != nil {
		return nil, &CallError{Usage: u, Err: err}
	}
	out := v.(*ChatResponse)
	out.Usage.Requests = u.Requests
	out.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	return out, nil
}
