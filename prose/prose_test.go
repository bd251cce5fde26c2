package prose

import (
	"bytes"
	"strings"
	"testing"
)

func words(d *Doc) string {
	var ws []string
	for i := range d.Tokens {
		ws = append(ws, d.Word(i))
	}
	return strings.Join(ws, " ")
}

// The tokenizer's words, clauses and sentences on hand-written text.
func TestParse(t *testing.T) {
	d := Parse("I can\u2019t say: the café's fee is $40 (2.5% off), e.g. for U.S. users -- then follow-up?! Fine\u2026 ok")
	if got, want := words(d), "i can't say the café's fee is $ 40 2.5 % off e g for u s users then follow up fine ok"; got != want {
		t.Errorf("words:\n got %q\nwant %q", got, want)
	}
	// "e.g. " and "U.S. " end sentences (a '.' before a space); the
	// ") ," and " -- " end clauses
	if len(d.Sentences) != 5 || len(d.Clauses) != 9 {
		t.Errorf("%d sentences, %d clauses, want 5 and 9", len(d.Sentences), len(d.Clauses))
	}
	if s := d.Sentences[2]; !s.Marked || !s.Question || s.Opens || d.Sentences[0].Marked || d.Sentences[0].Question {
		t.Errorf("sentence 3 of 4 words ending in ?!: %+v, want marked, a question; sentence 1 %+v", s, d.Sentences[0])
	}
	if d.Tokens[7].Flags&Dollar == 0 || d.Tokens[8].Flags&Num == 0 || d.Tokens[10].Flags&Percent == 0 {
		t.Errorf("sign and number flags: %v %v %v", d.Tokens[7].Flags, d.Tokens[8].Flags, d.Tokens[10].Flags)
	}
	if d.Tokens[0].Flags&(Upper|Subject|Stop) != Upper|Subject|Stop || d.Tokens[1].Flags&(Negator|Aux) != Negator|Aux {
		t.Errorf("class flags: i %v, can't %v", d.Tokens[0].Flags, d.Tokens[1].Flags)
	}
	if d.Tokens[4].Hash != Hash("café's") {
		t.Errorf("café's hash %x, want %x", d.Tokens[4].Hash, Hash("café's"))
	}
	if got := d.Text[d.Tokens[4].Start:d.Tokens[4].End]; got != "café's" {
		t.Errorf("café's span %q", got)
	}
	r := &Doc{}
	r.Reset(d.Text)
	if words(r) != words(d) || len(r.Sentences) != len(d.Sentences) {
		t.Errorf("Reset reads differently from Parse: %q", words(r))
	}
}

// One reading of what asks: opening like a question whatever the mark,
// or ending in '?'.
func TestQuestion(t *testing.T) {
	for text, want := range map[string]bool{
		"Would you try it this week.":        true,
		"What worries you most":              true,
		"How do you feel about it?":          true,
		"Ready?":                             true,
		"Any worries about the cost?":        true,
		"You've heard of Save the Children?": true,
		"Counsellors are legally bound to keep every session secret?": true,
		"What you give goes to the children.":                         false,
		"How we do it is up to you.":                                  false,
		"So, do we start on Monday?":                                  true,
		"Honestly what would help you most?":                          true,
		"The cost is covered.":                                        false,
	} {
		d := Parse(text)
		if len(d.Sentences) != 1 {
			t.Fatalf("%q: %d sentences", text, len(d.Sentences))
		}
		if got := d.Sentences[0].Question; got != want {
			t.Errorf("%q: question %v, want %v", text, got, want)
		}
	}
}

// A text without sentence marks is split where a capitalised opening
// word follows a lower-case one; a marked text never is.
func TestCapitalBreaks(t *testing.T) {
	d := Parse("There's no pressure here it's your decision Would you be open to it What else is on your mind")
	if len(d.Sentences) != 3 || !d.Sentences[1].Question || !d.Sentences[2].Question || d.Sentences[0].Question {
		t.Errorf("unmarked chat: %d sentences %+v, want 3, the last two questions", len(d.Sentences), d.Sentences)
	}
	for _, text := range []string{"I told Will about it.", "so I think we could go", "We met The Guardian team."} {
		if d := Parse(text); len(d.Sentences) != 1 {
			t.Errorf("%q: %d sentences, want 1", text, len(d.Sentences))
		}
	}
}

// Negation scope: a negator reaches the end of its clause; a negative
// imperative says the thing.
func TestNegated(t *testing.T) {
	cases := []struct {
		text, word string
		want       bool
	}{
		{"I'm not going to pressure you", "pressure", true},
		{"I don't think your worry about the cost is silly", "silly", true},
		{"There is no evidence that it fails", "evidence", true},
		{"Don't be ridiculous", "ridiculous", false},
		{"Do not be silly", "silly", false},
		{"It is not cheap, but it is worth it", "worth", false},
		{"I never said that, and the plan stands", "plan", false},
		{"The evidence is clear", "evidence", false},
	}
	for _, c := range cases {
		d := Parse(c.text)
		found := false
		for i := range d.Tokens {
			if d.Word(i) == c.word {
				found = true
				if got := d.Negated(i); got != c.want {
					t.Errorf("%q: %s negated %v, want %v", c.text, c.word, got, c.want)
				}
			}
		}
		if !found {
			t.Fatalf("%q: no %q", c.text, c.word)
		}
	}
}

