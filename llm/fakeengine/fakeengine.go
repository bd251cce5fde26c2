// Package fakeengine is a protocol-faithful fake OpenAI-compatible
// inference server for tests (docs/engines.md). New starts an
// httptest server that answers in the documented JSON shapes of one engine
// profile (vLLM, SGLang, llama.cpp's llama-server, Ollama or OpenAI): model
// lists, chat completions with logprobs.content[], legacy completions with
// string-keyed or token_id:-keyed top_logprobs and prompt lists, usage with
// or without prompt_tokens_details, llama-server's native /completion with
// completion_probabilities, /tokenize, /detokenize, /apply-template,
// /v1/embeddings (Embedding), /health and Ollama's /api/version.
// llm/testdata holds golden bodies of each shape with their sources; the
// fakeengine tests check the fake against them.
//
// A deterministic tokenizer (Pieces, Tokenize) with fixed ids for the
// Yes/No variants and a 16-token-block LRU prefix cache give reproducible
// prompt and cached-token counts. Tests script replies with a Handler and
// inject faults (429 with Retry-After, 5xx, 503 while loading, slow
// answers, malformed JSON, dropped log-probs, context-length errors) with
// Fail.
package fakeengine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/persuarena/persuarena/llm"
)

// Request is what a Handler sees of one generation: a chat request, or one
// prompt of a completion request (a prompt list calls the handler once per
// prompt, in order).
type Request struct {
	// Path is the endpoint, e.g. "/v1/chat/completions" or "/completion".
	Path string
	// Messages are the chat messages (nil for completions).
	Messages []llm.Message
	// Prompt is the completion prompt, or the rendered chat prompt.
	Prompt string
	// Index is the prompt's index in a prompt list (0 for chat).
	Index int
	// Thinking is the requested thinking mode (nil = engine default).
	Thinking *bool
	// Body is the decoded JSON request body.
	Body map[string]any
}

// Reply scripts one generation.
type Reply struct {
	// Text is the generated content; "" with a Reasoning gives content
	// null. When Text is "" and FirstToken is set, the most probable first
	// token is generated.
	Text string
	// Reasoning is thinking text, returned separately (reasoning_content;
	// Ollama: reasoning) unless thinking was switched off.
	Reasoning string
	// FirstToken is the distribution of the first generated position,
	// token -> probability; its entries, most probable first, are the top
	// candidates (probability 0 is sent as the -9999 sentinel).
	FirstToken map[string]float64
	// FinishReason overrides "stop" / "length".
	FinishReason string
	// Duplicate repeats the sampled token in the first position's top
	// candidates, as vLLM has been seen to do.
	Duplicate bool
}

// Handler decides the reply to a request.
type Handler func(req Request) Reply

// DefaultHandler answers "Okay." with no first-token distribution.
func DefaultHandler(Request) Reply { return Reply{Text: "Okay."} }

// Fault is one injected failure, consumed by the next request whose path
// matches.
type Fault struct {
	// Path restricts the fault to one endpoint ("" = any).
	Path string
	// Status, when non-zero, answers with this HTTP status and Body (or the
	// engine's error body when Body is "").
	Status int
	// RetryAfter is sent as the Retry-After header (seconds or HTTP date).
	RetryAfter string
	// Body overrides the error body.
	Body string
	// Delay holds the answer back (cut short when the client gives up).
	Delay time.Duration
	// Malformed answers 200 with truncated JSON.
	Malformed bool
	// DropLogprobs answers normally but without log-probs.
	DropLogprobs bool
	// ContextLength answers the engine's context-window 400.
	ContextLength bool
	// EchoAuth answers 401 with a body echoing the Authorization header.
	EchoAuth bool
}

// Stats counts what the server saw.
type Stats struct {
	// Requests counts HTTP requests per path.
	Requests map[string]int
	// Total counts all HTTP requests.
	Total int
	// Prompts counts generations (a prompt list counts each prompt).
	Prompts int
	// PromptTokens, CachedTokens and CompletionTokens sum over generations;
	// CachedTokens comes from the block prefix cache whether or not the
	// engine profile reports it.
	PromptTokens, CachedTokens, CompletionTokens int
	// Faults counts injected faults served.
	Faults int
	// Authorized counts requests carrying the expected bearer key
	// (WithAPIKey); Unauthorized those rejected for lacking it.
	Authorized, Unauthorized int
	// WithAuthHeader counts requests carrying any Authorization header.
	WithAuthHeader int
	// MaxConcurrent is the peak number of requests in flight.
	MaxConcurrent int
}

// Server is a running fake engine.
type Server struct {
	// URL is the OpenAI-compatible base URL, including /v1.
	URL string
	// Root is the server root, where engine endpoints such as /tokenize
	// live.
	Root string
	// Engine is the profile served.
	Engine llm.Engine
	// Model is the served model name.
	Model string

	ts            *httptest.Server
	handler       Handler
	latency       time.Duration
	cacheReport   bool
	maxLogprobs   int
	ollamaVersion string
	ollamaSource  bool
	window        int
	apiKey        string
	noTokenIDs    bool
	cacheBlocks   int
	zero          string

	mu       sync.Mutex
	inFlight int
	loading  int
	faults   []Fault
	cache    *prefixCache
	stats    Stats
	chaos    *chaosState // WithChaos (chaos.go)
}

// Option configures a Server.
type Option func(*Server)

// WithHandler scripts replies (default DefaultHandler).
func WithHandler(h Handler) Option { return func(s *Server) { s.handler = h } }

// WithLatency delays every answer by d.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// WithModel sets the served model name (default "fake-model").
func WithModel(name string) Option { return func(s *Server) { s.Model = name } }

