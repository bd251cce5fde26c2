package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/persuarena/persuarena/sim"
)

// Python-free replays of the WebSocket messages the trainer adapters of
// the Python package (python/src/persuarena/trl, python/src/persuarena/verl)
// send for their trainers' call sequences (TestPythonAdapters runs the
// adapters themselves).

// TRL GRPOTrainer (huggingface/trl v1.9.0): a pool of G environments,
// reused across batches, each reset with the same row; PersuArenaEnv
// sends rollouts 0..G-1 for a group's G identical rows, so the group plays
// one scenario against G different persuadees.
func TestTRLSequence(t *testing.T) {
	const G = 4
	cfg := simConfig(t)
	cfg.Env.Reward = Both
	_, ts := start(t, cfg)
	pool := make([]*websocket.Conn, G)
	for i := range pool {
		pool[i] = dial(t, ts)
	}
	for batch, seed := range []int{5, 6} {
		var scenarioID string
		firstReplies := map[string]bool{}
		for k, c := range pool {
			r := result(t, call(t, c, resetMsg(t, map[string]any{"seed": seed, "split": "train", "reward": "both", "rollout": batch*G + k})))
			if scenarioID == "" {
				scenarioID = r.Observation.Scenario.ID
			} else if r.Observation.Scenario.ID != scenarioID {
				t.Fatalf("batch %d: rollout %d drew %s, the group plays %s", batch, k, r.Observation.Scenario.ID, scenarioID)
			}
			var last Result
			for i := 0; i < 10 && !last.Done; i++ {
				last = result(t, call(t, c, stepMsg(t, scriptLines[i%len(scriptLines)])))
				if i == 0 {
					firstReplies[last.Observation.Reply] = true
				}
			}
			st := state(t, call(t, c, `{"type":"state"}`))
			if !last.Done || st.Rollout != batch*G+k || st.Seed != uint64(seed) {
				t.Fatalf("batch %d rollout %d: done %v state %+v", batch, k, last.Done, st)
			}
		}
		// Same persuader lines, different persuadees: the replies differ.
		if len(firstReplies) < 2 {
			t.Fatalf("batch %d: the %d rollouts gave the same first reply: %v", batch, G, firstReplies)
		}
	}
}

// verl's agent loops (verl-project/verl v0.9.0) have no end-of-rollout
// hook: the persuarena agent loop sends close when its episode ends,
// however it ends, and drops the connection of a step that timed out. With
// capacity N and no capacity wait, a second batch of N trajectories gets
// its sessions at once, and so does the reconnect after a timed-out step
// (its slot is freed while the persuadee is still answering).
func TestVerlSequence(t *testing.T) {
	const N = 3
	cfg := simConfig(t)
	cfg.Env.Persuadee = slowPersuadee{sim.New(sim.DefaultConfig()), 5 * time.Second}
	cfg.MaxSessions, cfg.CapacityWait = N, -1
	_, ts := start(t, cfg)
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
	trajectory := func(rollout int) {
		c := dial(t, ts)
		r := call(t, c, resetMsg(t, map[string]any{"seed": 11, "split": "train", "rollout": rollout}))
		if r.Type != "observation" {
			t.Fatalf("start_interaction (rollout %d): %s", rollout, r.raw)
		}
		for i := 0; i < 10; i++ {
			if result(t, call(t, c, stepMsg(t, scriptLines[i%len(scriptLines)]))).Done {
				break
			}
		}
		send(t, c, `{"type":"close"}`)
		wantClose(t, c, websocket.StatusNormalClosure)
	}
	for batch := 0; batch < 2; batch++ {
		for i := 0; i < N; i++ {
			trajectory(batch*N + i)
		}
	}
	// N sessions held; one of them times out in a slow step and drops.
	held := make([]*websocket.Conn, N)
	for i := range held {
		held[i] = dial(t, ts)
		result(t, call(t, held[i], `{"type":"reset"}`))
	}
	send(t, held[0], stepMsg(t, "[slow] Shall we talk it through?"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, _, err := held[0].Read(ctx)
	cancel()
	if err == nil {
		t.Fatal("the slow step answered within the client's timeout")
	}
	held[0].CloseNow()
	var f frame
	// The drop reaches the server a moment later; allow it a few seconds
	// on a loaded machine.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		c, _, err := websocket.Dial(ctx5(t), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		f = call(t, c, `{"type":"reset"}`)
		if f.Type == "observation" {
			c.CloseNow()
			break
		}
		c.CloseNow()
		time.Sleep(10 * time.Millisecond)
	}
	if f.Type != "observation" {
		t.Fatalf("the slot of a connection dropped mid-step is still held: %s", f.raw)
	}
	for _, c := range held[1:] {
		c.CloseNow()
	}
}
