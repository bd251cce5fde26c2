// Package llm talks to OpenAI-compatible inference engines (vLLM, SGLang,
// llama.cpp's llama-server, Ollama and hosted OpenAI-compatible APIs) for
// PersuArena's LLM persuadees, persuaders, judges and logit probes (Probe-RPO
// paper; docs/engines.md).
//
// A Client wraps one Backend: it sends chat and completion requests through
// github.com/openai/openai-go/v3 (engine-specific fields go in as extra JSON),
// reads the engines' log-probabilities tolerantly into probe.TokenLogprob
// candidates, counts usage, and adds the fault tolerance a long evaluation
// needs: a per-request timeout, retries with exponential backoff and full
// jitter on 429 / 5xx / connection errors / timeouts (honouring
// Retry-After), a circuit breaker and a bound on requests in flight.
// Engine-specific endpoints (/tokenize, /apply-template, llama-server's
// /completion, /health, Ollama's /api/version) use net/http directly.
//
// Configuration (persuarena.yaml) is read by LoadConfig; API keys only ever
// come from environment variables named in it, and never appear in errors,
// logs or formatted values. docs/engines.md describes the engine profiles and
// the server flags each engine needs.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/probe"
)

// Engine names an inference engine profile.
type Engine string

// The engine profiles (docs/engines.md).
const (
	VLLM     Engine = "vllm"
	SGLang   Engine = "sglang"
	LlamaCpp Engine = "llamacpp"
	Ollama   Engine = "ollama"
	OpenAI   Engine = "openai"
)

// Engines lists every profile, in documentation order.
var Engines = []Engine{VLLM, SGLang, LlamaCpp, Ollama, OpenAI}

// Valid reports whether e is one of the known profiles.
func (e Engine) Valid() bool {
	for _, x := range Engines {
		if e == x {
			return true
		}
	}
	return false
}

// Message is one chat message. Role is "system", "user" or "assistant".
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatRequest is one /v1/chat/completions call.
type ChatRequest struct {
	// Messages is the conversation, oldest first.
	Messages []Message
	// Sampling holds the role's sampling parameters; nil fields use the
	// engine default, MaxTokens <= 0 omits max_tokens (never sent as <= 0,
	// docs/engines.md).
	Sampling Sampling
	// Logprobs asks for per-token log-probabilities.
	Logprobs bool
	// TopLogprobs is the number of candidates per position (0..cap); it is
	// capped to the backend's maximum (Capabilities.MaxTopLogprobs) without
	// error.
	TopLogprobs int
	// JSONSchema asks for structured output constrained by this JSON schema
	// (sent as response_format json_schema, never vLLM's old guided_*
	// fields); nil means free text.
	JSONSchema json.RawMessage
	// Thinking, when non-nil, switches the model's thinking mode:
	// chat_template_kwargs.enable_thinking on vLLM, SGLang and llama-server,
	// reasoning_effort "none" (false) on Ollama; ignored for OpenAI.
	Thinking *bool
	// ContinueFinalMessage continues the last (assistant) message instead of
	// opening a new one: continue_final_message on vLLM and SGLang;
	// llama-server and Ollama prefill a trailing assistant message by
	// themselves; ErrUnsupported on OpenAI.
	ContinueFinalMessage bool
	// Stop lists stop strings (optional).
	Stop []string
}

// ChatResponse is the first choice of a chat completion.
type ChatResponse struct {
	// Content is the assistant text; "" when the engine returned content
	// null (e.g. a reasoning parser put everything in Reasoning, docs/engines.md).
	Content string
	// Reasoning is the thinking text when the engine separated it
	// (reasoning_content, or reasoning on Ollama and newer vLLM).
	Reasoning string
	// FinishReason is the engine's reason: "stop", "length", ...
	FinishReason string
	// Top holds, per generated token position, the candidates: the top
	// log-probs plus the sampled token when it was not among them. Token
	// ids are filled where the engine reports them (vLLM token_id: keys,
	// llama-server ids), else -1. nil when logprobs were not requested.
	Top [][]probe.TokenLogprob
	// Usage counts tokens and HTTP requests actually sent, retries
	// included (Requests >= 1).
	Usage Usage
	// LatencyMS is the wall time of the call in milliseconds, retries and
	// backoff included.
	LatencyMS float64
}

// CompletionRequest is one /v1/completions call over one or several raw
// prompts (llama-server: /completion).
type CompletionRequest struct {
	// Prompts are sent as one prompt list where the engine accepts lists
	// (vLLM, SGLang, llama-server, OpenAI) and one request per prompt
	// elsewhere (Ollama).
	Prompts []string
	// Sampling as for chat; MaxTokens <= 0 means the engine's completion
	// default (16; llama-server gets n_predict 16 rather than its unbounded
	// default).
	Sampling Sampling
	// Logprobs is the number of top candidates per position (0 = none);
	// capped like ChatRequest.TopLogprobs (OpenAI completions: 5).
	Logprobs int
	// TokenIDs asks vLLM (logprob_token_ids) for exactly these ids'
	// log-probs at every position, with token_id: keys so strings never
	// collide. Other engines ignore it and return their top-k.
	TokenIDs []int
	// TokenText names ids for TokenIDs answers: when the engine reports a
	// candidate by id only ("token_id:123"), Token is set from this map
	// (left "" when absent).
	TokenText map[int]string
	// Stop lists stop strings (optional).
	Stop []string
}