// WithCacheReport turns on cached-token reporting where the engine needs a
// flag for it: vLLM --enable-prompt-tokens-details, SGLang
// --enable-cache-report. OpenAI and llama-server always report; Ollama
// never does.
func WithCacheReport(on bool) Option { return func(s *Server) { s.cacheReport = on } }

// WithMaxLogprobs sets vLLM's --max-logprobs (default 20).
func WithMaxLogprobs(n int) Option { return func(s *Server) { s.maxLogprobs = n } }

// WithOllamaVersion sets the version /api/version reports (default
// "0.12.11"); below 0.12.11 log-probs are never returned.
func WithOllamaVersion(v string) Option { return func(s *Server) { s.ollamaVersion = v } }

// WithOllamaSourceBuild makes /api/version report "0.0.0", as an Ollama
// built from source does, while behaving as the version set (log-probs
// included by default).
func WithOllamaSourceBuild() Option { return func(s *Server) { s.ollamaSource = true } }

// WithLoading answers the first n requests with 503 "Loading model", as
// llama-server does while it loads.
func WithLoading(n int) Option { return func(s *Server) { s.loading = n } }

// WithContextWindow sets the context window in tokens (default 8192).
func WithContextWindow(n int) Option { return func(s *Server) { s.window = n } }

// WithAPIKey requires "Authorization: Bearer key" (401 otherwise; /health
// stays public as on llama-server).
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// WithoutTokenIDLogprobs makes vLLM ignore logprob_token_ids, as versions
// before the field did.
func WithoutTokenIDLogprobs() Option { return func(s *Server) { s.noTokenIDs = true } }

// WithZeroLogprob sets how a candidate of probability 0 is written in
// log-probs: "-9999" (vLLM's clamp, the default), "null", "-inf" (written
// -Infinity, as Python's json module does) or "-3.4e38" (a float32
// minimum). Each must read as zero probability (docs/engines.md).
func WithZeroLogprob(style string) Option { return func(s *Server) { s.zero = style } }

// zeroLogprob matches the -9999 a zero-probability candidate is encoded as
// (lnp), in a JSON value position.
var zeroLogprob = regexp.MustCompile(`([:\[,])-9999([,}\]])`)

// WithCacheBlocks sets the prefix cache's capacity in 16-token blocks
// (default 4096; 0 disables caching).
func WithCacheBlocks(n int) Option { return func(s *Server) { s.cacheBlocks = n } }

// New starts a fake engine of the given profile; Close stops it.
func New(engine llm.Engine, opts ...Option) *Server {
	s := &Server{Engine: engine, Model: "fake-model", handler: DefaultHandler, maxLogprobs: 20,
		ollamaVersion: "0.12.11", window: 8192, cacheBlocks: 4096}
	for _, o := range opts {
		o(s)
	}
	s.cache = newPrefixCache(s.cacheBlocks)
	s.stats.Requests = map[string]int{}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	s.Root = s.ts.URL
	s.URL = s.ts.URL + "/v1"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.ts.Close() }

// Client returns the server's HTTP client.
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Backend returns an llm.Backend pointing at the server.
func (s *Server) Backend(name string) llm.Backend {
	return llm.Backend{Name: name, BaseURL: s.URL, Engine: s.Engine, Model: s.Model}
}

// Fail queues faults, consumed in order by the next matching requests.
func (s *Server) Fail(faults ...Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, faults...)
	s.mu.Unlock()
}

// Pending returns the number of queued faults not yet served.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.faults)
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Requests = make(map[string]int, len(s.stats.Requests))
	for k, v := range s.stats.Requests {
		st.Requests[k] = v
	}
	return st
}

// ResetCache empties the prefix cache.
func (s *Server) ResetCache() {
	s.mu.Lock()
	s.cache = newPrefixCache(s.cacheBlocks)
	s.mu.Unlock()
}

// wait sleeps d unless the request ends first.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	s.mu.Lock()
	s.stats.Total++
	s.stats.Requests[path]++
	s.inFlight++
	s.stats.MaxConcurrent = max(s.stats.MaxConcurrent, s.inFlight)
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	loading := s.loading > 0
	if loading {
		s.loading--
	}
	auth := r.Header.Get("Authorization")
	if auth != "" {
		s.stats.WithAuthHeader++
	}
	authOK := s.apiKey == "" || auth == "Bearer "+s.apiKey || path == "/health"
	if s.apiKey != "" && path != "/health" {
		if authOK {
			s.stats.Authorized++
		} else {
			s.stats.Unauthorized++
		}
	}
	var f *Fault
	for i := range s.faults {
		if s.faults[i].Path == "" || s.faults[i].Path == path {
			ff := s.faults[i]
			f = &ff
			s.faults = slices.Delete(s.faults, i, i+1)
			s.stats.Faults++
			break
		}
	}
	reset := false
	if f == nil && s.chaos != nil && path != "/health" {
		f, reset = s.chaos.drawLocked(time.Now())
	}
	s.mu.Unlock()
	if reset {
		resetConn(w)
		return
	}

	if !wait(r.Context(), s.latency) {
		return
	}
	if loading {
		s.writeError(w, http.StatusServiceUnavailable, "Loading model", "unavailable_error")
		return
	}
	if !authOK {
		s.writeError(w, http.StatusUnauthorized, "Invalid API Key", "authentication_error")
		return
	}
	if f != nil {
		if !wait(r.Context(), f.Delay) {
			return
		}
		switch {
		case f.EchoAuth:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, auth)
			return
		case f.ContextLength:
			s.writeContextError(w, s.window+100)
			return
		case f.Status != 0:
			if f.RetryAfter != "" {
				w.Header().Set("Retry-After", f.RetryAfter)
			}
			if f.Body != "" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(f.Status)
				io.WriteString(w, f.Body)
				return
			}
			s.writeError(w, f.Status, http.StatusText(f.Status), errorType(f.Status))
			return
		}
	}
	var body map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			s.writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error(), "invalid_request_error")
			return
		}
	}
	out, err := s.dispatch(r.Method, path, raw, body, f)
	switch e := err.(type) {
	case nil:
	case *ctxErr:
		s.writeContextError(w, e.tokens)
		return
	case *httpErr:
		s.writeError(w, e.status, e.msg, errorType(e.status))
		return
	default:
		s.writeError(w, http.StatusInternalServerError, err.Error(), "server_error")
		return
	}
	enc, _ := json.Marshal(out)
	switch s.zero {
	case "null":
		enc = zeroLogprob.ReplaceAll(enc, []byte("${1}null${2}"))
	case "-inf":
		enc = zeroLogprob.ReplaceAll(enc, []byte("${1}-Infinity${2}"))
	case "-3.4e38":
		enc = zeroLogprob.ReplaceAll(enc, []byte("${1}-3.4e38${2}"))
	}
	if f != nil && f.Malformed {
		enc = enc[:len(enc)/2]
	}
	s.writeRaw(w, http.StatusOK, enc)
}

