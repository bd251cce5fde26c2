package llmagent

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/probe"
)

// canned is an engine that answers instantly with fixed responses, so a
// benchmark measures the role's own CPU only (prompt building, parsing,
// fork rendering, pooling), not an engine's.
type canned struct{ top []probe.TokenLogprob }

func newCanned() *canned {
	return &canned{top: []probe.TokenLogprob{
		{Token: "Yes", ID: fakeengine.TokenID("Yes"), Logprob: math.Log(0.6)},
		{Token: "No", ID: fakeengine.TokenID("No"), Logprob: math.Log(0.3)},
		{Token: " Yes", ID: fakeengine.TokenID(" Yes"), Logprob: math.Log(0.1)},
	}}
}

func (c *canned) Backend() llm.Backend { return llm.Backend{Name: "canned", Engine: llm.VLLM} }
func (c *canned) Detect(context.Context) (llm.Capabilities, error) {
	return llm.Capabilities{MaxTopLogprobs: 20, TokenIDLogprobs: true, PromptLists: true, Tokenize: true,
		ApplyTemplate: true, CompletionLogprobs: true, ChatLogprobs: true}, nil
}
func (c *canned) Chat(_ context.Context, r llm.ChatRequest) (*llm.ChatResponse, error) {
	return &llm.ChatResponse{Content: "<think>Hmm.</think>I see what you mean, but I'm still unsure about the time it takes.\n**DECISION:** continue",
		Usage: llm.Usage{Requests: 1}}, nil
}
func (c *canned) Complete(_ context.Context, r llm.CompletionRequest) (*llm.CompletionResponse, error) {
	out := &llm.CompletionResponse{Usage: llm.Usage{Requests: 1}}
	for i := range r.Prompts {
		out.Choices = append(out.Choices, llm.CompletionChoice{Index: i, Top: [][]probe.TokenLogprob{c.top}})
	}
	return out, nil
}
func (c *canned) Tokenize(_ context.Context, text string) ([]int, error) {
	return fakeengine.Tokenize(text), nil
}
func (c *canned) RenderChat(_ context.Context, r llm.TemplateRequest) (string, error) {
	return fakeengine.Template(r.Messages, r.AddGenerationPrompt, r.Thinking, false), nil
}

// BenchmarkPersuadeeTurnCPU measures the LLM persuadee's own CPU per turn
// (reply request built and parsed, K = 3 probe forks rendered and pooled)
// at turn 6 of an episode, with an engine that answers instantly. Target:
// < 1 ms per turn (docs/llm-roles.md).
func BenchmarkPersuadeeTurnCPU(b *testing.B) {
	p := newPersuadee("llm:bench", newCanned(), llm.Role{}, PersuadeeOptions{})
	ctx := context.Background()
	sess, err := p.Start(ctx, testScenario(), 1)
	if err != nil {
		b.Fatal(err)
	}
	s := sess.(*session)
	var tr []episode.Message
	for range 5 {
		tr = append(tr, episode.Message{Speaker: episode.PersuaderSpeaker, Text: "I understand the time worry; the group meets for thirty minutes at lunch, twice a week, and you can stop any time."})
		r, err := s.Reply(ctx, tr)
		if err != nil {
			b.Fatal(err)
		}
		tr = append(tr, episode.Message{Speaker: episode.PersuadeeSpeaker, Text: r.Text})
	}
	tr = append(tr, episode.Message{Speaker: episode.PersuaderSpeaker, Text: "Would trying it once next Tuesday work for you? It's entirely your call."})
	hist := s.hist
	for b.Loop() {
		s.hist = hist[:5:5]
		r, err := s.Reply(ctx, tr)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Probe(ctx, append(tr, episode.Message{Speaker: episode.PersuadeeSpeaker, Text: r.Text}), probe.Default); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFakeEngineTurn plays episodes against the fake vLLM engine over
// HTTP and reports engine requests per persuadee turn (probes included;
// target <= 2) and the probes' prompt tokens per turn: all of them,
// those the engine did not serve from its cache (the fake engine's
// 16-token block prefix cache), and with each read-out's shared context
// counted once (Table 4's "with cache" count). One read-out before the
// loop tokenizes the fork tails once per persuadee, as the first episode
// of a run does.
func BenchmarkFakeEngineTurn(b *testing.B) {
	srv, p := fakePersuadee(b, llm.VLLM, persuadeeHandler)
	fakeEngineTurns(b, srv, p)
}

// BenchmarkFakeEngineTurnJSON is BenchmarkFakeEngineTurn with the JSON
// reply protocol (structured: true): its probe forks, rendered in the
// text protocol, share only the start of the system prompt with the
// replies' context, so the engine's cache serves less of them (the cost
// of that protocol, docs/llm-roles.md).
func BenchmarkFakeEngineTurnJSON(b *testing.B) {
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(persuadeeHandler), fakeengine.WithCacheReport(true))
	b.Cleanup(srv.Close)
	c, err := llm.NewClient(srv.Backend("fake"))
	if err != nil {
		b.Fatal(err)
	}
	fakeEngineTurns(b, srv, NewPersuadee("llm:fake", c, llm.Role{Structured: "true"}, PersuadeeOptions{}))
}

// fakeEngineTurns is the body of the fake-engine turn benchmarks.
func fakeEngineTurns(b *testing.B, srv *fakeengine.Server, p *Persuadee) {
	ctx := context.Background()
	s, err := p.Start(ctx, testScenario(), 1)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.(episode.Prober).Probe(ctx, nil, probe.Default); err != nil {
		b.Fatal(err)
	}
	var turns, reqs int
	var probeUsage episode.Usage
	seed := uint64(0)
	for b.Loop() {
		before := srv.Stats().Total
		seed++
		ep, err := episode.Run(ctx, episode.Config{}, testScenario(), &recorder{}, p, seed)
		if err != nil || len(ep.Turns) == 0 {
			b.Fatal(err)
		}
		reqs += srv.Stats().Total - before - 1 // minus the t = 0 read-out
		turns += len(ep.Turns)
		for _, t := range ep.Turns {
			probeUsage = probeUsage.Add(t.ProbeUsage)
		}
	}
	b.ReportMetric(float64(reqs)/float64(turns), "requests/turn")
	b.ReportMetric(float64(probeUsage.PromptTokens)/float64(turns), "probe-prompt-tok/turn")
	b.ReportMetric(float64(probeUsage.PromptTokens-probeUsage.CachedTokens)/float64(turns), "probe-uncached-tok/turn")
	b.ReportMetric(float64(probeUsage.PromptOnceTokens)/float64(turns), "probe-prefix-once-tok/turn")
}

// BenchmarkConcurrentEpisodes runs 64 episodes at once against the fake
// vLLM engine adding 200 ms to every request, served from a separate
// process (this test binary re-executed, see TestMain) as a real engine
// runs on its own machine, and reports the throughput ratio to the ideal
// (every request of an episode back to back, all episodes fully parallel):
// target >= 0.95 (docs/llm-roles.md), and the client's CPU per episode.
// The backend's max_in_flight must cover the concurrency (here 64).
// Choice: the child keeps the default GOMAXPROCS, so on a small machine it
// still shares the cores with the client; only its heap, GC and scheduler
// are separate.
func BenchmarkConcurrentEpisodes(b *testing.B) {
	be := startFakeEngineProcess(b, llm.VLLM, benchLatency)
	concurrentEpisodes(b, be, nil)
}

// BenchmarkConcurrentEpisodesInProcess is BenchmarkConcurrentEpisodes with
// the fake engine in the benchmark's own process, competing with the client
// for CPU, heap and GC, kept for comparison.
func BenchmarkConcurrentEpisodesInProcess(b *testing.B) {
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(persuadeeHandler), fakeengine.WithLatency(benchLatency))
	defer srv.Close()
	concurrentEpisodes(b, srv.Backend("fake"), func() int { return srv.Stats().Total })
}

