package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/persuarena/persuarena/probe"
)

// Capabilities is what a backend was found to support (Detect).
type Capabilities struct {
	// Models are the served model ids (GET /v1/models).
	Models []string
	// MaxTopLogprobs is the largest top_logprobs / logprobs the backend
	// accepts (vLLM: probed; else the profile or Backend.MaxTopLogprobs).
	MaxTopLogprobs int
	// TokenIDLogprobs: candidates carry exact token ids.
	TokenIDLogprobs bool
	// PromptLists: /v1/completions (llama-server: /completion) accepts a
	// list of prompts in one request.
	PromptLists bool
	// Tokenize: Tokenize works.
	Tokenize bool
	// ApplyTemplate: ApplyTemplate / RenderChat work.
	ApplyTemplate bool
	// CachedTokens: usage reports prompt tokens served from the prefix
	// cache (seen in an answer).
	CachedTokens bool
	// ChatLogprobs: chat completions return log-probs.
	ChatLogprobs bool
	// CompletionLogprobs: completions return log-probs.
	CompletionLogprobs bool
	// StructuredOutput: response_format json_schema is honoured.
	StructuredOutput bool
	// Version is the engine version where it reports one (Ollama).
	Version string
	// Notes explain each missing capability and how to enable it.
	Notes []string
}

// Capability names one capability for Require.
type Capability string

// The capabilities Require can check.
const (
	CapChatLogprobs       Capability = "chat log-probs"
	CapCompletionLogprobs Capability = "completion log-probs"
	CapTokenIDLogprobs    Capability = "token-id log-probs"
	CapPromptLists        Capability = "prompt lists on /v1/completions"
	CapTokenize           Capability = "tokenize endpoint"
	CapApplyTemplate      Capability = "chat-template rendering"
	CapCachedTokens       Capability = "cached-token reporting"
	CapStructuredOutput   Capability = "structured output"
)

// Has reports whether x is present.
func (c Capabilities) Has(x Capability) bool {
	switch x {
	case CapChatLogprobs:
		return c.ChatLogprobs
	case CapCompletionLogprobs:
		return c.CompletionLogprobs
	case CapTokenIDLogprobs:
		return c.TokenIDLogprobs
	case CapPromptLists:
		return c.PromptLists
	case CapTokenize:
		return c.Tokenize
	case CapApplyTemplate:
		return c.ApplyTemplate
	case CapCachedTokens:
		return c.CachedTokens
	case CapStructuredOutput:
		return c.StructuredOutput
	}
	return false
}

// hint says how to get capability x on this engine.
func (c *Client) hint(x Capability, caps Capabilities) string {
	e := c.prof.Engine
	switch x {
	case CapCachedTokens:
		return c.prof.CachedTokensHint
	case CapTokenIDLogprobs:
		if e == VLLM {
			return "this vLLM ignores logprob_token_ids; upgrade vLLM"
		}
		return fmt.Sprintf("%s reports token strings only", e)
	case CapChatLogprobs:
		if e == Ollama {
			return fmt.Sprintf("a 1-token chat request returned no log-probs (version reported: %q); Ollama >= 0.12.11 returns them", caps.Version)
		}
	case CapCompletionLogprobs:
		return "use chat requests with top_logprobs on this engine"
	case CapTokenize, CapApplyTemplate, CapPromptLists:
		return fmt.Sprintf("the %s engine has no documented endpoint for it", e)
	}
	return ""
}

// Require runs Detect and returns an ErrUnsupported naming the first
// missing capability and how to enable it.
func (c *Client) Require(ctx context.Context, xs ...Capability) error {
	caps, err := c.Detect(ctx)
	if err != nil {
		return err
	}
	for _, x := range xs {
		if !caps.Has(x) {
			return unsupported(c.b, string(x), c.hint(x, caps))
		}
	}
	return nil
}

var maxAllowedRE = regexp.MustCompile(`(?i)max(?:imum)? allowed:?\s*(\d+)|<=\s*(\d+)|between 0 and (\d+)`)

