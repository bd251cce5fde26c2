// Package server exposes PersuArena's persuadees as an OpenEnv-compatible
// environment server (meta-pytorch/OpenEnv, openenv.core.env_server), so
// that external trainers (TRL, verl) can train LLM persuaders against them
// (Probe-RPO paper).
//
// The client is the persuader: each step's action is one persuader
// utterance; the observation is the persuadee's visible reply, the turn,
// the decision and the public scenario; the reward is the dense probe
// reward r_t = B_t - B_{t-1}, the terminal outcome reward R_out, or both.
// The hidden profile never leaves the server. Env mirrors episode.Run
// turn by turn; Server puts it behind OpenEnv's endpoints: GET /health,
// /metadata, /schema, /state, POST /reset, /step, and the stateful
// WebSocket channel /ws, with GET /openapi.json and the MCP endpoint POST
// /mcp for `openenv validate`. docs/server.md describes the protocol
// mapping.
package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/scenario"
)

// Defaults of Config.
const (
	// DefaultMaxSessions is the default limit on concurrent sessions.
	DefaultMaxSessions = 64
	// DefaultIdleTimeout closes sessions without a message for this long.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultDoneRetention is how long a finished HTTP episode's state
	// stays readable by GET /state.
	DefaultDoneRetention = time.Minute
	// DefaultCapacityWait is how long a new session waits for a slot when
	// the server is full before it gets CAPACITY_REACHED.
	DefaultCapacityWait = 250 * time.Millisecond
	// DefaultStepBudget is the step latency budget /metadata advertises
	// when Config.StepBudget is 0.
	//
	// Choice: 300 s, the reply timeout of the trainer adapters: an LLM
	// persuadee's reply plus its probe read-outs can take minutes on a
	// loaded engine, while OpenEnv's client waits 60 s by default
	// (message_timeout_s, huggingface/OpenEnv 385de5e
	// src/openenv/core/env_client.py:107).
	DefaultStepBudget = 300 * time.Second
)

// Config configures a Server. Zero fields take the defaults given.
type Config struct {
	// Env configures the environments (persuadee, scenarios, rewards).
	Env EnvConfig
	// MaxSessions bounds the sessions held at once: open WebSocket
	// connections plus unfinished HTTP episodes; 0 means
	// DefaultMaxSessions. One more gets CAPACITY_REACHED.
	MaxSessions int
	// IdleTimeout closes a WebSocket session (SESSION_ERROR, then close
	// code 1008) and forgets an HTTP episode after this long without a
	// request; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// DoneRetention is how long a finished HTTP episode's final State
	// stays readable (GET /state) before it is forgotten; its environment
	// is released at once. 0 means DefaultDoneRetention.
	DoneRetention time.Duration
	// CapacityWait is how long a WebSocket connection or POST /reset
	// waits for a free slot when all MaxSessions are held, before it gets
	// CAPACITY_REACHED; 0 means DefaultCapacityWait, negative means no
	// wait.
	//
	// Choice: a client that drops its connection and reconnects at once
	// races its own old connection: the new handshake can be read before
	// the old connection's end: without a wait 1 of 200 such reconnects
	// was refused at capacity (9-13 of 200 before slots were freed by a
	// reader that sees the drop at once; TestWSAbruptDropFreesSlot).
	// A freed slot wakes a waiting session at once.
	CapacityWait time.Duration
	// StepBudget is the longest one reset or step may take for clients
	// to wait on (the persuadee's reply and the probe read-outs), reported
	// by /metadata as limits.step_budget_s so that a client sets its
	// reply timeout (OpenEnv's message_timeout_s) at least this high; 0
	// means DefaultStepBudget. The server does not cut a step off at it.
	StepBudget time.Duration
	// Version is reported by /metadata.
	Version string
	// Logger receives session events; nil discards them.
	Logger *slog.Logger

	// IdleLease: when every slot is held (or a client holds its share),
	// a new session takes the slot of the session that has gone longest
	// without a reset or step, if that is longer than this and it is not
	// handling a request (guard.go); 0 means DefaultIdleLease. Other
	// requests (GET /state, WebSocket state, MCP ping) do not renew the
	// lease. IdleTimeout still closes any session idle that long.
	IdleLease time.Duration
	// MaxSessionsPerClient bounds the sessions one client holds at once
	// (one more gets CAPACITY_REACHED at once, unless one of its own
	// sessions is idle past the lease); 0 means MaxSessions for loopback
	// addresses and MaxSessions/4 (at least 1) for others. A client is an
	// IPv4 address or an IPv6 /64 (clientKey).
	MaxSessionsPerClient int
	// Token, when set, is the bearer token every request but GET /health
	// must carry ("Authorization: Bearer TOKEN"); for non-loopback use.
	Token string
	// AllowOrigins are the browser origins (e.g. "https://lab.example")
	// allowed to call the server; requests with any other Origin header
	// are refused (HTTP 403). Empty: no browser origin is allowed.
	AllowOrigins []string
	// MaxConns bounds the open TCP connections Serve holds (see
	// conn.go); 0 means DefaultMaxConns. HealthReserve more are accepted
	// that may only ask GET /health; 0 means DefaultHealthReserve.
	MaxConns      int
	HealthReserve int
	// ConnIdleTimeout closes a keep-alive connection idle this long
	// between requests; 0 means DefaultConnIdleTimeout.
	ConnIdleTimeout time.Duration
	// ReadTimeout bounds reading one request body (after its header,
	// which has 10 s); 0 means DefaultReadTimeout.
	ReadTimeout time.Duration
}