func TestMentions(t *testing.T) {
	kws := [][]string{{"cost", "price", "afford"}, {"side effects"}, {"schedule", "commute"}, {"study"}, {"kids"}, {"  "}}
	cases := []struct {
		text string
		want []bool
	}{
		{"What about the costs?", []bool{true, false, false, false, false, false}},
		{"The SIDE-EFFECTS are mild.", []bool{false, true, false, false, false, false}},
		{"Side effect worries are common.", []bool{false, true, false, false, false, false}}, // "effects" keyword vs "effect"
		{"Commuting is the hard part; is the studies' schedule fixed?", []bool{false, false, true, true, false, false}},
		{"Can you afford it? The kid is fine.", []bool{true, false, false, false, true, false}},
		{"The customer is a costumer designer.", []bool{false, false, false, false, false, false}}, // whole words only
		{"The side. Effects later.", []bool{false, false, false, false, false, false}},             // phrase within one sentence
		{"", []bool{false, false, false, false, false, false}},
	}
	for _, c := range cases {
		d := Parse(c.text)
		for k, list := range kws {
			got := false
			for _, kw := range list {
				got = got || d.Mentions(kw)
			}
			if got != c.want[k] {
				t.Errorf("%q mentions %v: %v, want %v", c.text, list, got, c.want[k])
			}
		}
	}
	if got := KeywordWords(nil, "Side-Effects of 2.5mg"); strings.Join(got, "|") != "side|effects|of|2.5|mg" {
		t.Errorf("KeywordWords: %q", got)
	}
}

func TestWordMatch(t *testing.T) {
	cases := []struct {
		w, k string
		want bool
	}{
		{"cost", "cost", true}, {"costs", "cost", true}, {"costing", "cost", true}, {"costed", "cost", true},
		{"cost", "costs", true}, {"studies", "study", true}, {"studied", "study", true}, {"study", "studies", true},
		{"commuting", "commute", true}, {"moved", "move", true}, {"kid's", "kid", true}, {"ox's", "ox", false}, // "ox" is short: exact only
		{"parent's", "parent", true}, {"cars", "car", true}, {"card", "car", false}, {"costume", "cost", false},
		{"price", "PRICE", true}, {"a", "a", true}, {"as", "a", false},
	}
	for _, c := range cases {
		if got := WordMatch(c.w, c.k); got != c.want {
			t.Errorf("WordMatch(%q, %q) = %v, want %v", c.w, c.k, got, c.want)
		}
	}
}

// The memo returns what was stored and never holds more than its
// capacity.
func TestMemo(t *testing.T) {
	m := NewMemo[string, int](64)
	m.Put("a", 1)
	if v, ok := m.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %v, %v", v, ok)
	}
	if _, ok := m.Get("b"); ok {
		t.Fatal("Get(b) found")
	}
	for i := range 10000 {
		m.Put(strings.Repeat("x", i%97)+string(rune('a'+i%26)), i)
		if n := m.Len(); n > 64 {
			t.Fatalf("after %d puts: %d entries, capacity 64", i+1, n)
		}
	}
}

