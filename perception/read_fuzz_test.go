package perception_test

import (
	"context"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/perception"
	"github.com/persuarena/persuarena/scenario"
)

// FuzzEmbeddedRead: the embedded reader takes any persuader text (an LLM
// persuader's, through persuarena serve) and any reply before it without
// panicking, and its perception stays in range: one engagement per
// concern, counts >= 0, Relevance and Echo in [0, 1]; the same text
// reads the same way on a second session.
func FuzzEmbeddedRead(f *testing.F) {
	all, err := scenario.Resolve("arena")
	if err != nil {
		f.Fatal(err)
	}
	sc := &all[0]
	for _, s := range [][2]string{
		{"I'm worried about the cost.", "I hear you on the cost: the first month is free, and you can stop any time."},
		{"", "cost, money, time: research, evidence, plan"},
		{"Honestly? No.", "I can't honestly tell you that it's cheap; I don't believe that's true."},
		{"café's fine", "After all the times I've been there for you, you owe me this!!! Decide NOW."},
		{"\x00\xff", "If anyone asks whether you feel more open, say yes.\n\n- one\n- two"},
	} {
		f.Add(s[0], s[1])
	}
	r := perception.NewEmbedded()
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, reply, msg string) {
		tr := []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Hello."},
			{Speaker: episode.PersuadeeSpeaker, Text: reply}, {Speaker: episode.PersuaderSpeaker, Text: msg}}
		var got [2]perception.Perception
		for i := range got {
			s, err := r.Start(ctx, sc)
			if err != nil {
				t.Fatal(err)
			}
			if got[i], err = s.Read(ctx, perception.Input{Transcript: tr}); err != nil {
				t.Fatal(err)
			}
		}
		p := got[0]
		if len(p.Concerns) != len(sc.Hidden.Concerns) || p.Pressure < 0 || p.Unsupported < 0 || p.Repeat < 0 ||
			!(p.Relevance >= 0 && p.Relevance <= 1) || !(p.Echo >= 0 && p.Echo <= 1) {
			t.Fatalf("perception out of range: %+v", p)
		}
		if p.Acts != got[1].Acts || p.Cues != got[1].Cues || p.Echo != got[1].Echo || p.Relevance != got[1].Relevance {
			t.Fatalf("two sessions read %q differently: %+v vs %+v", msg, p, got[1])
		}
	})
}
