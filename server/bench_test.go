package server

import (
	"context"
	"encoding/json"
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