func (s *Server) writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == http.StatusServiceUnavailable:
		return "unavailable_error"
	case status >= 500:
		return "server_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	}
	return "invalid_request_error"
}

// errorBody is the engine's error JSON for a status and message.
func (s *Server) errorBody(status int, msg, typ string) any {
	switch s.Engine {
	case llm.SGLang:
		return map[string]any{"object": "error", "message": msg, "type": "BadRequestError", "param": nil, "code": status}
	case llm.VLLM:
		t := "BadRequestError"
		if status >= 500 {
			t = "InternalServerError"
		} else if status == 404 {
			t = "NotFoundError"
		}
		return map[string]any{"error": map[string]any{"message": msg, "type": t, "param": nil, "code": status}}
	case llm.LlamaCpp:
		return map[string]any{"error": map[string]any{"code": status, "message": msg, "type": typ}}
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg, typ string) {
	b, _ := json.Marshal(s.errorBody(status, msg, typ))
	s.writeRaw(w, status, b)
}

// writeContextError answers each engine's context-window 400.
func (s *Server) writeContextError(w http.ResponseWriter, promptTokens int) {
	var body any
	switch s.Engine {
	case llm.VLLM:
		body = map[string]any{"error": map[string]any{"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.", s.window, promptTokens), "type": "BadRequestError", "param": nil, "code": 400}}
	case llm.SGLang:
		body = map[string]any{"object": "error", "message": fmt.Sprintf("The input (%d tokens) is longer than the model's context length (%d tokens).", promptTokens, s.window), "type": "BadRequestError", "param": nil, "code": 400}
	case llm.LlamaCpp:
		body = map[string]any{"error": map[string]any{"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": promptTokens, "n_ctx": s.window}}
	case llm.Ollama:
		body = map[string]any{"error": map[string]any{"message": fmt.Sprintf("the input length exceeds the context length (%d > %d)", promptTokens, s.window), "type": "invalid_request_error", "param": nil, "code": nil}}
	default:
		body = map[string]any{"error": map[string]any{"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", s.window, promptTokens), "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}
	}
	b, _ := json.Marshal(body)
	s.writeRaw(w, http.StatusBadRequest, b)
}

// httpErr is a route failure with a status.
type httpErr struct {
	status int
	msg    string
}

func (e *httpErr) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &httpErr{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

// ctxErr signals a context-window overflow.
type ctxErr struct{ tokens int }

func (e *ctxErr) Error() string { return fmt.Sprintf("context window exceeded (%d tokens)", e.tokens) }

func (s *Server) dispatch(method, path string, raw []byte, body map[string]any, f *Fault) (any, error) {
	e := s.Engine
	switch {
	case path == "/v1/models" && method == http.MethodGet:
		return s.models(), nil
	case path == "/v1/chat/completions" && method == http.MethodPost:
		return s.chat(body, f)
	case path == "/v1/embeddings" && method == http.MethodPost:
		return s.embeddings(body)
	case path == "/v1/completions" && method == http.MethodPost && e != llm.LlamaCpp:
		return s.completions(body, f)
	case path == "/completion" && method == http.MethodPost && e == llm.LlamaCpp:
		return s.llamaCompletion(raw, body, f)
	case path == "/tokenize" && (e == llm.VLLM || e == llm.LlamaCpp), path == "/v1/tokenize" && e == llm.SGLang:
		return s.tokenize(raw)
	case path == "/detokenize" && (e == llm.VLLM || e == llm.LlamaCpp), path == "/v1/detokenize" && e == llm.SGLang:
		return s.detokenize(raw)
	case path == "/apply-template" && e == llm.LlamaCpp:
		return s.applyTemplate(raw)
	case path == "/health" && (e == llm.LlamaCpp || e == llm.VLLM || e == llm.SGLang):
		return map[string]any{"status": "ok"}, nil
	case path == "/api/version" && e == llm.Ollama:
		if s.ollamaSource {
			return map[string]any{"version": "0.0.0"}, nil
		}
		return map[string]any{"version": s.ollamaVersion}, nil
	}
	return nil, &httpErr{http.StatusNotFound, fmt.Sprintf("%s %s: not found on a %s server", method, path, e)}
}

func (s *Server) models() any {
	m := map[string]any{"id": s.Model, "object": "model", "created": 1700000000}
	switch s.Engine {
	case llm.VLLM:
		m["owned_by"], m["root"], m["parent"], m["max_model_len"], m["permission"] = "vllm", s.Model, nil, s.window, []any{}
	case llm.SGLang:
		m["owned_by"], m["root"], m["max_model_len"] = "sglang", s.Model, s.window
	case llm.LlamaCpp:
		m["owned_by"], m["meta"] = "llamacpp", map[string]any{"n_ctx_train": s.window, "vocab_type": 2}
	case llm.Ollama:
		m["owned_by"] = "library"
	default:
		m["owned_by"] = "system"
	}
	out := map[string]any{"object": "list", "data": []any{m}}
	if s.Engine == llm.LlamaCpp {
		out["models"] = []any{map[string]any{"name": s.Model, "model": s.Model, "type": "model"}}
	}
	return out
}

// thinkingOf reads the requested thinking mode.
func (s *Server) thinkingOf(body map[string]any) *bool {
	if kw, ok := body["chat_template_kwargs"].(map[string]any); ok {
		if v, ok := kw["enable_thinking"].(bool); ok {
			return &v
		}
	}
	if s.Engine == llm.Ollama {
		if v, ok := body["reasoning_effort"].(string); ok && v == "none" {
			f := false
			return &f
		}
	}
	return nil
}

// boolField reads an optional boolean field; a value of another type is
// refused, as the engines' typed request models refuse it.
func boolField(body map[string]any, key string) (v, ok bool, err error) {
	x, has := body[key]
	if !has || x == nil {
		return false, false, nil
	}
	b, isBool := x.(bool)
	if !isBool {
		return false, false, badRequest("%s must be a boolean", key)
	}
	return b, true, nil
}

// intField reads an optional integer field.
func intField(body map[string]any, key string) (int, bool, error) {
	v, ok := body[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) {
		return 0, false, badRequest("%s must be an integer", key)
	}
	return int(f), true, nil
}

// sampled is one generated token and its position's candidates.
type sampled struct {
	piece string
	lp    float64
	top   []cand // most probable first
}

type cand struct {
	piece string
	lp    float64
}

// generation is a generated reply.
type generation struct {
	content     string
	contentNull bool
	reasoning   string
	tokens      []sampled // content tokens only
	completion  int       // tokens generated, reasoning included
	finish      string
}

// lnp converts a probability to a log-prob; 0 becomes vLLM's -9999
// sentinel.
func lnp(p float64) float64 {
	if p <= 0 {
		return -9999
	}
	return math.Log(p)
}

// fillers are the alternatives offered after the first position.
var fillers = []string{" the", " a", ",", ".", " and", " I", " to", " of", " it", " is", " that", " in", " you", " for", " on", " with", " but", " not", " be", " this"}

// generate turns a Reply into tokens: at most maxTokens (0 = no limit),
// reasoning first; k top candidates per position.
func generate(rep Reply, maxTokens, k int, thinking *bool) generation {
	text := rep.Text
	first := make([]cand, 0, len(rep.FirstToken))
	for p, pr := range rep.FirstToken {
		first = append(first, cand{p, lnp(pr)})
	}
	slices.SortFunc(first, func(a, b cand) int {
		if a.lp != b.lp {
			if a.lp > b.lp {
				return -1
			}
			return 1
		}
		return strings.Compare(a.piece, b.piece)
	})
	if text == "" && rep.Reasoning == "" && len(first) > 0 {
		text = first[0].piece
	}
	var g generation
	var rpieces []string
	if rep.Reasoning != "" && (thinking == nil || *thinking) {
		rpieces = Pieces(rep.Reasoning)
	}
	pieces := Pieces(text)
	budget := math.MaxInt
	if maxTokens > 0 {
		budget = maxTokens
	}
	truncated := false
	// Reaching the budget is "length": the end-of-sequence token would
	// have been one more.
	if len(rpieces) >= budget {
		rpieces, pieces, truncated = rpieces[:budget], nil, true
	} else if len(rpieces)+len(pieces) >= budget {
		pieces, truncated = pieces[:budget-len(rpieces)], true
	}
	g.reasoning = strings.Join(rpieces, "")
	g.content = strings.Join(pieces, "")
	g.contentNull = len(pieces) == 0 && len(rpieces) > 0
	g.completion = len(rpieces) + len(pieces)
	g.finish = "stop"
	if truncated {
		g.finish = "length"
	}
	if rep.FinishReason != "" {
		g.finish = rep.FinishReason
	}
	for i, p := range pieces {
		var top []cand
		lp := math.Log(0.9)
		if i == 0 && len(first) > 0 {
			lp = math.Log(0.01)
			for _, c := range first {
				if c.piece == p {
					lp = c.lp
				}
			}
			top = first[:min(k, len(first))]
		} else {
			top = append(top, cand{p, lp})
			for _, f := range fillers {
				if len(top) >= k {
					break
				}
				if f != p {
					top = append(top, cand{f, math.Log(0.005)})
				}
			}
			top = top[:min(k, len(top))]
		}
		top = slices.Clone(top)
		if i == 0 && rep.Duplicate && k > 0 {
			top = append(top, cand{p, lp})
		}
		g.tokens = append(g.tokens, sampled{piece: p, lp: lp, top: top})
	}
	return g
}

func tokenBytes(p string) []int {
	b := make([]int, len(p))
	for i := range len(p) {
		b[i] = int(p[i])
	}
	return b
}

// account runs the prefix cache over a prompt and counts it.
func (s *Server) account(ids []int, useCache bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	cached := 0
	if useCache {
		cached = s.cache.process(ids)
	}
	s.stats.Prompts++
	s.stats.PromptTokens += len(ids)
	s.stats.CachedTokens += cached
	return cached
}

func (s *Server) countCompletion(n int) {
	s.mu.Lock()
	s.stats.CompletionTokens += n
	s.mu.Unlock()
}

// reportsCached says whether usage carries prompt_tokens_details.
func (s *Server) reportsCached() bool {
	switch s.Engine {
	case llm.OpenAI:
		return true
	case llm.VLLM, llm.SGLang:
		return s.cacheReport
	}
	return false
}

// usage builds the engine's usage object.
func (s *Server) usage(prompt, cached, completion int) map[string]any {
	u := map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	switch s.Engine {
	case llm.VLLM, llm.SGLang:
		if s.cacheReport {
			u["prompt_tokens_details"] = map[string]any{"cached_tokens": cached}
		} else {
			u["prompt_tokens_details"] = nil
		}
	case llm.OpenAI:
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": cached, "audio_tokens": 0}
		u["completion_tokens_details"] = map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
	case llm.Ollama:
		// Ollama counts only evaluated prompt tokens (0 when fully cached).
		u["prompt_tokens"] = prompt - cached
		u["total_tokens"] = prompt - cached + completion
	}
	return u
}

func (s *Server) checkModel(body map[string]any) error {
	m, _ := body["model"].(string)
	if s.Engine == llm.LlamaCpp && m == "" {
		return nil // llama-server serves one model whatever the name
	}
	if m != s.Model {
		return &httpErr{http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist.", m)}
	}
	return nil
}

// topLimit checks a requested top-k against the engine's cap.
func (s *Server) topLimit(k int, completions bool) error {
	switch s.Engine {
	case llm.VLLM:
		if k > s.maxLogprobs {
			return badRequest("Requested sample logprobs of %d, which is greater than max allowed: %d", k, s.maxLogprobs)
		}
	case llm.OpenAI:
		if completions && k > 5 {
			return badRequest("Invalid 'logprobs': integer above maximum value. Expected a value <= 5, but got %d instead.", k)
		}
		if k > 20 {
			return badRequest("Invalid 'top_logprobs': integer above maximum value. Expected a value <= 20, but got %d instead.", k)
		}
	case llm.Ollama:
		if k > 20 {
			return badRequest("top_logprobs must be between 0 and 20")
		}
	}
	if k < 0 {
		return badRequest("logprobs must be non-negative")
	}
	return nil
}

func (s *Server) chat(body map[string]any, f *Fault) (any, error) {
	var req struct {
		Messages             []llm.Message
		Logprobs             bool
		ContinueFinalMessage bool
		AddGenerationPrompt  *bool
	}
	var err error
	if req.Messages, err = messagesOf(body); err != nil {
		return nil, err
	}
	if req.Logprobs, _, err = boolField(body, "logprobs"); err != nil {
		return nil, err
	}
	if req.ContinueFinalMessage, _, err = boolField(body, "continue_final_message"); err != nil {
		return nil, err
	}
	if v, ok, err := boolField(body, "add_generation_prompt"); err != nil {
		return nil, err
	} else if ok {
		req.AddGenerationPrompt = &v
	}
	if err := s.checkModel(body); err != nil {
		return nil, err
	}
	if len(req.Messages) == 0 {
		return nil, badRequest("messages must not be empty")
	}
	maxTok, hasMax, err := intField(body, "max_tokens")
	if err != nil {
		return nil, err
	}
	if hasMax && maxTok <= 0 {
		return nil, badRequest("max_tokens must be positive, got %d", maxTok)
	}
	k, _, err := intField(body, "top_logprobs")
	if err != nil {
		return nil, err
	}
	if err := s.topLimit(k, false); err != nil {
		return nil, err
	}
	thinking := s.thinkingOf(body)
	addGen := req.AddGenerationPrompt == nil || *req.AddGenerationPrompt
	cont := req.ContinueFinalMessage && (s.Engine == llm.VLLM || s.Engine == llm.SGLang)
	if !cont && req.Messages[len(req.Messages)-1].Role == "assistant" && (s.Engine == llm.LlamaCpp || s.Engine == llm.Ollama) {
		cont = true // these engines prefill a trailing assistant message
	}
	if cont {
		addGen = false
	}
	prompt := Template(req.Messages, addGen, thinking, cont)
	ids := Tokenize(prompt)
	if len(ids) >= s.window || (hasMax && len(ids)+maxTok > s.window) {
		return nil, &ctxErr{len(ids)}
	}
	cached := s.account(ids, true)
	rep := s.handler(Request{Path: "/v1/chat/completions", Messages: req.Messages, Prompt: prompt, Thinking: thinking, Body: body})
	g := generate(rep, maxTok, k, thinking)
	s.countCompletion(g.completion)

	msg := map[string]any{"role": "assistant", "content": g.content}
	if g.contentNull {
		msg["content"] = nil
	}
	if g.reasoning != "" || s.Engine == llm.VLLM || s.Engine == llm.SGLang {
		field := "reasoning_content"
		if s.Engine == llm.Ollama {
			field = "reasoning"
		}
		if g.reasoning != "" {
			msg[field] = g.reasoning
		} else {
			msg[field] = nil
		}
	}
	switch s.Engine {
	case llm.VLLM:
		msg["tool_calls"], msg["refusal"] = []any{}, nil
	case llm.OpenAI:
		msg["refusal"], msg["annotations"] = nil, []any{}
	}
	choice := map[string]any{"index": 0, "message": msg, "finish_reason": g.finish, "logprobs": nil}
	logprobsOK := req.Logprobs && !(f != nil && f.DropLogprobs) &&
		!(s.Engine == llm.Ollama && !atLeast(s.ollamaVersion, "0.12.11"))
	if logprobsOK {
		content := make([]any, len(g.tokens))
		for i, t := range g.tokens {
			top := make([]any, len(t.top))
			for j, c := range t.top {
				e := map[string]any{"token": c.piece, "logprob": c.lp, "bytes": tokenBytes(c.piece)}
				if s.Engine == llm.LlamaCpp {
					e["id"] = TokenID(c.piece)
				}
				top[j] = e
			}
			e := map[string]any{"token": t.piece, "logprob": t.lp, "bytes": tokenBytes(t.piece), "top_logprobs": top}
			if s.Engine == llm.LlamaCpp {
				e["id"] = TokenID(t.piece)
			}
			content[i] = e
		}
		choice["logprobs"] = map[string]any{"content": content}
	}
	if s.Engine == llm.VLLM {
		choice["stop_reason"] = nil
	}
	out := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000,
		"model": s.Model, "choices": []any{choice}, "usage": s.usage(len(ids), cached, g.completion)}
	switch s.Engine {
	case llm.LlamaCpp:
		out["timings"] = llamaTimings(len(ids), cached, g.completion)
		out["system_fingerprint"] = "b0000-fake"
	case llm.Ollama:
		out["system_fingerprint"] = "fp_ollama"
	case llm.OpenAI:
		out["system_fingerprint"] = "fp_fake"
		out["service_tier"] = "default"
	case llm.VLLM:
		out["prompt_logprobs"] = nil
	}
	return out, nil
}

func llamaTimings(prompt, cached, predicted int) map[string]any {
	return map[string]any{"cache_n": cached, "prompt_n": prompt - cached, "prompt_ms": 1.0, "prompt_per_token_ms": 0.01,
		"prompt_per_second": 1000.0, "predicted_n": predicted, "predicted_ms": 1.0, "predicted_per_token_ms": 1.0, "predicted_per_second": 1000.0}
}

// atLeast compares dotted versions.
func atLeast(v, want string) bool {
	a, b := strings.Split(v, "."), strings.Split(want, ".")
	for i := range max(len(a), len(b)) {
		x, y := 0, 0
		if i < len(a) {
			fmt.Sscan(a[i], &x)
		}
		if i < len(b) {
			fmt.Sscan(b[i], &y)
		}
		if x != y {
			return x > y
		}
	}
	return true
}

// messagesOf reads the decoded messages field: objects whose role and
// content are strings (a missing or null one reads as "").
func messagesOf(body map[string]any) ([]llm.Message, error) {
	v, ok := body["messages"]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, badRequest("messages must be a list of objects")
	}
	ms := make([]llm.Message, len(list))
	for i, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, badRequest("messages[%d] must be an object", i)
		}
		role, okRole := m["role"].(string)
		content, okContent := m["content"].(string)
		if !okRole && m["role"] != nil || !okContent && m["content"] != nil {
			return nil, badRequest("messages[%d]: role and content must be strings", i)
		}
		ms[i] = llm.Message{Role: role, Content: content}
	}
	return ms, nil
}