// Detect finds the backend's capabilities at start-up. First, sent
// concurrently: llama-server's /health, the model list (the configured
// model must be served) and, where the engine has one, a /tokenize call.
// Then engine probes: vLLM and SGLang one 1-token completion with
// logprobs = the cap (retried with the cap a 400 names, so vLLM's
// --max-logprobs is found) to see token-id keys and cached-token usage;
// llama-server /apply-template and a 1-token /completion; Ollama GET
// /api/version (reported only) and one 1-token chat request with
// log-probs, since the version says nothing for builds from source (they
// report 0.0.0). Probe requests are not counted in any Usage. The result
// is cached after the first success.
func (c *Client) Detect(ctx context.Context) (Capabilities, error) {
	c.cmu.Lock()
	if c.caps != nil {
		caps := *c.caps
		c.cmu.Unlock()
		return caps, nil
	}
	c.cmu.Unlock()

	p := c.prof
	caps := Capabilities{
		MaxTopLogprobs: p.MaxTopLogprobs, PromptLists: p.PromptLists,
		ChatLogprobs: p.ChatLogprobs, CompletionLogprobs: p.CompletionLogprobs,
		StructuredOutput: p.StructuredOutput,
	}
	if c.b.MaxTopLogprobs > 0 {
		caps.MaxTopLogprobs = c.b.MaxTopLogprobs
	}
	// The health check, the model list and the tokenizer probe are
	// independent requests, sent at once: every episode waits for
	// detection, and under engine faults one retry path is far shorter
	// than three in a row. Their results are read in this order, so the
	// error returned does not depend on their timing.
	var healthErr, modelsErr, tokErr, noErr error
	var models []string
	var ids, noIDs []int
	var wg sync.WaitGroup
	wg.Go(func() { healthErr = c.Health(ctx) })
	wg.Go(func() { models, modelsErr = c.Models(ctx) })
	if p.Tokenize {
		wg.Go(func() { ids, tokErr = c.Tokenize(ctx, "Yes") })
		wg.Go(func() { noIDs, noErr = c.Tokenize(ctx, "No") })
	}
	wg.Wait()
	if healthErr != nil {
		return caps, fmt.Errorf("llm: backend %q not ready: %w", c.b.Name, healthErr)
	}
	if modelsErr != nil {
		return caps, fmt.Errorf("llm: backend %q: listing models: %w", c.b.Name, modelsErr)
	}
	caps.Models = models
	if len(models) > 0 && !slices.Contains(models, c.b.Model) {
		return caps, fmt.Errorf("llm: backend %q does not serve model %q (served: %s)", c.b.Name, c.b.Model, strings.Join(models, ", "))
	}

	var probeIDs []int // "Yes" and "No", asked for by id
	if p.Tokenize {
		err := errors.Join(tokErr, noErr)
		if err == nil && len(ids) > 0 && len(noIDs) > 0 {
			caps.Tokenize = true
			probeIDs = []int{ids[0], noIDs[0]}
		} else {
			caps.Notes = append(caps.Notes, fmt.Sprintf("tokenize failed: %v", err))
		}
	}
	switch p.Engine {
	case VLLM, SGLang:
		caps.ApplyTemplate = p.ApplyTemplate && caps.Tokenize
		if err := c.probeCompletion(ctx, &caps, probeIDs); err != nil {
			return caps, err
		}
	case LlamaCpp:
		if _, err := c.ApplyTemplate(ctx, []Message{{Role: "user", Content: "Hi"}}, true); err == nil {
			caps.ApplyTemplate = true
		} else {
			caps.Notes = append(caps.Notes, fmt.Sprintf("apply-template failed: %v", err))
		}
		if err := c.probeCompletion(ctx, &caps, probeIDs); err != nil {
			return caps, err
		}
	case Ollama:
		var v struct {
			Version string `json:"version"`
		}
		err := c.call(ctx, nil, func(actx context.Context, rep *replica) error {
			raw, err := c.sendNative(actx, "GET", rep.nativeURL("/api/version", false), "/api/version", nil)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &v); err != nil {
				return fmt.Errorf("%w: /api/version: %v", ErrMalformed, err)
			}
			return nil
		})
		if err != nil {
			return caps, fmt.Errorf("llm: backend %q: /api/version: %w", c.b.Name, err)
		}
		caps.Version = v.Version
		// Support is decided by asking, not by the version: builds from
		// source report 0.0.0 and do return log-probs (docs/engines.md).
		ok, err := c.askChatLogprobs(ctx)
		if err != nil {
			return caps, fmt.Errorf("llm: backend %q: asking for chat log-probs: %w", c.b.Name, err)
		}
		caps.ChatLogprobs = ok
	case OpenAI:
		caps.CachedTokens = true // prompt_tokens_details.cached_tokens is always present
	}
	if c.sawCached.Load() {
		caps.CachedTokens = true
	}
	for _, x := range []Capability{CapChatLogprobs, CapTokenIDLogprobs, CapPromptLists, CapTokenize, CapApplyTemplate, CapCachedTokens} {
		if !caps.Has(x) {
			caps.Notes = append(caps.Notes, fmt.Sprintf("no %s: %s", x, c.hint(x, caps)))
		}
	}
	c.cmu.Lock()
	c.caps = &caps
	c.cmu.Unlock()
	return caps, nil
}

// askChatLogprobs sends one 1-token chat request with log-probs and two
// top candidates and reports whether they came back. A response without
// them, or a 400 refusing the fields, is false; other errors are returned.
func (c *Client) askChatLogprobs(ctx context.Context) (bool, error) {
	_, err := c.Chat(ctx, ChatRequest{Messages: []Message{{Role: "user", Content: "Hi"}},
		Sampling: Sampling{MaxTokens: 1}, Logprobs: true, TopLogprobs: 2})
	var he *HTTPError
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrLogprobsUnavailable), errors.As(err, &he) && he.Status == http.StatusBadRequest:
		return false, nil
	}
	return false, err
}

