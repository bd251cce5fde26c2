package server

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/persuarena/persuarena/decision"
)

// A whole episode over /ws: reset, steps until done, state, close. The
// dense reward of each step equals B_t - B_{t-1} recomputed from the
// state's belief history.
func TestWSEpisode(t *testing.T) {
	_, ts := start(t, simConfig(t))
	c := dial(t, ts)
	obs := result(t, call(t, c, resetMsg(t, map[string]any{"seed": 7, "scenario_id": "arena-train-0001"})))
	if obs.Done || obs.Reward != nil || obs.Observation.Turn != 0 || obs.Observation.Reply != "" || obs.Observation.Decision != "continue" ||
		obs.Observation.Scenario.ID != "arena-train-0001" || obs.Observation.Tmax != 10 || obs.Observation.Metadata.Belief == nil {
		t.Fatalf("reset observation %+v", obs)
	}
	id := obs.Observation.Metadata.EpisodeID
	lines := []string{
		"What worries you most about consolidating these debts?",
		"A soft search does not touch your credit score, and you can compare offers first.",
		"We could keep one card for emergencies and close only the others, one step at a time.",
		"It's entirely your decision; would you like to try the application this week?",
	}
	var rewards []float64
	var last Result
	for i := 0; i < 10 && !last.Done; i++ {
		last = result(t, call(t, c, stepMsg(t, lines[i%len(lines)])))
		if last.Observation.Turn != i+1 || last.Reward == nil || last.Observation.Reply == "" || last.Observation.Metadata.EpisodeID != id {
			t.Fatalf("step %d: %+v", i+1, last)
		}
		rewards = append(rewards, *last.Reward)
	}
	if !last.Done || last.Observation.Metadata.Terminal == "" || last.Observation.Metadata.RGoal == nil {
		t.Fatalf("episode did not finish within Tmax: %+v", last)
	}
	if last.Observation.Metadata.Terminal == decision.TermPending && last.Observation.Decision != DecisionPending {
		t.Fatalf("pending episode's last decision %s", last.Observation.Decision)
	}
	st := state(t, call(t, c, `{"type":"state"}`))
	if st.EpisodeID != id || st.StepCount != len(rewards) || !st.Done || st.Terminal != last.Observation.Metadata.Terminal ||
		len(st.Beliefs) != len(rewards)+1 || st.ScenarioID != "arena-train-0001" || st.Seed != 7 || *st.RGoal != *last.Observation.Metadata.RGoal {
		t.Fatalf("state %+v after %d steps", st, len(rewards))
	}
	for i, r := range rewards {
		want := *st.Beliefs[i+1] - *st.Beliefs[i]
		if math.Abs(r-want) > 1e-12 || st.Rewards[i] != r {
			t.Fatalf("step %d: reward %v, B_t - B_t-1 = %v", i+1, r, want)
		}
	}
	// Stepping the finished episode is an EXECUTION_ERROR; the session
	// stays open and a new reset works.
	wantError(t, call(t, c, stepMsg(t, "One more thing.")), ExecutionError)
	obs2 := result(t, call(t, c, `{"type":"reset"}`))
	if obs2.Observation.Metadata.EpisodeID == id || obs2.Observation.Scenario.ID == "" {
		t.Fatalf("second reset %+v", obs2)
	}
	send(t, c, `{"type":"close"}`)
	wantClose(t, c, websocket.StatusNormalClosure)
}

// Every WebSocket error code, and the session survives each error.
func TestWSErrorCodes(t *testing.T) {
	cfg := simConfig(t)
	cfg.Env.MaxMessageBytes = 64
	_, ts := start(t, cfg)
	c := dial(t, ts)
	cases := []struct {
		msg  string
		code Code
	}{
		{`{"type":"reset",`, InvalidJSON},
		{`not json`, InvalidJSON},
		{`{"type":"dance"}`, UnknownType},
		{`{"data":{}}`, UnknownType},
		{`{"type":7}`, UnknownType},
		{`[1,2]`, ValidationError},
		{`{"type":"state","extra":1}`, ValidationError},
		{stepMsg(t, "Hello there."), ValidationError}, // step before reset
		{resetMsg(t, map[string]any{"scenario_id": "no-such-scenario"}), ValidationError},
		{resetMsg(t, map[string]any{"set": "dailypersuasion"}), ValidationError},
		{resetMsg(t, map[string]any{"seed": "seven"}), ValidationError},
		{resetMsg(t, map[string]any{"temperature": 0.7}), ValidationError},
	}
	for _, tc := range cases {
		wantError(t, call(t, c, tc.msg), tc.code)
	}
	result(t, call(t, c, resetMsg(t, map[string]any{"seed": 1})))
	for _, tc := range []struct {
		msg  string
		code Code
	}{
		{`{"type":"step","data":{"message":"Hi.","tone":"warm"}}`, ValidationError}, // unknown field
		{`{"type":"step","data":{"message":""}}`, ValidationError},                  // empty
		{`{"type":"step","data":{"message":"   "}}`, ValidationError},               // blank
		{`{"type":"step"}`, ValidationError},                                        // no action
		{stepMsg(t, strings.Repeat("a", 65)), ValidationError},                      // over max_message_bytes
	} {
		wantError(t, call(t, c, tc.msg), tc.code)
	}
	if st := state(t, call(t, c, `{"type":"state"}`)); st.StepCount != 0 {
		t.Fatalf("rejected steps changed the episode: %+v", st)
	}
	// Step a finished episode: EXECUTION_ERROR.
	for i := 0; i < 10; i++ {
		if r := result(t, call(t, c, stepMsg(t, "Would you sign up today?"))); r.Done {
			break
		}
	}
	wantError(t, call(t, c, stepMsg(t, "Still there?")), ExecutionError)
	// A frame over the frame limit closes the connection (1009).
	send(t, c, stepMsg(t, strings.Repeat("a", 6*64+5000)))
	wantClose(t, c, websocket.StatusMessageTooBig)
}

