package server

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// The call sequences below replay OpenEnv's own client and server models
// at meta-pytorch/OpenEnv 685de411e5f77286b0fd94798d42c4467cf8a1bc:
//   - src/openenv/core/env_server/types.py: ResetResponse and
//     StepResponse are {observation: object, reward: number|null, done:
//     bool} with extra="forbid"; WSObservationResponse is {type, data}.
//   - src/openenv/core/env_client.py: reset(**kw) sends {"type":"reset",
//     "data":kw}, step(a) {"type":"step","data":a}, state() {"type":
//     "state"}, close() {"type":"close"}; it parses the reply's data with
//     _parse_result.
//   - src/openenv/core/generic_client.py: GenericEnvClient._parse_result
//     keeps payload["observation"], payload["reward"] and payload["done"]
//     and nothing else.

// openenvResult checks body against OpenEnv's ResetResponse/StepResponse
// (exactly observation, reward, done) and returns what GenericEnvClient
// hands a trainer: the observation object, the reward, done.
func openenvResult(t *testing.T, body []byte) (obs map[string]any, reward *float64, done bool) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if strings.Join(keys, ",") != "done,observation,reward" {
		t.Fatalf("response fields %v, OpenEnv's response models allow exactly done, observation, reward (extra=forbid): %s", keys, body)
	}
	if err := json.Unmarshal(top["observation"], &obs); err != nil || obs == nil {
		t.Fatalf("observation is not an object: %s", top["observation"])
	}
	if err := json.Unmarshal(top["reward"], &reward); err != nil {
		t.Fatalf("reward is not a number or null: %s", top["reward"])
	}
	if err := json.Unmarshal(top["done"], &done); err != nil {
		t.Fatalf("done is not a boolean: %s", top["done"])
	}
	return obs, reward, done
}

// meta returns the reward information a trainer gets through OpenEnv's
// client: observation.metadata.
func meta(t *testing.T, obs map[string]any) map[string]any {
	t.Helper()
	m, ok := obs["metadata"].(map[string]any)
	if !ok {
		t.Fatalf("observation has no metadata object: %v", obs)
	}
	return m
}

// scriptLines are the built-in script persuader's lines for
// arena-train-0029 at seed 7 (docs/server.md's example session): the
// simulator accepts at turn 4.
var scriptLines = []string{
	"Priya, what's the biggest thing holding you back at the moment?",
	"On average, new members say the first evening was easier than they feared: the club pairs every nervous first-timer with a host who meets them at the door, so nobody walks in alone. What else is on your mind?",
	"The evidence from people who enjoy their own company is that one evening out a week adds to it rather than replacing it, and you can leave whenever you like. What else worries you about it?",
	"Half of the members joined this year, so the regulars make a point of welcoming newcomers and nobody stays an outsider for long. It's entirely your decision. Would you be willing to give it a try?",
}