// probeCompletion sends one 1-token completion with logprobs at the cap
// (vLLM/SGLang /v1/completions, llama-server /completion), over a
// two-prompt list where the profile expects lists. A 400 naming a smaller
// maximum lowers the cap; a list that is refused or answered with the
// wrong number of choices marks prompt lists as absent.
//
// On vLLM it also asks for the log-probs of probeIDs (the "Yes" and "No"
// token ids) by id, at temperature 0: an engine that honours
// logprob_token_ids answers exactly those ids and the sampled token, one
// that ignores it its top-k list, where "Yes" may well appear after
// "Hello" by itself. Token-id log-probs count as honoured only when every
// asked id is there and nothing else but the sampled token.
func (c *Client) probeCompletion(ctx context.Context, caps *Capabilities, probeIDs []int) error {
	k := caps.MaxTopLogprobs
	prompts := []string{"Hello"}
	if caps.PromptLists {
		prompts = []string{"Hello", "Hi"}
	}
	dropList := func() {
		prompts = prompts[:1]
		caps.PromptLists = false
		caps.Notes = append(caps.Notes, "a prompt list in one completion request was refused")
	}
	for try := 0; try < 5; try++ {
		r := CompletionRequest{Prompts: prompts, Sampling: Sampling{MaxTokens: 1}, Logprobs: k}
		if len(probeIDs) > 0 && c.prof.Engine == VLLM {
			zero := 0.0
			r.Sampling.Temperature = &zero
			r.TokenIDs = probeIDs
			r.TokenText = map[int]string{probeIDs[0]: "Yes", probeIDs[1]: "No"}
		}
		var u Usage
		var resp *CompletionResponse
		var err error
		if c.prof.Engine == LlamaCpp {
			resp, err = c.completeLlama(ctx, &u, r, true)
		} else {
			resp, err = c.completeOA(ctx, &u, r, r.Prompts, true)
		}
		var he *HTTPError
		if errors.As(err, &he) && he.Status == 400 {
			if n := smallerMax(he.Body, k); n > 0 {
				k = n
				continue
			}
			if len(prompts) > 1 {
				dropList()
				continue
			}
			if k > 5 {
				k = 5
				continue
			}
		}
		if errors.Is(err, ErrMalformed) && len(prompts) > 1 {
			dropList()
			continue
		}
		if errors.Is(err, ErrLogprobsUnavailable) {
			caps.CompletionLogprobs = false
			caps.Notes = append(caps.Notes, "completions returned no log-probs")
			return nil
		}
		if err != nil {
			return fmt.Errorf("llm: backend %q: completion probe: %w", c.b.Name, err)
		}
		caps.MaxTopLogprobs = k
		if len(resp.Choices) > 0 && resp.Choices[0].Artefact != nil {
			caps.Notes = append(caps.Notes, resp.Choices[0].Artefact.Error())
		}
		if len(resp.Choices) > 0 && len(resp.Choices[0].Top) > 0 {
			top := resp.Choices[0].Top[0]
			switch c.prof.Engine {
			case VLLM:
				caps.TokenIDLogprobs = len(r.TokenIDs) > 0 && honoursIDs(top, r.TokenIDs)
			case LlamaCpp:
				// llama-server reports ids with its own top-k.
				caps.TokenIDLogprobs = slices.ContainsFunc(top, func(cand probe.TokenLogprob) bool { return cand.ID >= 0 })
			}
		}
		return nil
	}
	return fmt.Errorf("llm: backend %q: completion probe: no accepted logprobs value", c.b.Name)
}

// honoursIDs reports whether a position's candidates are an answer to
// logprob_token_ids = ids: every id present, and at most one other
// candidate (the sampled token). A top-k list that ignored the ids holds
// k candidates, of which "Yes" and "No" are at most two.
func honoursIDs(top []probe.TokenLogprob, ids []int) bool {
	others := 0
	seen := map[int]bool{}
	for _, cand := range top {
		if slices.Contains(ids, cand.ID) {
			seen[cand.ID] = true
		} else {
			others++
		}
	}
	return len(seen) == len(ids) && others <= 1
}

// smallerMax reads the maximum a 400 body names ("max allowed: 20",
// "<= 5", "between 0 and 20"); 0 unless it is below k.
func smallerMax(body string, k int) int {
	best := 0
	for _, m := range maxAllowedRE.FindAllStringSubmatch(body, -1) {
		for _, g := range m[1:] {
			if n, err := strconv.Atoi(g); err == nil && n > 0 && n < k && (best == 0 || n < best) {
				best = n
			}
		}
	}
	return best
}