// Server serves one Factory's environments over HTTP and WebSocket. Create
// it with New; it is safe for concurrent use.
type Server struct {
	cfg     Config
	f       *Factory
	log     *slog.Logger
	frame   int64 // WebSocket frame / HTTP body limit in bytes
	now     func() time.Time
	baseCtx context.Context
	cancel  context.CancelFunc

	mu     sync.Mutex
	freed  chan struct{} // closed and replaced when a slot is freed
	ws     map[*wsSession]struct{}
	http   map[string]*httpEpisode
	mcpS   map[string]*mcpSession // MCP sessions of POST /mcp (mcpsession.go)
	closed bool
	wg     sync.WaitGroup // WebSocket handlers
	lim    *connLimiter   // Serve's connection limiter (conn.go)
}

// httpEpisode is an episode created by POST /reset.
type httpEpisode struct {
	mu   sync.Mutex // serialises steps of one episode
	env  *Env       // nil once finished: only final is kept
	last time.Time  // guarded by Server.mu: the last request (IdleTimeout)
	done bool       // guarded by Server.mu; finished episodes free their slot
	// client (guarded by Server.mu) is the creating client (clientAddr),
	// played the end of its last reset or step (the idle lease) and busy
	// whether a reset or step is under way (guard.go).
	client string
	played time.Time
	busy   int // resets and steps under way
	// final is the State at the end (guarded by mu); a finished episode
	// keeps only this, for DoneRetention.
	final *State
}

// New validates cfg and returns a Server. Errors are those of NewFactory
// and a negative MaxSessions or IdleTimeout.
func New(cfg Config) (*Server, error) {
	f, err := NewFactory(cfg.Env)
	if err != nil {
		return nil, err
	}
	if cfg.MaxSessions < 0 || cfg.IdleTimeout < 0 {
		return nil, fmt.Errorf("server: negative max sessions %d or idle timeout %v", cfg.MaxSessions, cfg.IdleTimeout)
	}
	if err := guardDefaults(&cfg); err != nil {
		return nil, err
	}
	if cfg.MaxSessions == 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.DoneRetention <= 0 {
		cfg.DoneRetention = DefaultDoneRetention
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.CapacityWait == 0 {
		cfg.CapacityWait = DefaultCapacityWait
	}
	if cfg.StepBudget <= 0 {
		cfg.StepBudget = DefaultStepBudget
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	cfg.Env = f.Config()
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		cfg: cfg, f: f, log: lg, now: time.Now, baseCtx: ctx, cancel: cancel,
		// Escaping can grow a message up to 6x (\u00XX); the rest is room
		// for the envelope and reset options.
		frame: int64(6*f.cfg.MaxMessageBytes + 4096),
		ws:    map[*wsSession]struct{}{}, http: map[string]*httpEpisode{}, mcpS: map[string]*mcpSession{},
		freed: make(chan struct{}),
	}, nil
}

// Factory returns the server's environment factory.
func (s *Server) Factory() *Factory { return s.f }

// Handler returns the HTTP handler with every endpoint.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.handleHealth)
	mux.HandleFunc("GET /metadata", s.handleMetadata)
	mux.HandleFunc("GET /schema", s.handleSchema)
	mux.HandleFunc("POST /reset", s.handleReset)
	mux.HandleFunc("POST /step", s.handleStep)
	mux.HandleFunc("GET /state", s.handleState)
	mux.HandleFunc("POST /close", s.handleClose)
	mux.HandleFunc("GET /ws", s.handleWS)
	mux.HandleFunc("GET /openapi.json", s.handleOpenAPI)
	mux.HandleFunc("POST /mcp", s.handleMCP)
	return s.guard(mux)
}

