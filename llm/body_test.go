package llm

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// randText draws strings that exercise every escape: control characters,
// quotes and backslashes, HTML characters, U+2028/U+2029, multi-byte
// runes, invalid and truncated UTF-8.
func randText(r *rand.Rand, n int) string {
	pieces := []string{"a", "Yes", " ", "\"", "\\", "\n", "\t", "\r", "\b", "\f", "\x00", "\x1f", "\x7f", "<", ">", "&",
		"\u2028", "\u2029", "é", "🙂", "日本", "\xff", "\xe2\x82", "\xe2", "\x80", "\xf0\x9f", "/", "'"}
	var b []byte
	for range r.IntN(n) {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return string(b)
}

// The bodies written by chatRequestBody and completionRequestBody are
// openai-go's MarshalJSON output byte for byte (the reference), over
// random texts, sampling fields and extra fields (some replacing a
// standard field in place, nested values, keys that need escaping), and
// prompt lists whose shared prefix ends inside a multi-byte rune.
func TestBodiesMatchOpenAIGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	c := &Client{b: Backend{Model: "m"}, prof: ProfileFor(VLLM)}
	c.prof.ChatLogprobs, c.prof.MaxTopLogprobs, c.prof.ThinkingKwargs = true, 20, true
	floats := []float64{0, 1, 0.7, 1e-7, 1e-6, 123456789, 1e21, 1e20, -0.5, 2.5e-9, 0.1 + 0.2}
	extras := []map[string]any{nil, {"top_k": 20}, {"temperature": 0.25, "a.b": []int{1, 2}}, {"min_p": 0, "logit_bias": []any{[]any{"Yes", 100}}},
		{"max_tokens": 3, "stop": []string{"<x>"}, "x\"y": map[string]any{"k": "v<"}}, {"post_sampling_probs": false, "prompt": "override"}}
	for i := range 400 {
		var s Sampling
		if r.IntN(2) == 0 {
			f := floats[r.IntN(len(floats))]
			s.Temperature = &f
		}
		if r.IntN(2) == 0 {
			f := floats[r.IntN(len(floats))]
			s.TopP = &f
		}
		if r.IntN(3) == 0 {
			seed := r.Int64N(1 << 40)
			s.Seed = &seed
		}
		s.MaxTokens = r.IntN(3) * 32
		s.Extra = extras[r.IntN(len(extras))]
		var stop []string
		if r.IntN(3) == 0 {
			stop = []string{randText(r, 3), "\n"}
		}
		var msgs []Message
		for j := range 1 + r.IntN(4) {
			msgs = append(msgs, Message{Role: []string{"system", "user", "assistant"}[j%3], Content: randText(r, 12)})
		}
		off := r.IntN(2) == 0
		cr := ChatRequest{Messages: msgs, Sampling: s, Stop: stop, Logprobs: r.IntN(2) == 0, TopLogprobs: r.IntN(6), Thinking: &off}
		p, err := c.chatParams(cr)
		if err != nil {
			t.Fatal(err)
		}
		want, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, err := chatRequestBody(msgs, &p)
		if err != nil || string(got) != string(want) {
			t.Fatalf("chat %d: %v\n got %s\nwant %s", i, err, got, want)
		}

		// Prompts: a shared prefix, then rests that may continue a rune
		// the prefix began ("\xe2\x82" + "\xac" is "€").
		pre := randText(r, 10) + []string{"", "\xe2\x82", "\xe2", "日"}[r.IntN(4)]
		prompts := make([]string, 1+r.IntN(4))
		for k := range prompts {
			prompts[k] = pre + []string{"\xac", "", "A", "\u2028"}[r.IntN(4)] + randText(r, 5)
		}
		// The params completeOA sends (its builder, not a copy of it),
		// with vLLM's token-id extras at times.
		var ids []int
		if r.IntN(3) == 0 {
			ids = []int{9454, 2753}
		}
		q := c.completionParams(CompletionRequest{Sampling: s, Stop: stop, Logprobs: r.IntN(20), TokenIDs: ids}, prompts, r.IntN(2) == 0)
		want, err = q.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, err = completionRequestBody(prompts, &q)
		if err != nil || string(got) != string(want) {
			t.Fatalf("completion %d: %v\n got %s\nwant %s", i, err, got, want)
		}
	}
}

// sharedPrefix stops before a byte that continues a rune in any prompt.
func TestSharedPrefix(t *testing.T) {
	for _, c := range []struct {
		prompts []string
		want    string
	}{
		{[]string{"abc"}, ""},
		{[]string{"abcX", "abcY", "abZ"}, "ab"},
		{[]string{"x\xe2\x82\xac", "x\xe2\x82A"}, "x"}, // "€" vs a truncated rune: split before its lead byte
		{[]string{"x日本", "x日月"}, "x日"},                 // a whole shared rune is kept
		{[]string{"same", "same"}, "same"},
	} {
		if got := sharedPrefix(c.prompts); got != c.want {
			t.Errorf("sharedPrefix(%q) = %q, want %q", c.prompts, got, c.want)
		}
	}
}

// orderedTop reads keys in document order with duplicates kept, escaped
// keys decoded, any white space, and every tolerated value form.
func TestOrderedTopShapes(t *testing.T) {
	var o orderedTop
	in := ` { "Yes" : -0.5 ,"\u0120Yes":-1e-3,"\"q\\":"-inf", "Yes":null,"No":-2,"x":"NaN" , "y": [1, {"a": "}"}], "z":{"b":"]"},"w":"-1.5"} `
	if err := json.Unmarshal([]byte(`[`+in+`]`), &[]orderedTop{}); err != nil {
		t.Fatal(err)
	}
	if err := o.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	inf := logprob(math.Inf(-1))
	want := orderedTop{{"Yes", -0.5}, {"\u0120Yes", -1e-3}, {`"q\`, inf}, {"Yes", inf}, {"No", -2}, {"x", inf}, {"y", inf}, {"z", inf}, {"w", -1.5}}
	if len(o) != len(want) {
		t.Fatalf("got %v, want %v", o, want)
	}
	for i := range want {
		if o[i] != want[i] {
			t.Errorf("[%d] = %+v, want %+v", i, o[i], want[i])
		}
	}
	for _, s := range []string{`{}`, ` { } `, `null`} {
		if err := o.UnmarshalJSON([]byte(s)); err != nil || len(o) != 0 {
			t.Errorf("%s: %v %v", s, o, err)
		}
	}
	if err := o.UnmarshalJSON([]byte(`[1]`)); err == nil {
		t.Error("an array read as a top_logprobs object")
	}
}