// CompletionChoice is the completion of one prompt.
type CompletionChoice struct {
	// Index is the prompt's index in CompletionRequest.Prompts.
	Index int
	// Text is the generated text.
	Text string
	// FinishReason is "stop", "length", ...
	FinishReason string
	// Top is as ChatResponse.Top; nil when no logprobs were requested.
	Top [][]probe.TokenLogprob
	// Artefact, when not nil, says why the choice's log-probs are not
	// the model's distribution (an *ArtefactError); Top is then nil and
	// the probe reads as unreadable, never as P = 1.
	Artefact error
}

// CompletionResponse holds one choice per prompt, in prompt order.
type CompletionResponse struct {
	Choices []CompletionChoice
	// Usage sums all prompts; Requests counts HTTP requests sent.
	Usage Usage
	// LatencyMS is the wall time of the call in milliseconds.
	LatencyMS float64
}

// Chatter is the part of *Client that sends chat requests: what the LLM
// teacher and the MASP judges need. Errors: as Client.Chat.
type Chatter interface {
	Chat(ctx context.Context, r ChatRequest) (*ChatResponse, error)
}

var _ Chatter = (*Client)(nil)

// Usage counts engine tokens for one call or a sum of calls; it is also
// the dialogue's episode.Usage (one type: every turn records its roles'
// usage in it).
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedTokens is the part of PromptTokens served from the engine's
	// prefix cache, when the engine reports it.
	CachedTokens int `json:"cached_tokens"`
	// PromptOnceTokens is PromptTokens with the prompt prefix that the
	// call's requests share counted once, as the Probe-RPO paper's Table 4
	// counts a probe read-out's K forks "with cache": set where it is known
	// (package llmagent's probe read-outs on the completions path, from
	// the engine's own token counts), 0 when unknown.
	PromptOnceTokens int `json:"prompt_once_tokens,omitempty"`
	// Requests is the number of HTTP requests sent, retries included; a
	// hedged duplicate is not (it depends on timing; Client.Hedges counts
	// them).
	Requests int `json:"requests"`
}

// Add returns u + v, field by field.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.PromptTokens + v.PromptTokens, u.CompletionTokens + v.CompletionTokens,
		u.CachedTokens + v.CachedTokens, u.PromptOnceTokens + v.PromptOnceTokens, u.Requests + v.Requests}
}

// ErrTransient marks (errors.Is) an engine error that may not recur: 5xx
// or 429 until the retries ran out, a timeout, a refused connection, an
// open circuit breaker. Such an error also has a RetryAfter() time.Duration
// method (0: unknown). Package llmagent turns it into the dialogue's
// transient role error, which eval may replay.
var ErrTransient = errors.New("llm: transient engine fault")

// Errors; test with errors.Is.
var (
	// ErrContextLength is an HTTP 400 saying the prompt does not fit the
	// model's context window. It is never retried; package llmagent turns
	// it into the dialogue's truncation error, so the episode ends as
	// truncated, never as a rejection (docs/engines.md).
	ErrContextLength error = errors.New("llm: prompt exceeds the model's context window")
	// ErrLogprobsUnavailable means log-probs were requested but the response
	// carried none (structured output, speculative decoding, older Ollama,
	// proxies). Never guessed from the text (docs/engines.md); not retried.
	ErrLogprobsUnavailable = errors.New("llm: log-probs requested but absent from the response")
	// ErrCircuitOpen means the backend's circuit breaker is open after
	// repeated failures; no request was sent.
	ErrCircuitOpen = errors.New("llm: circuit breaker open")
	// ErrUnsupported means the backend lacks a capability; the message names
	// the capability and, where one exists, the engine flag that enables it.
	ErrUnsupported = errors.New("llm: unsupported by this backend")
	// ErrTimeout means one attempt ran past Backend.Timeout (retried).
	ErrTimeout = errors.New("llm: request timed out")
	// ErrMalformed means a 2xx response could not be parsed (retried, since
	// requests are idempotent).
	ErrMalformed = errors.New("llm: malformed response")
)

// ErrArtefact marks (errors.Is) an *ArtefactError.
var ErrArtefact = errors.New("llm: log-probs are an engine artefact")

// ArtefactError is a probability list that cannot be the model's
// distribution, such as post-sampling probabilities of exactly 1.0 and 0.0
// (llama-server builds that ignore post_sampling_probs: false, or the
// older `probs` shape, which is always post-sampling: llama.cpp issue
// #7197, PR #9897). The probe it answers is unreadable, with Reason
// recorded. errors.Is(err, ErrArtefact) holds.
type ArtefactError struct {
	// Reason says what the list looked like, e.g. "post-sampling
	// probabilities: \"Yes\" 1, others 0".
	Reason string
}

func (e *ArtefactError) Error() string { return "llm: engine artefact: " + e.Reason }

// Is reports target == ErrArtefact.
func (e *ArtefactError) Is(target error) bool { return target == ErrArtefact }

// HTTPError is a non-2xx answer. Body is the response body, truncated to
// 2 KiB, with the API key redacted should the server echo it; request
// headers are never included.
type HTTPError struct {
	// Status is the HTTP status code.
	Status int
	// Body is the (redacted, truncated) response body.
	Body string
	// Path is the request path, e.g. "/v1/chat/completions".
	Path string
}

// Error gives path, status and the start of the body.
func (e *HTTPError) Error() string {
	b := strings.TrimSpace(e.Body)
	if len(b) > 300 {
		b = b[:300] + "..."
	}
	return fmt.Sprintf("llm: %s: HTTP %d: %s", e.Path, e.Status, b)
}

// unsupported builds an ErrUnsupported naming what is missing and how to
// enable it.
func unsupported(b Backend, what, hint string) error {
	msg := fmt.Sprintf("%s: backend %q (%s)", what, b.Name, b.Engine)
	if hint != "" {
		msg += ": " + hint
	}
	return fmt.Errorf("%w: %s", ErrUnsupported, msg)
}
