package llmagent

import (
	"context"
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/scenario"
)

// Persuader is a prompted LLM persuader (the Probe-RPO paper's prompted
// baselines): an episode.Persuader that sees the public scenario fields, the
// goal and the visible transcript only. Safe for concurrent use.
type Persuader struct {
	name string
	eng  engine
	role llm.Role
	// Style replaces DefaultPersuaderStyle (the honest, respectful conduct
	// rules) in the system prompt when not empty.
	Style string
}

// NewPersuader returns an LLM persuader named name (e.g. "llm:haiku")
// speaking through c with role's sampling and thinking settings.
func NewPersuader(name string, c *llm.Client, role llm.Role) *Persuader {
	return &Persuader{name: name, eng: asRole(c), role: role}
}

// Name implements episode.Persuader.
func (p *Persuader) Name() string { return p.name }

// Start implements episode.Persuader.
func (p *Persuader) Start(_ context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	return &persuaderSession{p: p, pub: pub, seed: seed, sys: persuaderSystem(pub, p.Style), aff: affinity(p.eng)}, nil
}

type persuaderSession struct {
	p    *Persuader
	pub  scenario.Public
	seed uint64
	sys  string
	n    int
	aff  *llm.Affinity // the episode's engine replica; nil for test engines
}

// messages is the persuader's chat: system prompt, an opening cue, then
// its own utterances as assistant turns and the persuadee's visible
// replies as user turns. A transcript that starts with the persuadee (an
// opening context such as an ESConv help-seeker's situation) needs no cue:
// that message is the first user turn.
func (s *persuaderSession) messages(transcript []episode.Message) []llm.Message {
	msgs := make([]llm.Message, 0, len(transcript)+2)
	msgs = append(msgs, llm.Message{Role: "system", Content: strings.TrimSpace(s.sys)})
	if len(transcript) == 0 || transcript[0].Speaker == episode.PersuaderSpeaker {
		msgs = append(msgs, llm.Message{Role: "user", Content: persuaderOpening})
	}
	for _, m := range transcript {
		role := "user"
		if m.Speaker == episode.PersuaderSpeaker {
			role = "assistant"
		}
		msgs = append(msgs, llm.Message{Role: role, Content: strings.TrimSpace(m.Text)})
	}
	return msgs
}

// Say implements episode.PersuaderSession: one chat request; the text has
// reasoning and a leading speaker label removed. An empty utterance is
// retried once, then is an error. A context-length error wraps
// episode.ErrTruncated.
func (s *persuaderSession) Say(ctx context.Context, transcript []episode.Message) (episode.Utterance, error) {
	ctx = llm.WithAffinity(ctx, s.aff)
	turn := persuaderTurns(transcript) + 1
	msgs := s.messages(transcript)
	var usage episode.Usage
	for try := 0; try < 2; try++ {
		sp := s.p.role.Sampling
		if sp.Seed == nil {
			sp.Seed = requestSeed(s.seed, s.n)
		}
		s.n++
		resp, err := s.p.eng.Chat(ctx, llm.ChatRequest{Messages: msgs, Sampling: sp, Thinking: s.p.role.Thinking})
		if err != nil {
			return episode.Utterance{}, fmt.Errorf("llm persuader %s: scenario %s turn %d: %w", s.p.name, s.pub.ID, turn, err)
		}
		usage = usage.Add(resp.Usage)
		if text := cleanUtterance(resp.Content, s.pub); text != "" {
			return episode.Utterance{Text: text, Usage: usage}, nil
		}
	}
	return episode.Utterance{}, fmt.Errorf("llm persuader %s: scenario %s turn %d: empty utterance twice", s.p.name, s.pub.ID, turn)
}

// cleanUtterance strips reasoning, surrounding quotes and a leading
// speaker label ("Persuader:", the persuader's name or role).
func cleanUtterance(s string, pub scenario.Public) string {
	s = strings.TrimSpace(decision.StripThink(s))
	for _, label := range []string{"Persuader", pub.Persuader.Name, pub.Persuader.Role} {
		if label == "" {
			continue
		}
		for _, form := range []string{label + ":", "**" + label + ":**", "**" + label + "**:"} {
			if len(s) >= len(form) && strings.EqualFold(s[:len(form)], form) {
				s = strings.TrimSpace(s[len(form):])
			}
		}
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && !strings.Contains(s[1:len(s)-1], `"`) {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}
