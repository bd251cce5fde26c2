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
	"encoding/json"
	"strings"

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

// stripThink removes <think>...</think> blocks, everything after an
// unterminated <think>, and everything before a lone </think> (templates
// that open the block in the prompt), SPEC §7.
func stripThink(s string) string {
	lo := strings.ToLower(s)
	if i := strings.Index(lo, "</think>"); i >= 0 && !strings.Contains(lo[:i], "<think>") {
		s, lo = s[i+len("</think>"):], lo[i+len("</think>"):]
	}
	for {
		i := strings.Index(lo, "<think>")
		if i < 0 {
			return s
		}
		j := strings.Index(lo[i:], "</think>")
		if j < 0 {
			return s[:i]
		}
		end := i + j + len("</think>")
		s, lo = s[:i]+s[end:], lo[:i]+lo[end:]
	}
}

// lastJSONObject decodes the last balanced {...} in text that is a JSON
// object (code fences and surrounding prose allowed); ok is false if none.
func lastJSONObject(text string) (map[string]any, bool) {
	text = stripThink(text)
	end := len(text)
	for tries := 0; tries < 8; tries++ {
		j := strings.LastIndexByte(text[:end], '}')
		if j < 0 {
			return nil, false
		}
		i := matchOpen(text, j)
		if i < 0 {
			return nil, false
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(text[i:j+1]), &obj); err == nil {
			return obj, true
		}
		end = i
	}
	return nil, false
}

// matchOpen returns the index of the '{' balancing the '}' at j, skipping
// braces inside JSON strings, or -1.
func matchOpen(s string, j int) int {
	depth := 0
	inStr := false
	for k := j; k >= 0; k-- {
		c := s[k]
		if c == '"' && !(k > 0 && s[k-1] == '\\') {
			inStr = !inStr
			continue
		}
		if inStr {
			continue
		}
		switch c {
		case '}':
			depth++
		case '{':
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// field returns obj[key], matching the key case-insensitively.
func field(obj map[string]any, key string) any {
	if v, ok := obj[key]; ok {
		return v
	}
	for k, v := range obj {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
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
