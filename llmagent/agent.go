// Package llmagent implements PersuArena's LLM-backed roles on top of package
// llm (docs/llm-roles.md): the LLM persuadee (episode.Persuadee, with its
// decision protocol and logit probes, Probe-RPO paper; docs/engines.md), the
// prompted LLM persuader (episode.Persuader, the Probe-RPO paper's prompted
// baselines) and the LLM judge (terminal-state check, strategy rating
// R_strategy, five-act tagging). Every role sees only what it may: the
// persuader and the judge get the public scenario fields and the visible
// transcript; only the persuadee's own prompt holds the hidden profile.
// docs/llm-roles.md describes prompts, protocol, probe paths and costs.
package llmagent

import (
	"context"
	"errors"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
)

// engine is the part of *llm.Client the roles use; tests may substitute it.
type engine interface {
	Backend() llm.Backend
	Detect(ctx context.Context) (llm.Capabilities, error)
	Chat(ctx context.Context, r llm.ChatRequest) (*llm.ChatResponse, error)
	Complete(ctx context.Context, r llm.CompletionRequest) (*llm.CompletionResponse, error)
	Tokenize(ctx context.Context, text string) ([]int, error)
	RenderChat(ctx context.Context, r llm.TemplateRequest) (string, error)
}

// renderProbe renders msgs with the engine's chat template, generation
// prompt added and thinking off, as a probe fork is read (docs/engines.md).
func renderProbe(ctx context.Context, e engine, msgs []llm.Message) (string, error) {
	return e.RenderChat(ctx, llm.TemplateRequest{Messages: msgs, AddGenerationPrompt: true, Thinking: ptr(false)})
}

var _ engine = (*llm.Client)(nil)

// affinity pins a new episode's requests through e to one replica of its
// backend (llm.Client.Affinity: the least-loaded healthy replica, kept
// for the episode so the engine's prefix cache serves its replies and
// probe forks); nil for engines that are not an *llm.Client.
func affinity(e engine) *llm.Affinity {
	if r, ok := e.(roleEngine); ok {
		e = r.e
	}
	if c, ok := e.(*llm.Client); ok {
		return c.Affinity()
	}
	return nil
}

// roleEngine is an engine whose errors speak the dialogue's vocabulary
// (roleError): the roles wrap every engine they are given in it, so that
// package llm need not know package episode.
type roleEngine struct{ e engine }

// asRole wraps e in a roleEngine (once); nil stays nil.
func asRole(e engine) engine {
	if _, ok := e.(roleEngine); ok || e == nil {
		return e
	}
	return roleEngine{e}
}

func (r roleEngine) Backend() llm.Backend { return r.e.Backend() }

func (r roleEngine) Detect(ctx context.Context) (llm.Capabilities, error) {
	c, err := r.e.Detect(ctx)
	return c, EngineError(err)
}

func (r roleEngine) Chat(ctx context.Context, q llm.ChatRequest) (*llm.ChatResponse, error) {
	resp, err := r.e.Chat(ctx, q)
	return resp, EngineError(err)
}

func (r roleEngine) Complete(ctx context.Context, q llm.CompletionRequest) (*llm.CompletionResponse, error) {
	resp, err := r.e.Complete(ctx, q)
	return resp, EngineError(err)
}

func (r roleEngine) Tokenize(ctx context.Context, text string) ([]int, error) {
	ids, err := r.e.Tokenize(ctx, text)
	return ids, EngineError(err)
}

func (r roleEngine) RenderChat(ctx context.Context, q llm.TemplateRequest) (string, error) {
	s, err := r.e.RenderChat(ctx, q)
	return s, EngineError(err)
}

// EngineError returns err (nil for nil) with the engine's sentinels also
// matching the dialogue's under errors.Is, for engine-backed roles outside
// this package (masp.LLMTeacher): llm.ErrContextLength as
// episode.ErrTruncated (the episode ends truncated, docs/engines.md) and
// llm.ErrTransient as episode.ErrTransient (eval may replay it). The
// message, the wrapped chain (errors.As, llm.UsageOf, RetryAfter) are
// unchanged.
func EngineError(err error) error {
	if err == nil {
		return nil
	}
	return engineError{err}
}

type engineError struct{ err error }

func (e engineError) Error() string { return e.err.Error() }
func (e engineError) Unwrap() error { return e.err }

func (e engineError) Is(target error) bool {
	switch target {
	case episode.ErrTruncated:
		return errors.Is(e.err, llm.ErrContextLength)
	case episode.ErrTransient:
		return errors.Is(e.err, llm.ErrTransient)
	}
	return false
}

// RetryAfter is the transient fault's known duration (0: unknown or not
// transient), for episode.Episode.RetryAfter.
func (e engineError) RetryAfter() time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(e.err, &ra) {
		return ra.RetryAfter()
	}
	return 0
}

// lastJSONObject decodes the last balanced {...} in text, reasoning blocks
// removed, that is a JSON object (code fences and surrounding prose
// allowed; decision.LastObject); ok is false if none.
func lastJSONObject(text string) (map[string]any, bool) {
	obj, _, _, ok := decision.LastObject(decision.StripThink(text), nil)
	return obj, ok
}
func ptr[T any](v T) *T { return &v }

// requestSeed derives a per-request engine seed from a session seed and a
// counter, so a rerun with the same seeds sends the same requests (engines
// that honour seeds then reproduce). Choice: SplitMix64 of seed+n, top bit
// cleared (engines take signed 63-bit seeds).
func requestSeed(seed uint64, n int) *int64 {
	z := seed + uint64(n)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	v := int64(z >> 1)
	return &v
}