// Serve serves on ln until ctx is cancelled, then shuts down gracefully:
// it stops accepting, closes every WebSocket session with close code 1001
// (going away), waits up to 10 s for in-flight HTTP requests and session
// handlers, then cancels whatever still runs and returns nil. Other errors
// are the listener's.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return s.baseCtx }}
	ln = s.limitConns(hs, ln)
	defer s.cancel()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	s.wait(sctx)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// Close refuses new sessions and ends every WebSocket session with close
// code 1001 (going away); a step in progress runs to its end (its episode
// is stored) but its reply may not be delivered. It does not wait, and does
// not touch the HTTP listener (Serve does).
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	sessions := make([]*wsSession, 0, len(s.ws))
	for ws := range s.ws {
		sessions = append(sessions, ws)
	}
	s.mu.Unlock()
	for _, ws := range sessions {
		go ws.conn.Close(websocket.StatusGoingAway, "server shutting down")
	}
}

// isClosed reports whether Close has been called.
func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// wait waits for the WebSocket handlers to return, or for ctx.
func (s *Server) wait(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// activeLocked counts the held session slots; s.mu must be held. It first
// forgets HTTP episodes and MCP sessions idle for longer than IdleTimeout
// and finished HTTP episodes older than DoneRetention.
func (s *Server) activeLocked() int {
	now := s.now()
	n := len(s.ws)
	for id, ms := range s.mcpS {
		if now.Sub(ms.last) > s.cfg.IdleTimeout {
			delete(s.mcpS, id)
			s.log.Info("expired", "transport", "mcp", "session", id)
			continue
		}
		n++
	}
	for id, ep := range s.http {
		if now.Sub(ep.last) > s.cfg.IdleTimeout || ep.done && now.Sub(ep.last) > s.cfg.DoneRetention {
			delete(s.http, id)
			continue
		}
		if !ep.done {
			n++
		}
	}
	return n
}

// freedLocked wakes sessions waiting for a slot; s.mu must be held.
func (s *Server) freedLocked() {
	close(s.freed)
	s.freed = make(chan struct{})
}

// admitLocked returns whether a new session may take a slot, waiting up
// to CapacityWait (or until ctx ends) for one to be freed when all are
// held, and the number held. s.mu must be held; it is released while
// waiting. It refuses once the server is closed.
func (s *Server) admitLocked(ctx context.Context) (int, bool) {
	var deadline <-chan time.Time
	for {
		n := s.activeLocked()
		if s.closed {
			return n, false
		}
		if n < s.cfg.MaxSessions {
			return n, true
		}
		if s.evictIdleLocked("") {
			continue
		}
		if s.cfg.CapacityWait < 0 {
			return n, false
		}
		if deadline == nil {
			t := time.NewTimer(s.cfg.CapacityWait)
			defer t.Stop()
			deadline = t.C
		}
		ch := s.freed
		s.mu.Unlock()
		select {
		case <-ch:
			s.mu.Lock()
		case <-deadline:
			s.mu.Lock()
			return s.activeLocked(), false
		case <-ctx.Done():
			s.mu.Lock()
			return s.activeLocked(), false
		}
	}
}

func (s *Server) capacityError(active int) *Error {
	return errf(CapacityReached, "server at capacity: %d of %d sessions in use; retry later", active, s.cfg.MaxSessions)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// writeError answers with {"detail": message, "code": CODE}, FastAPI's
// error body plus the OpenEnv code.
func writeError(w http.ResponseWriter, err error) {
	e := publicError(asError(err))
	writeJSON(w, e.HTTPStatus(), map[string]string{"detail": e.Message, "code": string(e.Code)})
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "healthy"})
}

