package server

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// BenchmarkWSEpisode plays whole episodes against sim over one loopback
// WebSocket connection (a client waiting for each reply, as a trainer's
// rollout worker does) and reports steps per second.
func BenchmarkWSEpisode(b *testing.B) {
	_, ts := start(b, simConfig(b))
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, "ws"+ts.URL[len("http"):]+"/ws", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	do := func(msg string) Result {
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			b.Fatal(err)
		}
		_, data, err := c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var f frame
		if err := json.Unmarshal(data, &f); err != nil || f.Type != "observation" {
			b.Fatalf("%s %v", data, err)
		}
		var r Result
		json.Unmarshal(f.Data, &r)
		return r
	}
	step := `{"type":"step","data":{"message":"What worries you most? It is entirely your decision."}}`
	steps := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		do(`{"type":"reset"}`)
		for j := 0; j < 10; j++ {
			steps++
			if do(step).Done {
				break
			}
		}
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkSessionMemory measures the memory one session holds against
// sim (docs/server.md, "Memory"): 64 environments, each reset on its own
// train scenario and stepped with persuader messages of the given size,
// are kept alive; it reports the heap they retain per session (after a
// GC) for 1 and 10 steps. Scenes are built before the measurement (they
// are shared by every session of a scenario and cached), so the figure is
// the session's own state: its episode, transcript and the reader's
// analyses of its messages.
func BenchmarkSessionMemory(b *testing.B) {
	f, err := NewFactory(simConfig(b).Env)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const n = 64
	ids := make([]string, n)
	pool := f.pools["arena"]["train"]
	for i := range ids {
		ids[i] = pool[i].ID
		e := f.NewEnv()
		if _, err := e.Reset(ctx, ResetOptions{ScenarioID: ids[i]}); err != nil { // builds and caches the scene
			b.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		bytes int
		steps int
	}{{"message=60B/steps=1", 60, 1}, {"message=60B/steps=10", 60, 10}, {"message=16KiB/steps=1", 16 << 10, 1}, {"message=16KiB/steps=10", 16 << 10, 10}} {
		b.Run(tc.name, func(b *testing.B) {
			var per float64
			for range b.N {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				envs := make([]*Env, n)
				for i := range envs {
					envs[i] = f.NewEnv()
					if _, err := envs[i].Reset(ctx, ResetOptions{ScenarioID: ids[i]}); err != nil {
						b.Fatal(err)
					}
					for s := range tc.steps {
						msg := strings.Repeat(fmt.Sprintf("Point %d of %d: would it help to try it once? ", s, i), tc.bytes/20+1)[:tc.bytes]
						if _, _, done, err := envs[i].Step(ctx, Action{Message: msg}); err != nil || done {
							break
						}
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				per += float64(after.HeapAlloc-before.HeapAlloc) / n
				runtime.KeepAlive(envs)
			}
			b.ReportMetric(per/float64(b.N)/1024, "KiB/session")
			b.ReportMetric(0, "ns/op")
		})
	}
}
