package llmagent

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

// stub is an in-process engine for unit tests of the roles' logic: it
// renders with the fake engine's ChatML template, answers chat requests
// through chat, and gives each probe's first token the distribution dist
// returns for the rendered prompt. It records every call.
type stub struct {
	engine llm.Engine
	caps   llm.Capabilities
	// chat answers a non-probe chat request (nil: "OK.\nDECISION: continue").
	chat func(req llm.ChatRequest) (string, error)
	// dist is P(token) at the first answer position of a probe prompt
	// (nil: Yes 0.7, No 0.3).
	dist func(prompt string) map[string]float64
	// noLogprobs drops log-probs from probe answers.
	noLogprobs bool
	// artefact, when set and not nil for a prompt, answers that prompt's
	// choice with it instead of log-probs (llm.CompletionChoice.Artefact).
	artefact func(prompt string) error
	// template overrides the chat template (nil: fakeengine.Template).
	template func(msgs []llm.Message, gen bool, thinking *bool) string

	mu                                sync.Mutex
	chats, completes, renders, tokens int
	chatReqs                          []llm.ChatRequest
	compReqs                          []llm.CompletionRequest
}

func vllmStub() *stub {
	return &stub{engine: llm.VLLM, caps: llm.Capabilities{MaxTopLogprobs: 20, TokenIDLogprobs: true, PromptLists: true,
		Tokenize: true, ApplyTemplate: true, CachedTokens: true, ChatLogprobs: true, CompletionLogprobs: true}}
}

func ollamaStub() *stub {
	return &stub{engine: llm.Ollama, caps: llm.Capabilities{MaxTopLogprobs: 20, ChatLogprobs: true}}
}

func (s *stub) Backend() llm.Backend {
	return llm.Backend{Name: "stub", Engine: s.engine, Model: "m"}
}

func (s *stub) Detect(context.Context) (llm.Capabilities, error) { return s.caps, nil }

func (s *stub) render(msgs []llm.Message, gen bool, thinking *bool) string {
	if s.template != nil {
		return s.template(msgs, gen, thinking)
	}
	return fakeengine.Template(msgs, gen, thinking, false)
}

func (s *stub) firstToken(prompt string) []probe.TokenLogprob {
	d := map[string]float64{"Yes": 0.7, "No": 0.3}
	if s.dist != nil {
		d = s.dist(prompt)
	}
	var top []probe.TokenLogprob
	for _, tok := range []string{"Yes", " Yes", "yes", "No", " No", "no", "Maybe", "<think>", "**"} {
		if p, ok := d[tok]; ok {
			top = append(top, probe.TokenLogprob{Token: tok, ID: fakeengine.TokenID(tok), Logprob: math.Log(p)})
		}
	}
	return top
}

func usageOf(prompt string) llm.Usage {
	return llm.Usage{Requests: 1, PromptTokens: len(fakeengine.Tokenize(prompt)), CompletionTokens: 1}
}

func (s *stub) Chat(_ context.Context, r llm.ChatRequest) (*llm.ChatResponse, error) {
	s.mu.Lock()
	s.chats++
	s.chatReqs = append(s.chatReqs, r)
	s.mu.Unlock()
	prompt := s.render(r.Messages, true, r.Thinking)
	if r.Logprobs { // a probe
		if s.noLogprobs {
			return nil, llm.ErrLogprobsUnavailable
		}
		return &llm.ChatResponse{Content: "Yes", Top: [][]probe.TokenLogprob{s.firstToken(prompt)}, Usage: usageOf(prompt)}, nil
	}
	text := "OK.\nDECISION: continue"
	if s.chat != nil {
		var err error
		if text, err = s.chat(r); err != nil {
			return nil, err
		}
	}
	u := usageOf(prompt)
	u.CompletionTokens = len(fakeengine.Tokenize(text))
	return &llm.ChatResponse{Content: text, FinishReason: "stop", Usage: u}, nil
}

