package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Backoff parameters: attempt i (0-based) waits a uniformly random time in
// [0, min(backoffMax, backoffBase * 2^i)] ("full jitter"), and at least the
// server's Retry-After (capped by Backend.MaxRetryWait); the waits of one
// request end with Backend.RetryBudget or MaxRetries.
const (
	backoffBase = 100 * time.Millisecond
	backoffMax  = 30 * time.Second
	maxBodyKeep = 2048
)

// secret holds the API key; every fmt verb prints it redacted.
type secret string

func (s secret) String() string               { return redacted(s) }
func (s secret) GoString() string             { return redacted(s) }
func (s secret) Format(f fmt.State, _ rune)   { io.WriteString(f, redacted(s)) }
func (s secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted(s) + `"`), nil }

func redacted(s secret) string {
	if s == "" {
		return "(none)"
	}
	return "[redacted]"
}

// ClientOption configures a Client beyond its Backend.
type ClientOption func(*Client)

// WithSleep replaces the wait between retries (default: a timer that
// returns ctx.Err() when ctx ends first). Tests inject a recorder to stay
// deterministic and instant.
func WithSleep(f func(ctx context.Context, d time.Duration) error) ClientOption {
	return func(c *Client) { c.sleep = f }
}

// WithClock replaces time.Now for the circuit breaker and latency.
func WithClock(now func() time.Time) ClientOption { return func(c *Client) { c.now = now } }

// WithHTTPClient sets the HTTP client (default: a fresh client with a
// connection pool sized to MaxInFlight).
func WithHTTPClient(h *http.Client) ClientOption { return func(c *Client) { c.hc = h } }

// WithJitterSeed seeds the backoff jitter (PCG); the default seed is fixed,
// so the jitter sequence of a client is reproducible.
func WithJitterSeed(seed uint64) ClientOption {
	return func(c *Client) { c.rng = rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }
}

// Client talks to one Backend, over one replica per URL of Backend.URLs
// (each with its own MaxInFlight cap and circuit breaker; requests with an
// Affinity stay on its replica, others go to the least-loaded healthy
// one). It is safe for concurrent use. Formatting a Client with fmt
// prints its backend name and URLs only.
type Client struct {
	b    Backend
	prof Profile
	key  secret
	hc   *http.Client

	reps []*replica // one per Backend.URLs entry, in order
	lmu  sync.Mutex // guards the replicas' load and affinities' pins

	sleep func(context.Context, time.Duration) error
	now   func() time.Time

	rmu sync.Mutex
	rng *rand.Rand

	cmu  sync.Mutex
	caps *Capabilities

	hedges hedgeTokens // the hedge budget (hedge.go)

	sawCached atomic.Bool // some answer reported cached tokens
}

// NewClient returns a client for b (defaults applied, see
// Backend.WithDefaults). The API key is read from os.Getenv(b.APIKeyEnv);
// it is an error when APIKeyEnv is set but the variable is empty. The key
// is sent as a bearer token and never logged or printed. Ambient OPENAI_*
// variables are not used.
func NewClient(b Backend, opts ...ClientOption) (*Client, error) {
	if !b.Engine.Valid() {
		return nil, fmt.Errorf("llm: backend %q: unknown engine %q", b.Name, b.Engine)
	}
	if err := checkURLs(b); err != nil {
		return nil, fmt.Errorf("llm: backend %q: %v", b.Name, err)
	}
	if b.Model == "" {
		return nil, fmt.Errorf("llm: backend %q: no model", b.Name)
	}
	b = b.WithDefaults()
	c := &Client{b: b, prof: ProfileFor(b.Engine)}
	if b.APIKeyEnv != "" {
		k := os.Getenv(b.APIKeyEnv)
		if k == "" {
			return nil, fmt.Errorf("llm: backend %q: environment variable %s (api_key_env) is empty or unset", b.Name, b.APIKeyEnv)
		}
		c.key = secret(k)
	}
	c.sleep = sleepCtx
	c.now = time.Now
	c.rng = rand.New(rand.NewPCG(1, 0x9e3779b97f4a7c15))
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			MaxIdleConns:        2 * b.MaxInFlight,
			MaxIdleConnsPerHost: 2 * b.MaxInFlight,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	for i, u := range b.URLs() {
		r := &replica{idx: i, url: u, base: strings.TrimRight(u, "/")}
		r.root = strings.TrimSuffix(r.base, "/v1")
		r.sem = make(chan struct{}, b.MaxInFlight)
		r.br = breaker{threshold: b.BreakerFailures, cooldown: b.BreakerCooldown}
		r.oa = c.newOA(r.base)
		c.reps = append(c.reps, r)
	}
	return c, nil
}