// max_sessions + 1 connections: the extra one gets CAPACITY_REACHED and
// close code 1013; HTTP /reset is refused too; closing a session frees
// its slot.
func TestWSCapacity(t *testing.T) {
	cfg := simConfig(t)
	cfg.MaxSessions = 2
	_, ts := start(t, cfg)
	a, b := dial(t, ts), dial(t, ts)
	result(t, call(t, a, `{"type":"reset"}`))
	result(t, call(t, b, `{"type":"reset"}`)) // both sessions are live now
	extra := dial(t, ts)
	wantError(t, recv(t, extra), CapacityReached)
	wantClose(t, extra, websocket.StatusTryAgainLater)
	status, body := httpDo(t, "POST", ts.URL+"/reset", `{}`)
	wantHTTPError(t, status, body, 503, CapacityReached)

	send(t, a, `{"type":"close"}`)
	wantClose(t, a, websocket.StatusNormalClosure)
	// The server drops the session right after the close handshake; allow
	// it a bounded number of tries.
	for deadline := time.Now().Add(5 * time.Second); ; {
		c := dial(t, ts)
		f := call(t, c, `{"type":"reset"}`)
		if f.Type == "observation" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not freed after close: %s", f.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A session without a message for IdleTimeout gets SESSION_ERROR and is
// closed with 1008; its slot is freed.
func TestWSIdleTimeout(t *testing.T) {
	cfg := simConfig(t)
	cfg.IdleTimeout = 150 * time.Millisecond
	cfg.MaxSessions = 1
	_, ts := start(t, cfg)
	c := dial(t, ts)
	result(t, call(t, c, `{"type":"reset"}`))
	e := wantError(t, recv(t, c), SessionError) // blocks until the idle close
	if !strings.Contains(e.Message, "without a message") {
		t.Fatalf("message %q", e.Message)
	}
	wantClose(t, c, websocket.StatusPolicyViolation)
	for deadline := time.Now().Add(5 * time.Second); ; {
		f := call(t, dial(t, ts), `{"type":"state"}`)
		if f.Type == "state" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not freed after idle close: %s", f.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Same seed and actions, same observations (apart from the episode id),
// in two sessions; no scenario_id draws the same scenario.
func TestWSSameSeedSameObservations(t *testing.T) {
	_, ts := start(t, simConfig(t))
	play := func(seed int) []string {
		c := dial(t, ts)
		var out []string
		norm := func(f frame) string {
			r := result(t, f)
			r.Observation.Metadata.EpisodeID, r.Metadata.EpisodeID = "", ""
			return mustJSON(t, r)
		}
		out = append(out, norm(call(t, c, resetMsg(t, map[string]any{"seed": seed, "set": "p4g"}))))
		for i := 0; i < 10; i++ {
			f := call(t, c, stepMsg(t, "Even a small donation helps children in need; what would make you comfortable giving?"))
			out = append(out, norm(f))
			if result(t, f).Done {
				break
			}
		}
		return out
	}
	a, b := play(42), play(42)
	if len(a) < 2 || strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("same seed, different observations:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if c := play(43); c[0] == a[0] {
		t.Fatalf("seeds 42 and 43 drew the same scenario and belief: %s", c[0])
	}
	var r Result
	json.Unmarshal([]byte(a[0]), &r)
	if !strings.HasPrefix(r.Observation.Scenario.ID, "p4g-") {
		t.Fatalf("set p4g drew %s", r.Observation.Scenario.ID)
	}
}
