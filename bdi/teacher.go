package bdi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/sim"
)

// Teacher labels the user's BDI state from the task, the user's profile,
// the task goal and the dialogue history (seed 003 Eq. 9: z_t =
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

// SimTeacher maps the simulator's latent state to BDI (SPEC §3: "for sim
// the teacher may read the simulator's latent state"). It reads Reader at
// call time, so Label labels the current state: call it right after each
// persuadee reply; profile and history are not used, goal (the scenario
// proposal) fills the texts.
//
// With openness o in [-1, 1], reactance r >= 0, rapport u in [0, 1], and
// open = voiced-but-unaddressed concerns / voiced-or-addressed concerns (0
// when none was voiced):
//
//	receptivity rho = clamp01((1 + o) / (1 + a)) / (1 + r), a = Latent.AcceptAt
//	confidence  c   = clamp01(|o| (1 - open / 2)), raised to >= 0.8 after an
//	                   accept or reject and >= 0.6 after a conditional
//	valence     v   = clamp(0.4 (2u - 1) + 0.3 o - 0.5 min(r, 1), -1, 1)
//
// Choice: receptivity is openness rescaled so that 0 is o = -1 and 1 is
// the persuadee's own acceptance threshold (ready to say yes, the P4G
// target's 1.0), damped by irritation; confidence is the strength of the
// stance, lowered while voiced doubts are unresolved and raised by a
// decision (the target's 0.8 after an accept); valence is mostly felt
// understanding (rapport), then leaning, minus irritation, so a warm,
// accepting persuadee sits near the target's 0.5. The texts
// are chosen from the concern states, openness relative to the persuadee's
// own thresholds (Latent.AcceptAt, ConditionalAt, Guarded) and the latest
// decision; docs/masp.md lists them.
type SimTeacher struct {
	Reader sim.LatentReader
}

// Label returns the current state of the simulator session (see
// SimTeacher). It returns an error only when Reader is nil.
func (t SimTeacher) Label(_ context.Context, _ Task, _, goal string, _ []episode.Message) (State, error) {
	if t.Reader == nil {
		return State{}, errors.New("bdi: SimTeacher has no latent reader")
	}
	l := t.Reader.Latent()
	return FromLatent(l, goal), nil
}

// FromLatent is SimTeacher's mapping of a latent snapshot to a state (see
// SimTeacher); goal is the scenario proposal.
func FromLatent(l sim.Latent, goal string) State {
	o, r, u := l.Openness, math.Max(l.Reactance, 0), l.Rapport
	voiced, addressed := l.Count(sim.ConcernVoiced), l.Count(sim.ConcernAddressed)
	open := 0.0
	if voiced+addressed > 0 {
		open = float64(voiced) / float64(voiced+addressed)
	}
	s := State{
		Receptivity: clamp((1+o)/(1+l.AcceptAt), 0, 1) / (1 + r),
		Confidence:  clamp(math.Abs(o)*(1-open/2), 0, 1),
		Valence:     clamp(0.4*(2*u-1)+0.3*o-0.5*math.Min(r, 1), -1, 1),
	}
	switch l.Decision {
	case decision.Accept, decision.Reject:
		s.Confidence = math.Max(s.Confidence, 0.8)
	case decision.Conditional:
		s.Confidence = math.Max(s.Confidence, 0.6)
	}
	g := goalPhrase(goal)
	var openDesc, addrIDs []string
	for _, c := range l.Concerns {
		switch c.State {
		case sim.ConcernVoiced:
			openDesc = append(openDesc, strings.TrimSpace(c.Description))
		case sim.ConcernAddressed:
			addrIDs = append(addrIDs, strings.ReplaceAll(c.ID, "_", " "))
		}
	}
	switch {
	case len(openDesc) > 0:
		s.Belief = "The user still has doubts: " + strings.Join(openDesc, " ")
	case len(addrIDs) > 0 && o >= l.ConditionalAt:
		s.Belief = "The user feels their worries about " + strings.Join(addrIDs, ", ") + " have been answered and believes it is worthwhile to " + g + "."
	case o >= l.AcceptAt:
		s.Belief = "The user believes it is worthwhile to " + g + "."
	case o < 0:
		s.Belief = "The user is not convinced that it is a good idea to " + g + "."
	default:
		s.Belief = "The user is unsure whether it is worth it to " + g + "."
	}
	switch {
	case r >= l.Guarded:
		s.Desire = "The user wants to decide freely without being pressured."
	case o >= l.AcceptAt:
		s.Desire = "The user wants to help and to " + g + "."
	case o >= l.ConditionalAt:
		s.Desire = "The user would like to help but wants their remaining doubts settled first."
	default:
		s.Desire = "The user wants to keep things as they are and not be talked into anything."
	}
	switch {
	case l.Decision == decision.Accept:
		s.Intention = "The user intends to " + g + " now."
	case l.Decision == decision.Conditional:
		cond := "their remaining doubt is settled"
		if len(openDesc) > 0 {
			cond = "this is settled: " + openDesc[0]
		}
		s.Intention = "The user intends to go ahead only if " + cond
	case l.Decision == decision.Reject:
		s.Intention = "The user intends to decline."
	case o >= l.AcceptAt:
		s.Intention = "The user is ready to agree if asked."
	case o >= l.ConditionalAt:
		s.Intention = "The user is considering it and wants more concrete information."
	default:
		s.Intention = "The user intends to decline or keep resisting."
	}
	return s
}