// oaServices are the openai-go services one replica calls. The client is
// built from these three services rather than openai.NewClient: a Client
// value reaches every service of the API (responses, realtime, beta, ...),
// and the linker keeps all their methods (about 16 MB of the binary).
type oaServices struct {
	Chat        struct{ Completions openai.ChatCompletionService }
	Completions openai.CompletionService
	Models      openai.ModelService
}

// newOA returns the openai-go services of one replica's base URL, with
// the options openai.NewClient would give them: the environment's defaults
// (openai.DefaultClientOptions) and ours after them, in one inherited
// layer.
func (c *Client) newOA(base string) oaServices {
	oaOpts := []option.RequestOption{
		option.WithBaseURL(base + "/"),
		option.WithHTTPClient(c.hc),
		option.WithMaxRetries(0), // our own retry loop
		option.WithAPIKey(string(c.key)),
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
	}
	if c.key == "" {
		oaOpts = append(oaOpts, option.WithHeaderDel("Authorization"))
	}
	// A service's Options are its constructor's options as one inherited
	// layer, as NewClient stores them for the services it builds.
	layered := openai.NewModelService(append(openai.DefaultClientOptions(), oaOpts...)...).Options
	var s oaServices
	s.Chat.Completions = openai.NewChatCompletionService(layered...)
	s.Completions = openai.NewCompletionService(layered...)
	s.Models = openai.NewModelService(layered...)
	return s
}

// Backend returns the client's backend with defaults applied.
func (c *Client) Backend() Backend { return c.b }

// Profile returns the engine profile the client assumes.
func (c *Client) Profile() Profile { return c.prof }

// String names the backend; the key is never printed.
func (c *Client) String() string {
	if c == nil {
		return "llm.Client(nil)"
	}
	return fmt.Sprintf("llm.Client{%s %s %s %s}", c.b.Name, c.b.Engine, c.b.urlList(), c.b.Model)
}

// GoString is String (keeps %#v from dumping fields).
func (c *Client) GoString() string { return c.String() }

// Format prints String for every verb.
func (c *Client) Format(f fmt.State, _ rune) { io.WriteString(f, c.String()) }

// BreakerState reports "closed", "open" or "half-open": the state of the
// healthiest replica (closed when any replica's circuit is closed).
func (c *Client) BreakerState() string {
	best := "open"
	for _, r := range c.reps {
		switch st := r.br.state(c.now()); st {
		case "closed":
			return st
		case "half-open":
			best = st
		}
	}
	return best
}

