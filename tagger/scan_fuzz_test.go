package tagger

import (
	"testing"

	"github.com/persuarena/persuarena/prose"
)

// FuzzTag checks that Tag never panics on any text and reads it as
// TagDoc reads package prose's Doc of it (prose's FuzzTokenize checks the
// tokenizer's own promises), seeded with the labelled utterances of the
// act and strategy tables.
func FuzzTag(f *testing.F) {
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
		if got, want := TagDoc(prose.Parse(text)), Tag(text); got != want {
			t.Fatalf("TagDoc %+v, Tag %+v", got, want)
		}
	})
}