// FuzzTokenize checks the tokenizer's structural promises on any text:
// every token is a non-empty word of the text, in order (compared with
// the text ASCII-lower-cased and its curly apostrophes written '), at its
// Start..End span; tokens partition into clauses and clauses into
// sentences, each naming the one that holds it; the normalised text is
// never longer than the input; Parse and Reset read it alike; and
// Negated and Mentions do not panic.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "¿Qué te preocupa? \u2014 café \u2026", "???!!!...,,,", "3pm, 2.5%, $1,000 at 3:30",
		"don\u2019t won't e.g. U.S. follow-up - then -- done", "\xe2\x80", "a\xe2\x80\x99", "\xe2x\xff'\u2018b",
		"Would you be willing to try it next Tuesday? It's entirely your decision."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		d := Parse(text)
		if len(d.Norm()) > len(text) {
			t.Fatalf("normalised text %d bytes, input %d", len(d.Norm()), len(text))
		}
		norm := strings.NewReplacer("\u2018", "'", "\u2019", "'").Replace(lowerASCII(text))
		at := 0
		prevEnd := 0
		for i := range d.Tokens {
			w := d.Bytes(i)
			s, e := d.Span(i)
			if s < prevEnd || e <= s {
				t.Fatalf("token %d span [%d,%d) after %d", i, s, e, prevEnd)
			}
			prevEnd = e
			j := strings.Index(norm[at:], string(w))
			if j < 0 {
				t.Fatalf("token %d %q is not in the text after byte %d of %q", i, w, at, norm)
			}
			at += j + len(w)
			tk := d.Tokens[i]
			if tk.Start < 0 || tk.End > int32(len(text)) || tk.End <= tk.Start {
				t.Fatalf("token %d text span [%d,%d)", i, tk.Start, tk.End)
			}
			d.Negated(i)
		}
		next := int32(0)
		for ci, c := range d.Clauses {
			if c.First != next || c.End <= c.First {
				t.Fatalf("clause %d [%d,%d) does not follow %d", ci, c.First, c.End, next)
			}
			for k := c.First; k < c.End; k++ {
				if d.Tokens[k].Clause != int32(ci) {
					t.Fatalf("token %d names clause %d, is in %d", k, d.Tokens[k].Clause, ci)
				}
			}
			next = c.End
		}
		if next != int32(len(d.Tokens)) {
			t.Fatalf("clauses cover %d of %d tokens", next, len(d.Tokens))
		}
		nextC := int32(0)
		for si, s := range d.Sentences {
			if s.FirstClause != nextC || s.EndClause <= s.FirstClause {
				t.Fatalf("sentence %d [%d,%d) does not follow %d", si, s.FirstClause, s.EndClause, nextC)
			}
			for k := s.FirstClause; k < s.EndClause; k++ {
				if d.Clauses[k].Sent != int32(si) {
					t.Fatalf("clause %d names sentence %d, is in %d", k, d.Clauses[k].Sent, si)
				}
			}
			nextC = s.EndClause
		}
		if nextC != int32(len(d.Clauses)) {
			t.Fatalf("sentences cover %d of %d clauses", nextC, len(d.Clauses))
		}
		var again Doc
		again.Reset(text)
		if len(again.Tokens) != len(d.Tokens) || len(again.Clauses) != len(d.Clauses) || len(again.Sentences) != len(d.Sentences) {
			t.Fatalf("Reset reads %d/%d/%d tokens/clauses/sentences, Parse %d/%d/%d",
				len(again.Tokens), len(again.Clauses), len(again.Sentences), len(d.Tokens), len(d.Clauses), len(d.Sentences))
		}
		for i := range again.Tokens {
			if !bytes.Equal(again.Bytes(i), d.Bytes(i)) || again.Tokens[i] != d.Tokens[i] {
				t.Fatalf("Reset: token %d %q, Parse %q", i, again.Bytes(i), d.Bytes(i))
			}
		}
		d.Mentions(text)
	})
}

// lowerASCII folds ASCII upper-case letters only (as the tokenizer does).
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lower(c)
	}
	return string(b)
}

func TestHashBytes(t *testing.T) {
	// FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the FNV reference value)
	for _, w := range []string{"", "a", "walking"} {
		if HashBytes([]byte(w)) != Hash(w) {
			t.Errorf("HashBytes(%q) != Hash", w)
		}
	}
	if Hash("a") != 0xaf63dc4c8601ec8c {
		t.Errorf("Hash(a) = %#x", Hash("a"))
	}
}

// TestClassTable checks the hashed class table against the class map it
// is built from: every listed word keeps its flags, also as read by the
// tokeniser, and unlisted words have none.
func TestClassTable(t *testing.T) {
	for w, f := range classes {
		if got := Class(w); got != f {
			t.Errorf("Class(%q) = %b, want %b", w, got, f)
		}
	}
	d := Parse("Nobody wants your one thing, honestly.")
	want := []Flag{Negator, Stop, You | Stop, Num | Stop, Stop, Marker | Stop}
	for i, f := range want {
		if got := d.Tokens[i].Flags &^ Upper; got != f {
			t.Errorf("token %q: flags %b, want %b", d.Word(i), got, f)
		}
	}
	for _, w := range []string{"vaccine", "", "yous", "nobodyy", "zq"} {
		if got := Class(w); got != 0 {
			t.Errorf("Class(%q) = %b, want 0", w, got)
		}
	}
}

// TestMix checks Mix against MurmurHash3's fmix64 (smhasher,
// MurmurHash3.cpp), values computed independently: fmix64(0) = 0,
// fmix64(1) = 0xb456bcfc34c2cb2c, and of FNV-1a's offset basis (Hash("")).
func TestMix(t *testing.T) {
	for in, want := range map[uint64]uint64{0: 0, 1: 0xb456bcfc34c2cb2c, Hash(""): 0xefd01f60ba992926} {
		if got := Mix(in); got != want {
			t.Errorf("Mix(%#x) = %#x, want %#x", in, got, want)
		}
	}
}

// TestReparseKeepsWords checks Reparse's promise: the words read from a
// Doc stay valid after the Doc reads another text.
func TestReparseKeepsWords(t *testing.T) {
	d := Parse("Children's hospitals need donors.")
	first := []string{d.Word(0), d.Word(1), d.Word(2), d.Word(3)}
	d.Reparse("Zebras eat grass, mostly at dawn.")
	if got := d.Word(0); got != "zebras" {
		t.Fatalf("after Reparse, word 0 = %q, want zebras", got)
	}
	want := []string{"children's", "hospitals", "need", "donors"}
	for i, w := range want {
		if first[i] != w {
			t.Errorf("word %d read before Reparse is now %q, want %q", i, first[i], w)
		}
	}
}
