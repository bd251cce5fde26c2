package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

func TestHealth(t *testing.T) {
	_, ts := start(t, simConfig(t))
	status, body := httpDo(t, "GET", ts.URL+"/health", "")
	if status != 200 || strings.TrimSpace(string(body)) != `{"status":"healthy"}` {
		t.Fatalf("%d %s", status, body)
	}
	if status, _ := httpDo(t, "POST", ts.URL+"/health", ""); status != http.StatusMethodNotAllowed {
		t.Fatalf("POST /health: %d", status)
	}
}

func TestMetadata(t *testing.T) {
	cfg := simConfig(t)
	cfg.MaxSessions, cfg.IdleTimeout, cfg.StepBudget = 3, 90*time.Second, 45*time.Second
	_, ts := start(t, cfg)
	status, body := httpDo(t, "GET", ts.URL+"/metadata", "")
	var m MetadataInfo
	if err := json.Unmarshal(body, &m); status != 200 || err != nil {
		t.Fatalf("%d %s %v", status, body, err)
	}
	if m.Name != "persuarena" || m.Description == "" || m.Action != "PersuArenaAction" || m.Observation != "PersuArenaObservation" ||
		m.Persuadee != "sim" || m.DefaultSplit != "train" || m.Reward != Dense || len(m.RewardModes) != 3 ||
		strings.Join(m.Probes, ",") != "ca,pe,ac" || m.StrategyWeight != 1 || m.Judge || m.DenseMode != "scaled" {
		t.Fatalf("metadata %+v", m)
	}
	if m.Limits != (Limits{MaxSessions: 3, IdleTimeoutS: 90, CapacityWaitS: 0.25, MaxMessageBytes: DefaultMaxMessageBytes, MaxFrameBytes: 6*DefaultMaxMessageBytes + 4096, StepBudgetS: 45, Tmax: 10}) {
		t.Fatalf("limits %+v", m.Limits)
	}
	// the Probe-RPO paper / data README: arena 1,468 / 200 / 120; p4g 662 /
	// 200 / 120.
	if len(m.Sets) != 2 || m.Sets[0].Name != "arena" || m.Sets[0].Splits["train"] != 1468 || m.Sets[0].Splits["heldout"] != 120 ||
		m.Sets[1].Splits["train"] != 662 || m.Sets[1].Splits["val"] != 200 {
		t.Fatalf("sets %+v", m.Sets)
	}
}

// compileSchemas fetches /schema and compiles its three schemas.
func compileSchemas(t *testing.T, url string) map[string]*jsonschema.Schema {
	t.Helper()
	status, body := httpDo(t, "GET", url+"/schema", "")
	if status != 200 {
		t.Fatalf("/schema: %d %s", status, body)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := doc.(map[string]any)
	if !ok || len(m) != 3 {
		t.Fatalf("/schema is not {action, observation, state}: %s", body)
	}
	out := map[string]*jsonschema.Schema{}
	c := jsonschema.NewCompiler()
	for _, name := range []string{"action", "observation", "state"} {
		url := "https://persuarena.test/" + name + ".json"
		if err := c.AddResource(url, m[name]); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s schema: %v", name, err)
		}
		out[name] = sch
	}
	return out
}

func validate(t *testing.T, sch *jsonschema.Schema, raw []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(v)
}

