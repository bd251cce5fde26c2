package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// rpc posts one JSON-RPC body to /mcp and decodes the answer strictly:
// jsonrpc, id and exactly one of result and error (mcp_types.py:135-148).
func rpc(t *testing.T, url, body string) (id any, result map[string]any, rerr map[string]any) {
	t.Helper()
	status, raw := httpDo(t, "POST", url+"/mcp", body)
	if status != 200 {
		t.Fatalf("POST /mcp %s: %d %s", body, status, raw)
	}
	return decodeRPC(t, raw)
}

func decodeRPC(t *testing.T, raw []byte) (id any, result map[string]any, rerr map[string]any) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	_, hasID := top["id"]
	_, hasResult := top["result"]
	_, hasErr := top["error"]
	if string(top["jsonrpc"]) != `"2.0"` || !hasID || hasResult == hasErr || len(top) != 3 {
		t.Fatalf("not a JSON-RPC 2.0 response: %s", raw)
	}
	json.Unmarshal(top["id"], &id)
	json.Unmarshal(top["result"], &result)
	json.Unmarshal(top["error"], &rerr)
	return id, result, rerr
}

// toolResult returns a tools/call result's structuredContent as a Result
// (checking its text content carries the same JSON), or the error text
// when isError.
func toolResult(t *testing.T, res map[string]any) (Result, string) {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("tool result content %v", res)
	}
	item := content[0].(map[string]any)
	text, _ := item["text"].(string)
	if item["type"] != "text" {
		t.Fatalf("content %v", item)
	}
	if res["isError"] == true {
		return Result{}, text
	}
	var fromText, fromStruct Result
	if err := json.Unmarshal([]byte(text), &fromText); err != nil {
		t.Fatalf("text content %q: %v", text, err)
	}
	if err := json.Unmarshal([]byte(mustJSON(t, res["structuredContent"])), &fromStruct); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromText, fromStruct) {
		t.Fatalf("text %s and structuredContent %v differ", text, res["structuredContent"])
	}
	return fromStruct, ""
}

