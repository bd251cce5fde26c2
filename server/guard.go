package server

import (
	"crypto/subtle"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// Defaults of the abuse guards in Config.
const (
	// DefaultIdleLease is how long a session may go without playing (a
	// reset or a step, over HTTP, WebSocket or MCP) before a new session
	// that finds the server full, or its client's share full, may take
	// its slot.
	//
	// Choice: 30 s, well under the 10-minute idle timeout, so that 64
	// sessions that reset (and step, or not) and then go quiet lock
	// nobody out for longer than that, and long enough for a trainer to
	// generate a batch's next utterances between two steps. The lease is
	// enforced only when a new session needs the slot: an idle server
	// leaves slow clients alone until IdleTimeout.
	DefaultIdleLease = 30 * time.Second
	// DefaultRemotePerClientDivisor: a non-loopback client may hold at
	// most MaxSessions/4 (at least 1) sessions by default; a loopback
	// address (the trainer on the same machine) may hold all.
	DefaultRemotePerClientDivisor = 4
	// clientPrefixV6 is the IPv6 prefix length one client is counted by
	// (clientKey).
	//
	// Choice: /64, the smallest block an ISP or cloud hands one host or
	// site (RFC 6177): counting single IPv6 addresses would let one host
	// take every slot from the 2^64 addresses of its own subnet.
	clientPrefixV6 = 64
)

// clientAddr is the client a request's per-client cap counts against
// (clientKey of the TCP peer's IP; forwarding headers are not trusted: a
// server behind a proxy sees the proxy's address).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return clientKey(host)
}

// clientKey names the client of peer IP host: an IPv4 address (also when
// IPv4-mapped) or ::1 as it is, any other IPv6 address as its /64 prefix
// ("2001:db8:1:2::/64"); a host that is no IP as it is.
func clientKey(host string) string {
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	addr = addr.Unmap()
	if addr.Is4() || addr.IsLoopback() {
		return addr.String()
	}
	p, err := addr.WithZone("").Prefix(clientPrefixV6)
	if err != nil {
		return addr.String()
	}
	return p.String()
}

// isLoopbackAddr reports whether client (clientKey) is a loopback address.
func isLoopbackAddr(client string) bool {
	addr, err := netip.ParseAddr(client)
	return err == nil && addr.Unmap().IsLoopback()
}

// perClientLimit is the number of sessions one client may hold.
func (s *Server) perClientLimit(client string) int {
	if s.cfg.MaxSessionsPerClient > 0 {
		return s.cfg.MaxSessionsPerClient
	}
	if isLoopbackAddr(client) {
		return s.cfg.MaxSessions
	}
	return max(1, s.cfg.MaxSessions/DefaultRemotePerClientDivisor)
}

// clientHeldLocked counts the session slots client holds: its open
// WebSocket sessions, MCP sessions and unfinished HTTP episodes. s.mu
// must be held.
func (s *Server) clientHeldLocked(client string) int {
	n := 0
	for _, ms := range s.mcpS {
		if ms.client == client {
			n++
		}
	}
	for ws := range s.ws {
		if ws.client == client {
			n++
		}
	}
	for _, ep := range s.http {
		if !ep.done && ep.client == client {
			n++
		}
	}
	return n
}

// clientCapErrorLocked returns CAPACITY_REACHED when client already holds
// its per-client share of the slots (after taking back one of its own
// sessions idle past the lease, evictIdleLocked), else nil. s.mu must be
// held.
func (s *Server) clientCapErrorLocked(client string) *Error {
	limit := s.perClientLimit(client)
	if limit >= s.cfg.MaxSessions {
		// a share of every slot is the global cap, whose admission waits
		// CapacityWait for a freed slot before refusing (admitLocked)
		return nil
	}
	s.activeLocked() // forget expired episodes first
	held := s.clientHeldLocked(client)
	if held >= limit && s.evictIdleLocked(client) {
		held--
	}
	if held >= limit {
		return errf(CapacityReached, "client %s holds %d of its %d sessions; finish or close one (POST /close) first", client, held, limit)
	}
	return nil
}

