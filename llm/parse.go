package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/probe"
)

// logprob is a log-probability read tolerantly (docs/engines.md): a number, null,
// or a string such as "-inf", "-Infinity" or "NaN". null and unparsable
// strings read as -Inf (zero probability); probe.Pool maps -Inf, NaN,
// <= -1e30 (e.g. -3.4e38) and -9999 to zero probability.
type logprob float64

func (l *logprob) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		*l = logprob(math.Inf(-1))
		return nil
	}
	if len(s) > 0 && s[0] == '"' {
		u, err := strconv.Unquote(s)
		if err != nil {
			*l = logprob(math.Inf(-1))
			return nil
		}
		s = strings.ToLower(strings.TrimSpace(u))
	}
	switch strings.ToLower(s) {
	case "-inf", "-infinity", "inf", "+inf", "infinity", "nan", "":
		*l = logprob(math.Inf(-1))
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		*l = logprob(math.Inf(-1))
		return nil
	}
	*l = logprob(f)
	return nil
}

// sanitizeJSON rewrites the bare non-JSON tokens NaN, Infinity and
// -Infinity that Python servers may emit into null, leaving strings
// untouched. It returns b itself when there is nothing to rewrite.
func sanitizeJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte("Infinity")) && !bytes.Contains(b, []byte("NaN")) {
		return b
	}
	out := make([]byte, 0, len(b))
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out = append(out, c)
		case bytes.HasPrefix(b[i:], []byte("-Infinity")):
			out = append(out, "null"...)
			i += len("-Infinity") - 1
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			out = append(out, "null"...)
			i += len("Infinity") - 1
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			out = append(out, "null"...)
			i += len("NaN") - 1
		default:
			out = append(out, c)
		}
	}
	return out
}

// tokenIDKey parses vLLM's "token_id:123" form (return_tokens_as_token_ids).
func tokenIDKey(s string) (int, bool) {
	rest, ok := strings.CutPrefix(s, "token_id:")
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(rest)
	if err != nil || id < 0 {
		return 0, false
	}
	return id, true
}

// candidate builds a TokenLogprob from a token string (maybe "token_id:N"),
// an optional explicit id and a log-prob; names fills the text of id-only
// tokens.
func candidate(tok string, id *int, lp logprob, names map[int]string) probe.TokenLogprob {
	c := probe.TokenLogprob{Token: tok, ID: -1, Logprob: float64(lp)}
	if n, ok := tokenIDKey(tok); ok {
		c.ID = n
		c.Token = names[n]
	}
	if id != nil && *id >= 0 {
		c.ID = *id
	}
	return c
}

// withSampled appends the sampled token to a position's candidates unless
// it is already there (same id when known, else same text), and marks it
// Extra either way: engines list the sampled token with the top-k even
// when it ranks below (vLLM's top_logprobs dictionaries always hold it), so
// its probability bounds nothing below the list (probe.OneSided's floor).
func withSampled(top []probe.TokenLogprob, s probe.TokenLogprob) []probe.TokenLogprob {
	for i, c := range top {
		if (s.ID >= 0 && c.ID == s.ID) || (s.ID < 0 && c.ID < 0 && c.Token == s.Token) {
			top[i].Extra = true
			return top
		}
	}
	s.Extra = true
	return append(top, s)
}

// apiUsage is the OpenAI usage object; prompt_tokens_details appears on
// vLLM only with --enable-prompt-tokens-details, on SGLang only with
// --enable-cache-report, always on OpenAI.
type apiUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// llamaTimings is llama-server's timings object (cache_n = prompt tokens
// reused from the slot's cache).
type llamaTimings struct {
	CacheN  *int `json:"cache_n"`
	PromptN *int `json:"prompt_n"`
}

// usage converts to Usage (Requests left 0); cached reports
// whether the engine reported cached tokens at all.
func (u *apiUsage) usage(t *llamaTimings) (Usage, bool) {
	var out Usage
	cached := false
	if u != nil {
		out.PromptTokens, out.CompletionTokens = u.PromptTokens, u.CompletionTokens
		if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
			out.CachedTokens, cached = *d.CachedTokens, true
		}
	}
	if !cached && t != nil && t.CacheN != nil {
		out.CachedTokens, cached = *t.CacheN, true
	}
	return out, cached
}

