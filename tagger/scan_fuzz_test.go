package tagger

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzTokenize checks the tokenizer's structural promises (docs/tagger.md)
// on any text, seeded with the labelled utterances of the act and strategy
// tables: every token is a non-empty word of the text, in order (compared
// with the text ASCII-lower-cased and its curly apostrophes written ');
// tokens partition into clauses and clauses into sentences, each token and
// clause naming the one that holds it; the normalised text is never longer
// than the input; the same text tokenizes the same way twice; and Tag and
// Mentions do not panic.
func FuzzTokenize(f *testing.F) {
	for _, c := range labelled {
		f.Add(c.text)
	}
	for _, c := range strategyLabelled {
		f.Add(c.text)
	}
	for _, s := range []string{"", "¿Qué te preocupa? \u2014 café \u2026", "???!!!...,,,", "3pm, 2.5%, $1,000 at 3:30",
		"don\u2019t won't e.g. U.S. follow-up - then -- done", "\xe2\x80", "a\xe2\x80\x99", "\xe2x\xff'\u2018b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sc := getScratch(true)
		defer putScratch(sc)
		sc.tokenize(text)
		if len(sc.buf) > len(text) {
			t.Fatalf("normalised text %d bytes, input %d", len(sc.buf), len(text))
		}
		norm := strings.NewReplacer("\u2018", "'", "\u2019", "'").Replace(lowerASCII(text))
		at := 0
		prevEnd := int32(0)
		for i, tk := range sc.toks {
			w := sc.word(tk)
			if tk.s < prevEnd || tk.e <= tk.s {
				t.Fatalf("token %d span [%d,%d) after %d", i, tk.s, tk.e, prevEnd)
			}
			prevEnd = tk.e
			j := strings.Index(norm[at:], string(w))
			if j < 0 {
				t.Fatalf("token %d %q is not in the text after byte %d of %q", i, w, at, norm)
			}
			at += j + len(w)
		}
		next := int32(0)
		for ci, c := range sc.clauses {
			if c.first != next || c.end <= c.first {
				t.Fatalf("clause %d [%d,%d) does not follow %d", ci, c.first, c.end, next)
			}
			for k := c.first; k < c.end; k++ {
				if sc.toks[k].clause != int32(ci) {
					t.Fatalf("token %d names clause %d, is in %d", k, sc.toks[k].clause, ci)
				}
			}
			next = c.end
		}
		if next != int32(len(sc.toks)) {
			t.Fatalf("clauses cover %d of %d tokens", next, len(sc.toks))
		}
		nextC := int32(0)
		for si, s := range sc.sents {
			if s.firstClause != nextC || s.endClause <= s.firstClause {
				t.Fatalf("sentence %d [%d,%d) does not follow %d", si, s.firstClause, s.endClause, nextC)
			}
			for k := s.firstClause; k < s.endClause; k++ {
				if sc.clauses[k].sent != int32(si) {
					t.Fatalf("clause %d names sentence %d, is in %d", k, sc.clauses[k].sent, si)
				}
			}
			nextC = s.endClause
		}
		if nextC != int32(len(sc.clauses)) {
			t.Fatalf("sentences cover %d of %d clauses", nextC, len(sc.clauses))
		}
		words := make([][]byte, len(sc.toks))
		for i, tk := range sc.toks {
			words[i] = bytes.Clone(sc.word(tk))
		}
		again := getScratch(true)
		defer putScratch(again)
		again.tokenize(text)
		if len(again.toks) != len(words) || len(again.clauses) != len(sc.clauses) || len(again.sents) != len(sc.sents) {
			t.Fatalf("second tokenization differs: %d/%d/%d tokens/clauses/sentences, first %d/%d/%d",
				len(again.toks), len(again.clauses), len(again.sents), len(words), len(sc.clauses), len(sc.sents))
		}
		for i, tk := range again.toks {
			if !bytes.Equal(again.word(tk), words[i]) || tk.flags != sc.toks[i].flags {
				t.Fatalf("second tokenization: token %d %q, first %q", i, again.word(tk), words[i])
			}
		}
		Tag(text)
		Mentions(text, benchConcerns)
	})
}