// POST /reset and /step bodies validate as OpenEnv's ResetResponse and
// StepResponse, and every reward field reaches the client inside the
// observation. The scenario is sent at reset only.
func TestOpenEnvHTTPConformance(t *testing.T) {
	_, ts := start(t, simConfig(t))
	status, body := httpDo(t, "POST", ts.URL+"/reset", `{"seed": 7, "scenario_id": "arena-train-0029", "reward": "both"}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	obs, reward, done := openenvResult(t, body)
	m := meta(t, obs)
	id, _ := m["episode_id"].(string)
	if reward != nil || done || id == "" || m["belief"] == nil || m["reward_mode"] != "both" || m["reward_missing"] != false {
		t.Fatalf("reset: reward %v done %v metadata %v", reward, done, m)
	}
	if sc, _ := obs["scenario"].(map[string]any); sc["id"] != "arena-train-0029" {
		t.Fatalf("reset observation lacks the public scenario: %v", obs["scenario"])
	}
	lines := scriptLines
	for i, line := range lines {
		status, body = httpDo(t, "POST", ts.URL+"/step", mustJSON(t, map[string]any{"episode_id": id, "action": map[string]any{"message": line}}))
		if status != 200 {
			t.Fatalf("step %d: %d %s", i+1, status, body)
		}
		obs, reward, done = openenvResult(t, body)
		m = meta(t, obs)
		if _, has := obs["scenario"]; has {
			t.Fatalf("step %d re-sends the scenario: %s", i+1, body)
		}
		if reward == nil || m["episode_id"] != id || m["dense"] == nil || m["belief"] == nil {
			t.Fatalf("step %d: reward %v metadata %v", i+1, reward, m)
		}
		if (i == len(lines)-1) != done {
			t.Fatalf("step %d: done %v", i+1, done)
		}
	}
	// Accept: R_goal = +3 = R_out (no judge); in mode both the last reward
	// is the dense r_4 plus R_out.
	if m["terminal"] != "accept" || m["r_goal"] != 3.0 || m["r_out"] != 3.0 || *reward != m["dense"].(float64)+3 {
		t.Fatalf("last step: reward %v metadata %v", *reward, m)
	}
}

// GenericEnvClient's WebSocket sequence (connect, reset(**kw), step(a)
// until done, state(), close()): each observation message's data has the
// ResetResponse/StepResponse shape, with the metadata in the observation.
func TestOpenEnvWSConformance(t *testing.T) {
	_, ts := start(t, simConfig(t))
	c := dial(t, ts)
	f := call(t, c, `{"type":"reset","data":{"reward":"both","seed":7,"scenario_id":"arena-train-0029"}}`)
	if f.Type != "observation" {
		t.Fatalf("reset: %s", f.raw)
	}
	obs, _, _ := openenvResult(t, f.Data)
	id := meta(t, obs)["episode_id"]
	resetBytes := len(f.raw)
	scenarioBytes := len(mustJSON(t, obs["scenario"]))
	var stepBytes []int
	for i := 0; i < 10; i++ {
		f = call(t, c, stepMsg(t, scriptLines[i%len(scriptLines)]))
		var done bool
		obs, _, done = openenvResult(t, f.Data)
		if meta(t, obs)["episode_id"] != id || obs["scenario"] != nil {
			t.Fatalf("step %d: %s", i+1, f.raw)
		}
		stepBytes = append(stepBytes, len(f.raw))
		if done {
			break
		}
	}
	if meta(t, obs)["terminal"] != "accept" || meta(t, obs)["r_goal"] != 3.0 || len(stepBytes) != 4 {
		t.Fatalf("last step (%d): %v", len(stepBytes), obs)
	}
	t.Logf("reset message %d bytes (scenario %d); step messages %v bytes, each %d more with the scenario", resetBytes, scenarioBytes, stepBytes, scenarioBytes+len(`,"scenario":`))
	// A step message carries the reply and the metadata, never the
	// public scenario the reset sent (899 bytes of JSON for this one).
	for i, n := range stepBytes {
		if n >= resetBytes {
			t.Fatalf("step %d message is %d bytes, reset %d", i+1, n, resetBytes)
		}
	}
	if st := call(t, c, `{"type":"state"}`); st.Type != "state" {
		t.Fatalf("state: %s", st.raw)
	}
	send(t, c, `{"type":"close"}`)
	wantClose(t, c, websocket.StatusNormalClosure)
}

// Reconnecting at once after abrupt drops never meets CAPACITY_REACHED:
// the slot of a dropped connection is free by the time a new one asks.
// (Before the fix 9-13 of these 200 reconnects were refused.)
func TestWSAbruptDropFreesSlot(t *testing.T) {
	const n, rounds = 8, 25
	cfg := simConfig(t)
	cfg.MaxSessions = n
	_, ts := start(t, cfg)
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
	conns := make([]*websocket.Conn, n)
	refused := 0
	for round := 0; round < rounds; round++ {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range conns {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if conns[i] != nil {
					conns[i].CloseNow() // abrupt: no close frame
				}
				c, _, err := websocket.Dial(ctx5(t), url, nil)
				if err != nil {
					t.Error(err)
					return
				}
				conns[i] = c
				if err := c.Write(ctx5(t), websocket.MessageText, []byte(`{"type":"reset"}`)); err != nil {
					t.Error(err)
					return
				}
				_, data, err := c.Read(ctx5(t))
				if err != nil || !strings.Contains(string(data), `"type":"observation"`) {
					mu.Lock()
					refused++
					mu.Unlock()
				}
			}(i)
		}
		wg.Wait()
	}
	for _, c := range conns {
		if c != nil {
			c.CloseNow()
		}
	}
	if refused != 0 {
		t.Fatalf("%d of %d reconnects after an abrupt drop were refused", refused, n*rounds)
	}
}
