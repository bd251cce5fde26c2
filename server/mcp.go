package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
)

// MCP (Model Context Protocol) over JSON-RPC 2.0: the persuader's turn and
// the episode start as MCP tools, so that MCP clients and agent harnesses
// can play episodes, and `openenv validate` finds the endpoint it requires.
// The shape follows OpenEnv's server (huggingface/OpenEnv 385de5e,
// src/openenv/core/env_server/http_server.py:683-975, mcp_handler;
// :1278-1306, POST /mcp; :1441-1458, the "mcp" message on /ws;
// mcp_types.py:93-175, JsonRpcRequest with extra="forbid" and
// JsonRpcResponse, which always carries "id" and either "result" or
// "error"), and the MCP specification's initialize, ping, tools/list and
// tools/call (modelcontextprotocol.io/specification/2025-06-18).
//
// Transports: POST /mcp, one request per body, every answer HTTP 200 as in
// OpenEnv (a notification gets 202 and no body); and the /ws channel's
// {"type":"mcp","data":REQUEST} message, answered by {"type":"mcp",
// "data":RESPONSE}. Over HTTP the tools act on server-held episodes (the
// reset tool returns metadata.episode_id; say takes it back), or, with
// params.session_id, on the environment of an MCP session opened by
// openenv/session/create (mcpsession.go); over /ws on the connection's own
// episode.

// JSON-RPC 2.0 error codes (jsonrpc.org/specification#error_object).
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
	// rpcServerError is the implementation-defined server error OpenEnv
	// answers a refused openenv/session/create with (mcp_types.py:48).
	rpcServerError = -32000
)

// MCPProtocolVersions are the MCP revisions initialize accepts, newest
// first; a client asking for another gets the newest (MCP lifecycle:
// version negotiation).
var MCPProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
}

// rpcResponse always has "id" (null when the request's is unknown) and
// exactly one of "result" and "error".
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

var rpcNull = json.RawMessage("null")

func rpcFail(id json.RawMessage, code int, msg string) *rpcResponse {
	if id == nil {
		id = rpcNull
	}
	return &rpcResponse{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: code, Message: msg}}
}

// mcpTools is what the tools act on: the server's HTTP episodes or one
// WebSocket session's environment.
type mcpTools interface {
	reset(ctx context.Context, opts ResetOptions) (Observation, error)
	// say plays one turn; episodeID is the HTTP episode ("" over /ws).
	say(ctx context.Context, episodeID string, a Action) (Observation, error)
	// needsEpisode reports whether say needs an episode_id.
	needsEpisode() bool
}

// mcpTransport is what one transport's requests act on: its own tools,
// and OpenEnv's session methods (mcpsession.go).
type mcpTransport interface {
	mcpTools
	// createSession opens a session (HTTP) or names this one (/ws).
	createSession(ctx context.Context) (string, error)
	// closeSession closes the session id.
	closeSession(id string) error
	// session returns the tools of the session id that a request's
	// params.session_id names.
	session(id string) (mcpTools, error)
}

// httpTools plays MCP tools on server-held episodes for the client at
// address client (clientAddr), whose per-client cap a reset counts against.
type httpTools struct {
	s      *Server
	client string
}

func (t httpTools) reset(ctx context.Context, o ResetOptions) (Observation, error) {
	return t.s.resetHTTP(ctx, t.client, o)
}
func (t httpTools) say(ctx context.Context, id string, a Action) (Observation, error) {
	return t.s.stepHTTP(ctx, id, a)
}
func (httpTools) needsEpisode() bool { return true }

type wsTools struct{ ws *wsSession }

func (t wsTools) reset(ctx context.Context, o ResetOptions) (Observation, error) {
	obs, err := t.ws.env.Reset(ctx, o)
	t.ws.playing = t.ws.playing || err == nil
	return obs, err
}
func (t wsTools) say(ctx context.Context, _ string, a Action) (Observation, error) {
	obs, _, _, err := t.ws.env.Step(ctx, a)
	t.ws.playing = t.ws.playing || err == nil
	return obs, err
}
func (wsTools) needsEpisode() bool { return false }

// MCPTool is one entry of tools/list (MCP Tool: name, title, description,
// inputSchema, a JSON Schema object).
type MCPTool struct {
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
}

// MCPTools returns the tools tools/list sends: "reset" (start an episode;
// its arguments are the reset options) and "say" (one persuader
// utterance). Each call returns the reset/step response (observation,
// reward, done) as structuredContent and as JSON text.
//
// Choice: the tool is named "reset" although OpenEnv reserves that name
// for an MCPEnvironment's own tools (mcp_types.py:320,
// RESERVED_TOOL_NAMES), because it is the same operation as the Gym-style
// reset, not another tool shadowing it, and POST /mcp has no other way to
// start an episode.
func MCPTools() []MCPTool {
	return []MCPTool{
		{Name: "reset", Title: "Start an episode",
			Description: "Start a persuasion episode and get the public scenario. Over HTTP the episode is held by the server: pass the returned observation.metadata.episode_id to say. All arguments are optional.",
			InputSchema: resetOptionsSchema()},
		{Name: "say", Title: "Say one persuader turn",
			Description: "Say one persuader utterance in the episode; returns the persuadee's reply, decision, reward and whether the episode is done. Over HTTP episode_id is required.",
			InputSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"message":    map[string]any{"type": "string", "minLength": 1, "description": "The persuader's utterance (not blank; at most limits.max_message_bytes bytes, see /metadata)."},
					"episode_id": map[string]any{"type": "string", "description": "The episode the reset tool returned (HTTP /mcp only)."},
				},
				"required":             []string{"message"},
				"additionalProperties": false,
			}},
	}
}

