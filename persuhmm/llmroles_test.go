package persuhmm

import (
	"reflect"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// The LLM components on the fake engine with scripted replies: each
// prompt is recognised by its system message; the classifier's first
// answer is broken and repaired once.
func TestLLMComponentsOnFakeEngine(t *testing.T) {
	classify := 0
	h := func(r fakeengine.Request) fakeengine.Reply {
		if len(r.Messages) == 1 && r.Messages[0].Content == "Hi" {
			return fakeengine.Reply{Text: "Hi"}
		}
		sys := ""
		if len(r.Messages) > 0 {
			sys = r.Messages[0].Content
		}
		switch {
		case strings.HasPrefix(sys, "You plan persuasive"):
			return fakeengine.Reply{Text: `Here: {"stages": [{"step": "ask about worries", "goal": "feels heard", "strategy": "s1"}, {"step": "show figures", "goal": "convinced", "strategy": "nope"}]}`}
		case strings.HasPrefix(sys, "You judge how far"):
			return fakeengine.Reply{Text: `{"scores": [5, 9]}`}
		case strings.HasPrefix(sys, "You extract success"):
			if !strings.Contains(r.Messages[1].Content, "Reference conversation:\nPersuader: ref line") {
				return fakeengine.Reply{Text: `{}`}
			}
			return fakeengine.Reply{Text: `{"l1": [{"strategy": "s1", "pattern": "health; asked; opened up; reached: heard"}], "l2": ["health; figures; convinced"]}`}
		case strings.HasPrefix(sys, "You abstract persuasion"):
			return fakeengine.Reply{Text: `{"strategies": [{"text": "Show local figures", "domain": "healthcare", "patterns": [1, 7]}]}`}
		case strings.HasPrefix(sys, "You sort persuasion"):
			classify++
			if classify == 1 {
				return fakeengine.Reply{Text: `logical, I think`}
			}
			return fakeengine.Reply{Text: `{"category": "logical"}`}
		case strings.HasPrefix(sys, "You decide whether a new"):
			return fakeengine.Reply{Text: `{"same": 0}`}
		case strings.HasPrefix(sys, "You find groups"):
			return fakeengine.Reply{Text: `{"groups": []}`}
		case strings.HasPrefix(sys, "You name a group"):
			return fakeengine.Reply{Text: `{"name": "Wellbeing"}`}
		case strings.HasPrefix(sys, "You decide whether a cluster"):
			return fakeengine.Reply{Text: `{"macro": ""}`}
		}
		// the persuader
		return fakeengine.Reply{Text: "Would a short check-up next week work for you?"}
	}
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(h))
	t.Cleanup(srv.Close)
	c, err := llm.NewClient(srv.Backend("fake"))
	if err != nil {
		t.Fatal(err)
	}
	comp := NewLLMComponents(c, llm.Sampling{}, func(style string) episode.Persuader {
		p := llmagent.NewPersuader("llm:fake", c, llm.Role{})
		p.Style = style
		return p
	})
	ss, _ := scenario.ResolveSplit(scenario.Train, "arena")
	var sc *scenario.Scenario
	for i := range ss {
		if ss[i].Family == scenario.Healthcare {
			sc = &ss[i]
			break
		}
	}
	task := Task{Scenario: sc, Domains: []string{"healthcare"}, Reference: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "ref line"}}}
	m := New()
	m.EnsureDomain("healthcare").Strategies = []*Strategy{{ID: "s1", Text: "Ask what worries them", Domain: "healthcare", Category: Emotional}}
	// one full learning batch of this single task, end to end
	if err := Learn(ctx, m, []Task{task}, sim.New(sim.Config{}), comp, vecs{}, LearnConfig{Seed: 1, Episode: episode.Config{Tmax: 2}}); err != nil {
		t.Fatal(err)
	}
	d := m.Domain("healthcare")
	if len(d.Strategies) != 2 || d.Strategies[1].Text != "Show local figures" || d.Strategies[1].Category != Logical || len(d.Strategies[1].Patterns) != 1 {
		t.Fatalf("strategies %+v", d.Strategies)
	}
	if s := d.Strategies[0]; s.Succ != 1 || s.ND != 1 || len(s.Patterns) != 1 {
		t.Fatalf("s1 after L1: %+v", s)
	}
	if m.Learn.ComponentUsage.Requests < 6 || classify != 2 {
		t.Fatalf("requests %d, classify asked %d times", m.Learn.ComponentUsage.Requests, classify)
	}
	// the step generator drops an unknown strategy id
	plan, _, err := comp.Steps.Plan(ctx, task, Subtree{Domains: []string{"healthcare"}, Strategies: d.Strategies}, 0)
	if err != nil || plan.Stages[0].Strategy != "s1" || plan.Stages[1].Strategy != "" {
		t.Fatalf("plan %+v %v", plan, err)
	}
	// the LLM summariser names the macro domain (and dissolves clusters)
	if _, err := m.Hierarchise(ctx, vecs{}, comp.Summariser, HierOptions{}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.MacroDomains, []MacroDomain{{Name: "Wellbeing", Domains: []string{"healthcare"}}}) {
		t.Fatalf("macro domains %+v", m.MacroDomains)
	}
}