func (s *stub) Complete(_ context.Context, r llm.CompletionRequest) (*llm.CompletionResponse, error) {
	s.mu.Lock()
	s.completes++
	s.compReqs = append(s.compReqs, r)
	s.mu.Unlock()
	out := &llm.CompletionResponse{Usage: llm.Usage{Requests: 1}}
	for i, p := range r.Prompts {
		out.Usage.PromptTokens += len(fakeengine.Tokenize(p))
		out.Usage.CompletionTokens++
		c := llm.CompletionChoice{Index: i, Text: "Yes"}
		if !s.noLogprobs {
			top := s.firstToken(p)
			if len(r.TokenIDs) > 0 { // vLLM logprob_token_ids: every asked id, by id
				byID := map[int]float64{}
				for _, t := range top {
					byID[t.ID] = t.Logprob
				}
				for _, id := range r.TokenIDs {
					lp, ok := byID[id]
					if !ok {
						lp = -30
					}
					top = append(top, probe.TokenLogprob{Token: r.TokenText[id], ID: id, Logprob: lp})
				}
			}
			c.Top = [][]probe.TokenLogprob{top}
			if s.artefact != nil {
				if c.Artefact = s.artefact(p); c.Artefact != nil {
					c.Top = nil
				}
			}
		}
		out.Choices = append(out.Choices, c)
	}
	if s.noLogprobs {
		return nil, llm.ErrLogprobsUnavailable
	}
	return out, nil
}

func (s *stub) Tokenize(_ context.Context, text string) ([]int, error) {
	s.mu.Lock()
	s.tokens++
	s.mu.Unlock()
	return fakeengine.Tokenize(text), nil
}

func (s *stub) RenderChat(_ context.Context, r llm.TemplateRequest) (string, error) {
	s.mu.Lock()
	s.renders++
	s.mu.Unlock()
	return s.render(r.Messages, r.AddGenerationPrompt, r.Thinking), nil
}

func (s *stub) counts() (chats, completes, renders int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chats, s.completes, s.renders
}

func (s *stub) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats, s.completes, s.renders, s.tokens = 0, 0, 0, 0
	s.chatReqs, s.compReqs = nil, nil
}

// marker is planted in the hidden profile; it must never reach a persuader.
const marker = "ZQXHIDDEN"

func testScenario() *scenario.Scenario {
	return &scenario.Scenario{
		ID: "t1", Split: scenario.Heldout, Domain: "exercise habits", Family: scenario.Healthcare,
		Proposal:         "Join a weekly walking group for a month.",
		AcceptMeans:      "They sign up for the walking group.",
		ConditionalMeans: "They agree to try it if a condition is met.",
		Persuader:        scenario.Party{Name: "Dana", Role: "a friend"},
		Persuadee:        scenario.Party{Name: "Sam", Role: "an office worker"},
		Relationship:     "friends from school", Closeness: scenario.Close,
		Background: "Sam has been feeling tired lately.",
		Hidden: scenario.HiddenProfile{
			Persona: "A shy accountant " + marker, Motivation: "Wants more energy " + marker,
			Resistance: scenario.AutonomyResistance, InitialStance: -0.4,
			Concerns:    []scenario.Concern{{ID: "time", Description: "I have no time " + marker, Keywords: []string{"time"}}},
			Constraints: []string{"Evenings only " + marker},
		},
	}
}

// recorder is a persuader that says fixed lines and records everything it
// is shown.
type recorder struct {
	mu    sync.Mutex
	seen  []string
	lines []string
}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) Start(_ context.Context, pub scenario.Public, _ uint64) (episode.PersuaderSession, error) {
	r.mu.Lock()
	r.seen = append(r.seen, fmt.Sprintf("%+v", pub))
	r.mu.Unlock()
	return &recSession{r: r}, nil
}

type recSession struct {
	r *recorder
	n int
}

func (s *recSession) Say(_ context.Context, tr []episode.Message) (episode.Utterance, error) {
	s.r.mu.Lock()
	for _, m := range tr {
		s.r.seen = append(s.r.seen, m.Text)
	}
	s.r.mu.Unlock()
	line := "What worries you most about it?"
	if s.n < len(s.r.lines) {
		line = s.r.lines[s.n]
	}
	s.n++
	return episode.Utterance{Text: line}, nil
}

func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.seen, "\n")
}