type chatTopEntry struct {
	Token   string  `json:"token"`
	Logprob logprob `json:"logprob"`
	ID      *int    `json:"id"`
}

type chatTokenEntry struct {
	Token       string         `json:"token"`
	Logprob     logprob        `json:"logprob"`
	ID          *int           `json:"id"`
	TopLogprobs []chatTopEntry `json:"top_logprobs"`
}

type chatBody struct {
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
		} `json:"message"`
		Logprobs *struct {
			Content []chatTokenEntry `json:"content"`
		} `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *apiUsage     `json:"usage"`
	Timings *llamaTimings `json:"timings"`
}

// parseChat reads a /v1/chat/completions body into a ChatResponse (Usage
// without Requests); wantLogprobs makes absent log-probs an
// ErrLogprobsUnavailable, and so does wantTop (top_logprobs >= 1 was
// asked) when no position carries a top list: a proxy that answers
// "top_logprobs": [] leaves only the sampled token, which would read as
// P(sampled) = 1. cached reports whether cached tokens were reported.
func parseChat(raw []byte, wantLogprobs, wantTop bool) (*ChatResponse, bool, error) {
	var body chatBody
	if err := json.Unmarshal(sanitizeJSON(raw), &body); err != nil {
		return nil, false, fmt.Errorf("%w: chat completion: %v", ErrMalformed, err)
	}
	if len(body.Choices) == 0 {
		return nil, false, fmt.Errorf("%w: chat completion without choices", ErrMalformed)
	}
	ch := body.Choices[0]
	for _, c := range body.Choices[1:] {
		if c.Index < ch.Index {
			ch = c
		}
	}
	r := &ChatResponse{}
	if ch.Message.Content != nil {
		r.Content = *ch.Message.Content
	}
	switch {
	case ch.Message.ReasoningContent != nil:
		r.Reasoning = *ch.Message.ReasoningContent
	case ch.Message.Reasoning != nil:
		r.Reasoning = *ch.Message.Reasoning
	}
	if ch.FinishReason != nil {
		r.FinishReason = *ch.FinishReason
	}
	var cached bool
	r.Usage, cached = body.Usage.usage(body.Timings)
	if !wantLogprobs {
		return r, cached, nil
	}
	if (ch.Logprobs == nil || len(ch.Logprobs.Content) == 0) && isReplacementOnly(r.Content) {
		// llama-server's chat endpoint drops log-probs likewise after an
		// incomplete UTF-8 byte token (see parseLlamaCompletion).
		r.Top = [][]probe.TokenLogprob{{}}
		return r, cached, nil
	}
	if ch.Logprobs == nil || (len(ch.Logprobs.Content) == 0 && (r.Content != "" || r.Usage.CompletionTokens > 0)) {
		return nil, cached, ErrLogprobsUnavailable
	}
	if wantTop && len(ch.Logprobs.Content) > 0 && !slices.ContainsFunc(ch.Logprobs.Content, func(e chatTokenEntry) bool { return len(e.TopLogprobs) > 0 }) {
		return nil, cached, fmt.Errorf("%w: top_logprobs asked for but every list is empty", ErrLogprobsUnavailable)
	}
	r.Top = make([][]probe.TokenLogprob, len(ch.Logprobs.Content))
	for i, e := range ch.Logprobs.Content {
		top := make([]probe.TokenLogprob, 0, len(e.TopLogprobs)+1)
		for _, t := range e.TopLogprobs {
			top = append(top, candidate(t.Token, t.ID, t.Logprob, nil))
		}
		r.Top[i] = withSampled(top, candidate(e.Token, e.ID, e.Logprob, nil))
	}
	return r, cached, nil
}

// orderedTop is one position of legacy completions top_logprobs: a JSON
// object token -> logprob, read in document order with duplicate keys
// kept (probe.Pool drops duplicates).
type orderedTop []struct {
	Key string
	LP  logprob
}

// UnmarshalJSON reads the object by hand: encoding/json has validated
// the document before calling it, and a json.Decoder per position was the
// larger part of reading a probe response (BenchmarkConcurrentEpisodes).
func (o *orderedTop) UnmarshalJSON(b []byte) error {
	*o = nil
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) < 2 || b[0] != '{' {
		return fmt.Errorf("top_logprobs entry: want an object")
	}
	i := skipSpace(b, 1)
	if b[i] == '}' {
		return nil
	}
	for i < len(b) {
		// b is valid JSON: a key string, ':', a value, then ',' or '}'.
		end := stringEnd(b, i)
		var k string
		if bytes.IndexByte(b[i+1:end-1], '\\') < 0 {
			k = string(b[i+1 : end-1])
		} else if err := json.Unmarshal(b[i:end], &k); err != nil {
			return err
		}
		i = skipSpace(b, end) + 1 // past ':'
		i = skipSpace(b, i)
		vend := valueEnd(b, i)
		var lp logprob
		if err := lp.UnmarshalJSON(b[i:vend]); err != nil {
			return err
		}
		*o = append(*o, struct {
			Key string
			LP  logprob
		}{k, lp})
		i = skipSpace(b, vend)
		if b[i] == '}' {
			return nil
		}
		i = skipSpace(b, i+1) // past ','
	}
	return fmt.Errorf("top_logprobs entry: unterminated object")
}

// skipSpace returns the index of the first byte of b at or after i that
// is not JSON white space (len(b) at the end).
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string that opens at
// b[i] ('"').
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the JSON value that starts at b[i]
// in valid JSON: a string, an object or array (nesting counted, strings
// skipped), or a literal or number (up to the next delimiter).
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

type completionBody struct {
	Choices []struct {
		Index        int     `json:"index"`
		Text         string  `json:"text"`
		FinishReason *string `json:"finish_reason"`
		Logprobs     *struct {
			Tokens        []string     `json:"tokens"`
			TokenLogprobs []logprob    `json:"token_logprobs"`
			TopLogprobs   []orderedTop `json:"top_logprobs"`
		} `json:"logprobs"`
	} `json:"choices"`
	Usage *apiUsage `json:"usage"`
}

// parseCompletions reads a /v1/completions body holding n choices (one per
// prompt, n = 1 per prompt) in index order.
func parseCompletions(raw []byte, n int, wantLogprobs bool, names map[int]string) ([]CompletionChoice, Usage, bool, error) {
	var body completionBody
	if err := json.Unmarshal(sanitizeJSON(raw), &body); err != nil {
		return nil, Usage{}, false, fmt.Errorf("%w: completion: %v", ErrMalformed, err)
	}
	if len(body.Choices) != n {
		return nil, Usage{}, false, fmt.Errorf("%w: completion: %d choices for %d prompts", ErrMalformed, len(body.Choices), n)
	}
	u, cached := body.Usage.usage(nil)
	out := make([]CompletionChoice, n)
	seen := make([]bool, n)
	for _, ch := range body.Choices {
		if ch.Index < 0 || ch.Index >= n || seen[ch.Index] {
			return nil, u, cached, fmt.Errorf("%w: completion: bad or duplicate choice index %d", ErrMalformed, ch.Index)
		}
		seen[ch.Index] = true
		c := CompletionChoice{Index: ch.Index, Text: ch.Text}
		if ch.FinishReason != nil {
			c.FinishReason = *ch.FinishReason
		}
		if wantLogprobs {
			lp := ch.Logprobs
			if lp == nil || (len(lp.Tokens) == 0 && len(lp.TopLogprobs) == 0 && ch.Text != "") {
				return nil, u, cached, ErrLogprobsUnavailable
			}
			npos := max(len(lp.Tokens), len(lp.TopLogprobs))
			c.Top = make([][]probe.TokenLogprob, npos)
			for i := range npos {
				var top []probe.TokenLogprob
				if i < len(lp.TopLogprobs) {
					top = make([]probe.TokenLogprob, 0, len(lp.TopLogprobs[i])+1)
					for _, kv := range lp.TopLogprobs[i] {
						top = append(top, candidate(kv.Key, nil, kv.LP, names))
					}
				}
				if i < len(lp.Tokens) {
					s := logprob(math.Inf(-1))
					if i < len(lp.TokenLogprobs) {
						s = lp.TokenLogprobs[i]
					}
					top = withSampled(top, candidate(lp.Tokens[i], nil, s, names))
				}
				c.Top[i] = top
			}
		}
		out[ch.Index] = c
	}
	return out, u, cached, nil
}

// llamaTop is one candidate of llama-server's completion_probabilities:
// id/token/logprob today, token/prob with post_sampling_probs, and
// tok_str/prob in builds before the 2024-12 rewrite.
type llamaTop struct {
	ID      *int     `json:"id"`
	Token   string   `json:"token"`
	TokStr  string   `json:"tok_str"`
	Logprob *logprob `json:"logprob"`
	Prob    *float64 `json:"prob"`
}

// text returns the candidate's token text in either shape.
func (t llamaTop) text() string {
	if t.Token != "" {
		return t.Token
	}
	return t.TokStr
}

// lp returns the entry's log-prob, converting post-sampling probabilities.
func (t llamaTop) lp() logprob {
	switch {
	case t.Logprob != nil:
		return *t.Logprob
	case t.Prob != nil && *t.Prob > 0:
		return logprob(math.Log(*t.Prob))
	}
	return logprob(math.Inf(-1))
}

type llamaProb struct {
	llamaTop
	// Content is the sampled token's text in the older shape.
	Content     string     `json:"content"`
	TopLogprobs []llamaTop `json:"top_logprobs"`
	TopProbs    []llamaTop `json:"top_probs"`
	// Probs is the older shape's candidate list (tok_str, prob).
	Probs []llamaTop `json:"probs"`
}

type llamaCompletion struct {
	Content         string `json:"content"`
	StopType        string `json:"stop_type"`
	Truncated       bool   `json:"truncated"`
	TokensEvaluated int    `json:"tokens_evaluated"`
	TokensPredicted int    `json:"tokens_predicted"`
	// Timings.CacheN is the prompt tokens reused from the slot's cache;
	// tokens_cached is not read: it is the slot's KV size after the
	// request (prompt plus generated), not reuse (docs/engines.md).
	Timings                 *llamaTimings `json:"timings"`
	CompletionProbabilities []llamaProb   `json:"completion_probabilities"`
	Probs                   []llamaProb   `json:"probs"`
	Index                   *int          `json:"index"`
}

// parseLlamaCompletion reads llama-server's native /completion answer: one
// object for one prompt, an array for a prompt list.
func parseLlamaCompletion(raw []byte, n int, wantLogprobs bool) ([]CompletionChoice, Usage, bool, error) {
	raw = sanitizeJSON(bytes.TrimSpace(raw))
	var items []llamaCompletion
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, Usage{}, false, fmt.Errorf("%w: /completion: %v", ErrMalformed, err)
		}
	} else {
		var one llamaCompletion
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, Usage{}, false, fmt.Errorf("%w: /completion: %v", ErrMalformed, err)
		}
		items = []llamaCompletion{one}
	}
	if len(items) != n {
		return nil, Usage{}, false, fmt.Errorf("%w: /completion: %d results for %d prompts", ErrMalformed, len(items), n)
	}
	// Results carry an index when several prompts were sent; order by it.
	if items[0].Index != nil {
		slices.SortStableFunc(items, func(a, b llamaCompletion) int {
			if a.Index == nil || b.Index == nil {
				return 0
			}
			return *a.Index - *b.Index
		})
	}
	var u Usage
	cached := false
	out := make([]CompletionChoice, n)
	for i, it := range items {
		u.PromptTokens += it.TokensEvaluated
		u.CompletionTokens += it.TokensPredicted
		if it.Timings != nil && it.Timings.CacheN != nil {
			u.CachedTokens += *it.Timings.CacheN
			cached = true
		}
		c := CompletionChoice{Index: i, Text: it.Content, FinishReason: llamaFinish(it.StopType)}
		probs := it.CompletionProbabilities
		if probs == nil {
			probs = it.Probs
		}
		if wantLogprobs {
			if len(probs) == 0 && isReplacementOnly(it.Content) {
				// A sampled byte token that is an incomplete UTF-8
				// sequence: llama-server drops the log-probs of that
				// position (docs/engines.md). One empty position reads as an
				// unreadable answer, never as a failed request.
				c.Top = [][]probe.TokenLogprob{{}}
				out[i] = c
				continue
			}
			if len(probs) == 0 && (it.Content != "" || it.TokensPredicted > 0) {
				return nil, u, cached, ErrLogprobsUnavailable
			}
			c.Top = make([][]probe.TokenLogprob, len(probs))
			anyTop := false
			for j, p := range probs {
				tops := p.TopLogprobs
				if tops == nil {
					tops = p.TopProbs
				}
				if tops == nil {
					tops = p.Probs
				}
				if reason := postSampled(p.llamaTop, tops); reason != "" {
					c.Top, c.Artefact = nil, &ArtefactError{Reason: fmt.Sprintf("/completion position %d: %s", j, reason)}
					break
				}
				anyTop = anyTop || len(tops) > 0
				top := make([]probe.TokenLogprob, 0, len(tops)+1)
				for _, t := range tops {
					top = append(top, candidate(t.text(), t.ID, t.lp(), nil))
				}
				sampled := p.text()
				if sampled == "" {
					sampled = p.Content
				}
				if sampled != "" || p.ID != nil {
					top = withSampled(top, candidate(sampled, p.ID, p.lp(), nil))
				}
				c.Top[j] = top
			}
			// n_probs >= 1 was asked: without any candidate list only the
			// sampled token is left, which would read as P = 1.
			if len(probs) > 0 && !anyTop && c.Artefact == nil {
				return nil, u, cached, fmt.Errorf("%w: /completion: n_probs asked for but no candidates returned", ErrLogprobsUnavailable)
			}
		}
		out[i] = c
	}
	return out, u, cached, nil
}

// postSampled returns why a candidate list (tops plus the sampled token)
// is post-sampling rather than the raw distribution, or "" when it is not:
// probabilities (`prob`, not `logprob`) that are all exactly 0 or 1, with
// a 1. A softmax over a vocabulary never gives exactly 1.0; the samplers
// do (the probe's logit bias pins "Yes"), and llama-server reports their
// output when it ignores post_sampling_probs: false, as builds before
// llama.cpp PR #9897 did with the older `probs` shape (llama.cpp issue
// #7197). Read as probabilities, such a list would give P(Yes) = 1.
func postSampled(sampled llamaTop, tops []llamaTop) string {
	one := ""
	for _, t := range append(tops[:len(tops):len(tops)], sampled) {
		if t.Logprob != nil || t.Prob == nil {
			continue
		}
		switch *t.Prob {
		case 1:
			if one == "" {
				one = t.text()
			}
		case 0:
		default:
			return ""
		}
	}
	if one == "" {
		return ""
	}
	return fmt.Sprintf("post-sampling probabilities (%q exactly 1, every other candidate 0): post_sampling_probs: false not honoured (llama.cpp #7197)", one)
}

// llamaFinish maps llama-server's stop_type to OpenAI finish reasons.
func llamaFinish(stopType string) string {
	switch stopType {
	case "limit":
		return "length"
	case "eos", "word":
		return "stop"
	}
	return stopType
}

// isReplacementOnly reports content made only of U+FFFD (at least one):
// what llama-server returns for a generated byte token that does not
// complete a UTF-8 sequence.
func isReplacementOnly(s string) bool {
	return s != "" && strings.Trim(s, "\uFFFD") == ""
}