// The /schema documents compile, accept real observations (both the wire
// form and the full model) and states, and reject malformed ones.
func TestSchemaValidatesRealMessages(t *testing.T) {
	f := &fake{probs: []float64{0.5, -1, 0.6}, decisions: []decision.Decision{decision.Continue, decision.Continue, decision.Conditional}}
	for _, cfg := range []Config{simConfig(t), fakeConfig(t, f)} {
		_, ts := start(t, cfg)
		sch := compileSchemas(t, ts.URL)
		for raw, ok := range map[string]bool{
			`{"message":"Hello."}`: true, `{"message":"Hi","metadata":{"a":1}}`: true,
			`{"message":""}`: false, `{}`: false, `{"message":"Hi","tone":1}`: false, `{"message":2}`: false,
		} {
			if err := validate(t, sch["action"], []byte(raw)); (err == nil) != ok {
				t.Fatalf("action %s: %v", raw, err)
			}
		}
		c := dial(t, ts)
		if err := validate(t, sch["state"], call(t, c, `{"type":"state"}`).Data); err != nil {
			t.Fatalf("state before reset: %v", err)
		}
		checkObs := func(f frame) Result {
			r := result(t, f)
			if err := validate(t, sch["observation"], mustJSONb(t, r.Observation)); err != nil {
				t.Fatalf("wire observation %s: %v", f.Data, err)
			}
			full := Observation{View: r.Observation.View, Done: r.Done, Reward: r.Reward, Metadata: r.Observation.Metadata}
			if err := validate(t, sch["observation"], mustJSONb(t, full)); err != nil {
				t.Fatalf("observation %s: %v", f.Data, err)
			}
			if err := validate(t, sch["state"], call(t, c, `{"type":"state"}`).Data); err != nil {
				t.Fatalf("state: %v", err)
			}
			return r
		}
		checkObs(call(t, c, resetMsg(t, map[string]any{"seed": 3})))
		for i := 0; i < 10; i++ {
			if checkObs(call(t, c, stepMsg(t, "What would help you decide? It is completely your call."))).Done {
				break
			}
		}
		for _, bad := range []string{
			`{"reply":"x","turn":-1,"tmax":10,"decision":"continue","scenario":{}}`,
			`{"reply":"x","turn":1,"tmax":10,"decision":"maybe","scenario":{}}`,
		} {
			if validate(t, sch["observation"], []byte(bad)) == nil {
				t.Fatalf("observation schema accepted %s", bad)
			}
		}
	}
}

func mustJSONb(t *testing.T, v any) []byte { return []byte(mustJSON(t, v)) }

// An episode over HTTP: /reset returns episode_id in metadata, /step
// takes it with the action, /state reads the state.
func TestHTTPEpisode(t *testing.T) {
	_, ts := start(t, simConfig(t))
	status, body := httpDo(t, "POST", ts.URL+"/reset", `{"seed": 5, "set": "p4g", "reward": "both"}`)
	var r Result
	if err := json.Unmarshal(body, &r); status != 200 || err != nil || r.Observation.Metadata.EpisodeID == "" || r.Done || r.Reward != nil {
		t.Fatalf("reset: %d %s %v", status, body, err)
	}
	id := r.Observation.Metadata.EpisodeID
	var steps int
	for steps = 1; steps <= 10; steps++ {
		status, body = httpDo(t, "POST", ts.URL+"/step", mustJSON(t, map[string]any{
			"episode_id": id, "action": map[string]any{"message": "Could you tell me what matters most to you here?"}, "request_id": "r1"}))
		if err := json.Unmarshal(body, &r); status != 200 || err != nil || r.Observation.Turn != steps {
			t.Fatalf("step %d: %d %s", steps, status, body)
		}
		if r.Done {
			break
		}
	}
	if !r.Done || r.Observation.Metadata.ROut == nil || r.Observation.Metadata.RewardMode != Both {
		t.Fatalf("last step %+v", r)
	}
	status, body = httpDo(t, "GET", ts.URL+"/state?episode_id="+id, "")
	var st State
	if err := json.Unmarshal(body, &st); status != 200 || err != nil || st.EpisodeID != id || st.StepCount != steps || !st.Done || st.Set != "p4g" {
		t.Fatalf("state: %d %s", status, body)
	}
	status, body = httpDo(t, "POST", ts.URL+"/step", mustJSON(t, map[string]any{"episode_id": id, "action": map[string]any{"message": "And now?"}}))
	wantHTTPError(t, status, body, 409, ExecutionError)
	// A client-chosen episode id (OpenEnv's ResetRequest.episode_id) must be free.
	status, _ = httpDo(t, "POST", ts.URL+"/reset", `{"episode_id": "mine-1"}`)
	if status != 200 {
		t.Fatalf("reset with episode_id: %d", status)
	}
	status, body = httpDo(t, "POST", ts.URL+"/reset", `{"episode_id": "mine-1"}`)
	wantHTTPError(t, status, body, 422, ValidationError)
	// An empty body resets with defaults.
	if status, body = httpDo(t, "POST", ts.URL+"/reset", ""); status != 200 {
		t.Fatalf("empty reset body: %d %s", status, body)
	}
}