// prompts reads the decoded prompt field: a string or, with allowList, a
// non-empty list of strings. The request body is decoded once (in serve);
// a second decode of its prompts would cost the benchmarks' shared cores
// more than the client under test spends.
func prompts(v any, allowList bool) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		if !allowList {
			return nil, badRequest("json: cannot unmarshal array into Go struct field CompletionRequest.prompt of type string")
		}
		list := make([]string, len(v))
		for i, x := range v {
			p, ok := x.(string)
			if !ok {
				return nil, badRequest("prompt must be a string or a non-empty list of strings")
			}
			list[i] = p
		}
		if len(list) > 0 {
			return list, nil
		}
	}
	return nil, badRequest("prompt must be a string or a non-empty list of strings")
}

// tokenIDs reads an optional list of integer token ids.
func tokenIDs(body map[string]any, key string) ([]int, error) {
	v, ok := body[key]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, badRequest("%s must be a list of integers", key)
	}
	ids := make([]int, len(list))
	for i, x := range list {
		f, ok := x.(float64)
		if !ok || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
			return nil, badRequest("%s must be a list of integers", key)
		}
		ids[i] = int(f)
	}
	return ids, nil
}

// tokenizeAll tokenizes prompts that share a prefix (a probe request's
// forks) once up to the prefix's last newline, a piece boundary: the
// result is Tokenize of each prompt.
func tokenizeAll(ps []string) [][]int {
	out := make([][]int, len(ps))
	cut := 0
	if len(ps) > 1 {
		n := len(ps[0])
		for _, p := range ps[1:] {
			n = min(n, len(p))
			for i := range n {
				if p[i] != ps[0][i] {
					n = i
					break
				}
			}
		}
		cut = strings.LastIndexByte(ps[0][:n], '\n') + 1
	}
	head := Tokenize(ps[0][:cut])
	for i, p := range ps {
		out[i] = append(head[:len(head):len(head)], Tokenize(p[cut:])...)
	}
	return out
}

