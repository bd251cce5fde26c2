package server

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// The call sequences below replay OpenEnv's client and server models.
// The repository is huggingface/OpenEnv; the newest snapshot this project
// could read is 385de5ebb8d08d51d000d7dfc19de5f3c6a9c215 (2026-06-13),
// which predates the metadata change, so the current shape is read from
// PR #805 (merged 2026-06-16; its head's serialize_observation, as in
// burtenshaw/OpenEnv 1f5446677713fa964b97ba1155a47be8cd20427f
// src/openenv/core/env_server/serialization.py, serialize_observation)
// and PR #812:
//   - serialize_observation returns {"observation", "reward", "done"} and,
//     when the observation's metadata is not empty, "metadata" beside
//     them; the nested observation keeps its metadata too.
//   - every client's _parse_result (PR #805: generic, MCP and template
//     clients; PR #812: envs/*/client.py) builds the Observation with
//     metadata = payload.get("metadata", obs_data.get("metadata", {})) and
//     StepResult(..., metadata=payload.get("metadata")): without a
//     top-level metadata StepResult.metadata is None.
//   - src/openenv/core/env_client.py (385de5e): reset(**kw) sends
//     {"type":"reset","data":kw} (:409-414), step(a)
//     {"type":"step","data":a} (:429-434), state() {"type":"state"},
//     close() {"type":"close"}; _parse_result gets the reply's "data";
//     each reply is awaited for message_timeout_s, default 60 s (:107,
//     :241).

// openenvStep is what the current OpenEnv client hands a trainer for one
// reset or step reply: StepResult's observation, reward, done and
// metadata, and the typed Observation's metadata.
type openenvStep struct {
	obs      map[string]any
	reward   *float64
	done     bool
	metadata map[string]any // StepResult.metadata: payload.get("metadata")
	obsMeta  map[string]any // Observation.metadata: payload.get("metadata", obs.get("metadata", {}))
}

// openenvResult checks body against the reset/step response shape of
// OpenEnv after PR #805 (observation, reward, done and a top-level
// metadata equal to the nested one) and returns what the client parses
// from it.
func openenvResult(t *testing.T, body []byte) openenvStep {
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
	if strings.Join(keys, ",") != "done,metadata,observation,reward" {
		t.Fatalf("response fields %v, want done, metadata, observation, reward (OpenEnv's serialize_observation since PR #805): %s", keys, body)
	}
	var r openenvStep
	if err := json.Unmarshal(top["observation"], &r.obs); err != nil || r.obs == nil {
		t.Fatalf("observation is not an object: %s", top["observation"])
	}
	if err := json.Unmarshal(top["reward"], &r.reward); err != nil {
		t.Fatalf("reward is not a number or null: %s", top["reward"])
	}
	if err := json.Unmarshal(top["done"], &r.done); err != nil {
		t.Fatalf("done is not a boolean: %s", top["done"])
	}
	if err := json.Unmarshal(top["metadata"], &r.metadata); err != nil || r.metadata == nil {
		t.Fatalf("top-level metadata is not an object (StepResult.metadata would be None): %s", top["metadata"])
	}
	nested, ok := r.obs["metadata"].(map[string]any)
	if !ok {
		t.Fatalf("observation has no metadata object (clients before PR #805 read it there): %v", r.obs)
	}
	if !reflect.DeepEqual(nested, r.metadata) {
		t.Fatalf("top-level metadata %v differs from observation.metadata %v", r.metadata, nested)
	}
	// payload.get("metadata", obs_data.get("metadata", {})): the top
	// level wins when present.
	r.obsMeta = r.metadata
	return r
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

// POST /reset and /step bodies have OpenEnv's response shape with the
// metadata at the top level (StepResult.metadata) and inside the
// observation, and /metadata advertises the step latency budget a client
// sets message_timeout_s from. The scenario is sent at reset only.
func TestOpenEnvHTTPConformance(t *testing.T) {
	_, ts := start(t, simConfig(t))
	status, body := httpDo(t, "GET", ts.URL+"/metadata", "")
	var md struct {
		Limits map[string]any `json:"limits"`
	}
	if err := json.Unmarshal(body, &md); status != 200 || err != nil || md.Limits["step_budget_s"] != 300.0 {
		t.Fatalf("/metadata limits.step_budget_s: %d %v %s", status, err, body)
	}
	status, body = httpDo(t, "POST", ts.URL+"/reset", `{"seed": 7, "scenario_id": "arena-train-0029", "reward": "both"}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	res := openenvResult(t, body)
	obs, reward, done, m := res.obs, res.reward, res.done, res.metadata
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
		res = openenvResult(t, body)
		obs, reward, done, m = res.obs, res.reward, res.done, res.metadata
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

// The client's WebSocket sequence (connect, reset(**kw), step(a) until
// done, state(), close()): each observation message's data has the
// response shape, with the metadata at the top level and in the
// observation.
func TestOpenEnvWSConformance(t *testing.T) {
	_, ts := start(t, simConfig(t))
	c := dial(t, ts)
	f := call(t, c, `{"type":"reset","data":{"reward":"both","seed":7,"scenario_id":"arena-train-0029"}}`)
	if f.Type != "observation" {
		t.Fatalf("reset: %s", f.raw)
	}
	res := openenvResult(t, f.Data)
	obs := res.obs
	id := res.metadata["episode_id"]
	resetBytes := len(f.raw)
	scenarioBytes := len(mustJSON(t, obs["scenario"]))
	var stepBytes []int
	for i := 0; i < 10; i++ {
		f = call(t, c, stepMsg(t, scriptLines[i%len(scriptLines)]))
		res = openenvResult(t, f.Data)
		obs = res.obs
		if res.obsMeta["episode_id"] != id || obs["scenario"] != nil {
			t.Fatalf("step %d: %s", i+1, f.raw)
		}
		stepBytes = append(stepBytes, len(f.raw))
		if res.done {
			break
		}
	}
	if res.metadata["terminal"] != "accept" || res.metadata["r_goal"] != 3.0 || len(stepBytes) != 4 {
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