func TestHTTPErrors(t *testing.T) {
	cfg := simConfig(t)
	cfg.Env.MaxMessageBytes = 32
	_, ts := start(t, cfg)
	_, body := httpDo(t, "POST", ts.URL+"/reset", `{"seed": 1}`)
	var r Result
	json.Unmarshal(body, &r)
	id := r.Observation.Metadata.EpisodeID
	cases := []struct {
		method, path, body string
		status             int
		code               Code
	}{
		{"POST", "/reset", `{"seed":`, 400, InvalidJSON},
		{"POST", "/reset", `{"sed": 1}`, 422, ValidationError},
		{"POST", "/reset", `{"split": "test"}`, 422, ValidationError},
		{"POST", "/step", `{"action": {"message": "Hi."}}`, 422, ValidationError}, // no episode_id
		{"POST", "/step", `{"episode_id": "` + id + `", "action": {"message": "Hi.", "x": 1}}`, 422, ValidationError},
		{"POST", "/step", `{"episode_id": "` + id + `", "action": {"message": " "}}`, 422, ValidationError},
		{"POST", "/step", `{"episode_id": "` + id + `", "action": {"message": "` + strings.Repeat("b", 33) + `"}}`, 422, ValidationError},
		{"POST", "/step", `{"episode_id": "` + id + `"}`, 422, ValidationError}, // no action
		{"POST", "/step", `{"episode_id": "` + id + `", "action": {"message": "Hi."}, "extra": true}`, 422, ValidationError},
		{"POST", "/step", `{"episode_id": "` + id + `", "action": {"message": "Hi."}, "timeout_s": 0}`, 422, ValidationError},
		{"POST", "/step", `{"episode_id": "ep-unknown", "action": {"message": "Hi."}}`, 404, SessionError},
		{"GET", "/state?episode_id=ep-unknown", "", 404, SessionError},
		{"GET", "/state", "", 422, ValidationError},
		{"POST", "/step", `{"episode_id": "` + id + `", "action": {"message": "` + strings.Repeat("c", 6*32+5000) + `"}}`, 413, ValidationError},
	}
	for _, c := range cases {
		status, body := httpDo(t, c.method, ts.URL+c.path, c.body)
		wantHTTPError(t, status, body, c.status, c.code)
	}
	status, body := httpDo(t, "GET", ts.URL+"/state?episode_id="+id, "")
	var st State
	if json.Unmarshal(body, &st); status != 200 || st.StepCount != 0 {
		t.Fatalf("rejected steps changed the episode: %d %s", status, body)
	}
}

// HTTP episodes are forgotten after IdleTimeout without a request
// (SESSION_ERROR), and a finished one no longer holds a slot.
func TestHTTPIdleAndCapacity(t *testing.T) {
	cfg := fakeConfig(t, &fake{decisions: []decision.Decision{decision.Reject}})
	cfg.MaxSessions, cfg.IdleTimeout = 1, time.Minute
	s, ts := start(t, cfg)
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	_, body := httpDo(t, "POST", ts.URL+"/reset", `{}`)
	var r Result
	json.Unmarshal(body, &r)
	status, body := httpDo(t, "POST", ts.URL+"/reset", `{}`)
	wantHTTPError(t, status, body, 503, CapacityReached)
	advance(59 * time.Second) // still alive: the step refreshes it
	step := mustJSON(t, map[string]any{"episode_id": r.Observation.Metadata.EpisodeID, "action": map[string]any{"message": "Hi."}})
	if status, body = httpDo(t, "POST", ts.URL+"/step", step); status != 200 {
		t.Fatalf("step within the idle timeout: %d %s", status, body)
	}
	// The fake rejected: the episode is done and frees its slot, but its
	// state stays readable until it idles out.
	if status, body = httpDo(t, "POST", ts.URL+"/reset", `{"episode_id":"second"}`); status != 200 {
		t.Fatalf("reset after the first episode finished: %d %s", status, body)
	}
	if status, _ = httpDo(t, "GET", ts.URL+"/state?episode_id="+r.Observation.Metadata.EpisodeID, ""); status != 200 {
		t.Fatalf("finished episode's state: %d", status)
	}
	advance(61 * time.Second)
	status, body = httpDo(t, "GET", ts.URL+"/state?episode_id=second", "")
	wantHTTPError(t, status, body, 404, SessionError)
	status, body = httpDo(t, "POST", ts.URL+"/step", mustJSON(t, map[string]any{"episode_id": "second", "action": map[string]any{"message": "Hi."}}))
	wantHTTPError(t, status, body, 404, SessionError)
	if status, _ = httpDo(t, "POST", ts.URL+"/reset", `{}`); status != 200 {
		t.Fatalf("expired episode still holds its slot: %d", status)
	}
}

