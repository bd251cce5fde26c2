// Package llmagent implements PersuArena's LLM-backed roles on top of
// package llm (issue 3): the LLM persuadee (episode.Persuadee, with its
// decision protocol and logit probes, SPEC §2 and §7), the prompted LLM
// persuader (episode.Persuader, seed 000's prompted baselines) and the LLM
// judge (terminal-state check, strategy rating R_strategy, five-act
// tagging). Every role sees only what it may: the persuader and the judge
// get the public scenario fields and the visible transcript; only the
// persuadee's own prompt holds the hidden profile. docs/llm-roles.md
// describes prompts, protocol, probe paths and costs.
package llmagent

import (
	"context"

	"github.com/persuarena/persuarena/decision"
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
// prompt added and thinking off, as a probe fork is read (SPEC §7).
func renderProbe(ctx context.Context, e engine, msgs []llm.Message) (string, error) {
	return e.RenderChat(ctx, llm.TemplateRequest{Messages: msgs, AddGenerationPrompt: true, Thinking: ptr(false)})
}

var _ engine = (*llm.Client)(nil)

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
