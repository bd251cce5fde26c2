package fakeengine

import (
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/llm"
)

func TestParseTemplateInvertsTemplate(t *testing.T) {
	msgs := []llm.Message{{Role: "system", Content: "Be brief.\nReally."}, {Role: "user", Content: "Hi"},
		{Role: "assistant", Content: `{"reply": "Hello"}`}, {Role: "user", Content: "Yes or No?"}}
	off := false
	for _, th := range []*bool{nil, &off} {
		got, thinking := ParseTemplate(Template(msgs, true, th, false))
		if len(got) != len(msgs) {
			t.Fatalf("thinking %v: %d messages, want %d", th, len(got), len(msgs))
		}
		for i := range msgs {
			if got[i] != msgs[i] {
				t.Errorf("message %d = %+v, want %+v", i, got[i], msgs[i])
			}
		}
		if (th == nil) != (thinking == nil) {
			t.Errorf("thinking %v read back as %v", th, thinking)
		}
	}
	if got, _ := ParseTemplate("plain text"); got != nil {
		t.Errorf("plain text parsed as %+v", got)
	}
}

// The model's first-token distributions, by hand: a clean fork puts
// AnswerMass on Yes/No in the ratio Belief gives; JSON priming moves
// JSONPriming of the mass to "{" and splits the rest evenly; thinking
// first puts 0.97 on "<think>".
func TestModelProbeDistribution(t *testing.T) {
	m := &Model{Belief: func(string, []llm.Message) float64 { return 0.8 }, JSONPriming: 0.9, ThinkFirst: true, Crowd: 2}
	h := m.Handler()
	off := false
	q := llm.Message{Role: "user", Content: "Am I more open? Answer with one word: Yes or No."}
	clean := []llm.Message{{Role: "system", Content: "You are Sam.\nDECISION: <continue | accept>"}, q}
	jsonSys := []llm.Message{{Role: "system", Content: `Answer as a JSON object {"reply": ...}.`}, q}
	jsonTurn := []llm.Message{{Role: "system", Content: "You are Sam."}, {Role: "user", Content: "Hi"},
		{Role: "assistant", Content: `{"reply": "Hi", "decision": "continue"}`}, q}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	for _, tc := range []struct {
		name          string
		msgs          []llm.Message
		thinking      *bool
		yes, no, open float64
	}{
		{"clean", clean, &off, 0.98 * 0.8, 0.98 * 0.2, 0},
		{"json system rule", jsonSys, &off, 0.1 * 0.98 * 0.5, 0.1 * 0.98 * 0.5, 0.9},
		{"json past turn", jsonTurn, &off, 0.1 * 0.98 * 0.5, 0.1 * 0.98 * 0.5, 0.9},
		{"thinking on", clean, nil, 0.03 * 0.98 * 0.8, 0.03 * 0.98 * 0.2, 0},
	} {
		r := h(Request{Messages: tc.msgs, Thinking: tc.thinking})
		d := r.FirstToken
		if !near(d["Yes"], tc.yes) || !near(d["No"], tc.no) || !near(d["{"], tc.open) {
			t.Errorf("%s: Yes %v No %v { %v; want %v %v %v", tc.name, d["Yes"], d["No"], d["{"], tc.yes, tc.no, tc.open)
		}
		sum := 0.0
		for _, p := range d {
			sum += p
		}
		if !near(sum, 1) {
			t.Errorf("%s: distribution sums to %v", tc.name, sum)
		}
	}
	// The same fork, rendered, reads the same.
	r := h(Request{Prompt: Template(clean, true, &off, false)})
	if !near(r.FirstToken["Yes"], 0.98*0.8) {
		t.Errorf("rendered fork: Yes %v", r.FirstToken["Yes"])
	}
	// llama-server's pinned "Yes" is the sampled token.
	r = h(Request{Messages: clean, Thinking: &off, Body: map[string]any{"logit_bias": []any{[]any{"Yes", 100.0}}}})
	if r.Text != "Yes" {
		t.Errorf("pinned sample %q, want Yes", r.Text)
	}
}

func TestModelReplies(t *testing.T) {
	m := &Model{Reply: func([]llm.Message) (string, string) { return "Fine, I'm in.", "accept" }, Ramble: 9}
	h := m.Handler()
	conv := []llm.Message{{Role: "system", Content: "You are Sam."}, {Role: "user", Content: "Shall we?"}}
	if got := h(Request{Messages: conv}).Text; got != "Fine, I'm in. I keep turning it over in my head. Because.\nDECISION: accept" {
		t.Errorf("text reply %q", got)
	}
	got := h(Request{Messages: conv, Body: map[string]any{"response_format": map[string]any{"type": "json_schema"}}}).Text
	if !strings.HasPrefix(got, `{"decision":"accept","reply":"Fine, I'm in. I keep`) {
		t.Errorf("JSON reply %q", got)
	}
	rep := append(conv, llm.Message{Role: "assistant", Content: "Fine."},
		llm.Message{Role: "user", Content: "Your last message did not end with the decision line. Write only that line."})
	if got := h(Request{Messages: rep}).Text; got != "DECISION: accept" {
		t.Errorf("repair %q", got)
	}
}