// SetInfo describes one scenario set in /metadata.
type SetInfo struct {
	Name string `json:"name"`
	// Splits counts the set's scenarios per split.
	Splits map[string]int `json:"splits"`
}

// Limits are the server's limits, reported by /metadata.
type Limits struct {
	// MaxSessions is Config.MaxSessions.
	MaxSessions int `json:"max_sessions"`
	// IdleTimeoutS is Config.IdleTimeout in seconds.
	IdleTimeoutS float64 `json:"idle_timeout_s"`
	// CapacityWaitS is Config.CapacityWait in seconds (0: no wait).
	CapacityWaitS float64 `json:"capacity_wait_s"`
	// MaxMessageBytes bounds one persuader message.
	MaxMessageBytes int `json:"max_message_bytes"`
	// MaxFrameBytes bounds a WebSocket frame or HTTP body; bigger frames
	// close the connection with code 1009 (HTTP: 413).
	MaxFrameBytes int64 `json:"max_frame_bytes"`
	// StepBudgetS is Config.StepBudget in seconds: set a client's reply
	// timeout (OpenEnv's message_timeout_s, default 60) at least this high.
	StepBudgetS float64 `json:"step_budget_s"`
	// Tmax is the turn limit of every episode.
	Tmax int `json:"tmax"`
}

// MetadataInfo is the body of GET /metadata: OpenEnv's EnvironmentMetadata
// fields (name, description, version, documentation_url) plus what a
// trainer needs to drive the environment: the model names of /schema, the
// persuadee's name, the scenario sets with their sizes per split, the
// default split ("all" for every split), the reward modes and the default
// one, the probe ids (Probe-RPO paper), R_goal per terminal state, w in
// R_out, whether a judge rates R_strategy, and the limits.
type MetadataInfo struct {
	Name             string       `json:"name"`
	Description      string       `json:"description"`
	Version          string       `json:"version"`
	DocumentationURL string       `json:"documentation_url"`
	Action           string       `json:"action"`
	Observation      string       `json:"observation"`
	State            string       `json:"state"`
	Persuadee        string       `json:"persuadee"`
	Sets             []SetInfo    `json:"scenario_sets"`
	DefaultSplit     string       `json:"default_split"`
	RewardModes      []RewardMode `json:"reward_modes"`
	Reward           RewardMode   `json:"reward"`
	Probes           []string     `json:"probes"`
	Goal             any          `json:"goal_rewards"`
	StrategyWeight   float64      `json:"strategy_weight"`
	Judge            bool         `json:"judge"`
	// DenseMode is the dense-advantage form the server assumes a trainer
	// applies to its per-turn dense rewards (grpo.DenseMode; "scaled":
	// r/std over the group, summed over later turns, which is
	// (B_T - B_{t-1})/std). The server itself sends raw r_t; the mode
	// tells a client how PersuArena's own trainer and export turn them
	// into advantages, so that results stay comparable.
	DenseMode grpo.DenseMode `json:"dense_mode"`
	Limits    Limits         `json:"limits"`
}

