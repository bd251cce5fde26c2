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

// The behavioural test engine (fakeengine.Model) plays a persuadee with
// the habits of real chat models; each test below pins one way a real run
// read wrong numbers on 3b48d04 (issue 47).

// persuaderTurnsIn counts the persuader's messages in a persuadee's
// context (user turns, the probe's own excluded by the caller).
func persuaderTurnsIn(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == "user" {
			n++
		}
	}
	return n
}

// knownBelief is the behavioural persuadee's P(Yes) in a clean fork:
// 0.2 + 0.1 per persuader turn, +0.05 for the PE probe and +0.1 for AC,
// so every reading of an episode has a value a test can assert.
func knownBelief(last string, msgs []llm.Message) float64 {
	p := 0.2 + 0.1*float64(persuaderTurnsIn(msgs))
	switch {
	case strings.Contains(last, probe.Default[1].Question):
		p += 0.05
	case strings.Contains(last, probe.Default[2].Question):
		p += 0.1
	}
	return p
}

// wantBelief is knownBelief of probe k after t persuader turns.
func wantBelief(t, k int) float64 { return 0.2 + 0.1*float64(t) + []float64{0, 0.05, 0.1}[k] }

// acceptAt replies "Let me think about it." until the persuader's n-th
// message, which it accepts.
func acceptAt(n int) func([]llm.Message) (string, string) {
	return func(msgs []llm.Message) (string, string) {
		if persuaderTurnsIn(msgs) >= n {
			return "All right, I'll give it a go.", "accept"
		}
		return "Let me think about it.", "continue"
	}
}

// capture records every request the engine serves, for tests that look at
// what reached it.
type capture struct {
	mu   sync.Mutex
	reqs []fakeengine.Request
}

func (c *capture) wrap(h fakeengine.Handler) fakeengine.Handler {
	return func(r fakeengine.Request) fakeengine.Reply {
		c.mu.Lock()
		c.reqs = append(c.reqs, r)
		c.mu.Unlock()
		return h(r)
	}
}

// forks returns the probe forks served, as their messages.
func (c *capture) forks() [][]llm.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]llm.Message
	for _, r := range c.reqs {
		msgs := r.Messages
		if msgs == nil {
			msgs, _ = fakeengine.ParseTemplate(r.Prompt)
		}
		if len(msgs) > 0 && strings.HasSuffix(msgs[len(msgs)-1].Content, "Yes or No.") {
			out = append(out, msgs)
		}
	}
	return out
}

// readT0 reads the default probes of session s before the first turn.
func readT0(t *testing.T, s episode.PersuadeeSession) []probe.Reading {
	t.Helper()
	ans, err := s.(episode.Prober).Probe(context.Background(), nil, probe.Default)
	if err != nil {
		t.Fatal(err)
	}
	rs := make([]probe.Reading, len(ans))
	for k, a := range ans {
		rs[k] = probe.Read(probe.Default[k].ID, a)
	}
	return rs
}

func behaviourPersuadee(t testing.TB, eng llm.Engine, m *fakeengine.Model, role llm.Role, opts PersuadeeOptions, srvOpts ...fakeengine.Option) (*fakeengine.Server, *Persuadee, *capture) {
	t.Helper()
	c := &capture{}
	srv := fakeengine.New(eng, append([]fakeengine.Option{fakeengine.WithHandler(c.wrap(m.Handler())), fakeengine.WithCacheReport(true)}, srvOpts...)...)
	t.Cleanup(srv.Close)
	cl, err := llm.NewClient(srv.Backend("fake"))
	if err != nil {
		t.Fatal(err)
	}
	return srv, NewPersuadee("llm:behaviour", cl, role, opts), c
}

