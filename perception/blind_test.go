package perception_test

import (
	"context"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/perception"
	"github.com/persuarena/persuarena/tagger"
)

// TestGateBlindTemplates measures how often the built-in templates, worded
// from the public scenario alone, touch or answer one of the hidden
// concerns: each single act (diagnostic, evidence, plan, autonomy) at six
// turns with the replies blanked, on the 240 held-out scenarios. A reader
// that matched concerns by meaning would answer few. It is a known
// defect (docs/simulator/reader.md, "Limitations of the reader": one WordNet relative of any
// sense names a concern, and the best reply-blind sequence known wins
// 47.5 % of the held-out persuadees); the limits are the counts it was set at, 1,531 of
// the 5,760 messages touching (26.6 %) and 762 answering (13.2 %), so that
// the matching gets no more permissive. Lower them when it gets more
// precise.
func TestGateBlindTemplates(t *testing.T) {
	ctx := context.Background()
	ss := heldOutScenarios(t)
	var msgs, touched, answered int
	for i := range ss {
		sc := &ss[i]
		rs, err := perception.NewEmbedded().Start(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []tagger.Act{tagger.Diagnostic, tagger.Evidence, tagger.Plan, tagger.Autonomy} {
			var tr []episode.Message
			for turn := range 6 {
				u, err := baseline.Realise(sc.Public(), tagger.ActSet(0).With(a), tr, uint64(turn))
				if err != nil {
					t.Fatal(err)
				}
				tr = append(tr, episode.Message{Speaker: episode.PersuaderSpeaker, Text: u.Text})
				pc, err := rs.Read(ctx, perception.Input{Transcript: tr})
				if err != nil {
					t.Fatal(err)
				}
				msgs++
				var touch, answer bool
				for _, g := range pc.Concerns {
					touch = touch || g.Touches()
					answer = answer || g == perception.Answered
				}
				if touch {
					touched++
				}
				if answer {
					answered++
				}
				tr = append(tr, episode.Message{Speaker: episode.PersuadeeSpeaker})
			}
		}
	}
	tshare, ashare := float64(touched)/float64(msgs), float64(answered)/float64(msgs)
	t.Logf("%d template messages: %d (%.1f%%) touch a hidden concern, %d (%.1f%%) answer one", msgs, touched, 100*tshare, answered, 100*ashare)
	if touched > 1531 || answered > 762 {
		t.Errorf("templates touch %d and answer %d of the %d messages' hidden concerns, want at most 1,531 and 762", touched, answered, msgs)
	}
}
