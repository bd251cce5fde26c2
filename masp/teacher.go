package masp

import (
	"context"
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llmagent"
)

// LLMTeacher is the LLM bdi.Teacher (the MASP paper's offline oracle
// belief updater, Appendix B.1): it asks the engine for the six fields as one JSON
// object, validates it (bdi.ParseState), asks once for a repair when it is
// invalid, and returns an error wrapping bdi.ErrMissing when the repair is
// invalid too. The prompt is the project's own wording of the paper's
// inputs: task description, role mapping, goal, profile (when given) and
// history. Safe for concurrent use when Engine is.
type LLMTeacher struct {
	Engine llm.Chatter
	// Sampling for the labelling requests; the paper uses temperature 0.2
	// and at most 320 tokens (Appendix B.1), the defaults when zero.
	Sampling llm.Sampling
	// Thinking is passed through to the engine (nil: engine default).
	Thinking *bool
	// Schema, when true, also sends the state schema as a structured-output
	// constraint (bdi.StateSchema).
	Schema bool
}

const teacherSystem = `You track the hidden mental state of the User in a dialogue. Read the task, the User's profile and the conversation, then describe the User's current state as one JSON object with exactly these fields:
- "belief": one sentence on what the User currently thinks is true about the topic;
- "desire": one sentence on what the User wants;
- "intention": one sentence on what the User is about to do;
- "receptivity": number in [0, 1], how open the User is to the Assistant's proposals (0 closed, 1 fully open);
- "confidence": number in [0, 1], how firmly the User holds their current stance;
- "valence": number in [-1, 1], the User's emotional tone (-1 very negative, 1 very positive).
Base every field on what the User has actually said. Answer with the JSON object only.`

// Label asks the engine for the state (see LLMTeacher). Errors: an engine
// error (as is, with llmagent.EngineError's dialogue sentinels), or bdi.ErrMissing (wrapped, with the last parse
// problem) after a failed repair.
func (t *LLMTeacher) Label(ctx context.Context, task bdi.Task, profile, goal string, history []episode.Message) (bdi.State, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\nGoal of the Assistant: %s\n", bdi.TaskDescription(task), strings.TrimSpace(goal))
	if strings.TrimSpace(profile) != "" {
		fmt.Fprintf(&b, "User profile: %s\n", strings.TrimSpace(profile))
	}
	b.WriteString("Conversation so far:\n")
	if len(history) == 0 {
		b.WriteString("(nothing yet)\n")
	}
	for _, m := range history {
		who := "User"
		if m.Speaker == episode.PersuaderSpeaker {
			who = "Assistant"
		}
		fmt.Fprintf(&b, "%s: %s\n", who, strings.TrimSpace(m.Text))
	}
	b.WriteString("Describe the User's current mental state as the JSON object.")
	msgs := []llm.Message{{Role: "system", Content: teacherSystem}, {Role: "user", Content: b.String()}}
	out, err := t.ask(ctx, msgs)
	if err != nil {
		return bdi.State{}, err
	}
	s, perr := bdi.ParseState(out)
	if perr == nil {
		return s, nil
	}
	msgs = append(msgs, llm.Message{Role: "assistant", Content: out},
		llm.Message{Role: "user", Content: "That answer is not valid (" + perr.Error() + "). Reply with only the corrected JSON object with the six fields."})
	out, err = t.ask(ctx, msgs)
	if err != nil {
		return bdi.State{}, err
	}
	s, perr = bdi.ParseState(out)
	if perr != nil {
		return bdi.State{}, fmt.Errorf("%w after one repair: %v", bdi.ErrMissing, perr)
	}
	return s, nil
}

func (t *LLMTeacher) ask(ctx context.Context, msgs []llm.Message) (string, error) {
	sm := t.Sampling
	if sm.Temperature == nil {
		temp := 0.2
		sm.Temperature = &temp
	}
	if sm.MaxTokens <= 0 {
		sm.MaxTokens = 320
	}
	req := llm.ChatRequest{Messages: msgs, Sampling: sm, Thinking: t.Thinking}
	if t.Schema {
		req.JSONSchema = bdi.StateSchema
	}
	resp, err := t.Engine.Chat(ctx, req)
	if err != nil {
		return "", llmagent.EngineError(err)
	}
	return resp.Content, nil
}

var _ bdi.Teacher = (*LLMTeacher)(nil)