// Item 1: a probe fork never carries the JSON answer rule. A model that
// replies in JSON is primed for "{" at the answer position of a fork
// that asks for JSON (system rule, JSON past turns), and what is left on
// Yes and No there is no answer: on 3b48d04 every reading below was 0.5
// whatever the persuadee believed. Forks are now rendered in the text
// protocol whatever the replies use.
func TestProbeForksCarryNoJSONRule(t *testing.T) {
	yes := true
	for _, eng := range []llm.Engine{llm.VLLM, llm.LlamaCpp, llm.SGLang} {
		t.Run(string(eng), func(t *testing.T) {
			m := &fakeengine.Model{Belief: knownBelief, Reply: acceptAt(3), JSONPriming: 0.95}
			_, p, c := behaviourPersuadee(t, eng, m, llm.Role{}, PersuadeeOptions{Structured: &yes})
			ep, err := episode.Run(context.Background(), episode.Config{}, testScenario(), &recorder{}, p, 1)
			if err != nil || ep.Terminal != decision.TermAccept || len(ep.Turns) != 3 {
				t.Fatalf("episode %+v, %v", ep, err)
			}
			reads := append([][]probe.Reading{ep.Initial}, func() (rs [][]probe.Reading) {
				for _, tr := range ep.Turns {
					rs = append(rs, tr.Probes)
				}
				return rs
			}()...)
			for turn, rs := range reads {
				for k, r := range rs {
					if w := wantBelief(turn, k); !r.OK || math.Abs(r.P-w) > 1e-6 {
						t.Errorf("t=%d %s: read %+v, want p = %v", turn, r.Probe, r, w)
					}
				}
			}
			// The replies did use JSON; no fork asked for it or showed it.
			sawSchema := false
			for _, r := range c.reqs {
				sawSchema = sawSchema || r.Body["response_format"] != nil
			}
			if !sawSchema {
				t.Error("no reply was asked for structured output")
			}
			forks := c.forks()
			if len(forks) == 0 {
				t.Fatal("no probe fork served")
			}
			for _, f := range forks {
				for _, msg := range f {
					if strings.Contains(msg.Content, "JSON object") || msg.Role == "assistant" && strings.HasPrefix(msg.Content, "{") {
						t.Fatalf("a fork carries JSON: %q", msg.Content)
					}
				}
			}
		})
	}
}

// The default protocol is the tagged line (llm.Role.Structured ""), on an
// engine that declares structured output too, and a fork is then exactly
// the next reply's context with the probe question in place of the
// persuader's next message: a byte prefix the engine's cache shares.
// "auto" keeps JSON where the engine honours it; "true" refuses an engine
// that does not.
func TestProtocolSwitch(t *testing.T) {
	m := &fakeengine.Model{Belief: knownBelief, Reply: acceptAt(3)}
	_, p, c := behaviourPersuadee(t, llm.VLLM, m, llm.Role{}, PersuadeeOptions{})
	ep, err := episode.Run(context.Background(), episode.Config{}, testScenario(), &recorder{}, p, 1)
	if err != nil || ep.Terminal != decision.TermAccept {
		t.Fatalf("%+v %v", ep, err)
	}
	var replies [][]llm.Message
	for _, r := range c.reqs {
		if r.Body["response_format"] != nil {
			t.Fatal("the default protocol asked for structured output")
		}
		if r.Path == "/v1/chat/completions" && len(r.Messages) > 1 && r.Messages[0].Role == "system" {
			replies = append(replies, r.Messages)
		}
	}
	forks := c.forks()
	if len(replies) != 3 || len(forks) != 4*len(probe.Default) || !strings.Contains(replies[0][0].Content, "DECISION: <continue") {
		t.Fatalf("%d replies, %d forks", len(replies), len(forks))
	}
	// The forks after turn t (forks[3t:3t+3]: one prompt list per
	// read-out, c.forks lists each prompt) share everything but their
	// question with the reply of turn t+1.
	for turn := 1; turn < 3; turn++ {
		f, next := forks[3*turn], replies[turn]
		if len(f) != len(next) {
			t.Fatalf("turn %d: fork of %d messages, next reply's context %d", turn, len(f), len(next))
		}
		for i := range len(f) - 1 {
			if f[i] != next[i] {
				t.Errorf("turn %d message %d: fork %q, next reply %q", turn, i, f[i].Content, next[i].Content)
			}
		}
	}

	for _, tc := range []struct {
		mode string
		eng  llm.Engine
		json bool
	}{{"auto", llm.VLLM, true}, {"auto", llm.Ollama, true}, {"true", llm.VLLM, true}, {"false", llm.VLLM, false}} {
		_, p, c := behaviourPersuadee(t, tc.eng, m, llm.Role{Structured: tc.mode}, PersuadeeOptions{})
		s, err := p.Start(context.Background(), testScenario(), 1)
		if err != nil {
			t.Fatalf("%s on %s: %v", tc.mode, tc.eng, err)
		}
		if _, err := s.Reply(context.Background(), said("Shall we?")); err != nil {
			t.Fatal(err)
		}
		if got := c.reqs[len(c.reqs)-1].Body["response_format"] != nil; got != tc.json {
			t.Errorf("structured %s on %s: JSON %v, want %v", tc.mode, tc.eng, got, tc.json)
		}
	}
}

