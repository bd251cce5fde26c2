package persuhmm

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// embeddedGuide voices plans with the template realiser
// (baseline.Realise).
type embeddedGuide struct{}

// Persuader returns a realiser-voiced persuader following plan: turn by
// turn it plays each stage's recipe in order, then keeps cycling through
// the last two stages; when the persuadee's latest reply asks a question
// and the subtree holds a strategy aimed at "ca" that is not the current
// stage's, it answers with that strategy's first act set off plan (the
// paper's freedom to use other subtree strategies when the persuadee
// surprises); with probability explore per turn (seeded) it plays a
// uniformly random non-empty act set off plan instead.
func (embeddedGuide) Persuader(task Task, plan Plan, sub Subtree, explore float64, d *Dialogue) episode.Persuader {
	return &guided{plan: plan, sub: sub, explore: explore, d: d}
}

type guided struct {
	plan    Plan
	sub     Subtree
	explore float64
	d       *Dialogue
}

func (g *guided) Name() string { return "hmm" }

func (g *guided) Start(_ context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	var sched []struct {
		stage int
		acts  tagger.ActSet
	}
	for j, st := range g.plan.Stages {
		for _, r := range st.Recipe {
			a, err := ParseActSet(r)
			if err != nil {
				return nil, err
			}
			sched = append(sched, struct {
				stage int
				acts  tagger.ActSet
			}{j, a})
		}
	}
	if len(sched) == 0 {
		return nil, fmt.Errorf("persuhmm: empty plan")
	}
	var surprise tagger.ActSet
	var surpriseID string
	for _, s := range g.sub.Strategies {
		if s.Goal == "ca" && len(s.Recipe) > 0 {
			if a, err := ParseActSet(s.Recipe[0]); err == nil && (surprise == 0 || better(s, g.sub.strategyByID(surpriseID))) {
				surprise, surpriseID = a, s.ID
			}
		}
	}
	return &guidedSession{g: g, pub: pub, seed: seed, sched: sched, surprise: surprise, surpriseID: surpriseID}, nil
}

func (s Subtree) strategyByID(id string) *Strategy {
	for _, x := range s.Strategies {
		if x.ID == id {
			return x
		}
	}
	return &Strategy{}
}

type guidedSession struct {
	g     *guided
	pub   scenario.Public
	seed  uint64
	sched []struct {
		stage int
		acts  tagger.ActSet
	}
	next       int // schedule position
	surprise   tagger.ActSet
	surpriseID string
	t          int
}

func (s *guidedSession) Say(_ context.Context, transcript []episode.Message) (episode.Utterance, error) {
	s.t++
	z := episode.Mix(s.seed ^ uint64(s.t)*0x100000001b3)
	stage, acts, strat := -1, tagger.ActSet(0), ""
	last := ""
	if n := len(transcript); n > 0 && transcript[n-1].Speaker == episode.PersuadeeSpeaker {
		last = transcript[n-1].Text
	}
	cur := s.sched[s.pos()]
	switch {
	case s.g.explore > 0 && float64(z>>11)/(1<<53) < s.g.explore:
		acts = tagger.ActSet(1 + (z>>3)%uint64(1<<tagger.NumActs-1))
	case s.surprise != 0 && strings.Contains(last, "?") && s.surpriseID != s.g.plan.Stages[cur.stage].Strategy:
		acts, strat = s.surprise, s.surpriseID
	default:
		stage, acts = cur.stage, cur.acts
		s.next++
	}
	if s.g.d != nil {
		s.g.d.Stage = append(s.g.d.Stage, stage)
		s.g.d.Acts = append(s.g.d.Acts, acts)
		s.g.d.Strategy = append(s.g.d.Strategy, strat)
	}
	return baseline.Realise(s.pub, acts, transcript, s.seed)
}

// pos maps the schedule counter onto the schedule: once played through,
// it cycles over the turns of the last two stages.
func (s *guidedSession) pos() int {
	if s.next < len(s.sched) {
		return s.next
	}
	lastTwo := 0
	if n := len(s.g.plan.Stages); n > 2 {
		for i, e := range s.sched {
			if e.stage >= n-2 {
				lastTwo = i
				break
			}
		}
	}
	span := len(s.sched) - lastTwo
	return lastTwo + (s.next-len(s.sched))%span
}

// MemoryPersuader is the memory-guided persuader "hmm:MEMORY": for each
// scenario it retrieves the subtree of the scenario's domains (DomainsOf),
// plans with the embedded step generator and voices the plan with the
// template realiser, with no exploration. It is usable against any
// persuadee. Safe for concurrent use (the memory is only read).
type MemoryPersuader struct {
	name string
	mem  *Memory
	enc  embed.Encoder
	opt  RetrieveOptions
	comp Components
}

// PersuaderPrefix marks a memory-guided persuader role name.
const PersuaderPrefix = "hmm:"

// NewMemoryPersuader returns the persuader over mem named name, retrieving
// with opt and planning with comp (NewEmbeddedComponents when comp.Steps is
// nil).
func NewMemoryPersuader(name string, mem *Memory, enc embed.Encoder, opt RetrieveOptions, comp Components) *MemoryPersuader {
	if comp.Steps == nil {
		comp = NewEmbeddedComponents(0, 0)
	}
	return &MemoryPersuader{name: name, mem: mem, enc: enc, opt: opt, comp: comp}
}

// LoadPersuader is the "hmm:MEMORY" role: it loads the memory file and
// returns its persuader (hashed TF-IDF embeddings, hierarchy-aware
// retrieval of the full subtree), named "hmm:BASENAME" so run ids never
// carry a path. Errors: Load's.
func LoadPersuader(path string) (*MemoryPersuader, error) {
	m, err := Load(path)
	if err != nil {
		return nil, err
	}
	return NewMemoryPersuader(PersuaderPrefix+filepath.Base(path), m, embed.NewHashedTFIDF(0), RetrieveOptions{Hierarchy: len(m.MacroDomains) > 0}, Components{}), nil
}

// Name implements episode.Persuader.
func (p *MemoryPersuader) Name() string { return p.name }

// Start implements episode.Persuader: retrieval and planning for pub.
// Errors: the encoder's or the step generator's.
func (p *MemoryPersuader) Start(ctx context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	task := Task{Scenario: &scenario.Scenario{ID: pub.ID, Domain: pub.Domain, Family: pub.Family, Proposal: pub.Proposal, Background: pub.Background}, Domains: DomainsOf(pub)}
	sub, err := p.mem.Retrieve(ctx, p.enc, task, p.opt)
	if err != nil {
		return nil, err
	}
	plan, _, err := p.comp.Steps.Plan(ctx, task, sub, 0)
	if err != nil {
		return nil, err
	}
	return p.comp.Guide.Persuader(task, plan, sub, 0, nil).Start(ctx, pub, seed)
}
