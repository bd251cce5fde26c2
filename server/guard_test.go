package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// clock replaces s.now with a settable clock.
func clock(s *Server) (advance func(time.Duration)) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	return func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
}

// settled waits until the server holds n WebSocket sessions and none is
// handling a message: a dial returns at the handshake, and a reply
// reaches the client before its handler is done, both maybe before the
// server's books say so, which is what eviction reads.
func settled(t *testing.T, s *Server, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		held, busy := len(s.ws), 0
		for ws := range s.ws {
			ws.mu.Lock()
			if ws.busy {
				busy++
			}
			ws.mu.Unlock()
		}
		s.mu.Unlock()
		if held == n && busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d WebSocket sessions (%d busy), want %d idle", held, busy, n)
		}
	}
}

// postJSON sends a POST with the given headers and returns status and body.
func postJSON(t *testing.T, url, body string, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx5(t), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, []byte(b.String())
}

func resetID(t *testing.T, body []byte) string {
	t.Helper()
	var r Result
	if err := json.Unmarshal(body, &r); err != nil || r.Observation.Metadata.EpisodeID == "" {
		t.Fatalf("reset answer %s: %v", body, err)
	}
	return r.Observation.Metadata.EpisodeID
}

// Resets without steps hold every slot for the idle lease at most, not
// IdleTimeout: a new client that finds the server full takes the slot of
// the episode that has gone longest without playing, once that is longer
// than the lease; an episode that keeps stepping keeps its slot, and
// polling GET /state does not renew a lease.
func TestResetSquatFreedAfterIdleLease(t *testing.T) {
	cfg := fakeConfig(t, &fake{})
	cfg.MaxSessions, cfg.CapacityWait = 4, -1
	s, ts := start(t, cfg)
	advance := clock(s)
	if s.cfg.IdleLease != DefaultIdleLease || s.cfg.IdleTimeout != DefaultIdleTimeout {
		t.Fatalf("defaults: lease %v idle %v", s.cfg.IdleLease, s.cfg.IdleTimeout)
	}
	// One honest episode that steps, three squatters that never do.
	_, body := httpDo(t, "POST", ts.URL+"/reset", `{}`)
	honest := resetID(t, body)
	var squat []string
	for range 3 {
		_, body := httpDo(t, "POST", ts.URL+"/reset", `{}`)
		squat = append(squat, resetID(t, body))
	}
	status, body := httpDo(t, "POST", ts.URL+"/reset", `{}`)
	wantHTTPError(t, status, body, 503, CapacityReached)
	advance(DefaultIdleLease - time.Second)
	step := mustJSON(t, map[string]any{"episode_id": honest, "action": map[string]any{"message": "Hi."}})
	if status, body := httpDo(t, "POST", ts.URL+"/step", step); status != 200 {
		t.Fatalf("step: %d %s", status, body)
	}
	if status, _ := httpDo(t, "GET", ts.URL+"/state?episode_id="+squat[0], ""); status != 200 { // does not renew
		t.Fatalf("state: %d", status)
	}
	status, body = httpDo(t, "POST", ts.URL+"/reset", `{}`)
	wantHTTPError(t, status, body, 503, CapacityReached) // within the lease
	advance(2 * time.Second)
	for i := range 3 {
		if status, body := httpDo(t, "POST", ts.URL+"/reset", `{}`); status != 200 {
			t.Fatalf("new client %d after the lease: %d %s", i, status, body)
		}
	}
	status, body = httpDo(t, "POST", ts.URL+"/reset", `{}`)
	wantHTTPError(t, status, body, 503, CapacityReached) // the honest episode stepped within its lease
	for _, id := range squat {
		status, body = httpDo(t, "GET", ts.URL+"/state?episode_id="+id, "")
		wantHTTPError(t, status, body, 404, SessionError)
	}
	step = mustJSON(t, map[string]any{"episode_id": honest, "action": map[string]any{"message": "Again."}})
	if status, body := httpDo(t, "POST", ts.URL+"/step", step); status != 200 {
		t.Fatalf("honest episode after eviction: %d %s", status, body)
	}
}