// handleMCP is POST /mcp.
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	resp := s.mcp(r.Context(), body, httpTools{s, clientAddr(r)})
	if resp == nil {
		w.WriteHeader(http.StatusAccepted) // a notification: no answer
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// mcp answers one JSON-RPC message; nil for a notification.
func (s *Server) mcp(ctx context.Context, body []byte, tr mcpTransport) *rpcResponse {
	var t mcpTools = tr
	if !json.Valid(body) {
		return rpcFail(nil, rpcParseError, "Parse error: the body is not valid JSON")
	}
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' {
		return rpcFail(nil, rpcInvalidRequest, "Invalid Request: want one JSON-RPC 2.0 request object (batches are not supported)")
	}
	var req rpcRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return rpcFail(nil, rpcInvalidRequest, "Invalid Request: "+err.Error())
	}
	id := req.ID
	if id != nil {
		var v any
		json.Unmarshal(id, &v)
		switch v.(type) {
		case string, float64, nil:
		default:
			return rpcFail(nil, rpcInvalidRequest, "Invalid Request: id must be a string, a number or null")
		}
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		return rpcFail(id, rpcInvalidRequest, `Invalid Request: want "jsonrpc": "2.0" and a "method"`)
	}
	if id == nil {
		// A notification (notifications/initialized, ...) is never
		// answered, not even when its params are bad (JSON-RPC 2.0,
		// section 4.1).
		return nil
	}
	var params map[string]json.RawMessage
	if len(req.Params) > 0 && string(req.Params) != "null" {
		if err := json.Unmarshal(req.Params, &params); err != nil {
			return rpcFail(id, rpcInvalidParams, "Params must be an object")
		}
	}
	ok := func(v any) *rpcResponse { return &rpcResponse{JSONRPC: "2.0", ID: id, Result: v} }
	var sessionID string
	if raw, has := params["session_id"]; has {
		if err := json.Unmarshal(raw, &sessionID); err != nil || sessionID == "" {
			return rpcFail(id, rpcInvalidParams, "session_id must be a non-empty string")
		}
	}
	switch req.Method {
	case "openenv/session/create":
		sid, err := tr.createSession(ctx)
		if err != nil {
			return rpcFail(id, rpcServerError, asError(err).Message)
		}
		return ok(map[string]any{"session_id": sid})
	case "openenv/session/close":
		if sessionID == "" {
			return rpcFail(id, rpcInvalidParams, "Invalid params - 'session_id' is required")
		}
		if err := tr.closeSession(sessionID); err != nil {
			e := asError(err)
			code := rpcInvalidParams
			if e.Code == ValidationError {
				code = rpcInvalidRequest
			}
			return rpcFail(id, code, e.Message)
		}
		return ok(map[string]any{"session_id": sessionID, "closed": true})
	}
	if sessionID != "" {
		st, err := tr.session(sessionID)
		if err != nil {
			return rpcFail(id, rpcInvalidParams, asError(err).Message)
		}
		t = st
	}
	switch req.Method {
	case "initialize":
		var want string
		json.Unmarshal(params["protocolVersion"], &want)
		v := MCPProtocolVersions[0]
		if slices.Contains(MCPProtocolVersions, want) {
			v = want
		}
		return ok(map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
			"serverInfo":      map[string]any{"name": "persuarena", "title": "PersuArena", "version": s.cfg.Version},
			"instructions":    "You are the persuader. Call reset to start an episode, then say once per turn until done. Persuade honestly and respectfully.",
		})
	case "ping":
		return ok(map[string]any{})
	case "tools/list":
		return ok(map[string]any{"tools": MCPTools()})
	case "tools/call":
		var name string
		if err := json.Unmarshal(params["name"], &name); err != nil || name == "" {
			return rpcFail(id, rpcInvalidParams, "Missing 'name' in params")
		}
		args := params["arguments"]
		var obs Observation
		var err error
		switch name {
		case "reset":
			var opts ResetOptions
			if opts, err = DecodeResetOptions(args); err == nil {
				obs, err = t.reset(ctx, opts)
			}
		case "say":
			var a struct {
				Message   string `json:"message"`
				EpisodeID string `json:"episode_id"`
			}
			if len(args) == 0 || string(args) == "null" {
				err = errf(ValidationError, "say needs arguments {\"message\": \"...\"}")
			} else if err = strictDecode(args, &a, "say arguments"); err == nil {
				if t.needsEpisode() && a.EpisodeID == "" {
					err = errf(ValidationError, "say over HTTP needs episode_id (the reset tool's observation.metadata.episode_id)")
				} else {
					obs, err = t.say(ctx, a.EpisodeID, Action{Message: a.Message})
				}
			}
		default:
			return rpcFail(id, rpcInvalidParams, "Unknown tool: "+name+" (want reset or say)")
		}
		if err != nil {
			// A tool's own failure is a result with isError (MCP tools:
			// error handling), so the model can read and recover.
			e := asError(err)
			return ok(map[string]any{
				"content":           []map[string]any{{"type": "text", "text": string(e.Code) + ": " + e.Message}},
				"structuredContent": ErrorData{Message: e.Message, Code: e.Code},
				"isError":           true,
			})
		}
		res := obs.Result()
		text, _ := json.Marshal(res)
		return ok(map[string]any{
			"content":           []map[string]any{{"type": "text", "text": string(text)}},
			"structuredContent": res,
			"isError":           false,
		})
	}
	return rpcFail(id, rpcMethodNotFound, "Method not found: "+req.Method)
}
