package fakeengine

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/llm"
)

// Model is a behavioural persuadee for the fake engine (docs/engines.md,
// "The behavioural test engine"): it replies and answers probes with the
// habits of real chat models that decide whether probe read-outs and
// decisions come out right, each switchable, while its P(Yes) for a probe
// asked in a clean fork is a known function of the fork (Belief), so a
// test can assert the value read. Handler serves it on any engine profile,
// for chat requests and for prompts rendered with Template.
//
// The habits:
//   - JSON priming (JSONPriming): after a system prompt that asks for a
//     JSON object, or with a JSON object among its own past turns, most of
//     the first-token mass goes to "{" and what is left on Yes and No is
//     not an answer (split evenly, whatever Belief says);
//   - thinking first (ThinkFirst): unless a request switches thinking off,
//     a probe's first token is "<think>" with 0.97 of the mass, and a reply
//     opens with a thinking block;
//   - answers below the top-k (AnswerMass, Crowd): the mass not on the
//     answers is spread over Crowd other first tokens, which outrank Yes
//     and No once the answer mass is small;
//   - the sampled token duplicated in top_logprobs (Duplicate);
//   - a sampled token from the tail (SampleTail): temperature 1 draws a
//     rare token, which engines list with the top candidates although it
//     ranks far below them (vLLM's completions dictionaries always hold
//     the sampled token);
//   - zero-probability candidates (ZeroVariants: "YES" and "NO" listed
//     with probability 0, written as the server's WithZeroLogprob style:
//     -9999, null, -Infinity or -3.4e38);
//   - long replies (Ramble) that a max_tokens limit cuts before their
//     decision;
//   - JSON or the tagged line as asked: a JSON object under a
//     response_format schema or a JSON rule in the system prompt, else the
//     text and a last line "DECISION: <decision>".
//
// On llama-server the probe's pinned "Yes" (logit_bias) is the sampled
// token, as the real server samples it; its log-prob stays the raw one.
// A context window that a probe fork outgrows is the server's
// (WithContextWindow).
type Model struct {
	// Belief returns P(Yes) in [0, 1] for the probe asked in last (the
	// fork's final user message) after the conversation msgs (system
	// prompt first): the value a clean read-out must return. nil: 0.5.
	Belief func(last string, msgs []llm.Message) float64
	// Reply returns the visible reply and its decision ("continue",
	// "accept", "conditional" or "reject") for the conversation msgs,
	// whose last message is the persuader's. nil: "I'm not sure yet." and
	// continue.
	Reply func(msgs []llm.Message) (text, decision string)
	// AnswerMass is the first-token mass on Yes and No in a clean fork
	// (0 means 0.98); the rest goes to the Crowd.
	AnswerMass float64
	// Crowd is the number of other first tokens ("I", "**", "Well", ...)
	// that share the mass not on the answers equally (0 means 4; at most
	// len(crowdPieces)).
	Crowd int
	// JSONPriming, in [0, 1), is the share of the first-token mass "{"
	// takes in a fork primed for JSON (0: the habit is off).
	JSONPriming float64
	// ThinkFirst switches the thinking-first habit on.
	ThinkFirst bool
	// Duplicate repeats the sampled token in a probe's top candidates.
	Duplicate bool
	// ZeroVariants lists "YES" and "NO" with probability 0 among a
	// probe's candidates.
	ZeroVariants bool
	// SampleTail, in [0, 1), is the probability of a rare first token
	// ("Zyx") that a probe samples instead of the most probable one (the
	// other masses scaled by 1 - SampleTail); 0: the habit is off. A
	// llama-server pin (logit_bias) still wins.
	SampleTail float64
	// Ramble is the number of words of hesitation every reply carries
	// before its decision (0: none).
	Ramble int
}

// crowdPieces are the non-answer first tokens of a probe, in the order
// they take the crowd's mass.
var crowdPieces = []string{"I", "**", "Well", "The", "As", "Hmm", "It", "Honestly", "Not", "That", "My", "Maybe",
	"Let", "Sure", "Okay", "This", "You", "To", "In", "We", "Given", "Based", "After", "From", "If", "So", "Right",
	"Yeah", "Nope", "Thinking", "Perhaps", "Actually"}

// jsonRule is how a system prompt asks for JSON answers (package
// llmagent's wording, and any prompt that asks for "a JSON object").
const jsonRule = "JSON object"

