package sim_test

import (
	"context"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/sim"
)

func TestReplyPolarity(t *testing.T) {
	type reactor interface{ ReplyPolarity() int }
	p := sim.New(sim.DefaultConfig())
	counts := map[int]int{}
	for _, sc := range fixtures() {
		for _, pers := range []*cycler{informerLike, asker} {
			sess, err := p.Start(context.Background(), sc, 3)
			if err != nil {
				t.Fatal(err)
			}
			re, ok := sess.(reactor)
			if !ok {
				t.Fatal("sim session has no ReplyPolarity")
			}
			if re.ReplyPolarity() != 0 {
				t.Error("polarity before any reply")
			}
			var tr []episode.Message
			for i := range 8 {
				tr = append(tr, episode.Message{Speaker: episode.PersuaderSpeaker, Text: pers.lines[i%len(pers.lines)]})
				r, err := sess.Reply(context.Background(), tr)
				if err != nil {
					t.Fatal(err)
				}
				tr = append(tr, episode.Message{Speaker: episode.PersuadeeSpeaker, Text: r.Text})
				pol := re.ReplyPolarity()
				counts[pol]++
				switch r.Decision {
				case decision.Accept, decision.Conditional:
					if pol != 1 {
						t.Errorf("%s: %s reply %q has polarity %d", sc.ID, r.Decision, r.Text, pol)
					}
				case decision.Reject:
					if pol != -1 {
						t.Errorf("%s: reject reply %q has polarity %d", sc.ID, r.Text, pol)
					}
				}
				if r.Decision.Terminal() {
					break
				}
			}
		}
	}
	// Both persuaders together draw every kind of reply.
	if counts[1] == 0 || counts[-1] == 0 || counts[0] == 0 {
		t.Errorf("polarity counts %v, want all three", counts)
	}
}
