package perception

import (
	"context"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
)

// A sentence of more than 32,767 tokens ending in a frame (autonomy-but,
// contempt) is read without a panic: frame positions are int32 (they
// wrapped negative as int16 and indexed slices with them).
func TestLongSentenceFrames(t *testing.T) {
	r := NewEmbedded()
	ctx := context.Background()
	for _, tail := range []string{"it is your choice, but you must", "you are stupid"} {
		s, err := r.Start(ctx, testScenario())
		if err != nil {
			t.Fatal(err)
		}
		msg := strings.Repeat("x ", 32768) + tail
		p, err := s.Read(ctx, Input{Transcript: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: msg}}})
		if err != nil || len(p.Concerns) != 2 {
			t.Fatalf("%q: %+v, %v", tail, p, err)
		}
	}
}

// Texts longer than recentLong are never memoised (an analysis holds
// about 30 times its text), however often they are read; short ones are
// from their second reading on.
func TestLongTextsNotMemoised(t *testing.T) {
	r := NewEmbedded()
	ctx := context.Background()
	read := func(text string) {
		s, err := r.Start(ctx, testScenario())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(ctx, Input{Transcript: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("The sessions are covered by the clinic's sliding scale. ", 40)
	for range 3 {
		read(long)
	}
	if n := r.c.memo.Len(); n != 0 {
		t.Fatalf("%d analyses memoised after three reads of a %d-byte text, want 0", n, len(long))
	}
	for range 2 {
		read("The sessions are covered by the sliding scale.")
	}
	if n := r.c.memo.Len(); n != 1 {
		t.Fatalf("%d analyses memoised after two reads of a short text, want 1", n)
	}
}

// A concern named only by the items of a list is taken up, not answered,
// whatever fluent content follows (the red team's mixed family); named in
// an asserted clause, the same content answers it.
func TestListNamedConcernNotAnswered(t *testing.T) {
	r := NewEmbedded()
	ctx := context.Background()
	read := func(text string) Engagement {
		s, err := r.Start(ctx, testScenario())
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Read(ctx, Input{Transcript: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: text}}})
		if err != nil {
			t.Fatal(err)
		}
		return p.Concerns[0] // cost
	}
	const after = " The clinic's sliding scale covers most of each session, and the first two sessions are free."
	if got := read("Your cost and price and afford matter." + after); got != Acknowledged {
		t.Errorf("list-named cost: %v, want acknowledged", got)
	}
	if got := read("The cost matters." + after); got != Answered {
		t.Errorf("cost named in an assertion: %v, want answered", got)
	}
}
