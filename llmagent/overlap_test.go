package llmagent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/golden"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
)

// duoHandler plays both roles on one fake engine: the persuader (its
// system prompt asks for "your next message"), the persuadee (accepts at
// its turn `accept`, 0 = never) and the probes, whose P(Yes) grows with the
// turn and differs by probe, so every read-out has its own numbers.
func duoHandler(accept int) fakeengine.Handler {
	return func(r fakeengine.Request) fakeengine.Reply {
		turns := strings.Count(r.Prompt, "<|im_start|>user")
		if isProbe(r) {
			p := min(0.95, 0.1+0.07*float64(turns)+0.05*float64(r.Index))
			return fakeengine.Reply{FirstToken: map[string]float64{"Yes": p, "No": 1 - p}}
		}
		if strings.Contains(r.Prompt, "Write only your next message") {
			return fakeengine.Reply{Text: fmt.Sprintf("Message %d: a walk at lunch is thirty minutes, twice a week. Would you try it? It's your call.", turns)}
		}
		if accept > 0 && turns >= accept {
			return fakeengine.Reply{Text: "All right, I'll give it a go.\nDECISION: accept"}
		}
		return fakeengine.Reply{Text: fmt.Sprintf("Hmm, %d things still bother me about the time.\nDECISION: continue", turns)}
	}
}

// duo returns an LLM persuader and an LLM persuadee on one fake vLLM
// engine with the given added latency per request.
func duo(tb testing.TB, accept int, latency time.Duration) (*Persuader, *Persuadee, *fakeengine.Server) {
	tb.Helper()
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(duoHandler(accept)), fakeengine.WithLatency(latency))
	tb.Cleanup(srv.Close)
	be := srv.Backend("fake")
	be.MaxInFlight = 8
	c, err := llm.NewClient(be)
	if err != nil {
		tb.Fatal(err)
	}
	return NewPersuader("llm:per", c, llm.Role{}), NewPersuadee("llm:pee", c, llm.Role{}, PersuadeeOptions{}), srv
}

// TestLLMEpisodesGolden compares LLM-persuader vs LLM-persuadee episodes
// on the fake engine (latencies and prefix-cache counts zeroed: they depend
// on timing and request order) with testdata/llm-episodes.txt, one case per
// episode, JSON with a line per turn: the probe read-outs overlap the
// persuader's next turn, and must leave transcripts, probes, beliefs,
// rewards and token counts those of reading in sequence. Re-record an
// intended change with go test ./llmagent -run LLMEpisodesGolden -update.
func TestLLMEpisodesGolden(t *testing.T) {
	ctx := context.Background()
	var f golden.File
	for _, accept := range []int{0, 3} {
		per, pee, _ := duo(t, accept, 0)
		for seed := range uint64(3) {
			ep, err := episode.Run(ctx, episode.Config{Tmax: 6}, testScenario(), per, pee, seed)
			if err != nil || ep.Error != "" {
				t.Fatal(err, ep.Error)
			}
			ep.InitialProbeMS, ep.InitialProbeUsage.CachedTokens = 0, 0
			for k := range ep.Turns {
				tr := &ep.Turns[k]
				tr.PersuaderMS, tr.PersuadeeMS, tr.ProbeMS = 0, 0, 0
				tr.PersuaderUsage.CachedTokens, tr.PersuadeeUsage.CachedTokens, tr.ProbeUsage.CachedTokens = 0, 0, 0
			}
			b, err := golden.EpisodeJSON(ep)
			if err != nil {
				t.Fatal(err)
			}
			f.Case(fmt.Sprintf("episode accept=%d seed=%d", accept, seed), b)
		}
	}
	golden.Check(t, filepath.Join("testdata", "llm-episodes.txt"), f.Bytes())
}

// BenchmarkLLMTurnLatency plays ten-turn LLM-persuader vs LLM-persuadee
// episodes on the fake vLLM engine adding L = 100 ms to every request and
// reports the turn latency in units of L: (episode wall time - L) / turns,
// the L taken off being the last turn's read-out, which has nothing to
// overlap. Each turn makes three requests (the persuader's utterance, the
// persuadee's reply, one completions request for the K probes): 3 in
// sequence, 2 when the read-out runs during the persuader's next
// utterance (target: about 2).
func BenchmarkLLMTurnLatency(b *testing.B) {
	const L = 100 * time.Millisecond
	per, pee, _ := duo(b, 0, L)
	ctx := context.Background()
	if _, err := episode.Run(ctx, episode.Config{Tmax: 1}, testScenario(), per, pee, 0); err != nil {
		b.Fatal(err) // warm up: capability detection
	}
	var ratio float64
	n := 0
	for b.Loop() {
		t0 := time.Now()
		ep, err := episode.Run(ctx, episode.Config{}, testScenario(), per, pee, uint64(n))
		wall := time.Since(t0)
		if err != nil || ep.Error != "" || len(ep.Turns) != episode.DefaultTmax {
			b.Fatal(err, ep.Error)
		}
		ratio += float64(wall-L) / float64(L) / float64(len(ep.Turns))
		n++
	}
	b.ReportMetric(ratio/float64(n), "turn-latency/L")
}
