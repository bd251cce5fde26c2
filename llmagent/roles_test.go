package llmagent

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
)

// The LLM persuader sees the public fields and the visible transcript
// only; its output loses reasoning and speaker labels.
func TestPersuaderAgainstLLMPersuadee(t *testing.T) {
	st := vllmStub()
	var perReqs atomic.Int32
	st.chat = func(r llm.ChatRequest) (string, error) {
		sys := r.Messages[0].Content
		if strings.HasPrefix(sys, "You are Dana") { // the persuader
			perReqs.Add(1)
			for _, m := range r.Messages {
				if strings.Contains(m.Content, marker) || strings.Contains(m.Content, "DECISION") {
					return "", errors.New("persuader request leaks: " + m.Content)
				}
			}
			if r.Messages[1].Content != persuaderOpening {
				return "", errors.New("no opening cue")
			}
			if len(r.Messages) >= 4 { // after the first exchange
				return "<think>plan</think>**Dana:** Would Tuesdays suit you? No pressure either way.", nil
			}
			return "Dana: \"How have you been sleeping lately?\"", nil
		}
		n := 0
		for _, m := range r.Messages {
			if m.Role == "user" {
				n++
			}
		}
		if n >= 2 {
			return "<think>" + marker + "</think>Alright, Tuesdays work.\nDECISION: accept", nil
		}
		return "Not great, honestly.\nDECISION: continue", nil
	}
	per := &Persuader{name: "llm:p", eng: st}
	pee := newPersuadee("llm:q", st, llm.Role{}, PersuadeeOptions{})
	ep, err := episode.Run(context.Background(), episode.Config{}, testScenario(), per, pee, 9)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Terminal != decision.TermAccept || len(ep.Turns) != 2 {
		t.Fatalf("terminal %q after %d turns (%s)", ep.Terminal, len(ep.Turns), ep.Error)
	}
	if ep.Turns[0].Persuader != "How have you been sleeping lately?" || ep.Turns[1].Persuader != "Would Tuesdays suit you? No pressure either way." {
		t.Errorf("utterances %q / %q", ep.Turns[0].Persuader, ep.Turns[1].Persuader)
	}
	if ep.Turns[1].Persuadee != "Alright, Tuesdays work." || ep.Turns[0].PersuaderUsage.Requests != 1 {
		t.Errorf("turn 2 %+v", ep.Turns[1])
	}
	if perReqs.Load() != 2 {
		t.Errorf("%d persuader requests", perReqs.Load())
	}
}

func TestJudge(t *testing.T) {
	st := ollamaStub()
	answers := map[string][]string{
		"decided": {`{"decision": "accept"}`, `{"decision": "reject"}`, `{"decision": "accept"}`},
		"rate":    {`{"score": 0.8, "reason": "kind"}`, `{"score": 2, "reason": "over"}`, `not json`},
		"acts":    {`{"acts": ["diagnostic", "autonomy"]}`, `{"acts": ["diagnostic"]}`, `{"acts": ["plan", "bogus"]}`},
		"tie":     {`{"decision": "accept"}`, `{"decision": "reject"}`, `garbage`},
	}
	var which atomic.Value
	var k atomic.Int32
	st.chat = func(r llm.ChatRequest) (string, error) {
		a := answers[which.Load().(string)]
		return a[int(k.Add(1)-1)%len(a)], nil
	}
	j := &Judge{name: "llm:j", eng: st, Samples: 3}
	tr := []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Join us?"}, {Speaker: episode.PersuadeeSpeaker, Text: "Sure."}}
	ctx := context.Background()

	which.Store("decided")
	if d, err := j.Terminal(ctx, tr); err != nil || d != decision.Accept {
		t.Errorf("terminal majority %q, %v", d, err)
	}
	which.Store("tie")
	k.Store(0)
	if d, err := j.Terminal(ctx, tr); err != nil || d != decision.Reject {
		t.Errorf("terminal tie accept/reject gave %q, %v; want reject (less committal than accept)", d, err)
	}
	which.Store("rate")
	k.Store(0)
	// (0.8 + clamp(2) = 1) / 2 readable samples.
	if s, err := j.Strategy(ctx, testScenario().Public(), tr); err != nil || math.Abs(s-0.9) > 1e-12 {
		t.Errorf("strategy %v, %v; want 0.9", s, err)
	}
	which.Store("acts")
	k.Store(0)
	// diagnostic 2/3, autonomy 1/3, plan 1/3 -> kept when >= half.
	acts, err := j.Acts(ctx, "What worries you? It's your call.")
	if err != nil || strings.Join(acts, ",") != "diagnostic" {
		t.Errorf("acts %v, %v", acts, err)
	}
	if u := j.Usage(); u.Requests != 12 {
		t.Errorf("judge usage %+v, want 12 requests", u)
	}
	if j.Unparsed() != 2 {
		t.Errorf("unparsed %d, want 2", j.Unparsed())
	}
	// Judge prompts hold the public view only.
	for _, r := range st.chatReqs {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, marker) {
				t.Fatalf("judge saw the hidden profile")
			}
		}
	}
}

