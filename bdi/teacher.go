package bdi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/episode"
)

// Teacher labels the user's BDI state from the task, the user's profile,
// the task goal and the dialogue history (MASP paper, Eq. 9: z_t =
// F(h_t, p_u, g); the paper's offline "oracle belief updater", Appendix
// B.1). It is the only state estimator used on the reward side. history is
// the visible transcript h_t, oldest first.
type Teacher interface {
	Label(ctx context.Context, task Task, profile, goal string, history []episode.Message) (State, error)
}

// ErrMissing marks a state a teacher could not produce (an LLM answer that
// stayed invalid after one repair): record the turn as missing, never as a
// default state.
var ErrMissing = errors.New("bdi: state missing")

// StateSchema is the JSON schema of a State answer.
var StateSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"belief":{"type":"string"},"desire":{"type":"string"},"intention":{"type":"string"},` +
	`"receptivity":{"type":"number","minimum":0,"maximum":1},` +
	`"confidence":{"type":"number","minimum":0,"maximum":1},` +
	`"valence":{"type":"number","minimum":-1,"maximum":1}},` +
	`"required":["belief","desire","intention","receptivity","confidence","valence"]}`)

// TaskDescription returns the short task and role description given to
// LLM teachers and judges (the project's wording of the MASP paper's Appendix B.2
// and C): who the assistant and the user are and what the assistant wants.
func TaskDescription(t Task) string {
	switch t {
	case P4G:
		return "A persuasion chat: the Assistant (persuader) tries to convince the User (persuadee) to donate to the charity Save the Children. The User may start sceptical, short of money or uninterested."
	case ESConv:
		return "An emotional-support chat: the Assistant (supporter) helps the User (help-seeker) cope with a distressing situation. The User may start overwhelmed, anxious or hopeless."
	case CB:
		return "A price negotiation over a used item: the Assistant is the buyer and the User is the seller. Describe the seller's mind, not the buyer's."
	case ED:
		return "An empathetic chat: the User (speaker) tells a personal experience and the Assistant (listener) responds with empathy."
	}
	return "A goal-directed dialogue between an Assistant and a User."
}

var (
	thinkRE = regexp.MustCompile(`(?s)<think>.*?</think>`)
	fenceRE = regexp.MustCompile("(?s)```(?:json|JSON)?\\s*(.*?)```")
)

// ParseState reads a State from an engine answer: <think> blocks and code
// fences are removed, the first balanced JSON object is decoded, field
// names are matched case-insensitively (also "openness" for receptivity and
// "commitment" for confidence), numbers may be JSON strings ("0.7"), and the
// result must pass Validate. It returns an error naming the problem.
// Choice: values out of range are errors (so the teacher asks for a
// repair), not clipped as the released code does.
func ParseState(text string) (State, error) {
	text = thinkRE.ReplaceAllString(text, "")
	if m := fenceRE.FindStringSubmatch(text); m != nil {
		text = m[1]
	}
	obj, ok := firstObject(text)
	if !ok {
		return State{}, errors.New("no JSON object found")
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(obj), &raw); err != nil {
		return State{}, fmt.Errorf("malformed JSON: %v", err)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys) // a deterministic choice when two keys differ only in case
	get := func(names ...string) (any, bool) {
		for _, n := range names {
			for _, k := range keys {
				if strings.EqualFold(strings.TrimSpace(k), n) {
					return raw[k], true
				}
			}
		}
		return nil, false
	}
	var s State
	for _, f := range []struct {
		dst   *string
		names []string
	}{{&s.Belief, []string{"belief"}}, {&s.Desire, []string{"desire"}}, {&s.Intention, []string{"intention"}}} {
		v, ok := get(f.names...)
		if !ok {
			return State{}, fmt.Errorf("field %q missing", f.names[0])
		}
		str, ok := v.(string)
		if !ok {
			return State{}, fmt.Errorf("field %q is not a string", f.names[0])
		}
		*f.dst = strings.TrimSpace(str)
	}
	for _, f := range []struct {
		dst   *float64
		names []string
	}{{&s.Receptivity, []string{"receptivity", "openness"}}, {&s.Confidence, []string{"confidence", "commitment"}}, {&s.Valence, []string{"valence"}}} {
		v, ok := get(f.names...)
		if !ok {
			return State{}, fmt.Errorf("field %q missing", f.names[0])
		}
		switch x := v.(type) {
		case float64:
			*f.dst = x
		case string:
			n, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return State{}, fmt.Errorf("field %q = %q is not a number", f.names[0], x)
			}
			*f.dst = n
		default:
			return State{}, fmt.Errorf("field %q is not a number", f.names[0])
		}
	}
	if err := s.Validate(); err != nil {
		return State{}, errors.New(strings.TrimPrefix(err.Error(), "bdi: "))
	}
	return s, nil
}

// firstObject returns the first balanced {...} of text, honouring JSON
// strings and escapes.
func firstObject(text string) (string, bool) {
	start := strings.IndexByte(text, '{')
	for start >= 0 {
		depth, inStr, esc := 0, false, false
		for i := start; i < len(text); i++ {
			c := text[i]
			switch {
			case esc:
				esc = false
			case inStr && c == '\\':
				esc = true
			case c == '"':
				inStr = !inStr
			case inStr:
			case c == '{':
				depth++
			case c == '}':
				depth--
				if depth == 0 {
					return text[start : i+1], true
				}
			}
		}
		next := strings.IndexByte(text[start+1:], '{')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return "", false
}
