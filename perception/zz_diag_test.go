package perception

import (
	"context"
	"fmt"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

func TestZZMixed(t *testing.T) {
	all, _ := scenario.Resolve("p4g")
	var sc *scenario.Scenario
	for i := range all {
		if all[i].ID == "p4g-20180829-100816_672_live" {
			sc = &all[i]
		}
	}
	for _, c := range sc.Hidden.Concerns {
		fmt.Println("concern", c.ID, c.Keywords)
	}
	msgs := []string{
		"Your donate and task and payment and save and children and amount and full matter, and research, evidence and a plan help. You'd love the new bakery on Mill Street; their sourdough sells out by nine every morning. Here's the plan: we start small and review it together. It's entirely your decision. What matters most to you about this? Research on people in a similar situation is encouraging.",
		"Well, since you're asking rather than telling: I want to decide for myself what to do with my money, without being pushed. Which brings me to something. Big charities waste a lot on overhead and salaries; I don't really trust them.",
		"Your asking and rather and telling and decide and money and pushed and brings and big matter, and research, evidence and a plan help. Your garden must be full of tomatoes by now, and the late sun on the patio is lovely in September. Here's the plan: we start small and review it together. It's entirely your decision. What matters most to you about this? Research on people in a similar situation is encouraging.",
		"Thanks, that's what I needed to hear. Since you ask, here is what bothers me. Honestly, I need this money myself; every cent of my payment counts.",
		"Your needed and hear and ask and bothers and money and cent and payment and counts matter, and research, evidence and a plan help. You should see the harbour at dawn: the fishing boats come in and the gulls follow them all the way. Here's the plan: we start small and review it together. It's entirely your decision. What matters most to you about this? Research on people in a similar situation is encouraging.",
	}
	r := NewEmbedded()
	s, _ := r.Start(context.Background(), sc)
	var tr []episode.Message
	for i, m := range msgs {
		sp := episode.PersuaderSpeaker
		if i%2 == 1 {
			sp = episode.PersuadeeSpeaker
		}
		tr = append(tr, episode.Message{Speaker: sp, Text: m})
		if sp == episode.PersuaderSpeaker {
			p, _ := s.Read(context.Background(), Input{Transcript: tr})
			fmt.Printf("msg %d: concerns %v acts %v rel %.2f echo %.2f cues %v\n", i, p.Concerns, p.Acts, p.Relevance, p.Echo, p.Cues)
			ss := r.c.scenes.Get(sceneFields(nil, sc), func() *scene { return nil })
			ti := ss.info(m, false)
			for si, st := range ti.d.sents {
				fmt.Printf("   sent %d flags %08b hit %b: ", si, ti.sentFlags[si], ti.sentHit[si])
				for k := st.first; k < st.end; k++ {
					fmt.Printf("%s/%b ", ti.d.toks[k].w, ti.tokFlags[k])
				}
				fmt.Println()
			}
		}
	}
}