// One client address holds at most MaxSessionsPerClient slots, over HTTP
// and WebSocket together; the default lets loopback take all of
// MaxSessions and any other address a quarter.
func TestPerClientSessionCap(t *testing.T) {
	cfg := fakeConfig(t, &fake{})
	cfg.MaxSessions, cfg.MaxSessionsPerClient, cfg.CapacityWait = 8, 2, -1
	_, ts := start(t, cfg)
	if status, body := httpDo(t, "POST", ts.URL+"/reset", `{}`); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	c := dial(t, ts)
	result(t, call(t, c, `{"type":"reset"}`))
	status, body := httpDo(t, "POST", ts.URL+"/reset", `{}`)
	wantHTTPError(t, status, body, 503, CapacityReached)
	if !strings.Contains(string(body), "client 127.0.0.1 holds 2 of its 2 sessions") {
		t.Fatalf("cap message: %s", body)
	}
	c2 := dial(t, ts)
	if msg := recv(t, c2); msg.Type != "error" || !strings.Contains(msg.raw, `"CAPACITY_REACHED"`) {
		t.Fatalf("third session over WebSocket: %s", msg.raw)
	}
	wantClose(t, c2, websocket.StatusTryAgainLater)

	s, err := New(Config{Env: simConfig(t).Env})
	if err != nil {
		t.Fatal(err)
	}
	if got := [3]int{s.perClientLimit("127.0.0.1"), s.perClientLimit("::1"), s.perClientLimit("203.0.113.5")}; got != [3]int{64, 64, 16} {
		t.Fatalf("default per-client limits %v, want [64 64 16]", got)
	}
}

// A browser page cannot drive the server: a cross-origin POST with a
// "simple" content type gets 415, any Origin not allowed or a cross-site
// Sec-Fetch-Site gets 403 (HTTP and the WebSocket handshake); an allowed
// origin and non-browser clients pass.
func TestCrossOriginRefused(t *testing.T) {
	cfg := fakeConfig(t, &fake{})
	cfg.AllowOrigins = []string{"https://lab.example"}
	_, ts := start(t, cfg)
	status, body := postJSON(t, ts.URL+"/reset", `{}`, map[string]string{"Content-Type": "text/plain"})
	wantHTTPError(t, status, body, 415, ValidationError)
	status, body = postJSON(t, ts.URL+"/reset", `{}`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	wantHTTPError(t, status, body, 415, ValidationError)
	status, body = postJSON(t, ts.URL+"/reset", `{}`, map[string]string{"Origin": "http://evil.example"})
	wantHTTPError(t, status, body, 403, ValidationError)
	status, body = postJSON(t, ts.URL+"/reset", `{}`, map[string]string{"Origin": "null"})
	wantHTTPError(t, status, body, 403, ValidationError)
	status, body = postJSON(t, ts.URL+"/reset", `{}`, map[string]string{"Sec-Fetch-Site": "cross-site"})
	wantHTTPError(t, status, body, 403, ValidationError)
	if status, body := postJSON(t, ts.URL+"/reset", `{}`, map[string]string{"Origin": "https://lab.example"}); status != 200 {
		t.Fatalf("allowed origin: %d %s", status, body)
	}
	if status, body := postJSON(t, ts.URL+"/reset", `{}`, map[string]string{"Content-Type": "application/json; charset=utf-8"}); status != 200 {
		t.Fatalf("json with charset: %d %s", status, body)
	}
	if status, body := postJSON(t, ts.URL+"/reset", "", map[string]string{"Content-Type": ""}); status != 200 {
		t.Fatalf("bodiless reset: %d %s", status, body)
	}
	_, resp, err := websocket.Dial(ctx5(t), "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("cross-origin WebSocket: %v %v", resp, err)
	}
}

// With a token every request but GET /health needs it.
func TestBearerToken(t *testing.T) {
	cfg := fakeConfig(t, &fake{})
	cfg.Token = "s3cret-token"
	_, ts := start(t, cfg)
	if status, _ := httpDo(t, "GET", ts.URL+"/health", ""); status != 200 {
		t.Fatalf("health without token: %d", status)
	}
	status, body := httpDo(t, "GET", ts.URL+"/metadata", "")
	wantHTTPError(t, status, body, 401, ValidationError)
	if strings.Contains(string(body), "s3cret") {
		t.Fatalf("token echoed: %s", body)
	}
	status, body = postJSON(t, ts.URL+"/reset", `{}`, map[string]string{"Authorization": "Bearer wrong"})
	wantHTTPError(t, status, body, 401, ValidationError)
	if status, body := postJSON(t, ts.URL+"/reset", `{}`, map[string]string{"Authorization": "Bearer s3cret-token"}); status != 200 {
		t.Fatalf("with token: %d %s", status, body)
	}
	if _, _, err := websocket.Dial(ctx5(t), "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil); err == nil {
		t.Fatal("WebSocket without token accepted")
	}
	c, _, err := websocket.Dial(ctx5(t), "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer s3cret-token"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	result(t, call(t, c, `{"type":"reset"}`))
}

// Negative guard settings are refused.
func TestGuardConfigNegativeRefused(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.IdleLease = -1 },
		func(c *Config) { c.MaxSessionsPerClient = -1 },
		func(c *Config) { c.MaxConns = -1 },
		func(c *Config) { c.ReadTimeout = -1 },
	} {
		cfg := simConfig(t)
		mod(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "negative") {
			t.Fatalf("New: %v", err)
		}
	}
}

