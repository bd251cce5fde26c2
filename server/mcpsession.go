package server

import (
	"context"
	"crypto/rand"
	"net/http"
	"sync"
	"time"
)

// MCP sessions: OpenEnv's session methods for HTTP /mcp (huggingface/OpenEnv
// 385de5e, src/openenv/core/env_server/http_server.py:706-819).
// "openenv/session/create" opens a session that holds one environment and
// one session slot, "openenv/session/close" frees it, and tools/list and
// tools/call with params.session_id act on that session's environment:
// the reset tool starts an episode in it and say plays its turns, with no
// episode_id. OpenEnv's MCPToolClient in production mode creates a session
// before its first tools/list (src/openenv/core/mcp_client.py:176-192) and
// closes it in close().
//
// Over /ws, create returns the connection's own session id and the tools
// act on the connection's environment whatever session_id says.
//
// Choice: as OpenEnv's server does for a WebSocket-managed session
// (http_server.py:708-712, 798-800), rather than refusing a session_id
// that names another session: a client written against OpenEnv behaves
// the same here.

// mcpSession is one session opened by openenv/session/create.
type mcpSession struct {
	mu  sync.Mutex // serialises the tool calls of the session
	env *Env
	// last (guarded by Server.mu) is the last request's time: the
	// session is forgotten after Config.IdleTimeout without one.
	last   time.Time
	client string // the creating client's address (per-client cap)
	id     string
	// played and busy (guarded by Server.mu) are the last reset or say's
	// end (or the create) and the tool calls running, for the idle lease
	// (guard.go's evictIdleLocked).
	played time.Time
	busy   int
}

// createMCPSession opens an MCP session for client and returns its id
// ("mcp-" and 26 random characters). Errors: SESSION_ERROR while shutting
// down, CAPACITY_REACHED when every slot (or client's share) is held.
func (s *Server) createMCPSession(ctx context.Context, client string) (string, error) {
	ms := &mcpSession{env: s.f.NewEnv(), client: client, id: "mcp-" + rand.Text()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", &Error{Code: SessionError, Message: "server is shutting down", Status: http.StatusServiceUnavailable}
	}
	if e := s.clientCapErrorLocked(client); e != nil {
		return "", e
	}
	n, ok := s.admitLocked(ctx)
	if !ok {
		if s.closed {
			return "", &Error{Code: SessionError, Message: "server is shutting down", Status: http.StatusServiceUnavailable}
		}
		return "", s.capacityError(n)
	}
	ms.last = s.now()
	ms.played = ms.last
	s.mcpS[ms.id] = ms
	s.log.Info("open", "transport", "mcp", "session", ms.id)
	return ms.id, nil
}

// mcpSessionByID returns the live MCP session id and marks it used.
// Errors: SESSION_ERROR for an unknown, closed or expired id.
func (s *Server) mcpSessionByID(id string) (*mcpSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.activeLocked() // forget expired sessions
	ms, ok := s.mcpS[id]
	if !ok {
		return nil, errf(SessionError, "unknown session_id %q (closed, or forgotten after %v without a request)", id, s.cfg.IdleTimeout)
	}
	ms.last = s.now()
	return ms, nil
}

// closeMCPSession forgets the MCP session id and frees its slot. Errors:
// SESSION_ERROR for an unknown or expired id.
func (s *Server) closeMCPSession(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.activeLocked()
	if _, ok := s.mcpS[id]; !ok {
		return errf(SessionError, "unknown session_id %q", id)
	}
	delete(s.mcpS, id)
	s.freedLocked()
	s.log.Info("close", "transport", "mcp", "session", id)
	return nil
}

// mcpSessionTools plays the MCP tools on one MCP session's environment.
type mcpSessionTools struct {
	s  *Server
	ms *mcpSession
}

func (t mcpSessionTools) reset(ctx context.Context, o ResetOptions) (Observation, error) {
	return t.play(func() (Observation, error) { return t.ms.env.Reset(ctx, o) })
}

func (t mcpSessionTools) say(ctx context.Context, _ string, a Action) (Observation, error) {
	return t.play(func() (Observation, error) {
		obs, _, _, err := t.ms.env.Step(ctx, a)
		return obs, err
	})
}

// play runs a reset or say on the session, marked busy so that the idle
// lease cannot take its slot meanwhile; a success renews the lease.
// Errors: SESSION_ERROR when the session was closed or evicted since it
// was looked up, and f's.
func (t mcpSessionTools) play(f func() (Observation, error)) (Observation, error) {
	s, ms := t.s, t.ms
	s.mu.Lock()
	if s.mcpS[ms.id] != ms {
		s.mu.Unlock()
		return Observation{}, errf(SessionError, "session %s was closed", ms.id)
	}
	ms.busy++
	s.mu.Unlock()
	ms.mu.Lock()
	obs, err := f()
	ms.mu.Unlock()
	s.mu.Lock()
	ms.busy--
	if err == nil {
		ms.played = s.now()
	}
	s.mu.Unlock()
	return obs, err
}

func (mcpSessionTools) needsEpisode() bool { return false }

// The session methods of the HTTP transport.

func (t httpTools) createSession(ctx context.Context) (string, error) {
	return t.s.createMCPSession(ctx, t.client)
}

func (t httpTools) closeSession(id string) error { return t.s.closeMCPSession(id) }

func (t httpTools) session(id string) (mcpTools, error) {
	ms, err := t.s.mcpSessionByID(id)
	if err != nil {
		return nil, err
	}
	return mcpSessionTools{t.s, ms}, nil
}

// The session methods of the WebSocket transport.

func (t wsTools) createSession(context.Context) (string, error) { return t.ws.id, nil }

func (t wsTools) closeSession(id string) error {
	if id == t.ws.id {
		return errf(ValidationError, "cannot close this WebSocket's own session over MCP: send {\"type\": \"close\"}")
	}
	return t.ws.s.closeMCPSession(id)
}

func (t wsTools) session(string) (mcpTools, error) { return t, nil }
