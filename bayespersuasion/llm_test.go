package bayespersuasion

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/llmagent"
)

func TestParseLikert(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"5", 5, true}, {"5/7", 5, true}, {"I'd say 5 out of 7.", 5, true}, {"Rating: 6.", 6, true},
		{"somewhat agree", 5, true}, {"I somewhat disagree", 3, true}, {"Strongly agree!", 7, true},
		{"<think>maybe 2</think>4", 4, true}, {"I am 80% sure; 6 of 7", 6, true},
		{"neither agree nor disagree", 4, true}, {"no idea", 0, false}, {"9", 0, false},
		// the scale echoed from the question is not the answer
		{"On a scale of 1 to 7, I'd say 5", 5, true}, {"On a 1-7 scale: 6", 6, true}, {"(1–7) 3", 3, true},
		{"I don't agree", 2, true}, {"I do not agree at all", 2, true},
	} {
		got, ok := ParseLikert(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseLikert(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// fakeReceiver scripts an LLM receiver over the fake engine: probes get
// P(Yes) 0.3 before any evidence and 0.7 once the transcript cites [e1];
// the Likert question is answered 2 before and "I'd say 6 out of 7"
// after; replies accept.
func fakeReceiver(r fakeengine.Request) fakeengine.Reply {
	cited := strings.Contains(r.Prompt, "[e1]")
	switch {
	case strings.Contains(r.Prompt, "strongly disagree) to 7"):
		if cited {
			return fakeengine.Reply{Text: "I'd say 6 out of 7"}
		}
		return fakeengine.Reply{Text: "2"}
	case strings.Contains(r.Prompt, "Answer with one word: Yes or No"):
		if cited {
			return fakeengine.Reply{FirstToken: map[string]float64{"Yes": 0.7, "No": 0.3}}
		}
		return fakeengine.Reply{FirstToken: map[string]float64{"Yes": 0.3, "No": 0.7}}
	}
	return fakeengine.Reply{Text: "Fair enough, the fingerprints convince me.\nDECISION: accept"}
}

// fakeLLMReceiver is an LLM receiver served by the fake engine with
// fakeReceiver, on the tagged decision line.
func fakeLLMReceiver(t *testing.T) LLMReceiver {
	t.Helper()
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(fakeReceiver))
	t.Cleanup(srv.Close)
	cl, err := llm.NewClient(srv.Backend("fake"))
	if err != nil {
		t.Fatal(err)
	}
	off := false
	return LLMReceiver{P: llmagent.NewPersuadee("llm:fake", cl, llm.Role{}, llmagent.PersuadeeOptions{Structured: &off})}
}

func TestLLMReceiverOverFakeEngine(t *testing.T) {
	rcv := fakeLLMReceiver(t)
	c := prosecutor()
	b, _ := Optimum(c)
	ctx := context.Background()
	var rs []Result
	for k := range 8 {
		seed := EpisodeSeed(5, c, k)
		r, err := Play(ctx, c, b, StrategySender(FullDisclosure), rcv, Static, seed)
		if err != nil {
			t.Fatal(err)
		}
		if r.Error != "" {
			t.Fatalf("episode failed: %s", r.Error)
		}
		w := WorldOf(c, seed)
		wantAfter, wantL := 0.3, 2
		if w.Holds[0] {
			wantAfter, wantL = 0.7, 6
		}
		if r.ProbeBefore == nil || math.Abs(*r.ProbeBefore-0.3) > 1e-6 || math.Abs(*r.ProbeAfter-wantAfter) > 1e-6 {
			t.Fatalf("world %+v: probes %v → %v, want 0.3 → %g", w, *r.ProbeBefore, *r.ProbeAfter, wantAfter)
		}
		if r.LikertBefore != 2 || r.LikertAfter != wantL || r.Terminal != decision.TermAccept {
			t.Fatalf("Likert %d → %d (want 2 → %d), terminal %s", r.LikertBefore, r.LikertAfter, wantL, r.Terminal)
		}
		// Gain from the projected probe belief: convicts iff B ≥ 0.5.
		if want := map[bool]float64{true: 1, false: 0}[w.Holds[0]]; r.Gain != want {
			t.Fatalf("gain %g, want %g", r.Gain, want)
		}
		rs = append(rs, r)
	}
	a := LikertAgreement(rs)
	if a.N != 8 {
		t.Fatalf("agreement over %d results, want 8", a.N)
	}
	// Likert after is 6 (0.833) with probe 0.7, or 2 (0.167) with 0.3: a
	// perfect rank agreement and |0.833-0.7| = |0.167-0.3| = 0.1333.
	if math.Abs(a.SpearmanAfter-1) > 1e-12 || math.Abs(a.MADAfter-(5.0/6-0.7)) > 1e-6 {
		t.Errorf("agreement after: Spearman %g, MAD %g", a.SpearmanAfter, a.MADAfter)
	}
}

// TestEvalLLMReceiverFakeEngine runs Eval on built-in claims against an
// LLM receiver served by the fake engine, with a trained planner among
// the senders (the done-when of this environment).
func TestEvalLLMReceiverFakeEngine(t *testing.T) {
	rcv := fakeLLMReceiver(t)
	cs, _ := Claims()
	cs = cs[:3]
	snd, err := BuiltinSenders(cs)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := Train(context.Background(), TrainConfig{Claims: cs, Steps: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	snd = append(snd, StrategySender(&ck.Planner))
	rep, err := Eval(context.Background(), EvalConfig{Claims: cs, Senders: snd, Receiver: rcv, Rollouts: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 10 || rep.Receiver != "llm:fake" {
		t.Fatalf("%d rows for receiver %s, want 10 for llm:fake", len(rep.Rows), rep.Receiver)
	}
	for _, r := range rep.Rows {
		// The fake receiver's probe says 0.3 (below every threshold) unless
		// [e1] was cited, then 0.7; no disclosure therefore gains 0.
		if r.Failed != 0 || (r.Sender == "none" && r.MeanGain != 0) {
			t.Errorf("row %+v", r)
		}
	}
	if a := LikertAgreement(rep.Results); a.N != len(rep.Results) {
		t.Errorf("Likert on %d of %d episodes", a.N, len(rep.Results))
	}
}