// Item 3: llama-server's pinned "Yes" is always reported, so when little
// mass sits on Yes and No and No falls below the top 20, the answer shows
// one side only. On 3b48d04 it read P = 1.0 for a true 0.6; a top-k
// answer with one side is now bounded by the list's floor, here far too
// loosely to read.
func TestOneSidedLlamaAnswerNeverReadsOne(t *testing.T) {
	m := &fakeengine.Model{Belief: func(string, []llm.Message) float64 { return 0.6 }, AnswerMass: 0.04, Crowd: 20}
	_, p, _ := behaviourPersuadee(t, llm.LlamaCpp, m, llm.Role{}, PersuadeeOptions{})
	s, err := p.Start(context.Background(), testScenario(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readT0(t, s) {
		if r.OK {
			t.Errorf("%s read %v from one visible side (true 0.6)", r.Probe, r.P)
		} else if !strings.Contains(r.Reason, "only Yes") {
			t.Errorf("%s: reason %q", r.Probe, r.Reason)
		}
	}
	// The same model with its answers in the top 20 reads 0.6.
	m.AnswerMass, m.Crowd = 0.5, 4
	if r := readT0(t, s)[0]; !r.OK || math.Abs(r.P-0.6) > 1e-6 {
		t.Errorf("two-sided read %+v, want 0.6", r)
	}
}

// Habits that must not change a reading: the sampled token duplicated in
// the top log-probs, zero-probability candidates written -9999, null,
// -Infinity or -3.4e38, and thinking left on by default (probes switch it
// off).
func TestBehaviourHabitsReadRight(t *testing.T) {
	for _, zero := range []string{"-9999", "null", "-inf", "-3.4e38"} {
		for _, eng := range []llm.Engine{llm.VLLM, llm.LlamaCpp, llm.SGLang} {
			m := &fakeengine.Model{Belief: knownBelief, Reply: acceptAt(2), Duplicate: true, ZeroVariants: true, ThinkFirst: true}
			_, p, _ := behaviourPersuadee(t, eng, m, llm.Role{}, PersuadeeOptions{}, fakeengine.WithZeroLogprob(zero))
			ep, err := episode.Run(context.Background(), episode.Config{}, testScenario(), &recorder{}, p, 1)
			if err != nil || ep.Terminal != decision.TermAccept || len(ep.Turns) != 2 {
				t.Fatalf("%s %s: %+v, %v", eng, zero, ep, err)
			}
			for k, r := range ep.Turns[1].Probes {
				if w := wantBelief(2, k); !r.OK || math.Abs(r.P-w) > 1e-6 {
					t.Errorf("%s %s: %s read %+v, want %v", eng, zero, r.Probe, r, w)
				}
			}
		}
	}
}

// Item 5 end to end: the fork after an accepting reply outgrows the
// context window (the reply itself fit). On 3b48d04 the episode ended
// truncated, R_goal -1, the accept dropped; now the accept stands and that
// turn's belief is missing.
func TestAcceptSurvivesForkOverflow(t *testing.T) {
	long := strings.Repeat("We could start with one short walk at lunch and see how it feels for you. ", 6)
	play := func(window int) *episode.Episode {
		m := &fakeengine.Model{Belief: knownBelief, Reply: acceptAt(2)}
		_, p, _ := behaviourPersuadee(t, llm.VLLM, m, llm.Role{}, PersuadeeOptions{}, fakeengine.WithContextWindow(window))
		ep, err := episode.Run(context.Background(), episode.Config{}, testScenario(), &recorder{lines: []string{"Would a walk help?", long}}, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	ep := play(1 << 20)
	if ep.Terminal != decision.TermAccept || len(ep.Turns) != 2 || ep.Turns[1].Belief == nil {
		t.Fatalf("without a limit: %+v", ep)
	}
	// The accepting reply's prompt fits; its fork, one reply and one
	// question longer, does not.
	window := ep.Turns[1].PersuadeeUsage.PromptTokens + 2
	ep = play(window)
	if ep.Terminal != decision.TermAccept || ep.RGoal != 3 || len(ep.Turns) != 2 {
		t.Fatalf("window %d: terminal %s, R_goal %v, %d turns (%s); want the accept", window, ep.Terminal, ep.RGoal, len(ep.Turns), ep.Error)
	}
	if tr := ep.Turns[1]; tr.Belief != nil || len(tr.Probes) != 3 || tr.Probes[0].OK || tr.Probes[0].Reason == "" {
		t.Errorf("last turn %+v: want its belief missing, with the reason", tr)
	}
	if ep.Turns[0].Belief == nil {
		t.Error("turn 1's fork fit and must read")
	}
	if _, ok := ep.FinalBelief(); ok {
		t.Error("B_T must be missing")
	}
}

// Item 7: a reply cut at max_tokens (finish_reason "length") is asked for
// again with twice the limit; cut again, only its complete sentences are
// shown and it decides nothing. On 3b48d04 the half-written reply went to
// the persuader and a decision was asked for.
func TestCutReplies(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name       string
		structured *bool
	}{{"text", nil}, {"json", &yes}} {
		t.Run(tc.name, func(t *testing.T) {
			m := &fakeengine.Model{Belief: knownBelief, Reply: acceptAt(1), Ramble: 60}
			role := llm.Role{Sampling: llm.Sampling{MaxTokens: 14}}
			_, p, c := behaviourPersuadee(t, llm.VLLM, m, role, PersuadeeOptions{Structured: tc.structured})
			ep, err := episode.Run(context.Background(), episode.Config{Tmax: 2}, testScenario(), &recorder{}, p, 1)
			if err != nil || ep.Terminal != decision.TermPending || len(ep.Turns) != 2 {
				t.Fatalf("%+v %v", ep, err)
			}
			for _, tr := range ep.Turns {
				if !tr.ReplyCut || tr.Decision != decision.Continue {
					t.Errorf("turn %d: cut %v, decision %s", tr.T, tr.ReplyCut, tr.Decision)
				}
				if s := tr.Persuadee; s != "" && !strings.HasSuffix(s, ".") {
					t.Errorf("turn %d shows a half-written reply %q", tr.T, s)
				}
			}
			for _, r := range c.reqs {
				for _, msg := range r.Messages {
					if strings.Contains(msg.Content, "did not") && strings.Contains(msg.Content, "decision") {
						t.Fatalf("a cut reply was asked for its decision: %q", msg.Content)
					}
				}
			}
			if st := p.Stats(); st.Cut != 2 || st.Violations != 2 || st.Repairs != 2 {
				t.Errorf("stats %+v", st)
			}
			for _, tr := range ep.Turns {
				if strings.Contains(tr.Persuadee, "{") || strings.Contains(tr.Persuadee, "DECISION") {
					t.Errorf("turn %d shows protocol text: %q", tr.T, tr.Persuadee)
				}
			}
		})
	}
	// A reply the doubled limit lets finish is taken as it is.
	m := &fakeengine.Model{Belief: knownBelief, Reply: acceptAt(1), Ramble: 4}
	_, p, _ := behaviourPersuadee(t, llm.VLLM, m, llm.Role{Sampling: llm.Sampling{MaxTokens: 10}}, PersuadeeOptions{})
	ep, err := episode.Run(context.Background(), episode.Config{}, testScenario(), &recorder{}, p, 1)
	if err != nil || ep.Terminal != decision.TermAccept || ep.Turns[0].ReplyCut || p.Stats().Repairs != 1 {
		t.Fatalf("%+v %v, stats %+v", ep, err, p.Stats())
	}
}

// Item 8: a read-out's prompt tokens with the forks' shared context counted
// once (Table 4's "with cache" count): sum over forks of their tokens
// minus (K-1) times the context's, computed here from the fake engine's
// tokenizer on the prompts it was sent.
func TestProbePromptOnce(t *testing.T) {
	m := &fakeengine.Model{Belief: knownBelief, Reply: acceptAt(9)}
	for _, eng := range []llm.Engine{llm.VLLM, llm.LlamaCpp} {
		_, p, c := behaviourPersuadee(t, eng, m, llm.Role{}, PersuadeeOptions{})
		s, err := p.Start(context.Background(), testScenario(), 1)
		if err != nil {
			t.Fatal(err)
		}
		tr := said("Would a walk at lunch help?")
		r, err := s.Reply(context.Background(), tr)
		if err != nil {
			t.Fatal(err)
		}
		tr = append(tr, episode.Message{Speaker: episode.PersuadeeSpeaker, Text: r.Text})
		n := len(c.reqs)
		if _, err := s.(episode.Prober).Probe(context.Background(), tr, probe.Default); err != nil {
			t.Fatal(err)
		}
		u := s.(episode.ProbeUsageReporter).TakeProbeUsage()
		var prompts []string
		for _, r := range c.reqs[n:] {
			if r.Prompt != "" && strings.HasSuffix(strings.TrimSpace(strings.TrimSuffix(r.Prompt, "<|im_start|>assistant\n<think>\n\n</think>\n\n")), "<|im_end|>") {
				prompts = append(prompts, r.Prompt)
			}
		}
		if len(prompts) != 3 {
			t.Fatalf("%s: %d fork prompts", eng, len(prompts))
		}
		ctxLen := len(fakeengine.Tokenize(prompts[0][:strings.Index(prompts[0], "(A private question")]))
		all := 0
		for _, pr := range prompts {
			all += len(fakeengine.Tokenize(pr))
		}
		if want := all - 2*ctxLen; u.PromptTokens != all || u.PromptOnceTokens != want {
			t.Errorf("%s: prompt %d once %d, want %d and %d", eng, u.PromptTokens, u.PromptOnceTokens, all, want)
		}
	}
}

// A probe sampled at temperature 1 can draw a rare token, and vLLM's
// completions list it with the top-k although it ranks far below: its
// probability is no floor for the answer that fell out of the list. With
// Yes 0.30 listed and No 0.009 below 20 other tokens of 0.0345, the
// sampled token's 1e-4 taken as the floor read 0.9998 for a true 0.971;
// the floor is the list's own, which leaves p too uncertain to read.
func TestSampledTailSetsNoFloor(t *testing.T) {
	m := &fakeengine.Model{Belief: func(string, []llm.Message) float64 { return 0.971 }, AnswerMass: 0.309, Crowd: 20, SampleTail: 1e-4}
	_, p, _ := behaviourPersuadee(t, llm.VLLM, m, llm.Role{}, PersuadeeOptions{}, fakeengine.WithoutTokenIDLogprobs())
	s, err := p.Start(context.Background(), testScenario(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readT0(t, s) {
		if r.OK {
			t.Errorf("%s read %v from one visible side (true 0.971)", r.Probe, r.P)
		}
	}
}