// benchLatency is the fake engine's added latency per request in the
// concurrency benchmarks (docs/llm-roles.md).
const benchLatency = 200 * time.Millisecond

// concurrentEpisodes runs the concurrency benchmark against be; requests,
// when not nil, reads the engine's request counter so a request count other
// than the expected one is logged.
func concurrentEpisodes(b *testing.B, be llm.Backend, requests func() int) {
	const episodes, latency = 64, benchLatency
	be.MaxInFlight = episodes
	c, err := llm.NewClient(be)
	if err != nil {
		b.Fatal(err)
	}
	p := NewPersuadee("llm:fake", c, llm.Role{}, PersuadeeOptions{})
	ctx := context.Background()
	if _, err := p.Start(ctx, testScenario(), 1); err != nil {
		b.Fatal(err)
	}
	var ratio float64
	n := 0
	cpu0, cpuOK := processCPU()
	for b.Loop() {
		before := 0
		if requests != nil {
			before = requests()
		}
		start := time.Now()
		var wg sync.WaitGroup
		turns := make([]int, episodes)
		for i := range episodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ep, err := episode.Run(ctx, episode.Config{}, testScenario(), &recorder{}, p, uint64(i))
				if err != nil || ep.Error != "" {
					b.Error(err, ep.Error)
					return
				}
				turns[i] = len(ep.Turns)
			}()
		}
		wg.Wait()
		wall := time.Since(start)
		// Ideal: each episode's sequential requests (t = 0 read-out, then a
		// reply and a probe request per turn) at exactly the latency.
		longest := 0
		for _, t := range turns {
			longest = max(longest, 1+2*t)
		}
		ideal := time.Duration(longest) * latency
		ratio += float64(ideal) / float64(wall)
		n++
		if requests != nil {
			if got := requests() - before; got != episodes*longest {
				b.Logf("%d requests for %d episodes", got, episodes)
			}
		}
	}
	b.ReportMetric(ratio/float64(n), "ideal-throughput-ratio")
	// The client's CPU per episode (the engine's excluded when it runs in
	// its own process): what the ratio costs on shared cores, steadier
	// than the ratio itself on a loaded machine.
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(time.Millisecond)/float64(n*episodes), "client-cpu-ms/episode")
	}
}
