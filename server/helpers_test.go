package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// builtin loads the embedded scenario sets once.
var builtin = sync.OnceValues(func() (map[string][]scenario.Scenario, error) {
	out := map[string][]scenario.Scenario{}
	for _, name := range []string{"arena", "p4g"} {
		ss, err := scenario.Resolve(name)
		if err != nil {
			return nil, err
		}
		out[name] = ss
	}
	return out, nil
})

func sets(t testing.TB) []Set {
	t.Helper()
	b, err := builtin()
	if err != nil {
		t.Fatal(err)
	}
	return []Set{{Name: "arena", Scenarios: b["arena"]}, {Name: "p4g", Scenarios: b["p4g"]}}
}

// simConfig is a server configuration against the default simulator on
// the arena (default) and p4g sets, train split.
func simConfig(t testing.TB) Config {
	return Config{Env: EnvConfig{Persuadee: sim.New(sim.DefaultConfig()), Sets: sets(t), Split: scenario.Train}}
}

// start serves cfg on a loopback httptest server.
func start(t testing.TB, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler()) // binds 127.0.0.1
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return s, ts
}

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, ts *httptest.Server) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx5(t), "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// frame is a raw server message.
type frame struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
	raw  string
}

func send(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	if err := c.Write(ctx5(t), websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func recv(t *testing.T, c *websocket.Conn) frame {
	t.Helper()
	_, data, err := c.Read(ctx5(t))
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var f frame
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("server sent non-JSON %q: %v", data, err)
	}
	f.raw = string(data)
	return f
}

// call sends msg and returns the reply.
func call(t *testing.T, c *websocket.Conn, msg string) frame {
	t.Helper()
	send(t, c, msg)
	return recv(t, c)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// result decodes an observation frame.
func result(t *testing.T, f frame) Result {
	t.Helper()
	if f.Type != "observation" {
		t.Fatalf("got %s frame %s, want observation", f.Type, f.raw)
	}
	var r Result
	dec := json.NewDecoder(bytes.NewReader(f.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("observation %s: %v", f.Data, err)
	}
	return r
}

func state(t *testing.T, f frame) State {
	t.Helper()
	if f.Type != "state" {
		t.Fatalf("got %s frame %s, want state", f.Type, f.raw)
	}
	var st State
	dec := json.NewDecoder(bytes.NewReader(f.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		t.Fatalf("state %s: %v", f.Data, err)
	}
	return st
}

// wantError checks that f is an error frame with code.
func wantError(t *testing.T, f frame, code Code) ErrorData {
	t.Helper()
	if f.Type != "error" {
		t.Fatalf("got %s frame %s, want error %s", f.Type, f.raw, code)
	}
	var e ErrorData
	if err := json.Unmarshal(f.Data, &e); err != nil {
		t.Fatal(err)
	}
	if e.Code != code || e.Message == "" {
		t.Fatalf("got error %s %q, want code %s with a message", e.Code, e.Message, code)
	}
	return e
}

func stepMsg(t *testing.T, text string) string {
	return mustJSON(t, map[string]any{"type": "step", "data": map[string]any{"message": text}})
}

func resetMsg(t *testing.T, data map[string]any) string {
	return mustJSON(t, map[string]any{"type": "reset", "data": data})
}

// wantClose reads until the connection closes and checks the close code.
func wantClose(t *testing.T, c *websocket.Conn, code websocket.StatusCode) {
	t.Helper()
	_, data, err := c.Read(ctx5(t))
	if err == nil {
		t.Fatalf("got frame %s, want close %v", data, code)
	}
	if got := websocket.CloseStatus(err); got != code {
		t.Fatalf("closed with %v (%v), want %v", got, err, code)
	}
}

// httpDo sends a request and returns status and body.
func httpDo(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx5(t), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// wantHTTPError checks an HTTP error answer.
func wantHTTPError(t *testing.T, status int, body []byte, wantStatus int, code Code) {
	t.Helper()
	var e struct {
		Detail string `json:"detail"`
		Code   Code   `json:"code"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("status %d body %s: %v", status, body, err)
	}
	if status != wantStatus || e.Code != code || e.Detail == "" {
		t.Fatalf("got %d %s %q, want %d %s", status, e.Code, e.Detail, wantStatus, code)
	}
}

// fake is a scripted persuadee: replies "reply N" with decisions[N-1]
// (continue past the end), probes give P(Yes) = probs[t] for all three
// probes (t = turns so far), or unreadable answers where probs[t] < 0.
type fake struct {
	decisions []decision.Decision
	probs     []float64
	replyErr  error // returned at turn errAt
	errAt     int
}

func (f *fake) Name() string { return "fake" }

func (f *fake) Start(context.Context, *scenario.Scenario, uint64) (episode.PersuadeeSession, error) {
	return &fakeSession{f: f}, nil
}

type fakeSession struct {
	f *fake
	t int
}

func (s *fakeSession) Reply(_ context.Context, tr []episode.Message) (episode.Reply, error) {
	s.t++
	if s.f.replyErr != nil && s.t == s.f.errAt {
		return episode.Reply{}, s.f.replyErr
	}
	d := decision.Continue
	if s.t <= len(s.f.decisions) {
		d = s.f.decisions[s.t-1]
	}
	return episode.Reply{Text: fmt.Sprintf("reply %d", s.t), Decision: d}, nil
}

func (s *fakeSession) Probe(_ context.Context, _ []episode.Message, basis probe.Basis) ([]probe.Answer, error) {
	p := 0.5
	if s.t < len(s.f.probs) {
		p = s.f.probs[s.t]
	}
	out := make([]probe.Answer, len(basis))
	for k := range out {
		if p >= 0 {
			out[k] = probe.FromProbability(p)
		} else {
			out[k] = probe.Answer{Top: []probe.TokenLogprob{{Token: "Maybe", ID: -1, Logprob: -0.1}}}
		}
	}
	return out, nil
}

func fakeConfig(t *testing.T, f *fake) Config {
	return Config{Env: EnvConfig{Persuadee: f, Sets: sets(t), Split: scenario.Train}}
}