// Info returns the /metadata body.
func (s *Server) Info() MetadataInfo {
	c := s.f.cfg
	m := MetadataInfo{
		Name: "persuarena",
		Description: "Multi-turn persuasion against a persuadee with a hidden profile (PersuArena, Probe-RPO paper). " +
			"The client is the persuader: each action is one utterance; the observation is the persuadee's visible reply " +
			"and decision; the reward is the change of the persuadee's probed belief (dense), the terminal outcome reward, or both.",
		Version:          s.cfg.Version,
		DocumentationURL: "https://github.com/persuarena/persuarena/blob/main/docs/server.md",
		Action:           "PersuArenaAction", Observation: "PersuArenaObservation", State: "PersuArenaState",
		Persuadee:    c.Persuadee.Name(),
		DefaultSplit: splitName(c.Split),
		RewardModes:  RewardModes, Reward: c.Reward,
		Goal: c.Goal, StrategyWeight: s.f.w, Judge: c.Judge != nil, DenseMode: grpo.DefaultConfig().DenseMode,
		Limits: Limits{MaxSessions: s.cfg.MaxSessions, IdleTimeoutS: s.cfg.IdleTimeout.Seconds(), CapacityWaitS: max(0, s.cfg.CapacityWait.Seconds()),
			MaxMessageBytes: c.MaxMessageBytes, MaxFrameBytes: s.frame, StepBudgetS: s.cfg.StepBudget.Seconds(), Tmax: c.Tmax},
	}
	for _, p := range c.Basis {
		m.Probes = append(m.Probes, p.ID)
	}
	for _, set := range c.Sets {
		si := SetInfo{Name: set.Name, Splits: map[string]int{}}
		for _, sp := range scenario.Splits {
			si.Splits[string(sp)] = s.f.Count(set.Name, sp)
		}
		m.Sets = append(m.Sets, si)
	}
	return m
}

func (s *Server) handleMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Info())
}

func (s *Server) handleSchema(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(SchemaJSON())
}

// readBody reads a request body up to the frame limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.frame))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, &Error{Code: ValidationError, Message: fmt.Sprintf("request body over %d bytes", s.frame), Status: http.StatusRequestEntityTooLarge}
		}
		return nil, errf(ValidationError, "reading request body: %v", err)
	}
	return body, nil
}

// handleReset is POST /reset: it creates an episode held by the server
// under its episode_id (see docs/server.md for how this differs from
// OpenEnv's stateless HTTP mode).
func (s *Server) handleReset(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	opts, err := DecodeResetOptions(body)
	if err != nil {
		writeError(w, err)
		return
	}
	obs, err := s.resetHTTP(r.Context(), clientAddr(r), opts)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, obs.Result())
}

// resetHTTP starts a server-held episode (POST /reset, the MCP reset
// tool): it takes a session slot, registers the episode under
// opts.EpisodeID (a random id when empty) and resets it; client is the
// request's address (clientAddr), counted against its per-client cap.
// Errors: SESSION_ERROR while shutting down, CAPACITY_REACHED (all slots,
// or client's share, held), VALIDATION_ERROR for a taken episode_id, and
// Env.Reset's.
func (s *Server) resetHTTP(ctx context.Context, client string, opts ResetOptions) (Observation, error) {
	if opts.EpisodeID == "" {
		opts.EpisodeID = "ep-" + rand.Text()
	}
	shutting := &Error{Code: SessionError, Message: "server is shutting down", Status: http.StatusServiceUnavailable}
	ep := &httpEpisode{env: s.f.NewEnv()}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Observation{}, shutting
	}
	if e := s.clientCapErrorLocked(client); e != nil {
		s.mu.Unlock()
		return Observation{}, e
	}
	if n, ok := s.admitLocked(ctx); !ok {
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return Observation{}, shutting
		}
		return Observation{}, s.capacityError(n)
	}
	if _, dup := s.http[opts.EpisodeID]; dup {
		s.mu.Unlock()
		return Observation{}, errf(ValidationError, "episode_id %q is already in use", opts.EpisodeID)
	}
	ep.last, ep.played, ep.client, ep.busy = s.now(), s.now(), client, 1
	s.http[opts.EpisodeID] = ep
	s.mu.Unlock()

	obs, err := ep.env.Reset(ctx, opts)
	s.mu.Lock()
	ep.busy--
	if err != nil {
		delete(s.http, opts.EpisodeID)
		s.freedLocked() // a waiting reset may take the slot at once
	} else {
		ep.last = s.now()
		ep.played = ep.last
	}
	s.mu.Unlock()
	if err != nil {
		return Observation{}, err
	}
	s.log.Info("reset", "transport", "http", "episode", opts.EpisodeID, "scenario", ep.env.State().ScenarioID)
	return obs, nil
}

