package llmagent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/probe"
)

func start(t *testing.T, p *Persuadee) *session {
	t.Helper()
	s, err := p.Start(context.Background(), testScenario(), 7)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*session)
}

func said(text string) []episode.Message {
	return []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: text}}
}

func TestReplyParsesAndStrips(t *testing.T) {
	st := vllmStub()
	st.chat = func(llm.ChatRequest) (string, error) {
		return "<think>They seem kind.</think>Maybe, but I'm busy.\n\n**DECISION:** continue", nil
	}
	p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{})
	r, err := start(t, p).Reply(context.Background(), said("Want to walk with us?"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "Maybe, but I'm busy." || r.Decision != decision.Continue || r.Usage.Requests != 1 {
		t.Errorf("reply %+v", r)
	}
	if s := p.Stats(); s.Replies != 1 || s.Repairs != 0 || s.Violations != 0 {
		t.Errorf("stats %+v", s)
	}
	// The tagged-line protocol is asked for (no structured output here).
	sys := st.chatReqs[0].Messages[0].Content
	if !strings.Contains(sys, "DECISION: <continue | accept | conditional | reject>") || st.chatReqs[0].JSONSchema != nil {
		t.Errorf("system prompt lacks the decision line protocol:\n%s", sys)
	}
}

func TestReplyRepairThenAccept(t *testing.T) {
	st := vllmStub()
	calls := 0
	st.chat = func(r llm.ChatRequest) (string, error) {
		calls++
		if calls == 1 {
			return "You've convinced me, I'm in!", nil
		}
		last := r.Messages[len(r.Messages)-1]
		if last.Role != "user" || !strings.Contains(last.Content, "decision line") ||
			r.Messages[len(r.Messages)-2].Content != "You've convinced me, I'm in!" {
			return "", fmt.Errorf("unexpected repair request %+v", r.Messages)
		}
		return "accept", nil // a bare value answers the repair too
	}
	p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{})
	s := start(t, p)
	r, err := s.Reply(context.Background(), said("Shall we?"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != decision.Accept || r.Text != "You've convinced me, I'm in!" || r.Usage.Requests != 2 {
		t.Errorf("reply %+v", r)
	}
	if st := p.Stats(); st.Repairs != 1 || st.Violations != 0 {
		t.Errorf("stats %+v", st)
	}
	if h := s.canonical(s.hist[0], s.structured); h != "You've convinced me, I'm in!\nDECISION: accept" {
		t.Errorf("history %q", h)
	}
}

// A reply whose decision cannot be read even after the repair is a
// protocol violation and counts as continue, never acceptance.
func TestReplyViolationIsContinue(t *testing.T) {
	st := vllmStub()
	st.chat = func(llm.ChatRequest) (string, error) { return "Yes, I accept, sounds great!", nil }
	p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{})
	s := start(t, p)
	for i := range 3 {
		r, err := s.Reply(context.Background(), said("Shall we?"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Decision != decision.Continue || r.Usage.Requests != 2 {
			t.Fatalf("reply %d: %+v", i, r)
		}
	}
	if st := p.Stats(); st.Replies != 3 || st.Repairs != 3 || st.Violations != 3 || s.Violations() != 3 {
		t.Errorf("stats %+v, session %d", st, s.Violations())
	}
}

// A reply cut off inside its thinking carries no decision and no text:
// the whole reply is asked for once more.
func TestReplyCutOffInThinking(t *testing.T) {
	st := vllmStub()
	calls := 0
	st.chat = func(llm.ChatRequest) (string, error) {
		calls++
		if calls == 1 {
			return "<think>Let me weigh this. DECISION: accept would be", nil
		}
		return "No thanks.\nDECISION: reject", nil
	}
	p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{})
	r, err := start(t, p).Reply(context.Background(), said("Shall we?"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != decision.Reject || r.Text != "No thanks." || r.Usage.Requests != 2 {
		t.Errorf("reply %+v", r)
	}
}

// structured: true on an engine that cannot constrain JSON stops at
// start-up; auto falls back to the tagged line there.
func TestStructuredTrueNeedsTheEngine(t *testing.T) {
	st := vllmStub()
	st.caps.StructuredOutput = false
	_, err := newPersuadee("llm:x", st, llm.Role{Structured: "true"}, PersuadeeOptions{}).Start(context.Background(), testScenario(), 1)
	if !errors.Is(err, llm.ErrUnsupported) || !strings.Contains(err.Error(), "structured: true") {
		t.Fatalf("Start: %v, want ErrUnsupported naming structured: true", err)
	}
	s := start(t, newPersuadee("llm:x", st, llm.Role{Structured: "auto"}, PersuadeeOptions{}))
	if s.structured || !strings.Contains(s.sys, "DECISION: <continue") {
		t.Errorf("auto without structured output: structured %v", s.structured)
	}
}

func TestStructuredReply(t *testing.T) {
	st := vllmStub()
	st.caps.StructuredOutput = true
	st.chat = func(r llm.ChatRequest) (string, error) {
		if r.JSONSchema == nil {
			return "", errors.New("no schema")
		}
		return `{"reply": "I'll try it if I can leave early.", "decision": "conditional"}`, nil
	}
	p := newPersuadee("llm:x", st, llm.Role{Structured: "auto"}, PersuadeeOptions{})
	s := start(t, p)
	r, err := s.Reply(context.Background(), said("Shall we?"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != decision.Conditional || r.Text != "I'll try it if I can leave early." {
		t.Errorf("reply %+v", r)
	}
	if !strings.Contains(s.sys, `{"reply": "<your message>"`) {
		t.Errorf("system prompt lacks the JSON protocol")
	}
}

// vLLM: the K = 3 probes of a turn go in ONE /v1/completions request with
// the exact Yes/No token ids; with the reply that is 2 engine requests per
// persuadee turn. The chat template is learnt once, not per turn.
func TestProbesBatchedOnVLLM(t *testing.T) {
	st := vllmStub()
	st.dist = func(prompt string) map[string]float64 {
		if strings.Contains(prompt, probe.Default[2].Question) {
			return map[string]float64{" Yes": 0.2, "yes": 0.1, "No": 0.5, "<think>": 0.2}
		}
		return map[string]float64{"Yes": 0.6, "No": 0.2, "no": 0.2}
	}
	p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{})
	s := start(t, p)
	if p.Path() != ProbeCompletions || p.skelOK() != true {
		t.Fatalf("path %q, skeleton %v", p.Path(), p.skelOK())
	}
	st.reset()
	tr := said("Would a short walk after lunch work?")
	r, err := s.Reply(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	tr = append(tr, episode.Message{Speaker: episode.PersuadeeSpeaker, Text: r.Text})
	ans, err := s.Probe(context.Background(), tr, probe.Default)
	if err != nil {
		t.Fatal(err)
	}
	chats, completes, renders := st.counts()
	if chats != 1 || completes != 1 || renders != 0 {
		t.Fatalf("requests per turn: %d chat, %d completions, %d renders; want 1, 1, 0", chats, completes, renders)
	}
	req := st.compReqs[0]
	if len(req.Prompts) != 3 || len(req.TokenIDs) != 12 || *req.Sampling.Temperature != 1 || *req.Sampling.TopP != 1 ||
		req.Sampling.MaxTokens != 1 || req.Sampling.Extra["top_k"] != -1 {
		t.Fatalf("completion request %+v", req)
	}
	// Each prompt is the persuadee's context (with its own reply in
	// protocol form) plus the probe question, rendered with thinking off.
	want := st.render(append(s.messages(tr, 0, true), llm.Message{Role: "user", Content: probePrompt(probe.Default[1].Question)}), true, ptr(false))
	if req.Prompts[1] != want {
		t.Errorf("probe prompt\n%q\nwant\n%q", req.Prompts[1], want)
	}
	if !strings.HasSuffix(req.Prompts[0], "<think>\n\n</think>\n\n") || !strings.Contains(req.Prompts[0], "DECISION: continue") {
		t.Errorf("probe prompt does not end with thinking off or lacks the reply: %q", req.Prompts[0])
	}
	// Pooled read-outs: 0.6/(0.6+0.4) and (0.2+0.1)/(0.3+0.5).
	for k, want := range []float64{0.6, 0.6, 0.375} {
		rd := probe.Read(probe.Default[k].ID, ans[k])
		if !rd.OK || math.Abs(rd.P-want) > 1e-9 {
			t.Errorf("probe %d: %+v, want p = %v", k, rd, want)
		}
	}
	// The reply request's context is a prefix of the probe prompts, so the
	// prefix cache serves it.
	replyPrompt := st.render(st.chatReqs[0].Messages, false, nil)
	if !strings.HasPrefix(req.Prompts[0], replyPrompt) {
		t.Errorf("probe prompt does not extend the reply's context")
	}
}

func (p *Persuadee) skelOK() bool { return p.skel != nil }

// Ollama: K concurrent one-token chat requests with top log-probs and
// thinking off.
func TestProbesChatOnOllama(t *testing.T) {
	st := ollamaStub()
	p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{})
	s := start(t, p)
	ans, err := s.Probe(context.Background(), nil, probe.Default)
	if err != nil {
		t.Fatal(err)
	}
	chats, completes, _ := st.counts()
	if chats != 3 || completes != 0 || p.Path() != ProbeChat {
		t.Fatalf("%d chats, %d completions, path %q", chats, completes, p.Path())
	}
	for _, r := range st.chatReqs {
		if !r.Logprobs || r.TopLogprobs != 20 || r.Sampling.MaxTokens != 1 || r.Thinking == nil || *r.Thinking ||
			*r.Sampling.Temperature != 1 || r.JSONSchema != nil || len(r.Messages) != 2 {
			t.Errorf("probe request %+v", r)
		}
	}
	if rd := probe.Read("ca", ans[0]); !rd.OK || math.Abs(rd.P-0.7) > 1e-9 {
		t.Errorf("read-out %+v", rd)
	}
	if u := s.TakeProbeUsage(); u.Requests != 3 || u.PromptTokens == 0 {
		t.Errorf("probe usage %+v", u)
	}
	if u := s.TakeProbeUsage(); u != (episode.Usage{}) {
		t.Errorf("usage not reset: %+v", u)
	}
}

// Unreadable probes stay missing: Yes and No absent, or (exact ids) their
// pooled mass below the minimum.
func TestUnreadableProbe(t *testing.T) {
	for _, mk := range []func() *stub{vllmStub, ollamaStub} {
		st := mk()
		st.dist = func(string) map[string]float64 { return map[string]float64{"<think>": 0.95, "**": 0.05} }
		p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{})
		ans, err := start(t, p).Probe(context.Background(), nil, probe.Default)
		if err != nil {
			t.Fatal(err)
		}
		for k, a := range ans {
			if rd := probe.Read("x", a); rd.OK {
				t.Errorf("%s probe %d readable: %+v from %+v", st.engine, k, rd, a)
			}
		}
	}
}

// Episodes: log-probs absent fail the episode with ErrLogprobsUnavailable;
// a context-length error ends it as truncated.
func TestEpisodeErrors(t *testing.T) {
	ctx := context.Background()
	st := ollamaStub()
	st.noLogprobs = true
	ep, err := episode.Run(ctx, episode.Config{}, testScenario(), &recorder{}, newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Terminal != decision.TermFailed || !strings.Contains(ep.Error, llm.ErrLogprobsUnavailable.Error()) {
		t.Errorf("no log-probs: terminal %q, error %q", ep.Terminal, ep.Error)
	}

	st = vllmStub()
	n := 0
	st.chat = func(llm.ChatRequest) (string, error) {
		n++
		if n == 3 {
			return "", &llm.CallError{Err: llm.ErrContextLength}
		}
		return "Hmm.\nDECISION: continue", nil
	}
	ep, err = episode.Run(ctx, episode.Config{}, testScenario(), &recorder{}, newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Terminal != decision.TermTruncated || len(ep.Turns) != 2 || !strings.Contains(ep.Error, "scenario t1 turn 3") {
		t.Errorf("context length: terminal %q after %d turns, error %q", ep.Terminal, len(ep.Turns), ep.Error)
	}
}

// The hidden profile and the decision line never reach the persuader,
// while the persuadee's own prompt holds the profile.
func TestNoLeakToPersuader(t *testing.T) {
	st := vllmStub()
	st.chat = func(r llm.ChatRequest) (string, error) {
		if !strings.Contains(r.Messages[0].Content, marker) {
			return "", errors.New("persuadee prompt lacks its hidden profile")
		}
		return "<think>" + marker + " is what I care about.</think>I hear you.\nDECISION: continue", nil
	}
	rec := &recorder{}
	ep, err := episode.Run(context.Background(), episode.Config{Tmax: 4}, testScenario(), rec, newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{}), 3)
	if err != nil || ep.Terminal != decision.TermPending || len(ep.Turns) != 4 {
		t.Fatalf("episode %+v, %v", ep, err)
	}
	seen := rec.all()
	for _, bad := range []string{marker, "DECISION", "<think>", "continue"} {
		if strings.Contains(seen, bad) {
			t.Errorf("persuader saw %q:\n%s", bad, seen)
		}
	}
	if !strings.Contains(seen, "I hear you.") {
		t.Errorf("persuader did not see the reply:\n%s", seen)
	}
	// The turn records probe usage and belief.
	if u := ep.Turns[0].ProbeUsage; u.Requests != 1 || ep.Turns[0].Belief == nil {
		t.Errorf("turn 1 probe usage %+v, belief %v", u, ep.Turns[0].Belief)
	}
}

// A template the skeleton cannot reproduce (system prompt placed before
// the last user turn) is rendered by the engine per read-out instead.
func TestSkeletonFallback(t *testing.T) {
	st := vllmStub()
	st.template = func(msgs []llm.Message, gen bool, _ *bool) string {
		var b strings.Builder
		sys := msgs[0].Content
		last := 0
		for i, m := range msgs {
			if m.Role == "user" {
				last = i
			}
		}
		for i, m := range msgs[1:] {
			c := m.Content
			if i+1 == last {
				c = sys + "\n\n" + c
			}
			fmt.Fprintf(&b, "[%s]%s[/%s]", m.Role, c, m.Role)
		}
		if gen {
			b.WriteString("[assistant]")
		}
		return b.String()
	}
	p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{})
	s := start(t, p)
	if p.skelOK() {
		t.Fatal("skeleton accepted a template that moves the system prompt")
	}
	st.reset()
	if _, err := s.Probe(context.Background(), said("Hi"), probe.Default); err != nil {
		t.Fatal(err)
	}
	_, completes, renders := st.counts()
	want := "[user]" + s.sys[:20]
	if completes != 1 || renders != 1 || !strings.HasPrefix(st.compReqs[0].Prompts[0], "[user]Hi[/user][user]"+strings.TrimSpace(s.sys)[:10]) {
		t.Errorf("%d completions, %d renders, prompt %q (want prefix like %q)", completes, renders, st.compReqs[0].Prompts[0], want)
	}
}

// The skeleton reproduces the template for conversations of any length.
func TestSkeletonRender(t *testing.T) {
	st := vllmStub()
	sk, err := learnSkeleton(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{{Role: "system", Content: "S"}}
	for i := range 6 {
		msgs = append(msgs, llm.Message{Role: "user", Content: fmt.Sprint("u", i)})
		if got, want := sk.render(msgs), st.render(msgs, true, ptr(false)); got != want {
			t.Fatalf("%d messages: %q, want %q", len(msgs), got, want)
		}
		pre, suf := sk.fork(msgs[:len(msgs)-1])
		if pre+msgs[len(msgs)-1].Content+suf != sk.render(msgs) {
			t.Fatalf("fork of %d messages differs", len(msgs)-1)
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Content: fmt.Sprint("a", i)})
	}
}

func TestPromptsKeepHiddenLabelsOut(t *testing.T) {
	sc := testScenario()
	sys := persuadeeSystem(sc, false, true)
	for _, want := range []string{"Sam, an office worker", "Dana, a friend", "I have no time", "Evenings only", "You lean against it.", "dislike being steered"} {
		if !strings.Contains(sys, want) {
			t.Errorf("persuadee prompt lacks %q", want)
		}
	}
	for _, bad := range []string{"AR", "Autonomy", "-0.4", "resistance"} {
		if strings.Contains(sys, bad) {
			t.Errorf("persuadee prompt names %q", bad)
		}
	}
	per := persuaderSystem(sc.Public(), "")
	if strings.Contains(per, marker) || !strings.Contains(per, "Join a weekly walking group") || !strings.Contains(per, "never invent facts") {
		t.Errorf("persuader prompt:\n%s", per)
	}
}

// A "template" that only concatenates contents (special tokens lost) is
// not trusted for raw-prompt probes: probes go through chat.
func TestNoMarkupTemplateUsesChat(t *testing.T) {
	st := vllmStub()
	st.template = func(msgs []llm.Message, _ bool, _ *bool) string {
		var b strings.Builder
		for _, m := range msgs {
			b.WriteString(m.Content + "\n")
		}
		return b.String()
	}
	p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{})
	start(t, p)
	if p.Path() != ProbeChat {
		t.Errorf("path %q, want chat", p.Path())
	}
}

// rendezvous is a stub whose template renders wait for the first Yes/No
// variant to be tokenized (failing after ten seconds): a set-up that
// looks the skeleton and the token ids up one after the other fails.
type rendezvous struct {
	*stub
	once sync.Once
	tok  chan struct{}
}

func (r *rendezvous) Tokenize(ctx context.Context, text string) ([]int, error) {
	r.once.Do(func() { close(r.tok) })
	return r.stub.Tokenize(ctx, text)
}

func (r *rendezvous) RenderChat(ctx context.Context, q llm.TemplateRequest) (string, error) {
	select {
	case <-r.tok:
		return r.stub.RenderChat(ctx, q)
	case <-time.After(10 * time.Second):
		return "", errors.New("no Yes/No tokenization during the template render")
	}
}

// The persuadee's set-up renders the template skeleton and tokenizes the
// Yes/No variants at once (every episode waits for it; under engine faults
// one retry path instead of two in a row).
func TestSetupLooksUpAtOnce(t *testing.T) {
	r := &rendezvous{stub: vllmStub(), tok: make(chan struct{})}
	p := newPersuadee("llm:x", r, llm.Role{}, PersuadeeOptions{})
	if _, err := p.Start(context.Background(), testScenario(), 1); err != nil {
		t.Fatal(err)
	}
	if !p.skelOK() || p.Path() != ProbeCompletions || len(p.idLst) == 0 {
		t.Fatalf("path %v, skeleton %v, %d ids", p.Path(), p.skelOK(), len(p.idLst))
	}
}