// The MCP lifecycle and tools over POST /mcp: initialize negotiates the
// version, tools/list names reset and say, and an episode played through
// tools/call gives the same observations and rewards as POST /reset and
// /step with the same seed and messages.
func TestMCPHTTPEpisode(t *testing.T) {
	cfg := simConfig(t)
	cfg.Version = "1.2.3-test"
	_, ts := start(t, cfg)
	id, res, e := rpc(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if e != nil || id != 1.0 || res["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize: id %v result %v error %v", id, res, e)
	}
	if si := res["serverInfo"].(map[string]any); si["name"] != "persuarena" || si["version"] != "1.2.3-test" {
		t.Fatalf("serverInfo %v", si)
	}
	if caps := res["capabilities"].(map[string]any); caps["tools"] == nil {
		t.Fatalf("capabilities %v", caps)
	}
	_, res, _ = rpc(t, ts.URL, `{"jsonrpc":"2.0","id":"v","method":"initialize","params":{"protocolVersion":"1999-01-01"}}`)
	if res["protocolVersion"] != MCPProtocolVersions[0] {
		t.Fatalf("unknown version answered %v, want the newest", res["protocolVersion"])
	}
	// A notification gets 202 and no body.
	status, raw := httpDo(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if status != 202 || len(raw) != 0 {
		t.Fatalf("notification: %d %q", status, raw)
	}
	// Nor is one with params that are not an object (JSON-RPC 2.0, 4.1:
	// a notification is never answered).
	status, raw = httpDo(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/progress","params":[1]}`)
	if status != 202 || len(raw) != 0 {
		t.Fatalf("notification with array params: %d %q", status, raw)
	}
	if _, res, e = rpc(t, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); e != nil || len(res) != 0 {
		t.Fatalf("ping: %v %v", res, e)
	}
	_, res, _ = rpc(t, ts.URL, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`)
	var names []string
	for _, tool := range res["tools"].([]any) {
		tm := tool.(map[string]any)
		names = append(names, tm["name"].(string))
		if tm["inputSchema"].(map[string]any)["type"] != "object" || tm["description"] == "" {
			t.Fatalf("tool %v", tm)
		}
	}
	if strings.Join(names, ",") != "reset,say" {
		t.Fatalf("tools %v", names)
	}

	call := func(name string, args any) (Result, string) {
		t.Helper()
		_, res, e := rpc(t, ts.URL, mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}}))
		if e != nil {
			t.Fatalf("tools/call %s: %v", name, e)
		}
		return toolResult(t, res)
	}
	reset := map[string]any{"seed": 7, "set": "arena", "scenario_id": "arena-train-0029", "reward": "both"}
	r, errText := call("reset", reset)
	epID := r.Observation.Metadata.EpisodeID
	if errText != "" || epID == "" || r.Observation.Scenario == nil || r.Reward != nil {
		t.Fatalf("reset tool: %+v %q", r, errText)
	}
	if _, errText = call("say", map[string]any{"message": scriptLines[0]}); !strings.HasPrefix(errText, "VALIDATION_ERROR: say over HTTP needs episode_id") {
		t.Fatalf("say without episode_id: %q", errText)
	}
	var viaMCP []Result
	for _, line := range scriptLines {
		r, errText = call("say", map[string]any{"message": line, "episode_id": epID})
		if errText != "" {
			t.Fatalf("say: %s", errText)
		}
		viaMCP = append(viaMCP, r)
	}
	last := viaMCP[len(viaMCP)-1]
	if !last.Done || last.Observation.Metadata.Terminal != "accept" || *last.Reward != *last.Observation.Metadata.Dense+3 {
		t.Fatalf("last say: %+v", last)
	}
	if _, errText = call("say", map[string]any{"message": "More?", "episode_id": epID}); !strings.HasPrefix(errText, "EXECUTION_ERROR: ") {
		t.Fatalf("say after done: %q", errText)
	}

	// The same episode over POST /reset and /step.
	status, raw = httpDo(t, "POST", ts.URL+"/reset", mustJSON(t, reset))
	var hr Result
	if json.Unmarshal(raw, &hr); status != 200 {
		t.Fatalf("reset %d %s", status, raw)
	}
	for i, line := range scriptLines {
		_, raw = httpDo(t, "POST", ts.URL+"/step", mustJSON(t, map[string]any{"episode_id": hr.Observation.Metadata.EpisodeID, "action": map[string]any{"message": line}}))
		var sr Result
		json.Unmarshal(raw, &sr)
		sr.Observation.Metadata.EpisodeID, sr.Metadata.EpisodeID = epID, epID
		if !reflect.DeepEqual(sr, viaMCP[i]) {
			t.Fatalf("turn %d: /step %+v, MCP %+v", i+1, sr, viaMCP[i])
		}
	}
}

// JSON-RPC errors: what openenv validate sends ({}), bad JSON, batches,
// unknown methods and tools, bad params, bad ids. Every answer is HTTP 200.
func TestMCPErrors(t *testing.T) {
	_, ts := start(t, simConfig(t))
	for _, c := range []struct {
		body string
		id   any
		code float64
	}{
		{`{}`, nil, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":1`, nil, rpcParseError},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, rpcInvalidRequest},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, 1.0, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}`, nil, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, nil, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":"x","method":"resources/list"}`, "x", rpcMethodNotFound},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":[1]}`, 2.0, rpcInvalidParams},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}`, 3.0, rpcInvalidParams},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"step","arguments":{}}}`, 4.0, rpcInvalidParams},
	} {
		id, res, e := rpc(t, ts.URL, c.body)
		if e == nil || e["code"] != c.code || id != c.id || res != nil {
			t.Errorf("%s: id %v result %v error %v, want code %v id %v", c.body, id, res, e, c.code, c.id)
		}
	}
	// A tool's own failure is a result with isError, not a JSON-RPC error.
	_, res, e := rpc(t, ts.URL, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"reset","arguments":{"sead":1}}}`)
	if _, text := toolResult(t, res); e != nil || !strings.HasPrefix(text, "VALIDATION_ERROR: ") {
		t.Fatalf("bad reset arguments: %v %v", res, e)
	}
	if sc := res["structuredContent"].(map[string]any); sc["code"] != "VALIDATION_ERROR" {
		t.Fatalf("structuredContent %v", sc)
	}
}

// MCP over the /ws channel ({"type":"mcp","data":REQUEST}, OpenEnv's
// WSMCPMessage, http_server.py:1441-1458): the tools act on the
// connection's episode, no episode_id needed, and the Gym-style messages
// see the same episode; a notification gets no reply.
func TestMCPOverWS(t *testing.T) {
	_, ts := start(t, simConfig(t))
	c := dial(t, ts)
	mcp := func(req map[string]any) map[string]any {
		t.Helper()
		f := call(t, c, mustJSON(t, map[string]any{"type": "mcp", "data": req}))
		if f.Type != "mcp" {
			t.Fatalf("reply %s", f.raw)
		}
		_, res, e := decodeRPC(t, f.Data)
		if e != nil {
			t.Fatalf("%v: %v", req, e)
		}
		return res
	}
	send(t, c, `{"type":"mcp","data":{"jsonrpc":"2.0","method":"notifications/initialized"}}`)
	tools := mcp(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
	if len(tools["tools"].([]any)) != 2 {
		t.Fatalf("tools %v (a reply to the notification would show here)", tools)
	}
	r, _ := toolResult(t, mcp(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "reset", "arguments": map[string]any{"seed": 7, "set": "arena", "scenario_id": "arena-train-0029"}}}))
	ep := r.Observation.Metadata.EpisodeID
	for i, line := range scriptLines {
		r, text := toolResult(t, mcp(map[string]any{"jsonrpc": "2.0", "id": 3 + i, "method": "tools/call", "params": map[string]any{"name": "say", "arguments": map[string]any{"message": line}}}))
		if text != "" || r.Observation.Turn != i+1 || r.Observation.Metadata.EpisodeID != ep {
			t.Fatalf("say %d: %+v %q", i+1, r, text)
		}
	}
	st := state(t, call(t, c, `{"type":"state"}`))
	if st.EpisodeID != ep || st.StepCount != 4 || st.Terminal != "accept" {
		t.Fatalf("state after MCP episode: %+v", st)
	}
	// An invalid request on /ws is a JSON-RPC error inside an mcp message.
	f := call(t, c, `{"type":"mcp","data":{}}`)
	if _, _, e := decodeRPC(t, f.Data); f.Type != "mcp" || e["code"] != float64(rpcInvalidRequest) {
		t.Fatalf("invalid request: %s", f.raw)
	}
}

// rpcCall posts one JSON-RPC request built from method and params.
func rpcCall(t *testing.T, url, method string, params map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	_, res, e := rpc(t, url, mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
	return res, e
}

// OpenEnv's MCP session methods over POST /mcp (huggingface/OpenEnv
// 385de5e, http_server.py:706-819, called by MCPToolClient in production
// mode, mcp_client.py:176-192): openenv/session/create opens a session;
// tools/list and tools/call with its session_id act on the session's own
// environment (say needs no episode_id), giving the same rewards as POST
// /reset and /step; openenv/session/close frees it, after which the id is
// unknown (-32602).
func TestMCPSessions(t *testing.T) {
	_, ts := start(t, simConfig(t))
	res, e := rpcCall(t, ts.URL, "openenv/session/create", map[string]any{})
	sid, _ := res["session_id"].(string)
	if e != nil || !strings.HasPrefix(sid, "mcp-") || len(sid) != len("mcp-")+26 {
		t.Fatalf("create: %v %v", res, e)
	}
	res, e = rpcCall(t, ts.URL, "tools/list", map[string]any{"session_id": sid})
	if e != nil || len(res["tools"].([]any)) != 2 {
		t.Fatalf("tools/list in the session: %v %v", res, e)
	}
	tool := func(name string, args map[string]any) Result {
		t.Helper()
		res, e := rpcCall(t, ts.URL, "tools/call", map[string]any{"name": name, "arguments": args, "session_id": sid})
		if e != nil {
			t.Fatalf("%s: %v", name, e)
		}
		r, text := toolResult(t, res)
		if text != "" {
			t.Fatalf("%s: %s", name, text)
		}
		return r
	}
	reset := map[string]any{"seed": 7, "set": "arena", "scenario_id": "arena-train-0029", "reward": "both"}
	first := tool("reset", reset)
	var viaSession []Result
	for _, line := range scriptLines {
		viaSession = append(viaSession, tool("say", map[string]any{"message": line}))
	}
	last := viaSession[3]
	if first.Observation.Scenario == nil || !last.Done || last.Observation.Metadata.Terminal != "accept" || last.Observation.Turn != 4 {
		t.Fatalf("session episode: first %+v last %+v", first, last)
	}
	// The same episode over POST /reset and /step: the same rewards.
	_, raw := httpDo(t, "POST", ts.URL+"/reset", mustJSON(t, reset))
	var hr Result
	json.Unmarshal(raw, &hr)
	for i, line := range scriptLines {
		_, raw = httpDo(t, "POST", ts.URL+"/step", mustJSON(t, map[string]any{"episode_id": hr.Observation.Metadata.EpisodeID, "action": map[string]any{"message": line}}))
		var sr Result
		json.Unmarshal(raw, &sr)
		if *sr.Reward != *viaSession[i].Reward || sr.Observation.Reply != viaSession[i].Observation.Reply {
			t.Fatalf("turn %d: /step %+v, session %+v", i+1, sr, viaSession[i])
		}
	}
	// A second episode in the same session.
	if again := tool("reset", map[string]any{"seed": 8}); again.Observation.Metadata.EpisodeID == first.Observation.Metadata.EpisodeID {
		t.Fatalf("second reset kept the episode id %s", again.Observation.Metadata.EpisodeID)
	}
	res, e = rpcCall(t, ts.URL, "openenv/session/close", map[string]any{"session_id": sid})
	if e != nil || res["session_id"] != sid || res["closed"] != true {
		t.Fatalf("close: %v %v", res, e)
	}
	for _, c := range []struct {
		method string
		params map[string]any
	}{
		{"tools/list", map[string]any{"session_id": sid}},
		{"tools/call", map[string]any{"name": "say", "arguments": map[string]any{"message": "Hi"}, "session_id": sid}},
		{"openenv/session/close", map[string]any{"session_id": sid}},
		{"openenv/session/close", map[string]any{}},
		{"tools/list", map[string]any{"session_id": 7}},
	} {
		if res, e := rpcCall(t, ts.URL, c.method, c.params); e == nil || e["code"] != float64(rpcInvalidParams) {
			t.Errorf("%s %v after close: %v %v, want error %d", c.method, c.params, res, e, rpcInvalidParams)
		}
	}
}

// An MCP session holds a session slot until closed or idle for
// IdleTimeout: with one slot, a second create is refused with -32000
// (OpenEnv's SERVER_ERROR for SessionCapacityError), and succeeds once the
// first is closed, or has expired.
func TestMCPSessionSlots(t *testing.T) {
	cfg := simConfig(t)
	cfg.MaxSessions, cfg.CapacityWait, cfg.IdleTimeout = 1, -1, time.Hour
	s, ts := start(t, cfg)
	res, _ := rpcCall(t, ts.URL, "openenv/session/create", nil)
	sid := res["session_id"].(string)
	if res, e := rpcCall(t, ts.URL, "openenv/session/create", nil); e == nil || e["code"] != float64(rpcServerError) || !strings.Contains(e["message"].(string), "1 of 1 sessions") {
		t.Fatalf("create at capacity: %v %v", res, e)
	}
	if status, raw := httpDo(t, "POST", ts.URL+"/reset", `{}`); status != 503 {
		t.Fatalf("POST /reset with the slot held by an MCP session: %d %s", status, raw)
	}
	rpcCall(t, ts.URL, "openenv/session/close", map[string]any{"session_id": sid})
	res, e := rpcCall(t, ts.URL, "openenv/session/create", nil)
	if e != nil {
		t.Fatalf("create after close: %v", e)
	}
	// Idle for longer than IdleTimeout: forgotten, its slot free.
	now := time.Now()
	s.mu.Lock()
	s.now = func() time.Time { return now.Add(2 * time.Hour) }
	s.mu.Unlock()
	if _, e := rpcCall(t, ts.URL, "tools/list", map[string]any{"session_id": res["session_id"]}); e == nil || !strings.Contains(e["message"].(string), "unknown session_id") {
		t.Fatalf("expired session: %v", e)
	}
	if _, e := rpcCall(t, ts.URL, "openenv/session/create", nil); e != nil {
		t.Fatalf("create after expiry: %v", e)
	}
}

// Over /ws, openenv/session/create names the connection's own session,
// which MCP cannot close (-32600; the client sends {"type": "close"}), and
// the tools act on the connection's episode whatever session_id says, as
// OpenEnv's server does for a WebSocket-managed session.
func TestMCPSessionOverWS(t *testing.T) {
	_, ts := start(t, simConfig(t))
	c := dial(t, ts)
	mcp := func(method string, params map[string]any) (map[string]any, map[string]any) {
		t.Helper()
		f := call(t, c, mustJSON(t, map[string]any{"type": "mcp", "data": map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}}))
		_, res, e := decodeRPC(t, f.Data)
		return res, e
	}
	res, e := mcp("openenv/session/create", nil)
	sid, _ := res["session_id"].(string)
	if e != nil || !strings.HasPrefix(sid, "ws-") {
		t.Fatalf("create over /ws: %v %v", res, e)
	}
	if again, _ := mcp("openenv/session/create", nil); again["session_id"] != sid {
		t.Fatalf("second create over /ws: %v, want %s", again, sid)
	}
	if _, e := mcp("openenv/session/close", map[string]any{"session_id": sid}); e == nil || e["code"] != float64(rpcInvalidRequest) {
		t.Fatalf("closing the connection's own session: %v", e)
	}
	res, _ = mcp("tools/call", map[string]any{"name": "reset", "arguments": map[string]any{"seed": 3}, "session_id": sid})
	r, _ := toolResult(t, res)
	if st := state(t, call(t, c, `{"type":"state"}`)); st.EpisodeID != r.Observation.Metadata.EpisodeID {
		t.Fatalf("the tools did not act on the connection: state %+v, reset %+v", st, r)
	}
}
