package llm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// llamaDefaultPredict replaces llama-server's unbounded n_predict default
// (-1) when MaxTokens is unset, matching the OpenAI completions default.
const llamaDefaultPredict = 16

// Complete runs raw-prompt completions and returns one choice per prompt,
// in prompt order. vLLM, SGLang and OpenAI get one /v1/completions
// request with a prompt list (vLLM flattens choices in prompt order);
// llama-server gets one native /completion request (prompt list, n_probs,
// post_sampling_probs false so log-probs are pre-sampler, cache_prompt on);
// Ollama gets one /v1/completions request per prompt and cannot return
// completion log-probs (ErrUnsupported). With r.TokenIDs on vLLM the
// request carries logprob_token_ids and return_tokens_as_token_ids, so
// candidates carry exact ids (Token from r.TokenText). Errors and retries
// are as for Chat.
func (c *Client) Complete(ctx context.Context, r CompletionRequest) (*CompletionResponse, error) {
	start := time.Now()
	if len(r.Prompts) == 0 {
		return nil, errors.New("llm: completion request without prompts")
	}
	want := r.Logprobs > 0 || len(r.TokenIDs) > 0
	if want && !c.prof.CompletionLogprobs {
		return nil, unsupported(c.b, "completion log-probs", "use chat requests with top_logprobs on this engine")
	}
	var (
		out *CompletionResponse
		u   Usage
		err error
	)
	switch {
	case c.prof.Engine == LlamaCpp:
		out, err = c.completeLlama(ctx, &u, r, want)
	case c.prof.PromptLists:
		out, err = c.completeOA(ctx, &u, r, r.Prompts, want)
	default:
		out = &CompletionResponse{}
		for i, p := range r.Prompts {
			var one *CompletionResponse
			one, err = c.completeOA(ctx, &u, r, []string{p}, want)
			if err != nil {
				break
			}
			ch := one.Choices[0]
			ch.Index = i
			out.Choices = append(out.Choices, ch)
			out.Usage = out.Usage.Add(one.Usage)
		}
	}
	if err != nil {
		if out != nil { // tokens of the prompts answered before the failure
			u.PromptTokens, u.CompletionTokens, u.CachedTokens = out.Usage.PromptTokens, out.Usage.CompletionTokens, out.Usage.CachedTokens
		}
		return nil, &CallError{Usage: u, Err: err}
	}
	out.Usage.Requests = u.Requests
	out.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	return out, nil
}

// completionParams builds the /v1/completions request for prompts (want:
// with log-probs); engine-specific fields become extra fields, merged as
// chatParams documents.
func (c *Client) completionParams(r CompletionRequest, prompts []string, want bool) openai.CompletionNewParams {
	p := openai.CompletionNewParams{Model: openai.CompletionNewParamsModel(c.b.Model)}
	if len(prompts) == 1 {
		p.Prompt = openai.CompletionNewParamsPromptUnion{OfString: openai.String(prompts[0])}
	} else {
		p.Prompt = openai.CompletionNewParamsPromptUnion{OfArrayOfStrings: prompts}
	}
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
	if s.MaxTokens > 0 { // never <= 0 (docs/engines.md; SGLang rejects it)
		p.MaxTokens = openai.Int(int64(s.MaxTokens))
	}
	if len(r.Stop) > 0 {
		p.Stop = openai.CompletionNewParamsStopUnion{OfStringArray: r.Stop}
	}
	extra := map[string]any{}
	if want {
		k := min(max(r.Logprobs, 1), c.maxTop(true))
		p.Logprobs = openai.Int(int64(k))
		if len(r.TokenIDs) > 0 && c.prof.Engine == VLLM {
			extra["logprob_token_ids"] = r.TokenIDs
			extra["return_tokens_as_token_ids"] = true
		}
	}
	for k, v := range s.Extra {
		extra[k] = v
	}
	p.SetExtraFields(extra) // merged as chatParams documents
	return p
}

// completeOA sends prompts to /v1/completions through openai-go.
func (c *Client) completeOA(ctx context.Context, u *Usage, r CompletionRequest, prompts []string, want bool) (*CompletionResponse, error) {
	p := c.completionParams(r, prompts, want)
	body, err := completionRequestBody(prompts, &p)
	if err != nil {
		return nil, err
	}
	v, err := c.callHedged(ctx, u, "/v1/completions", func(actx context.Context, rep *replica) (any, error) {
		raw, err := c.sendOA("/v1/completions", func(o ...option.RequestOption) error {
			_, err := rep.oa.Completions.New(actx, rawCompletion, append(o, option.WithRequestBody("application/json", body))...)
			return err
		})
		if err != nil {
			return nil, err
		}
		ch, us, cached, err := parseCompletions(raw, len(prompts), want, r.TokenText)
		if cached {
			c.sawCached.Store(true)
		}
		if err != nil {
			return nil, err
		}
		return &CompletionResponse{Choices: ch, Usage: us}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*CompletionResponse), nil
}

// completeLlama sends prompts to llama-server's native /completion.
func (c *Client) completeLlama(ctx context.Context, u *Usage, r CompletionRequest, want bool) (*CompletionResponse, error) {
	body := map[string]any{"cache_prompt": true, "n_predict": llamaDefaultPredict}
	if len(r.Prompts) == 1 {
		body["prompt"] = r.Prompts[0]
	} else {
		body["prompt"] = r.Prompts
	}
	s := r.Sampling
	if s.MaxTokens > 0 {
		body["n_predict"] = s.MaxTokens
	}
	if s.Temperature != nil {
		body["temperature"] = *s.Temperature
	}
	if s.TopP != nil {
		body["top_p"] = *s.TopP
	}
	if s.Seed != nil {
		body["seed"] = *s.Seed
	}
	if len(r.Stop) > 0 {
		body["stop"] = r.Stop
	}
	if want {
		body["n_probs"] = min(max(r.Logprobs, 1), c.maxTop(true))
		body["post_sampling_probs"] = false // raw distribution (docs/engines.md)
	}
	for k, v := range s.Extra {
		body[k] = v
	}
	v, err := c.callHedged(ctx, u, "/completion", func(actx context.Context, rep *replica) (any, error) {
		raw, err := c.sendNative(actx, "POST", rep.nativeURL("/completion", false), "/completion", body)
		if err != nil {
			return nil, err
		}
		ch, us, cached, err := parseLlamaCompletion(raw, len(r.Prompts), want)
		if cached {
			c.sawCached.Store(true)
		}
		if err != nil {
			return nil, err
		}
		return &CompletionResponse{Choices: ch, Usage: us}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*CompletionResponse), nil
}

// errNoEndpoint builds the ErrUnsupported of an engine without an
// endpoint.
func (c *Client) errNoEndpoint(what string) error {
	return unsupported(c.b, what, fmt.Sprintf("the %s engine has no such endpoint", c.b.Engine))
}
