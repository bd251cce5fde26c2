package llmagent

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/probe"
)

// isProbe reports whether a fake-engine request is a probe fork.
func isProbe(r fakeengine.Request) bool {
	return strings.Contains(r.Prompt, "A private question to yourself")
}

// isDetect reports llm.Client.Detect's 1-token capability request.
func isDetect(r fakeengine.Request) bool {
	return len(r.Messages) == 1 && r.Messages[0].Content == "Hi"
}

// persuadeeHandler scripts a persuadee over the fake engine: probes get a
// Yes/No first-token distribution (Yes 0.6 + 0.1 for " Yes", No 0.3), and
// replies continue until the third persuader turn, which is accepted. The
// reply's thinking carries the hidden marker.
func persuadeeHandler(r fakeengine.Request) fakeengine.Reply {
	if isProbe(r) {
		return fakeengine.Reply{FirstToken: map[string]float64{"Yes": 0.6, " Yes": 0.1, "No": 0.3}}
	}
	if strings.Contains(r.Prompt, "repair") || strings.Contains(r.Prompt, "did not end with the decision line") {
		return fakeengine.Reply{Text: "DECISION: continue"}
	}
	turns := strings.Count(r.Prompt, "<|im_start|>user")
	if turns >= 3 {
		return fakeengine.Reply{Text: "<think>" + marker + "</think>All right, I'll give it a go.\nDECISION: accept"}
	}
	return fakeengine.Reply{Text: "<think>" + marker + "</think>I'm not sure I have the time.\nDECISION: continue"}
}

func fakePersuadee(t testing.TB, eng llm.Engine, h fakeengine.Handler, opts ...fakeengine.Option) (*fakeengine.Server, *Persuadee) {
	t.Helper()
	srv := fakeengine.New(eng, append([]fakeengine.Option{fakeengine.WithHandler(h), fakeengine.WithCacheReport(true)}, opts...)...)
	t.Cleanup(srv.Close)
	c, err := llm.NewClient(srv.Backend("fake"))
	if err != nil {
		t.Fatal(err)
	}
	return srv, NewPersuadee("llm:fake", c, llm.Role{}, PersuadeeOptions{})
}