// An engine's error body never reaches the client: the step's
// EXECUTION_ERROR keeps the HTTP status only.
func TestEngineErrorBodyWithheld(t *testing.T) {
	f := &fake{replyErr: errors.New(`llm: /v1/chat/completions: HTTP 503: {"error":"model /srv/models/secret-7b overloaded"}`), errAt: 1}
	_, ts := start(t, fakeConfig(t, f))
	_, body := httpDo(t, "POST", ts.URL+"/reset", `{"episode_id":"e1"}`)
	resetID(t, body)
	status, body := httpDo(t, "POST", ts.URL+"/step", `{"episode_id":"e1","action":{"message":"Hi."}}`)
	wantHTTPError(t, status, body, 500, ExecutionError)
	if strings.Contains(string(body), "secret-7b") || !strings.Contains(string(body), "HTTP 503 (the engine's answer is withheld from clients) (the episode ended as failed)") {
		t.Fatalf("step error: %s", body)
	}
}

// A WebSocket session that has not reset or stepped for the idle lease
// (silent since it connected, or quiet since its last step) gives its
// slot to a new session that needs it, longest idle first, one per new
// session; one that plays within the lease keeps its slot, and state
// messages do not renew the lease.
func TestIdleWebSocketEvictedAfterIdleLease(t *testing.T) {
	cfg := fakeConfig(t, &fake{})
	cfg.MaxSessions, cfg.CapacityWait, cfg.IdleLease = 3, -1, 30*time.Second
	s, ts := start(t, cfg)
	advance := clock(s) // the lease is read on the server's clock, not the machine's speed
	silent := dial(t, ts)
	settled(t, s, 1)
	advance(time.Second)
	quiet := dial(t, ts)
	result(t, call(t, quiet, `{"type":"reset"}`))
	result(t, call(t, quiet, `{"type":"step","data":{"message":"Hi."}}`))
	talker := dial(t, ts)
	result(t, call(t, talker, `{"type":"reset"}`))
	advance(29 * time.Second) // silent is 30 s idle: not past the lease
	settled(t, s, 3)
	third := dial(t, ts)
	if msg := recv(t, third); msg.Type != "error" || !strings.Contains(msg.raw, "CAPACITY_REACHED") {
		t.Fatalf("new session within the lease: %s", msg.raw)
	}
	for range 4 { // the talker keeps playing; quiet only asks its state
		advance(15 * time.Second)
		result(t, call(t, talker, `{"type":"step","data":{"message":"Still here."}}`))
		if f := call(t, quiet, `{"type":"state"}`); f.Type != "state" {
			t.Fatalf("state: %s", f.raw)
		}
	}
	settled(t, s, 3)
	fourth := dial(t, ts)
	result(t, call(t, fourth, `{"type":"reset"}`))
	wantError(t, recv(t, silent), SessionError) // idle longest
	wantClose(t, silent, websocket.StatusPolicyViolation)
	settled(t, s, 3)
	fifth := dial(t, ts)
	result(t, call(t, fifth, `{"type":"reset"}`))
	if msg := recv(t, quiet); msg.Type != "error" || !strings.Contains(msg.raw, "SESSION_ERROR") || !strings.Contains(msg.raw, "no reset or step") {
		t.Fatalf("quiet session: %s", msg.raw)
	}
	wantClose(t, quiet, websocket.StatusPolicyViolation)
	if f := call(t, talker, `{"type":"state"}`); f.Type != "state" { // still served
		t.Fatalf("the session that played: %s", f.raw)
	}
}