const marker = "QZV-HIDDEN-7781"

// The hidden profile never leaves the server: a marker planted in every
// hidden field the persuadee does not voice (persona, motivation, trait
// names, real outcome) appears in no byte the server sends, over WS and
// HTTP, across whole episodes.
func TestHiddenProfileNeverLeaves(t *testing.T) {
	b, err := builtin()
	if err != nil {
		t.Fatal(err)
	}
	var planted []scenario.Scenario
	for _, name := range []string{"arena", "p4g"} {
		ss := scenario.Filter(b[name], scenario.Heldout)[:10]
		for _, sc := range ss {
			h := sc.Hidden
			h.Persona += " " + marker
			h.Motivation += " " + marker
			h.Traits = map[string]float64{marker: 3, "agreeable": 4}
			h.Concerns = append([]scenario.Concern(nil), h.Concerns...)
			sc.Hidden = h
			d := 1.0
			sc.Outcome = &scenario.Outcome{Donation: &d, PersuaderUtterances: []string{marker}}
			planted = append(planted, sc)
		}
	}
	var stored []*episode.Episode
	var mu sync.Mutex
	cfg := Config{Env: EnvConfig{Persuadee: sim.New(sim.DefaultConfig()), Sets: []Set{{Name: "planted", Scenarios: planted}}, Split: scenario.Heldout,
		Sink: func(ep *episode.Episode) error { mu.Lock(); stored = append(stored, ep); mu.Unlock(); return nil }}}
	_, ts := start(t, cfg)
	var seen []string
	lines := []string{"What worries you most?", "Here is the evidence from the trial.", "Would you agree to start this week?",
		"It's your choice; we can go step by step.", "You must decide now."}
	c := dial(t, ts)
	for _, sc := range planted {
		seen = append(seen, call(t, c, resetMsg(t, map[string]any{"scenario_id": sc.ID})).raw)
		for i := 0; i < 10; i++ {
			f := call(t, c, stepMsg(t, lines[i%len(lines)]))
			seen = append(seen, f.raw, call(t, c, `{"type":"state"}`).raw)
			if result(t, f).Done {
				break
			}
		}
		seen = append(seen, call(t, c, stepMsg(t, "Still there?")).raw) // the error message too
	}
	for _, path := range []string{"/metadata", "/schema", "/health"} {
		_, body := httpDo(t, "GET", ts.URL+path, "")
		seen = append(seen, string(body))
	}
	_, body := httpDo(t, "POST", ts.URL+"/reset", `{"scenario_id":"`+planted[0].ID+`"}`)
	seen = append(seen, string(body))
	var r Result
	json.Unmarshal(body, &r)
	for i := 0; i < 10 && !r.Done; i++ {
		_, body = httpDo(t, "POST", ts.URL+"/step", mustJSON(t, map[string]any{"episode_id": r.Observation.Metadata.EpisodeID, "action": map[string]any{"message": lines[i%len(lines)]}}))
		seen = append(seen, string(body))
		json.Unmarshal(body, &r)
	}
	_, body = httpDo(t, "GET", ts.URL+"/state?episode_id="+r.Observation.Metadata.EpisodeID, "")
	seen = append(seen, string(body))
	for _, s := range seen {
		if strings.Contains(s, marker) {
			t.Fatalf("the server sent hidden data: %.300s", s)
		}
	}
	if len(stored) != len(planted)+1 || len(seen) < 3*len(planted) {
		t.Fatalf("%d episodes stored, %d messages seen: the test did not play the episodes", len(stored), len(seen))
	}
}

