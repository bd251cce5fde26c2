package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Message is one WebSocket message in either direction (OpenEnv's
// WSResetMessage, WSStepMessage, WSStateMessage, WSCloseMessage from the
// client; WSObservationResponse, WSStateResponse, WSErrorResponse from the
// server).
type Message struct {
	// Type is reset, step, state or close (client); observation, state or
	// error (server).
	Type string `json:"type"`
	// Data is reset's ResetOptions (optional), step's Action (required),
	// absent for state and close; the server sends a Result, a State or an
	// ErrorData.
	Data any `json:"data,omitempty"`
}

// ErrorData is the data of a server "error" message.
type ErrorData struct {
	Message string `json:"message"`
	Code    Code   `json:"code"`
}

// wsSession is one WebSocket connection: one Env, one session slot.
type wsSession struct {
	s      *Server
	conn   *websocket.Conn
	env    *Env
	client string // the peer's IP, for the per-client cap (guard.go)
	// id names the session to MCP's openenv/session/create over this
	// connection ("ws-" and 26 random characters).
	id string

	mu      sync.Mutex
	busy    bool      // a message is being handled
	last    time.Time // the last message's end (IdleTimeout)
	played  time.Time // the last reset or step's end, or the connect (guard.go's idle lease)
	expired bool
	timer   *time.Timer
	// playing is set by the handler of a successful reset or step (also
	// an MCP reset or say) and read after it, on the session's goroutine.
	playing bool

	// wmu guards out and enc, the session's reused encoding buffer (the
	// idle timer's error message may be written from its own goroutine).
	wmu sync.Mutex
	out bytes.Buffer
	enc *json.Encoder
}

// handleWS is the stateful episode channel WS /ws. Each connection gets
// its own Env and holds a session slot until it closes or drops (see
// run). Over capacity the connection waits up to Config.CapacityWait for a
// slot; then the server sends CAPACITY_REACHED and closes with 1013 (try
// again later), as OpenEnv does.
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept has answered the request
	}
	conn.SetReadLimit(s.frame)
	now := s.now()
	sess := &wsSession{s: s, conn: conn, env: s.f.NewEnv(), last: now, played: now, client: clientAddr(r), id: "ws-" + rand.Text()}
	s.mu.Lock()
	if e := s.clientCapErrorLocked(sess.client); e != nil {
		s.mu.Unlock()
		sess.sendError(e)
		conn.Close(websocket.StatusTryAgainLater, "per-client session limit reached")
		return
	}
	// The request's context says nothing once Accept has hijacked the
	// connection; the server's ends at shutdown.
	if n, ok := s.admitLocked(s.baseCtx); !ok {
		if s.closed {
			s.mu.Unlock()
			sess.sendError(errf(SessionError, "server is shutting down"))
			conn.Close(websocket.StatusGoingAway, "server shutting down")
			return
		}
		s.mu.Unlock()
		sess.sendError(s.capacityError(n))
		conn.Close(websocket.StatusTryAgainLater, "capacity reached")
		return
	}
	s.ws[sess] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer func() {
		s.release(sess)
		s.wg.Done()
	}()
	sess.run()
}

// release frees the session's slot; it may be called more than once.
func (s *Server) release(ws *wsSession) {
	s.mu.Lock()
	if _, ok := s.ws[ws]; ok {
		delete(s.ws, ws)
		s.freedLocked()
	}
	s.mu.Unlock()
}