// evictIdleLocked frees the slot of the session (of client, or of any
// client when client is "") that has gone longest without playing, if
// that is longer than IdleLease and it is not handling a request: an
// HTTP episode (reset, stepped or not) or MCP session is forgotten (its id
// then gets SESSION_ERROR), a WebSocket session gets SESSION_ERROR and is closed
// with 1008. It reports whether it freed one, and wakes waiting sessions
// when it did. s.mu must be held. admitLocked calls it when every slot
// is held, clientCapErrorLocked when the client holds its share: one
// eviction per session admitted, so an idle session keeps its slot while
// no one needs it.
func (s *Server) evictIdleLocked(client string) bool {
	now := s.now()
	var (
		oldest    time.Time
		victimID  string
		victimWS  *wsSession
		victimMCP *mcpSession
	)
	none := func() bool { return victimID == "" && victimWS == nil && victimMCP == nil }
	for id, ep := range s.http {
		if (client == "" || ep.client == client) && !ep.done && ep.busy == 0 && now.Sub(ep.played) > s.cfg.IdleLease &&
			(none() || ep.played.Before(oldest)) {
			oldest, victimID, victimWS, victimMCP = ep.played, id, nil, nil
		}
	}
	for _, ms := range s.mcpS {
		if (client == "" || ms.client == client) && ms.busy == 0 && now.Sub(ms.played) > s.cfg.IdleLease &&
			(none() || ms.played.Before(oldest)) {
			oldest, victimID, victimWS, victimMCP = ms.played, "", nil, ms
		}
	}
	for ws := range s.ws {
		if client != "" && ws.client != client {
			continue
		}
		ws.mu.Lock()
		played, idle := ws.played, !ws.busy && !ws.expired
		ws.mu.Unlock()
		if idle && now.Sub(played) > s.cfg.IdleLease && (none() || played.Before(oldest)) {
			oldest, victimID, victimWS, victimMCP = played, "", ws, nil
		}
	}
	switch {
	case victimID != "":
		delete(s.http, victimID)
		s.log.Info("evicted", "transport", "http", "episode", victimID, "reason", "idle past the lease while the server was full")
	case victimMCP != nil:
		delete(s.mcpS, victimMCP.id)
		s.log.Info("evicted", "transport", "mcp", "session", victimMCP.id, "reason", "idle past the lease while the server was full")
	case victimWS != nil:
		ws := victimWS
		ws.mu.Lock()
		if ws.busy || ws.expired { // it started a message meanwhile
			ws.mu.Unlock()
			return false
		}
		ws.expired = true // its idle timer and reader stand down
		ws.mu.Unlock()
		delete(s.ws, ws)
		s.log.Info("evicted", "transport", "ws", "reason", "idle past the lease while the server was full")
		go func() {
			ws.sendError(errf(SessionError, "session closed: no reset or step for over %v while other clients waited for a slot", s.cfg.IdleLease))
			ws.conn.Close(websocket.StatusPolicyViolation, "idle past the lease")
		}()
	default:
		return false
	}
	s.freedLocked()
	return true
}

// guardErrors answer requests refused before any endpoint runs.
var (
	errCrossOrigin = &Error{Code: ValidationError, Status: http.StatusForbidden,
		Message: "cross-origin browser requests are refused (an Origin or Sec-Fetch-Site header that is not allowed; see --allow-origin)"}
	errNotJSON = &Error{Code: ValidationError, Status: http.StatusUnsupportedMediaType,
		Message: "a POST body must be sent with Content-Type: application/json"}
	errToken = &Error{Code: ValidationError, Status: http.StatusUnauthorized,
		Message: "missing or wrong bearer token: send Authorization: Bearer TOKEN (the value of the server's --token-env variable)"}
	errHealthOnly = &Error{Code: CapacityReached, Status: http.StatusServiceUnavailable,
		Message: "connection limit reached: this connection may only ask GET /health; retry later"}
)

// guard wraps the endpoints with the checks every request passes, in this
// order: a connection over MaxConns (a reserved one) may only ask GET
// /health; a browser's cross-origin request is refused (an Origin header
// not in AllowOrigins, or a Sec-Fetch-Site other than "none" or
// "same-origin" without an allowed Origin); a POST with a body must be
// application/json (browsers cannot send that cross-origin without a
// preflight this server never answers); with a Token, every request but
// GET /health must carry "Authorization: Bearer TOKEN". A request body is
// read under ReadTimeout.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		health := r.Method == http.MethodGet && r.URL.Path == "/health"
		if reserved, _ := r.Context().Value(reservedConnKey{}).(bool); reserved && !health {
			w.Header().Set("Connection", "close")
			writeError(w, errHealthOnly)
			return
		}
		if !s.originAllowed(r) {
			writeError(w, errCrossOrigin)
			return
		}
		if r.Method == http.MethodPost && r.ContentLength != 0 {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				writeError(w, errNotJSON)
				return
			}
		}
		if s.cfg.Token != "" && !health {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="persuarena"`)
				writeError(w, errToken)
				return
			}
		}
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody && s.cfg.ReadTimeout > 0 {
			// The deadline covers the body only: it is lifted at the
			// body's end, so that a long step is not cut by it.
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(s.cfg.ReadTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// originAllowed reports whether r is not a cross-origin browser request.
// Non-browser clients (curl, Python, Go) send neither Origin nor
// Sec-Fetch-Site; a browser opening a URL itself sends Sec-Fetch-Site
// "none".
func (s *Server) originAllowed(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		return slices.Contains(s.cfg.AllowOrigins, o)
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "none", "same-origin":
		return true
	}
	return false
}

// deadlineBody lifts the connection's read deadline once the body has
// been read to its end (or failed).
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		if errors.Is(err, io.EOF) {
			b.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}

// Settings returns the server's configuration with every default filled
// in (Token included: callers print it never).
func (s *Server) Settings() Config { return s.cfg }

// engineAnswer matches an engine's HTTP error as llm quotes it: the
// status, then the (scrubbed) body to the end of the message.
var engineAnswer = regexp.MustCompile(`(HTTP \d{3}): .*?( \(the episode ended as failed\))?$`)

// publicError returns e as clients may see it: an engine's error body is
// cut from an EXECUTION_ERROR (it may carry the engine's internals, model
// paths or prompt fragments), leaving its status. The stored episode
// keeps the whole error.
func publicError(e *Error) *Error {
	if e.Code != ExecutionError || !engineAnswer.MatchString(e.Message) {
		return e
	}
	c := *e
	c.Message = engineAnswer.ReplaceAllString(e.Message, "$1 (the engine's answer is withheld from clients)$2")
	return &c
}