// Handler serves the model: probes (a last user message ending "Yes or
// No."), replies, and decision repairs, over chat requests and rendered
// prompts alike. Other requests (capability detection) get "Okay.".
func (m *Model) Handler() Handler {
	return func(r Request) Reply {
		msgs, thinking := r.Messages, r.Thinking
		if msgs == nil {
			msgs, thinking = ParseTemplate(r.Prompt)
		}
		if len(msgs) == 0 || msgs[len(msgs)-1].Role != "user" || msgs[0].Role != "system" {
			return Reply{Text: "Okay."}
		}
		last := msgs[len(msgs)-1].Content
		think := m.ThinkFirst && (thinking == nil || *thinking)
		switch {
		case strings.HasSuffix(strings.TrimSpace(last), "Yes or No."):
			return m.probe(r, last, msgs[:len(msgs)-1], think)
		case strings.Contains(last, "did not include a valid decision") || strings.Contains(last, "did not end with the decision line"):
			// A decision repair: msgs ends with the reply and this request.
			_, d := m.reply(msgs[:max(len(msgs)-2, 1)])
			if r.Body["response_format"] != nil || strings.Contains(last, "JSON") {
				return Reply{Text: fmt.Sprintf(`{"decision": %q}`, d)}
			}
			return Reply{Text: "DECISION: " + d}
		}
		text, d := m.reply(msgs)
		if m.Ramble > 0 {
			text += " " + ramble(m.Ramble)
		}
		var out string
		if r.Body["response_format"] != nil || strings.Contains(msgs[0].Content, jsonRule) {
			b, _ := json.Marshal(map[string]string{"reply": text, "decision": d})
			out = string(b)
		} else {
			out = text + "\nDECISION: " + d
		}
		rep := Reply{Text: out}
		if think {
			rep.Reasoning = "They made a point; let me weigh it before I answer."
		}
		return rep
	}
}

func (m *Model) reply(msgs []llm.Message) (string, string) {
	if m.Reply == nil {
		return "I'm not sure yet.", "continue"
	}
	return m.Reply(msgs)
}

// tailPiece is the rare token SampleTail samples.
const tailPiece = "Zyx"

// primed reports a fork primed for JSON: a JSON rule in the system prompt
// or a JSON object among the model's own past turns.
func primed(msgs []llm.Message) bool {
	for i, m := range msgs {
		if i == 0 && strings.Contains(m.Content, jsonRule) {
			return true
		}
		if m.Role == "assistant" && strings.HasPrefix(strings.TrimSpace(m.Content), "{") {
			return true
		}
	}
	return false
}

// probe answers a probe fork with its first-token distribution.
func (m *Model) probe(r Request, last string, msgs []llm.Message, think bool) Reply {
	p := 0.5
	if m.Belief != nil {
		p = m.Belief(last, msgs)
	}
	dist := map[string]float64{}
	rest := 1.0
	if think {
		dist[ThinkOpen] = 0.97
		rest = 0.03
	}
	if m.JSONPriming > 0 && primed(msgs) {
		dist["{"] += rest * m.JSONPriming
		rest *= 1 - m.JSONPriming
		p = 0.5 // what is left at the answer position is not an answer
	}
	a := m.AnswerMass
	if a == 0 {
		a = 0.98
	}
	dist["Yes"] += rest * a * p
	dist["No"] += rest * a * (1 - p)
	crowd := m.Crowd
	if crowd <= 0 {
		crowd = 4
	}
	crowd = min(crowd, len(crowdPieces))
	for _, c := range crowdPieces[:crowd] {
		dist[c] += rest * (1 - a) / float64(crowd)
	}
	if m.ZeroVariants {
		dist["YES"], dist["NO"] = 0, 0
	}
	rep := Reply{FirstToken: dist, Duplicate: m.Duplicate}
	if m.SampleTail > 0 {
		for tok := range dist {
			dist[tok] *= 1 - m.SampleTail
		}
		dist[tailPiece] = m.SampleTail
		rep.Text = tailPiece
	}
	if pin := pinned(r.Body); pin != "" {
		rep.Text = pin // llama-server samples the pinned token
	}
	return rep
}

// pinned returns the token text a llama-server logit_bias of at least 50
// pins as the sampled token ([["Yes", 100]]), or "".
func pinned(body map[string]any) string {
	list, _ := body["logit_bias"].([]any)
	for _, e := range list {
		pair, _ := e.([]any)
		if len(pair) != 2 {
			continue
		}
		tok, _ := pair[0].(string)
		bias, _ := pair[1].(float64)
		if tok != "" && bias >= 50 {
			return tok
		}
	}
	return ""
}

// ramble is n words of hesitation, in sentences of eight words.
func ramble(n int) string {
	words := strings.Fields("I keep turning it over in my head because there is a lot to weigh here and")
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		w := words[i%len(words)]
		if i%8 == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		if i%8 == 7 || i == n-1 {
			b.WriteByte('.')
		}
	}
	return b.String()
}

// ParseTemplate reads a prompt rendered with Template back into its
// messages, and the thinking switch of its generation prompt: false when it
// ends with an empty think block, nil otherwise. A prompt not in the
// template's form gives no messages.
func ParseTemplate(prompt string) ([]llm.Message, *bool) {
	var msgs []llm.Message
	var thinking *bool
	rest := prompt
	for strings.HasPrefix(rest, ImStart) {
		rest = rest[len(ImStart):]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return nil, nil
		}
		role := rest[:nl]
		rest = rest[nl+1:]
		end := strings.Index(rest, ImEnd)
		if end < 0 {
			// The generation prompt: an open assistant turn.
			if role == "assistant" && strings.HasPrefix(rest, ThinkOpen+"\n\n"+ThinkClose) {
				off := false
				thinking = &off
			}
			return msgs, thinking
		}
		msgs = append(msgs, llm.Message{Role: role, Content: rest[:end]})
		rest = strings.TrimPrefix(rest[end+len(ImEnd):], "\n")
	}
	return msgs, thinking
}
