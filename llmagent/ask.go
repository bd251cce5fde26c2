package llmagent

import (
	"context"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
)

// Ask puts a free-text question to the persuadee in a discarded fork of
// its context (transcript; empty for the state before the first turn), as
// Probe does for yes/no probes, and returns the answer with reasoning
// removed and the engine usage. The fork never enters the conversation,
// and the request's seed is derived from the session seed and the
// question's position in the transcript, not from the session's request
// count, so asking never changes the session's later replies. Package
// bayespersuasion asks the Strategic Persuasion paper's Likert rating this way.
// Errors: engine errors wrapped with scenario and turn (context-length
// errors stay errors.Is(err, episode.ErrTruncated)).
func (s *session) Ask(ctx context.Context, transcript []episode.Message, question string) (string, episode.Usage, error) {
	ctx = llm.WithAffinity(ctx, s.aff)
	turn := persuaderTurns(transcript)
	msgs := append(s.messages(transcript, 1, true), llm.Message{Role: "user", Content: askPrompt(question)})
	sp := s.p.role.Sampling
	if sp.Seed == nil {
		sp.Seed = requestSeed(s.seed^0x5bd1e995, len(transcript))
	}
	if sp.MaxTokens == 0 {
		sp.MaxTokens = 64
	}
	resp, err := s.p.eng.Chat(ctx, llm.ChatRequest{Messages: msgs, Sampling: sp, Thinking: ptr(false)})
	if err != nil {
		return "", llm.UsageOf(err), s.wrap("ask", turn, err)
	}
	return strings.TrimSpace(decision.StripThink(resp.Content)), resp.Usage, nil
}

// askPrompt is the user turn of an Ask fork: the question, private to the
// persuadee like a probe.
func askPrompt(question string) string {
	return "(A private question to yourself, outside the conversation; the other person will not see it.) " + question
}