func clamp(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

// Chatter is the part of *llm.Client an LLMTeacher needs.
type Chatter interface {
	Chat(ctx context.Context, r llm.ChatRequest) (*llm.ChatResponse, error)
}

// LLMTeacher is the LLM labeller (seed 003 Appendix B.1, the offline
// oracle belief updater): it asks the engine for the six fields as one JSON
// object, validates it (ParseState), asks once for a repair when it is
// invalid, and returns an error wrapping ErrMissing when the repair is
// invalid too. The prompt is the project's own wording of the paper's
// inputs: task description, role mapping, goal, profile (when given) and
// history. Safe for concurrent use when Engine is.
type LLMTeacher struct {
	Engine Chatter
	// Sampling for the labelling requests; the paper uses temperature 0.2
	// and at most 320 tokens (Appendix B.1), the defaults when zero.
	Sampling llm.Sampling
	// Thinking is passed through to the engine (nil: engine default).
	Thinking *bool
	// Schema, when true, also sends StateSchema as a structured-output
	// constraint.
	Schema bool
}

// StateSchema is the JSON schema of a State answer.
var StateSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"belief":{"type":"string"},"desire":{"type":"string"},"intention":{"type":"string"},` +
	`"receptivity":{"type":"number","minimum":0,"maximum":1},` +
	`"confidence":{"type":"number","minimum":0,"maximum":1},` +
	`"valence":{"type":"number","minimum":-1,"maximum":1}},` +
	`"required":["belief","desire","intention","receptivity","confidence","valence"]}`)

// TaskDescription returns the short task and role description given to
// LLM teachers and judges (the project's wording of seed 003 Appendix B.2
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

const teacherSystem = `You track the hidden mental state of the User in a dialogue. Read the task, the User's profile and the conversation, then describe the User's current state as one JSON object with exactly these fields:
- "belief": one sentence on what the User currently thinks is true about the topic;
- "desire": one sentence on what the User wants;
- "intention": one sentence on what the User is about to do;
- "receptivity": number in [0, 1], how open the User is to the Assistant's proposals (0 closed, 1 fully open);
- "confidence": number in [0, 1], how firmly the User holds their current stance;
- "valence": number in [-1, 1], the User's emotional tone (-1 very negative, 1 very positive).
Base every field on what the User has actually said. Answer with the JSON object only.`

// Label asks the engine for the state (see LLMTeacher). Errors: an engine
// error (returned as is), or ErrMissing (wrapped, with the last parse
// problem) after a failed repair.
func (t *LLMTeacher) Label(ctx context.Context, task Task, profile, goal string, history []episode.Message) (State, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\nGoal of the Assistant: %s\n", TaskDescription(task), strings.TrimSpace(goal))
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
		return State{}, err
	}
	s, perr := ParseState(out)
	if perr == nil {
		return s, nil
	}
	msgs = append(msgs, llm.Message{Role: "assistant", Content: out},
		llm.Message{Role: "user", Content: "That answer is not valid (" + perr.Error() + "). Reply with only the corrected JSON object with the six fields."})
	out, err = t.ask(ctx, msgs)
	if err != nil {
		return State{}, err
	}
	s, perr = ParseState(out)
	if perr != nil {
		return State{}, fmt.Errorf("%w after one repair: %v", ErrMissing, perr)
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
		req.JSONSchema = StateSchema
	}
	resp, err := t.Engine.Chat(ctx, req)
	if err != nil {
		return "", err
	}
	return resp.Content, nil
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