// A persuadee without a decision protocol is decided by the judge.
func TestPersuadeeWithJudge(t *testing.T) {
	st := ollamaStub()
	st.chat = func(r llm.ChatRequest) (string, error) {
		if strings.HasPrefix(r.Messages[0].Content, "You read a conversation") {
			if !strings.Contains(r.Messages[1].Content, "Persuadee: Fine, I'll join.") {
				return "", errors.New("judge did not see the reply")
			}
			return `{"decision": "accept"}`, nil
		}
		if strings.Contains(r.Messages[0].Content, "DECISION") || strings.Contains(r.Messages[0].Content, `"decision"`) {
			return "", errors.New("protocol asked for although a judge decides")
		}
		return "Fine, I'll join.", nil
	}
	j := &Judge{name: "llm:j", eng: st}
	p := newPersuadee("llm:x", st, llm.Role{}, PersuadeeOptions{Judge: j})
	r, err := start(t, p).Reply(context.Background(), said("Join us?"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != decision.Accept || r.Text != "Fine, I'll join." || r.Usage.Requests != 2 || p.Stats().Violations != 0 {
		t.Errorf("reply %+v, stats %+v", r, p.Stats())
	}
}

func TestCleanUtterance(t *testing.T) {
	pub := testScenario().Public()
	for in, want := range map[string]string{
		"Persuader: Hello there.":            "Hello there.",
		"**Dana:** Hi!":                      "Hi!",
		"A friend: hey":                      "hey",
		`"Quoted line."`:                     "Quoted line.",
		`"Say "hi"" to them`:                 `"Say "hi"" to them`,
		"<think>hmm</think>\n\nHow are you?": "How are you?",
		"<think>never closed":                "",
	} {
		if got := cleanUtterance(in, pub); got != want {
			t.Errorf("cleanUtterance(%q) = %q, want %q", in, got, want)
		}
	}
}

// ForEpisodes charges each call's own usage (all samples) to the caller,
// also when the answer is unreadable.
func TestJudgeForEpisodes(t *testing.T) {
	st := ollamaStub()
	st.chat = func(r llm.ChatRequest) (string, error) {
		if strings.Contains(r.Messages[1].Content, "Message: ") {
			if strings.Contains(r.Messages[1].Content, "garble") {
				return "no idea", nil
			}
			return `{"acts": ["evidence"]}`, nil
		}
		return `{"score": -0.25, "reason": "a little pushy"}`, nil
	}
	ej := (&Judge{name: "llm:j", eng: st, Samples: 2}).ForEpisodes()
	var _ episode.Judge = ej
	ctx := context.Background()
	tr := []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Join us?"}, {Speaker: episode.PersuadeeSpeaker, Text: "Sure."}}
	s, u, err := ej.Strategy(ctx, testScenario().Public(), tr)
	if err != nil || s != -0.25 || u.Requests != 2 || u.PromptTokens == 0 || u.CompletionTokens == 0 {
		t.Errorf("strategy %v, usage %+v, %v", s, u, err)
	}
	acts, u2, err := ej.Acts(ctx, "Over 80% finish the course.")
	if err != nil || strings.Join(acts, ",") != "evidence" || u2.Requests != 2 {
		t.Errorf("acts %v, usage %+v, %v", acts, u2, err)
	}
	_, u3, err := ej.Acts(ctx, "garble")
	if !errors.Is(err, ErrJudgeUnparsed) || u3.Requests != 2 || u3.PromptTokens == 0 {
		t.Errorf("unreadable acts: usage %+v, %v", u3, err)
	}
	if tot := ej.j.Usage(); tot != u.Add(u2).Add(u3) {
		t.Errorf("judge total %+v, calls %+v %+v %+v", tot, u, u2, u3)
	}
}
