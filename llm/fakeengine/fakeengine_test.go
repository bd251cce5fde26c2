package fakeengine

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/llm"
)

func TestPieces(t *testing.T) {
	cases := map[string][]string{
		"Yes, I can't.":         {"Yes", ",", " I", " can't", "."},
		" Yes  no\n\nNO":        {" Yes", " ", " no", "\n", "\n", "NO"},
		"<|im_start|>user\nHi":  {ImStart, "user", "\n", "Hi"},
		"a <think>\n\n</think>": {"a", " ", ThinkOpen, "\n", "\n", ThinkClose},
		"café 12":               {"café", " 12"},
		"":                      nil,
	}
	for in, want := range cases {
		got := Pieces(in)
		if !slices.Equal(got, want) {
			t.Errorf("Pieces(%q) = %q, want %q", in, got, want)
		}
		if strings.Join(got, "") != in {
			t.Errorf("Pieces(%q) does not round-trip", in)
		}
		if Detokenize(Tokenize(in)) != in {
			t.Errorf("Detokenize(Tokenize(%q)) = %q", in, Detokenize(Tokenize(in)))
		}
	}
	// Fixed ids for every answer variant, distinct from each other.
	seen := map[int]string{}
	for _, w := range []string{"Yes", " Yes", "yes", " yes", "YES", " YES", "No", " No", "no", " no", "NO", " NO"} {
		id := TokenID(w)
		if prev, dup := seen[id]; dup {
			t.Fatalf("%q and %q share id %d", w, prev, id)
		}
		seen[id] = w
	}
	if TokenID("Yes") != 9454 || TokenID(" No") != 2308 || TokenID("hello") != TokenID("hello") || TokenID("hello") < 200000 {
		t.Fatal("ids")
	}
}

func TestTemplate(t *testing.T) {
	off := false
	m := []llm.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U"}, {Role: "assistant", Content: "A"}}
	if got := Template(m[:2], true, &off, false); got != "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n" {
		t.Fatalf("%q", got)
	}
	if got := Template(m, false, nil, true); got != "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\nA" {
		t.Fatalf("continue: %q", got)
	}
}

func TestPrefixCache(t *testing.T) {
	seq := func(n, from int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = from + i
		}
		return s
	}
	c := newPrefixCache(8)
	a := seq(40, 0)
	if got := c.process(a); got != 0 {
		t.Fatalf("cold cache: %d", got)
	}
	// Same 40-token prefix + 10 more: the two full shared blocks hit.
	b := append(seq(40, 0), seq(10, 1000)...)
	if got := c.process(b); got != 32 {
		t.Fatalf("shared prefix: %d, want 32", got)
	}
	// A prompt identical to a cached block-aligned one: the last token is
	// always recomputed, so 48 tokens give 32 cached, not 48.
	if got := c.process(seq(48, 0)); got != 32 {
		t.Fatalf("aligned repeat: %d, want 32", got)
	}
	// A different first token breaks the chain.
	d := seq(40, 0)
	d[0] = 99
	if got := c.process(d); got != 0 {
		t.Fatalf("changed prefix: %d", got)
	}
	// LRU: 8 blocks of capacity; fill with unrelated blocks, evicting a's.
	c.process(seq(16*8, 5000))
	if got := c.process(seq(40, 0)); got != 0 {
		t.Fatalf("evicted: %d", got)
	}
	if newPrefixCache(0).process(a) != 0 {
		t.Fatal("disabled cache")
	}
}

func TestPyDictCollisions(t *testing.T) {
	var d pyDict
	d.set("Yes", -1)
	d.set("No", -2)
	d.set("Yes", -3) // a second id decoding to "Yes" overwrites in place
	b, _ := d.MarshalJSON()
	if string(b) != `{"Yes":-3,"No":-2}` {
		t.Fatalf("%s", b)
	}
}

func TestFaultsAreConsumedInOrder(t *testing.T) {
	s := New(llm.VLLM)
	defer s.Close()
	s.Fail(Fault{Path: "/tokenize", Status: 500}, Fault{Status: 429, RetryAfter: "3"})
	st, _ := post(t, s.Root+"/v1/models", nil)
	if st != 429 || s.Pending() != 1 {
		t.Fatalf("status %d pending %d", st, s.Pending())
	}
	st, _ = post(t, s.Root+"/tokenize", map[string]any{"model": "fake-model", "prompt": "x"})
	if st != 500 || s.Pending() != 0 || s.Stats().Faults != 2 {
		t.Fatalf("status %d stats %+v", st, s.Stats())
	}
}

// tokenizeAll gives each prompt's own tokenization, wherever the shared
// prefix ends: mid-word, after a space, at a special token, or nowhere.
func TestTokenizeAllSharedPrefix(t *testing.T) {
	for _, ps := range [][]string{
		{"<|im_start|>user\nHi there\nYes", "<|im_start|>user\nHi there\nYesterday", "<|im_start|>user\nHi there \nNo"},
		{"a b\n <|im_end|>\n x", "a b\n <|im_end|>\n y", "a b\n <|im_end|>\n"},
		{"one\n\ntwo words", "one\n\ntwo"},
		{"Hi", "Ho"},
		{"same\n", "same\n"},
		{"single prompt\nonly"},
		{"\nx", "\ny"},
	} {
		got := tokenizeAll(ps)
		for i, p := range ps {
			if want := Tokenize(p); !slices.Equal(got[i], want) {
				t.Errorf("%q in %q: %v, want %v", p, ps, got[i], want)
			}
		}
	}
}

// pyDict writes its values as encoding/json writes float64s, in every
// range, and keeps the first position of a repeated key.
func TestPyDictEncoding(t *testing.T) {
	var d pyDict
	vals := []float64{0, math.Copysign(0, -1), -0.5108256237659907, -20.72326583694641, 1e-7, -3e21, 123456789, -1e-6, 5e-324}
	for i, v := range vals {
		d.set(fmt.Sprintf("k%d", i), v)
	}
	d.set("k0", -1.5) // repeated key: first position, last value
	got, err := d.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := "{"
	for i, v := range vals {
		if i == 0 {
			v = -1.5
		} else {
			want += ","
		}
		vb, _ := json.Marshal(v)
		want += fmt.Sprintf("%q:%s", fmt.Sprintf("k%d", i), vb)
	}
	want += "}"
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