// pyDict is a JSON object with Python dict semantics: a repeated key keeps
// its first position and takes the last value (string keys collide).
type pyDict struct {
	keys []string
	vals map[string]float64
}

func (d *pyDict) set(k string, v float64) {
	if d.vals == nil {
		d.vals = map[string]float64{}
	}
	if _, ok := d.vals[k]; !ok {
		d.keys = append(d.keys, k)
	}
	d.vals[k] = v
}

func (d pyDict) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 24*len(d.keys)+2)
	b = append(b, '{')
	for i, k := range d.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(append(b, kb...), ':')
		// encoding/json writes a float64 in this range as strconv's
		// shortest 'f' form; others (and non-finite values) go through it.
		if v := d.vals[k]; v == 0 || math.Abs(v) >= 1e-6 && math.Abs(v) < 1e21 {
			b = strconv.AppendFloat(b, v, 'f', -1, 64)
		} else {
			vb, _ := json.Marshal(v)
			b = append(b, vb...)
		}
	}
	return append(b, '}'), nil
}

func (s *Server) completions(body map[string]any, f *Fault) (any, error) {
	// Field types first, then the model, then the prompt: an engine
	// parses its request model before it looks the model name up.
	var req struct {
		LogprobTokenIDs        []int
		ReturnTokensAsTokenIDs bool
	}
	var err error
	if req.LogprobTokenIDs, err = tokenIDs(body, "logprob_token_ids"); err != nil {
		return nil, err
	}
	if req.ReturnTokensAsTokenIDs, _, err = boolField(body, "return_tokens_as_token_ids"); err != nil {
		return nil, err
	}
	if err := s.checkModel(body); err != nil {
		return nil, err
	}
	ps, err := prompts(body["prompt"], s.Engine != llm.Ollama)
	if err != nil {
		return nil, err
	}
	maxTok, hasMax, err := intField(body, "max_tokens")
	if err != nil {
		return nil, err
	}
	if hasMax && maxTok <= 0 {
		return nil, badRequest("max_tokens must be positive, got %d", maxTok)
	}
	if !hasMax {
		maxTok = 16 // the OpenAI completions default
	}
	k, wantLP, err := intField(body, "logprobs")
	if err != nil {
		return nil, err
	}
	if err := s.topLimit(k, true); err != nil {
		return nil, err
	}
	if s.Engine == llm.Ollama {
		wantLP = false // no completion log-probs on Ollama
	}
	if f != nil && f.DropLogprobs {
		wantLP = false
	}
	byID := s.Engine == llm.VLLM && req.ReturnTokensAsTokenIDs
	explicit := s.Engine == llm.VLLM && len(req.LogprobTokenIDs) > 0 && !s.noTokenIDs
	key := func(p string) string {
		if byID {
			return fmt.Sprintf("token_id:%d", TokenID(p))
		}
		return p
	}
	var choices []any
	totPrompt, totCached, totComp := 0, 0, 0
	toks := tokenizeAll(ps)
	for i, p := range ps {
		ids := toks[i]
		if len(ids) >= s.window || len(ids)+maxTok > s.window {
			return nil, &ctxErr{len(ids)}
		}
		cached := s.account(ids, true)
		rep := s.handler(Request{Path: "/v1/completions", Prompt: p, Index: i, Body: body})
		g := generate(rep, maxTok, k, nil)
		s.countCompletion(g.completion)
		totPrompt, totCached, totComp = totPrompt+len(ids), totCached+cached, totComp+g.completion
		ch := map[string]any{"index": i, "text": g.content, "finish_reason": g.finish, "logprobs": nil}
		if s.Engine == llm.VLLM {
			ch["stop_reason"], ch["prompt_logprobs"] = nil, nil
		}
		if wantLP {
			var tokens []string
			var tlp []float64
			var tops []any
			var offs []int
			off := 0
			for pos, t := range g.tokens {
				tokens = append(tokens, key(t.piece))
				tlp = append(tlp, t.lp)
				offs = append(offs, off)
				off += len(t.piece)
				var d pyDict
				if explicit {
					d.set(key(t.piece), t.lp)
					for _, id := range req.LogprobTokenIDs {
						lp := math.Log(1e-9)
						pc, _ := Piece(id)
						if pos == 0 {
							if pr, ok := rep.FirstToken[pc]; ok {
								lp = lnp(pr)
							}
						} else if pc == t.piece {
							lp = t.lp
						}
						if byID {
							d.set(fmt.Sprintf("token_id:%d", id), lp)
						} else {
							d.set(pc, lp)
						}
					}
				} else {
					for _, c := range t.top {
						d.set(key(c.piece), c.lp)
					}
					d.set(key(t.piece), t.lp)
				}
				tops = append(tops, d)
			}
			ch["logprobs"] = map[string]any{"text_offset": orEmpty(offs), "token_logprobs": orEmptyF(tlp), "tokens": orEmptyS(tokens), "top_logprobs": orEmptyA(tops)}
		}
		choices = append(choices, ch)
	}
	out := map[string]any{"id": "cmpl-fake", "object": "text_completion", "created": 1700000000, "model": s.Model,
		"choices": choices, "usage": s.usage(totPrompt, totCached, totComp)}
	if s.Engine == llm.OpenAI {
		out["system_fingerprint"] = "fp_fake"
	}
	return out, nil
}