// lookup returns the live HTTP episode id, or a SESSION_ERROR; play marks
// it busy (a step is starting: it cannot be evicted until stepHTTP ends
// it).
func (s *Server) lookup(id string, play bool) (*httpEpisode, error) {
	if id == "" {
		return nil, errf(ValidationError, "episode_id is required: this server keeps HTTP episodes by the id /reset returned in metadata.episode_id")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.activeLocked() // forget expired episodes
	ep, ok := s.http[id]
	if !ok {
		return nil, errf(SessionError, "unknown or expired episode_id %q (episodes are forgotten after %v without a request)", id, s.cfg.IdleTimeout)
	}
	ep.last = s.now()
	if play {
		ep.busy++
	}
	return ep, nil
}

// stepRequest is the POST /step body: OpenEnv's StepRequest (action,
// timeout_s, request_id) plus episode_id.
type stepRequest struct {
	Action    json.RawMessage `json:"action"`
	EpisodeID string          `json:"episode_id"`
	TimeoutS  *float64        `json:"timeout_s,omitempty"`
	RequestID string          `json:"request_id,omitempty"`
}

func (s *Server) handleStep(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req stepRequest
	if err := strictDecode(body, &req, "step request"); err != nil {
		writeError(w, err)
		return
	}
	a, err := DecodeAction(req.Action)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	if req.TimeoutS != nil {
		if !(*req.TimeoutS > 0) {
			writeError(w, errf(ValidationError, "timeout_s must be > 0"))
			return
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*req.TimeoutS*float64(time.Second)))
		defer cancel()
	}
	obs, err := s.stepHTTP(ctx, req.EpisodeID, a)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, obs.Result())
}

// stepHTTP plays one turn of the server-held episode id (POST /step, the
// MCP say tool); a finished episode keeps only its final state and frees
// its slot. Errors: lookup's, EXECUTION_ERROR for a finished episode, and
// Env.Step's.
func (s *Server) stepHTTP(ctx context.Context, id string, a Action) (Observation, error) {
	ep, err := s.lookup(id, true)
	if err != nil {
		return Observation{}, err
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.env == nil {
		s.mu.Lock()
		ep.busy--
		s.mu.Unlock()
		return Observation{}, errf(ExecutionError, "episode %s is finished (%s); send a reset to start another", ep.final.EpisodeID, ep.final.Terminal)
	}
	obs, _, _, err := ep.env.Step(ctx, a)
	done := ep.env.Done()
	if done {
		// Keep only the final state: the environment (transcript,
		// persuadee session) is released now, not at expiry.
		st := ep.env.State()
		ep.final, ep.env = &st, nil
	}
	s.mu.Lock()
	ep.last = s.now()
	ep.done = done
	ep.busy--
	if err == nil {
		ep.played = ep.last
	}
	if done {
		s.freedLocked()
	}
	s.mu.Unlock()
	if err != nil {
		return Observation{}, err
	}
	if obs.Done {
		s.log.Info("done", "transport", "http", "episode", id, "terminal", obs.Metadata.Terminal)
	}
	return obs, nil
}

// handleState is GET /state?episode_id=ID.
func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	ep, err := s.lookup(r.URL.Query().Get("episode_id"), false)
	if err != nil {
		writeError(w, err)
		return
	}
	ep.mu.Lock()
	var st State
	if ep.env == nil {
		st = *ep.final
	} else {
		st = ep.env.State()
	}
	ep.mu.Unlock()
	writeJSON(w, http.StatusOK, st)
}

// closeRequest is the POST /close body.
type closeRequest struct {
	EpisodeID string `json:"episode_id"`
}

// handleClose is POST /close {"episode_id": ID}: the HTTP episode is
// forgotten at once and its session slot freed, finished or not (a client
// that abandons an episode no longer holds a slot until IdleTimeout).
func (s *Server) handleClose(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req closeRequest
	if err := strictDecode(body, &req, "close request"); err != nil {
		writeError(w, err)
		return
	}
	if _, err := s.lookup(req.EpisodeID, false); err != nil {
		writeError(w, err)
		return
	}
	s.mu.Lock()
	delete(s.http, req.EpisodeID)
	s.freedLocked()
	s.mu.Unlock()
	s.log.Info("close", "transport", "http", "episode", req.EpisodeID)
	writeJSON(w, http.StatusOK, map[string]any{"episode_id": req.EpisodeID, "closed": true})
}