// One episode against each engine profile: the decision protocol, probe
// read-outs and request counts per persuadee turn over real HTTP.
func TestFakeEngineEpisode(t *testing.T) {
	for _, tc := range []struct {
		eng            llm.Engine
		path           ProbePath
		perTurn        int // engine requests per persuadee turn, probes included
		chat, complete int // per turn
	}{
		{llm.VLLM, ProbeCompletions, 2, 1, 1},
		{llm.LlamaCpp, ProbeCompletions, 2, 1, 1},
		{llm.Ollama, ProbeChat, 4, 4, 0},
		{llm.SGLang, ProbeChat, 4, 4, 0},
	} {
		t.Run(string(tc.eng), func(t *testing.T) {
			srv, p := fakePersuadee(t, tc.eng, persuadeeHandler)
			ctx := context.Background()
			if _, err := p.Start(ctx, testScenario(), 1); err != nil { // detection and set-up
				t.Fatal(err)
			}
			if p.Path() != tc.path {
				t.Fatalf("probe path %q, want %q", p.Path(), tc.path)
			}
			if tc.path == ProbeCompletions && (!p.skelOK() || len(p.idLst) != 12) {
				t.Fatalf("skeleton %v, %d exact Yes/No ids; want the skeleton and 12 ids", p.skelOK(), len(p.idLst))
			}
			before := srv.Stats()
			rec := &recorder{}
			ep, err := episode.Run(ctx, episode.Config{}, testScenario(), rec, p, 2)
			if err != nil {
				t.Fatal(err)
			}
			if ep.Terminal != decision.TermAccept || len(ep.Turns) != 3 {
				t.Fatalf("terminal %q after %d turns (%s)", ep.Terminal, len(ep.Turns), ep.Error)
			}
			after := srv.Stats()
			turns := len(ep.Turns)
			// t = 0 read-out: 1 completions request or 3 chats.
			initial := 3
			compPath := "/v1/completions"
			if tc.path == ProbeCompletions {
				initial = 1
			}
			if tc.eng == llm.LlamaCpp {
				compPath = "/completion"
			}
			// The K fork tails are tokenized once per persuadee, for the
			// read-outs' prompt tokens with the shared prefix counted once
			// (completions path); they are no per-turn cost.
			tails := after.Requests["/tokenize"] - before.Requests["/tokenize"]
			if want := map[ProbePath]int{ProbeCompletions: len(probe.Default)}[tc.path]; tails != want {
				t.Errorf("%d tokenize requests, want %d (one per fork tail)", tails, want)
			}
			if got := after.Total - before.Total - initial - tails; got != tc.perTurn*turns {
				t.Errorf("%d requests for %d turns, want %d per turn (%v)", got, turns, tc.perTurn, after.Requests)
			}
			if got := after.Requests[compPath] - before.Requests[compPath]; got != tc.complete*turns+min(initial, tc.complete) {
				t.Errorf("%d completions requests", got)
			}
			// The t = 0 read-out's usage is recorded on the episode.
			if u := ep.InitialProbeUsage; u.Requests != initial || u.PromptTokens == 0 || ep.InitialProbeMS <= 0 {
				t.Errorf("t = 0 probe usage %+v, %v ms; want %d requests", u, ep.InitialProbeMS, initial)
			}
			for i, tu := range ep.Turns {
				if tu.PersuadeeUsage.Requests != 1 || tu.ProbeUsage.Requests != tc.perTurn-1 {
					t.Errorf("turn %d usage: reply %+v, probes %+v", i+1, tu.PersuadeeUsage, tu.ProbeUsage)
				}
				if tu.Belief == nil || math.Abs(*tu.Belief-0.7) > 1e-6 {
					t.Errorf("turn %d belief %v, want 0.7", i+1, tu.Belief)
				}
			}
			if tc.eng == llm.VLLM {
				// The probes' shared context is served from the prefix cache.
				if u := ep.Turns[1].ProbeUsage; u.CachedTokens == 0 || u.CachedTokens >= u.PromptTokens {
					t.Errorf("probe usage %+v: want some but not all prompt tokens cached", u)
				}
			}
			seen := rec.all()
			for _, bad := range []string{marker, "DECISION", "think"} {
				if strings.Contains(seen, bad) {
					t.Errorf("persuader saw %q", bad)
				}
			}
			if s := p.Stats(); s.Violations != 0 || s.Replies != 3 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// Decision repair and violation counting over HTTP.
func TestFakeEngineRepairAndViolation(t *testing.T) {
	n := 0
	_, p := fakePersuadee(t, llm.Ollama, func(r fakeengine.Request) fakeengine.Reply {
		if isProbe(r) || isDetect(r) {
			return fakeengine.Reply{FirstToken: map[string]float64{"Yes": 0.5, "No": 0.5}}
		}
		n++
		switch n {
		case 1:
			return fakeengine.Reply{Text: "I suppose so."}
		case 2:
			return fakeengine.Reply{Text: "DECISION: conditional"}
		}
		return fakeengine.Reply{Text: "Absolutely, I accept wholeheartedly!"}
	})
	ctx := context.Background()
	sess, err := p.Start(ctx, testScenario(), 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sess.Reply(ctx, said("Would you try it?"))
	if err != nil || r.Decision != decision.Conditional || r.Text != "I suppose so." || r.Usage.Requests != 2 {
		t.Fatalf("repaired reply %+v, %v", r, err)
	}
	tr := append(said("Would you try it?"), episode.Message{Speaker: episode.PersuadeeSpeaker, Text: r.Text},
		episode.Message{Speaker: episode.PersuaderSpeaker, Text: "Great, and the schedule?"})
	r, err = sess.Reply(ctx, tr)
	if err != nil || r.Decision != decision.Continue {
		t.Fatalf("violating reply %+v, %v: want continue, never accept", r, err)
	}
	if s := p.Stats(); s.Repairs != 2 || s.Violations != 1 {
		t.Errorf("stats %+v", s)
	}
}

// Faults: Yes/No absent -> missing; log-probs dropped -> typed error;
// context window exceeded -> truncated episode.
func TestFakeEngineFaults(t *testing.T) {
	ctx := context.Background()
	t.Run("unreadable", func(t *testing.T) {
		_, p := fakePersuadee(t, llm.VLLM, func(r fakeengine.Request) fakeengine.Reply {
			if isProbe(r) {
				return fakeengine.Reply{FirstToken: map[string]float64{"Maybe": 0.9, "Perhaps": 0.1}}
			}
			return persuadeeHandler(r)
		})
		ep, err := episode.Run(ctx, episode.Config{Tmax: 1}, testScenario(), &recorder{}, p, 1)
		if err != nil || ep.Terminal != decision.TermPending {
			t.Fatalf("%+v %v", ep, err)
		}
		for _, rd := range append(ep.Initial, ep.Turns[0].Probes...) {
			if rd.OK {
				t.Errorf("reading %+v is readable", rd)
			}
		}
		if ep.B0 != nil || ep.Turns[0].Belief != nil {
			t.Error("belief from unreadable probes")
		}
	})
	for _, eng := range []llm.Engine{llm.VLLM, llm.Ollama} {
		t.Run("no logprobs "+string(eng), func(t *testing.T) {
			srv, p := fakePersuadee(t, eng, persuadeeHandler)
			if _, err := p.Start(ctx, testScenario(), 1); err != nil {
				t.Fatal(err)
			}
			path := "/v1/chat/completions"
			if eng == llm.VLLM {
				path = "/v1/completions"
			}
			for range 8 {
				srv.Fail(fakeengine.Fault{Path: path, DropLogprobs: true})
			}
			ep, err := episode.Run(ctx, episode.Config{}, testScenario(), &recorder{}, p, 1)
			if err != nil {
				t.Fatal(err)
			}
			if ep.Terminal != decision.TermFailed || !strings.Contains(ep.Error, llm.ErrLogprobsUnavailable.Error()) {
				t.Errorf("terminal %q, error %q", ep.Terminal, ep.Error)
			}
		})
	}
	// llama-server: a probe whose sampled token is a lone UTF-8 byte comes
	// back as "\uFFFD" without log-probs (6 of 240 episodes against a real
	// server). The probe is unreadable; the episode goes on.
	t.Run("byte token llamacpp", func(t *testing.T) {
		var sawBias bool
		var mu sync.Mutex
		srv, p := fakePersuadee(t, llm.LlamaCpp, func(r fakeengine.Request) fakeengine.Reply {
			if isProbe(r) {
				mu.Lock()
				_, ok := r.Body["logit_bias"]
				sawBias = sawBias || ok
				mu.Unlock()
				return fakeengine.Reply{Text: "\uFFFD"}
			}
			return persuadeeHandler(r)
		})
		if _, err := p.Start(ctx, testScenario(), 1); err != nil {
			t.Fatal(err)
		}
		for range 8 {
			srv.Fail(fakeengine.Fault{Path: "/completion", DropLogprobs: true})
		}
		ep, err := episode.Run(ctx, episode.Config{Tmax: 1}, testScenario(), &recorder{}, p, 1)
		if err != nil || ep.Terminal == decision.TermFailed {
			t.Fatalf("terminal %q, error %q, %v", ep.Terminal, ep.Error, err)
		}
		if ep.B0 != nil || len(ep.Initial) == 0 || ep.Initial[0].OK {
			t.Errorf("the byte-token read-out must be unreadable: %+v", ep.Initial)
		}
		if !sawBias {
			t.Error("llama-server probes must pin the sampled token with logit_bias")
		}
	})
	t.Run("context length", func(t *testing.T) {
		srv, p := fakePersuadee(t, llm.VLLM, persuadeeHandler)
		if _, err := p.Start(ctx, testScenario(), 1); err != nil {
			t.Fatal(err)
		}
		srv.Fail(fakeengine.Fault{Path: "/v1/chat/completions", ContextLength: true})
		ep, err := episode.Run(ctx, episode.Config{}, testScenario(), &recorder{}, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ep.Terminal != decision.TermTruncated || len(ep.Turns) != 0 || !strings.Contains(ep.Error, "scenario t1 turn 1") {
			t.Errorf("terminal %q, %d turns, error %q", ep.Terminal, len(ep.Turns), ep.Error)
		}
	})
}

// The exact token-id path reads Yes/No by id on vLLM; with the ids
// ignored (older vLLM) the top-k is pooled by spelling instead.
func TestFakeEngineTokenIDs(t *testing.T) {
	for _, opts := range [][]fakeengine.Option{nil, {fakeengine.WithoutTokenIDLogprobs()}} {
		_, p := fakePersuadee(t, llm.VLLM, func(r fakeengine.Request) fakeengine.Reply {
			if isProbe(r) {
				return fakeengine.Reply{FirstToken: map[string]float64{"Yes": 0.3, " yes": 0.1, "No": 0.2, "Sure": 0.4}}
			}
			return persuadeeHandler(r)
		}, opts...)
		ctx := context.Background()
		sess, err := p.Start(ctx, testScenario(), 1)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := sess.(episode.Prober).Probe(ctx, nil, probe.Default)
		if err != nil {
			t.Fatal(err)
		}
		for k, a := range ans {
			if rd := probe.Read("x", a); !rd.OK || math.Abs(rd.P-2.0/3) > 1e-6 {
				t.Errorf("opts %d probe %d: %+v from %+v", len(opts), k, rd, a)
			}
		}
	}
}