// Cancelling Serve's context closes WebSocket sessions with 1001 (going
// away) and returns nil.
func TestServeGracefulShutdown(t *testing.T) {
	s, err := New(simConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, ln) }()
	c, _, err := websocket.Dial(ctx5(t), "ws://"+ln.Addr().String()+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	result(t, call(t, c, `{"type":"reset"}`))
	cancel()
	wantClose(t, c, websocket.StatusGoingAway)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-ctx5(t).Done():
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/health"); err == nil {
		t.Fatal("server still answers after shutdown")
	}
}

// POST /close frees an unfinished HTTP episode's slot at once; a finished
// episode releases its environment at the last step, keeps its final state
// for DoneRetention, then is forgotten.
func TestHTTPCloseAndRetention(t *testing.T) {
	cfg := fakeConfig(t, &fake{decisions: []decision.Decision{decision.Accept}})
	cfg.MaxSessions, cfg.DoneRetention = 1, time.Minute
	s, ts := start(t, cfg)
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.mu.Lock()
	s.now = func() time.Time { return clock }
	s.mu.Unlock()
	reset := func(id string) (int, []byte) {
		return httpDo(t, "POST", ts.URL+"/reset", mustJSON(t, map[string]any{"episode_id": id}))
	}
	if status, body := reset("a"); status != 200 {
		t.Fatalf("reset a: %d %s", status, body)
	}
	status, body := reset("b")
	wantHTTPError(t, status, body, 503, CapacityReached)
	if status, body := httpDo(t, "POST", ts.URL+"/close", `{"episode_id": "a"}`); status != 200 || !strings.Contains(string(body), `"closed":true`) {
		t.Fatalf("close a: %d %s", status, body)
	}
	status, body = httpDo(t, "GET", ts.URL+"/state?episode_id=a", "")
	wantHTTPError(t, status, body, 404, SessionError)
	status, body = httpDo(t, "POST", ts.URL+"/close", `{"episode_id": "a"}`)
	wantHTTPError(t, status, body, 404, SessionError)
	if status, body := reset("b"); status != 200 {
		t.Fatalf("reset b after closing a: %d %s", status, body)
	}
	// b accepts at its first step: done, environment released, state kept.
	status, body = httpDo(t, "POST", ts.URL+"/step", mustJSON(t, map[string]any{"episode_id": "b", "action": map[string]any{"message": "Would you?"}}))
	if status != 200 || !strings.Contains(string(body), `"done":true`) {
		t.Fatalf("step b: %d %s", status, body)
	}
	s.mu.Lock()
	released := s.http["b"].env == nil
	s.mu.Unlock()
	if !released {
		t.Fatal("a finished episode still holds its environment")
	}
	status, body = httpDo(t, "GET", ts.URL+"/state?episode_id=b", "")
	if status != 200 || !strings.Contains(string(body), `"terminal":"accept"`) {
		t.Fatalf("final state: %d %s", status, body)
	}
	status, body = httpDo(t, "POST", ts.URL+"/step", mustJSON(t, map[string]any{"episode_id": "b", "action": map[string]any{"message": "And now?"}}))
	wantHTTPError(t, status, body, 409, ExecutionError)
	s.mu.Lock()
	clock = clock.Add(2 * time.Minute) // past DoneRetention, within IdleTimeout
	s.mu.Unlock()
	status, body = httpDo(t, "GET", ts.URL+"/state?episode_id=b", "")
	wantHTTPError(t, status, body, 404, SessionError)
}