// ReplicaStates reports each replica's breaker state, in Backend.URLs
// order.
func (c *Client) ReplicaStates() []string {
	out := make([]string, len(c.reps))
	for i, r := range c.reps {
		out[i] = r.br.state(c.now())
	}
	return out
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// attemptError carries what the retry loop needs from one failed attempt.
type attemptError struct {
	err        error
	status     int           // HTTP status, 0 for transport errors
	retryAfter time.Duration // parsed Retry-After, 0 if none
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

// transient marks an error as ErrTransient without changing its
// message or hiding what it wraps.
// after, when set, is how long the fault is known to last (an open
// circuit's remaining cooldown).
type transient struct {
	error
	after time.Duration
}

func (t transient) Unwrap() error        { return t.error }
func (t transient) Is(target error) bool { return target == ErrTransient }

// RetryAfter reports how long the fault is known to last (0: unknown); see
// ErrTransient.
func (t transient) RetryAfter() time.Duration { return t.after }

// call runs fn with the retry loop, replica choice (the affinity of ctx,
// see Client.Affinity), breaker, semaphore and per-attempt timeout; fn
// gets the replica of its attempt. Every attempt that reaches fn counts in
// u.Requests. fn is not hedged (callHedged).
func (c *Client) call(ctx context.Context, u *Usage, fn func(ctx context.Context, r *replica) error) error {
	_, err := c.callHedged(ctx, u, "", func(ctx context.Context, r *replica) (any, error) { return nil, fn(ctx, r) })
	return err
}

// callHedged is call for an fn that returns its result rather than
// storing it, so that two attempts may run at once: with key, the
// endpoint whose latencies set the hedge delay, a slow attempt is hedged
// (hedge.go; a half-open probe never is). It returns the winning
// attempt's value.
func (c *Client) callHedged(ctx context.Context, u *Usage, key string, fn func(ctx context.Context, r *replica) (any, error)) (any, error) {
	a := c.affinityFor(ctx)
	var waited time.Duration // on open circuits, bounded by circuitWaitLimit
	var spent time.Duration  // backing off, bounded by RetryBudget
	for try := 0; ; try++ {
		r := c.enter(a)
		probe, err := r.br.allow(c.now())
		if err != nil {
			c.leave(r)
			if c.waitCircuit(ctx, r, &waited) {
				try-- // waiting for the circuit is not an attempt
				continue
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w (waiting for the circuit: %v)", ctx.Err(), err)
			}
			return nil, fmt.Errorf("backend %q: %w", c.b.Name, transient{err, r.br.wait(c.now())})
		}
		select {
		case r.sem <- struct{}{}:
		case <-ctx.Done():
			c.leave(r)
			r.br.release(probe)
			return nil, ctx.Err()
		}
		res, sent := c.attempt(ctx, r, key, !probe, fn)
		if u != nil {
			u.Requests += sent
		}
		err, timedOut := res.err, res.timedOut
		<-r.sem
		c.leave(r)
		if err == nil {
			r.br.success()
			return res.v, nil
		}
		if ctx.Err() != nil {
			r.br.release(probe)
			return nil, fmt.Errorf("%w (last attempt: %v)", ctx.Err(), err)
		}
		var ae *attemptError
		status, ra := 0, time.Duration(0)
		if errors.As(err, &ae) {
			status, ra = ae.status, ae.retryAfter
		}
		retry := false
		switch {
		case timedOut:
			err = fmt.Errorf("%w after %s: %v", ErrTimeout, c.b.Timeout, err)
			r.br.failure(c.now(), err)
			retry = true
		case errors.Is(err, ErrContextLength), errors.Is(err, ErrLogprobsUnavailable), errors.Is(err, ErrUnsupported):
			r.br.success()
		case status == http.StatusTooManyRequests:
			r.br.release(probe)
			retry = true
		case status >= 500:
			r.br.failure(c.now(), err)
			retry = true
		case status >= 400:
			r.br.success()
		case errors.Is(err, ErrMalformed):
			r.br.release(probe)
			retry = true
		default: // transport error: refused, reset, DNS, ...
			r.br.failure(c.now(), err)
			c.failed(a, r) // the replica looks gone: move the episode now
			retry = true
		}
		if r.br.blocked(c.now()) {
			c.failed(a, r)
		}
		if !retry || try >= c.b.MaxRetries || c.b.RetryBudget > 0 && spent >= c.b.RetryBudget {
			if retry {
				// The fault may clear: episode runners may replay.
				err = transient{error: err}
			}
			if retry && try > 0 {
				return nil, fmt.Errorf("backend %q: giving up after %d attempts: %w", c.b.Name, try+1, err)
			}
			return nil, fmt.Errorf("backend %q: %w", c.b.Name, err)
		}
		d := c.backoff(try, ra)
		if ra <= 0 {
			if c.b.RetryBudget > 0 {
				d = min(d, c.b.RetryBudget-spent) // no wait past the budget
			}
			spent += d
		}
		if serr := c.sleep(ctx, d); serr != nil {
			return nil, fmt.Errorf("%w (waiting to retry after: %v)", serr, err)
		}
	}
}

// backoff returns the wait before retry try+1.
func (c *Client) backoff(try int, retryAfter time.Duration) time.Duration {
	ceil := backoffMax
	if try < 16 {
		ceil = min(backoffMax, backoffBase<<try)
	}
	c.rmu.Lock()
	d := time.Duration(c.rng.Float64() * float64(ceil))
	c.rmu.Unlock()
	if retryAfter > 0 {
		d = max(d, min(retryAfter, c.b.MaxRetryWait))
	}
	return d
}

// parseRetryAfter reads a Retry-After value: delay seconds (integer or
// decimal) or an HTTP date (RFC 9110 §10.2.3); 0 when absent, past or
// unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
			return 0
		}
		if s > 86400 {
			s = 86400
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// httpError builds the attempt error for a non-2xx answer, redacting the
// key and classifying context-length errors.
func (c *Client) httpError(path string, status int, hdr http.Header, body []byte) error {
	s := string(body)
	if len(s) > maxBodyKeep {
		s = s[:maxBodyKeep]
	}
	if c.key != "" {
		s = strings.ReplaceAll(s, string(c.key), "[redacted]")
	}
	he := &HTTPError{Status: status, Body: s, Path: path}
	var err error = he
	if isContextLength(status, body) {
		err = fmt.Errorf("%w: %w", ErrContextLength, he)
	}
	var ra time.Duration
	if hdr != nil {
		ra = parseRetryAfter(hdr.Get("Retry-After"), c.now())
	}
	return &attemptError{err: err, status: status, retryAfter: ra}
}

// contextLengthMarkers are phrases of the engines' context-window errors
// (vLLM, SGLang, llama-server, OpenAI; llm/testdata has the bodies).
var contextLengthMarkers = []string{
	"context_length_exceeded",
	"exceed_context_size_error",
	"maximum context length",
	"context length",
	"context window",
	"context size",
	"exceeds the maximum allowed length",
	"prompt is too long",
}

// isContextLength reports whether an error answer says the prompt does
// not fit the context window.
func isContextLength(status int, body []byte) bool {
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge && status != http.StatusUnprocessableEntity {
		return false
	}
	low := strings.ToLower(string(body))
	for _, m := range contextLengthMarkers {
		if strings.Contains(low, m) {
			return true
		}
	}
	return false
}

// sendOA runs one openai-go request and returns the raw 2xx body, or an
// attempt error for HTTP errors and transport failures.
func (c *Client) sendOA(path string, run func(opts ...option.RequestOption) error) ([]byte, error) {
	var raw []byte
	var hr *http.Response
	err := run(option.WithResponseBodyInto(&raw), option.WithResponseInto(&hr))
	if hr != nil && hr.StatusCode >= 300 {
		var body []byte
		if hr.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(hr.Body, 1<<20))
			hr.Body.Close()
		}
		return nil, c.httpError(path, hr.StatusCode, hr.Header, body)
	}
	if err != nil {
		return nil, &attemptError{err: c.scrub(err)}
	}
	return raw, nil
}

// scrub removes the key from an error's text should a transport ever
// include it.
func (c *Client) scrub(err error) error {
	if c.key == "" || !strings.Contains(err.Error(), string(c.key)) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), string(c.key), "[redacted]"))
}

// sendNative sends one JSON request (GET when body is nil) with net/http
// and returns the raw 2xx body.
func (c *Client) sendNative(ctx context.Context, method, url, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+string(c.key))
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &attemptError{err: c.scrub(err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, &attemptError{err: c.scrub(err)}
	}
	if resp.StatusCode >= 300 {
		return nil, c.httpError(path, resp.StatusCode, resp.Header, raw)
	}
	return raw, nil
}