func orEmpty(v []int) []int {
	if v == nil {
		return []int{}
	}
	return v
}
func orEmptyF(v []float64) []float64 {
	if v == nil {
		return []float64{}
	}
	return v
}
func orEmptyS(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
func orEmptyA(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

func (s *Server) llamaCompletion(raw []byte, body map[string]any, f *Fault) (any, error) {
	var req struct {
		NProbs            int   `json:"n_probs"`
		PostSamplingProbs bool  `json:"post_sampling_probs"`
		CachePrompt       *bool `json:"cache_prompt"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, badRequest("%v", err)
	}
	ps, err := prompts(body["prompt"], true)
	if err != nil {
		return nil, err
	}
	nPredict, has, err := intField(body, "n_predict")
	if err != nil {
		return nil, err
	}
	if !has || nPredict < 0 {
		nPredict = 0 // unbounded
	}
	useCache := req.CachePrompt == nil || *req.CachePrompt
	wantLP := req.NProbs > 0 && !(f != nil && f.DropLogprobs)
	var items []any
	toks := tokenizeAll(ps)
	for i, p := range ps {
		ids := toks[i]
		if len(ids) >= s.window {
			return nil, &ctxErr{len(ids)}
		}
		cached := s.account(ids, useCache)
		rep := s.handler(Request{Path: "/completion", Prompt: p, Index: i, Body: body})
		g := generate(rep, nPredict, req.NProbs, nil)
		s.countCompletion(g.completion)
		stop := "eos"
		if g.finish == "length" {
			stop = "limit"
		}
		it := map[string]any{"index": i, "content": g.content, "id_slot": 0, "stop": true, "model": s.Model,
			"tokens": []int{}, "tokens_predicted": g.completion, "tokens_evaluated": len(ids),
			// As in a real llama-server: the slot's KV size after the
			// request, not the reuse (that is timings.cache_n; docs/engines.md).
			"tokens_cached":       len(ids) + g.completion,
			"generation_settings": map[string]any{"n_predict": nPredict, "n_probs": req.NProbs, "temperature": 0.8},
			"prompt":              p, "has_new_line": strings.Contains(g.content, "\n"), "truncated": false,
			"stop_type": stop, "stopping_word": "", "timings": llamaTimings(len(ids), cached, g.completion)}
		if wantLP {
			probs := make([]any, len(g.tokens))
			for j, t := range g.tokens {
				top := make([]any, len(t.top))
				for q, c := range t.top {
					e := map[string]any{"id": TokenID(c.piece), "token": c.piece, "bytes": tokenBytes(c.piece)}
					if req.PostSamplingProbs {
						e["prob"] = math.Exp(c.lp)
					} else {
						e["logprob"] = c.lp
					}
					top[q] = e
				}
				e := map[string]any{"id": TokenID(t.piece), "token": t.piece, "bytes": tokenBytes(t.piece)}
				if req.PostSamplingProbs {
					e["prob"], e["top_probs"] = math.Exp(t.lp), top
				} else {
					e["logprob"], e["top_logprobs"] = t.lp, top
				}
				probs[j] = e
			}
			it["completion_probabilities"] = probs
		}
		items = append(items, it)
	}
	if len(items) == 1 {
		m := items[0].(map[string]any)
		delete(m, "index")
		return m, nil
	}
	return items, nil
}

func (s *Server) tokenize(raw []byte) (any, error) {
	var req struct {
		Prompt              json.RawMessage `json:"prompt"`
		Content             *string         `json:"content"`
		WithPieces          bool            `json:"with_pieces"`
		Messages            []llm.Message   `json:"messages"`
		AddGenerationPrompt *bool           `json:"add_generation_prompt"`
		ChatTemplateKwargs  map[string]any  `json:"chat_template_kwargs"`
		ContinueFinal       bool            `json:"continue_final_message"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, badRequest("%v", err)
	}
	switch s.Engine {
	case llm.LlamaCpp:
		if req.Content == nil {
			return nil, badRequest("\"content\" must be provided")
		}
		ps := Pieces(*req.Content)
		if req.WithPieces {
			toks := make([]any, len(ps))
			for i, p := range ps {
				toks[i] = map[string]any{"id": TokenID(p), "piece": p}
			}
			return map[string]any{"tokens": toks}, nil
		}
		return map[string]any{"tokens": orEmpty(Tokenize(*req.Content))}, nil
	case llm.VLLM:
		var text string
		if req.Messages != nil {
			var thinking *bool
			if v, ok := req.ChatTemplateKwargs["enable_thinking"].(bool); ok {
				thinking = &v
			}
			addGen := req.AddGenerationPrompt == nil || *req.AddGenerationPrompt
			text = Template(req.Messages, addGen && !req.ContinueFinal, thinking, req.ContinueFinal)
		} else if err := json.Unmarshal(req.Prompt, &text); err != nil {
			return nil, badRequest("either prompt or messages must be given")
		}
		ids := orEmpty(Tokenize(text))
		return map[string]any{"count": len(ids), "max_model_len": s.window, "tokens": ids, "token_strs": nil}, nil
	default: // SGLang /v1/tokenize
		var pv any
		_ = json.Unmarshal(req.Prompt, &pv) // not JSON: refused by prompts
		ps, err := prompts(pv, true)
		if err != nil {
			return nil, err
		}
		if len(ps) == 1 {
			ids := orEmpty(Tokenize(ps[0]))
			return map[string]any{"tokens": ids, "count": len(ids), "max_model_len": s.window}, nil
		}
		var all [][]int
		var counts []int
		for _, p := range ps {
			ids := orEmpty(Tokenize(p))
			all, counts = append(all, ids), append(counts, len(ids))
		}
		return map[string]any{"tokens": all, "count": counts, "max_model_len": s.window}, nil
	}
}

func (s *Server) detokenize(raw []byte) (any, error) {
	var req struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, badRequest("%v", err)
	}
	text := Detokenize(req.Tokens)
	switch s.Engine {
	case llm.VLLM:
		return map[string]any{"prompt": text}, nil
	case llm.LlamaCpp:
		return map[string]any{"content": text}, nil
	}
	return map[string]any{"text": text}, nil
}

func (s *Server) applyTemplate(raw []byte) (any, error) {
	var req struct {
		Messages            []llm.Message  `json:"messages"`
		AddGenerationPrompt *bool          `json:"add_generation_prompt"`
		ChatTemplateKwargs  map[string]any `json:"chat_template_kwargs"`
	}
	if err := json.Unmarshal(raw, &req); err != nil || len(req.Messages) == 0 {
		return nil, badRequest("\"messages\" must be provided")
	}
	var thinking *bool
	if v, ok := req.ChatTemplateKwargs["enable_thinking"].(bool); ok {
		thinking = &v
	}
	addGen := req.AddGenerationPrompt == nil || *req.AddGenerationPrompt
	return map[string]any{"prompt": Template(req.Messages, addGen, thinking, false)}, nil
}