// run reads and answers messages until the connection ends.
//
// A reader goroutine reads every frame, so that a dropped connection is
// seen at once, even during a step: its slot is freed there and then
// (before the handler unwinds), and a step in progress is abandoned (its
// context is cancelled; the episode is not stored) unless the server is
// shutting down, where the step runs to its end as Close documents.
func (ws *wsSession) run() {
	s := ws.s
	ctx, cancel := context.WithCancel(s.baseCtx)
	defer cancel()
	idle := s.cfg.IdleTimeout
	ws.mu.Lock()
	ws.timer = time.AfterFunc(idle, ws.onIdle)
	ws.mu.Unlock()
	defer ws.timer.Stop()
	defer ws.conn.CloseNow()
	msgs := make(chan []byte)
	go func() {
		defer close(msgs)
		for {
			// Read is unblocked by the connection closing (peer close or
			// drop, idle close, Server.Close), not by ctx, so that
			// shutdown can send 1001.
			_, data, err := ws.conn.Read(context.Background())
			if err != nil {
				s.release(ws)
				if !s.isClosed() {
					cancel()
				}
				return
			}
			select {
			case msgs <- data:
			case <-ctx.Done():
				return
			}
		}
	}()
	for data := range msgs {
		ws.mu.Lock()
		if ws.expired {
			ws.mu.Unlock()
			return
		}
		ws.busy = true
		ws.mu.Unlock()
		ws.playing = false

		reply, closeReq := ws.handle(ctx, data)
		if closeReq {
			s.log.Info("close", "transport", "ws", "episode", ws.env.id)
			s.release(ws)
			ws.conn.Close(websocket.StatusNormalClosure, "")
			return
		}
		if ctx.Err() != nil {
			return // the connection dropped during the step
		}
		var err error
		if reply.Type != "" {
			err = ws.write(ctx, reply)
		}
		ws.mu.Lock()
		ws.busy = false
		ws.last = s.now()
		if ws.playing {
			ws.played = ws.last
		}
		ws.timer.Reset(idle)
		ws.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// onIdle closes the session after IdleTimeout without a message: it sends
// SESSION_ERROR, then closes with 1008 (policy violation).
func (ws *wsSession) onIdle() {
	idle := ws.s.cfg.IdleTimeout
	ws.mu.Lock()
	if ws.busy || ws.expired {
		ws.mu.Unlock()
		return // the handler re-arms the timer when done
	}
	if since := ws.s.now().Sub(ws.last); since < idle {
		ws.timer.Reset(idle - since)
		ws.mu.Unlock()
		return
	}
	ws.expired = true
	ws.mu.Unlock()
	ws.s.log.Info("idle timeout", "transport", "ws", "episode", ws.env.id)
	ws.sendError(errf(SessionError, "session closed after %v without a message", idle))
	ws.conn.Close(websocket.StatusPolicyViolation, "idle timeout")
}

// write sends m as one text message, encoded into the session's reused
// buffer (no HTML escaping, no trailing newline).
func (ws *wsSession) write(ctx context.Context, m Message) error {
	ws.wmu.Lock()
	defer ws.wmu.Unlock()
	if ws.enc == nil {
		ws.enc = json.NewEncoder(&ws.out)
		ws.enc.SetEscapeHTML(false)
	}
	ws.out.Reset()
	if err := ws.enc.Encode(m); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return ws.conn.Write(wctx, websocket.MessageText, bytes.TrimSuffix(ws.out.Bytes(), []byte("\n")))
}

func (ws *wsSession) sendError(e *Error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws.write(ctx, errorMessage(e))
}

func errorMessage(err error) Message {
	e := publicError(asError(err))
	return Message{Type: "error", Data: ErrorData{Message: e.Message, Code: e.Code}}
}

// handle answers one client message; closeReq is true for "close".
func (ws *wsSession) handle(ctx context.Context, data []byte) (reply Message, closeReq bool) {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(data, &env); err != nil {
		// Unmarshal checks the whole message is JSON before decoding.
		if _, bad := errors.AsType[*json.SyntaxError](err); bad {
			return errorMessage(errf(InvalidJSON, "message is not valid JSON")), false
		}
		return errorMessage(errf(ValidationError, "message must be a JSON object {\"type\": ..., \"data\": ...}")), false
	}
	var typ string
	if raw, ok := env["type"]; !ok || json.Unmarshal(raw, &typ) != nil {
		return errorMessage(errf(UnknownType, "message has no string \"type\" (want reset, step, state or close)")), false
	}
	var extra []string
	for k := range env {
		if k != "type" && k != "data" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return errorMessage(errf(ValidationError, "unknown message field %q (want type and data)", extra[0])), false
	}
	switch typ {
	case "reset":
		opts, err := DecodeResetOptions(env["data"])
		if err != nil {
			return errorMessage(err), false
		}
		obs, err := ws.env.Reset(ctx, opts)
		if err != nil {
			return errorMessage(err), false
		}
		ws.playing = true
		ws.s.log.Info("reset", "transport", "ws", "episode", obs.Metadata.EpisodeID, "scenario", obs.Scenario.ID)
		return Message{Type: "observation", Data: obs.Result()}, false
	case "step":
		a, err := DecodeAction(env["data"])
		if err != nil {
			return errorMessage(err), false
		}
		obs, _, _, err := ws.env.Step(ctx, a)
		if err != nil {
			return errorMessage(err), false
		}
		ws.playing = true
		if obs.Done {
			ws.s.log.Info("done", "transport", "ws", "episode", obs.Metadata.EpisodeID, "terminal", obs.Metadata.Terminal)
		}
		return Message{Type: "observation", Data: obs.Result()}, false
	case "state":
		return Message{Type: "state", Data: ws.env.State()}, false
	case "close":
		return Message{}, true
	case "mcp":
		// An MCP JSON-RPC request on this session's environment (mcp.go);
		// a notification gets no reply.
		if resp := ws.s.mcp(ctx, env["data"], wsTools{ws}); resp != nil {
			return Message{Type: "mcp", Data: resp}, false
		}
		return Message{}, false
	}
	return errorMessage(errf(UnknownType, "unknown message type %q (want reset, step, state, close or mcp)", typ)), false
}
