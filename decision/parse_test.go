package decision

import (
	"strings"
	"testing"
)

// Messy persuadee outputs of the kinds instruction-tuned and reasoning
// models produce (docs/engines.md), with the decision each must give.
var parseCases = []struct {
	name string
	in   string
	want Decision
	ok   bool
}{
	{"plain", "That sounds fair.\nDECISION: accept", Accept, true},
	{"lower case", "ok then\ndecision: reject", Reject, true},
	{"spaces", "Hmm.\n   Decision :   continue   ", Continue, true},
	{"bold tag", "I'll go with it.\n**DECISION:** accept", Accept, true},
	{"bold all", "**Decision: Accept**", Accept, true},
	{"backticks", "Fine.\n`DECISION: conditional`", Conditional, true},
	{"header next line", "Thanks for listening.\n\n### Decision\n**Reject**", Reject, true},
	{"header same line", "## Decision: continue", Continue, true},
	{"quoted value", `DECISION: "accept"`, Accept, true},
	{"bracket value", "DECISION: [reject]", Reject, true},
	{"trailing punctuation", "DECISION: Accept!!!", Accept, true},
	{"trailing period", "DECISION: decline.", Reject, true},
	{"agree synonym", "DECISION: I agree", Accept, true},
	{"yes synonym", "DECISION: Yes", Accept, true},
	{"refuse synonym", "DECISION: refuse", Reject, true},
	{"no synonym", "DECISION: no", Reject, true},
	{"negated accept", "DECISION: No, I don't accept", Reject, true},
	{"do not accept", "DECISION: I do not accept this", Reject, true},
	{"do not fully agree", "DECISION: I do not fully agree", Reject, true},
	{"curly apostrophe", "DECISION: I don’t accept", Reject, true},
	{"unacceptable is a refusal", "DECISION: unacceptable", Reject, true},
	{"unacceptable in a sentence", "DECISION: That is unacceptable to me.", Reject, true},
	{"unwilling", "DECISION: I am unwilling to donate.", Reject, true},
	{"untagged REJECT opening", "REJECT. I won't be giving today.", Reject, true},
	{"untagged ACCEPT opening", "ACCEPT. Let's do it, put me down for $1.", Accept, true},
	{"untagged bold CONDITIONAL", "**CONDITIONAL**: only if I can see the receipts.", Conditional, true},
	{"untagged lone ACCEPT", "ACCEPT", Accept, true},
	{"capitalised prose is no tag", "Accept that I need time.", Continue, false},
	{"capitals glued to a word are no tag", "ACCEPTING gifts is hard for me.", Continue, false},
	{"accept with conditions", "DECISION: accept with conditions", Conditional, true},
	{"accept if", "DECISION: accept, if I can stop after a month", Conditional, true},
	{"yes but", "DECISION: yes, but only with a trial first", Conditional, true},
	{"maybe if", "DECISION: maybe if the costs are covered", Conditional, true},
	{"conditionally", "DECISION: conditionally accept", Conditional, true},
	{"accept (conditional)", "DECISION: accept (conditional)", Conditional, true},
	{"undecided", "DECISION: undecided", Continue, true},
	{"pending", "Decision - pending", Continue, true},
	{"none", "DECISION: none", Continue, true},
	{"not yet", "DECISION: not yet", Continue, true},
	{"no decision yet", "DECISION: no decision yet", Continue, true},
	{"maybe alone", "DECISION: maybe", Continue, true},
	{"decision is", "My decision is: accept.", Accept, true},
	{"final decision", "Final decision: REJECT", Reject, true},
	{"em dash", "DECISION — accept", Accept, true},
	{"equals", "decision=reject", Reject, true},
	{"inline at end", "Let me think about it some more. DECISION: continue", Continue, true},
	{"last tag wins", "DECISION: continue\nActually, you convinced me.\nDECISION: accept", Accept, true},
	{"json", `{"decision": "accept"}`, Accept, true},
	{"json with reply", `{"reply": "I can't accept that.", "decision": "reject"}`, Reject, true},
	{"json fenced", "```json\n{\"reply\": \"Sure.\", \"decision\": \"Accept\"}\n```", Accept, true},
	{"json key case", `{"Decision": "conditional"}`, Conditional, true},
	{"json braces in string", `{"reply": "a {weird} reply", "decision": "continue"}`, Continue, true},
	{"xml", "Alright.\n<decision>accept</decision>", Accept, true},
	{"think then tag", "<think>Maybe I should say DECISION: accept</think>I need more time.\nDECISION: continue", Continue, true},
	{"decision only in think", "<think>DECISION: accept</think>Sounds good to me.", Continue, false},
	{"unterminated think", "<think>They make a good point. DECISION: accept, I think", Continue, false},
	{"lone close think", "reasoning here DECISION: accept</think>Not for me.\nDECISION: reject", Reject, true},
	{"no tag", "Yes, I accept your proposal.", Continue, false},
	{"no tag negation", "No, I don't accept.", Continue, false},
	{"empty", "", Continue, false},
	{"unknown value", "DECISION: banana", Continue, false},
	{"prose decision weak", "It is a big decision - I need time to think it over.", Continue, false},
	{"prose then real tag", "This is a big decision - really.\nDECISION: reject", Reject, true},
	{"decisions plural", "I make decisions slowly: accept that.", Continue, false},
	{"blockquote", "> DECISION: accept", Accept, true},
	{"bullet", "- **Decision**: conditional", Conditional, true},
	{"windows newlines", "Fine by me.\r\nDECISION: accept\r\n", Accept, true},
	{"declined", "DECISION: Declined", Reject, true},
	{"cannot agree", "DECISION: I cannot agree to this", Reject, true},
	{"accepted", "DECISION: accepted", Accept, true},
	{"as long as", "DECISION: agree as long as I can pause it", Conditional, true},
	// Denied conditions are full acceptance (issue 47: both read as
	// conditional on 3b48d04).
	{"accept, no conditions", "DECISION: accept, no conditions", Accept, true},
	{"accept (no conditions)", "DECISION: accept (no conditions)", Accept, true},
	{"accept without any conditions", "DECISION: I accept without any conditions", Accept, true},
	{"a condition is still one", "DECISION: accept, one condition: a trial month", Conditional, true},
	{"no problem, provided", "DECISION: accept, no problem, provided the fee is waived", Conditional, true},
	{"no worries, providing", "DECISION: agree, no worries, providing I can cancel", Conditional, true},
	{"no problem, on condition", "DECISION: accept - no problem, on condition that I can stop", Conditional, true},
	{"without hesitation, provided", "DECISION: I accept without hesitation, provided the price holds", Conditional, true},
	{"not without conditions", "DECISION: accept, not without conditions", Conditional, true},
	{"no other conditions", "DECISION: accept with no other conditions", Accept, true},
	{"not conditional", "DECISION: accept, not conditional", Accept, true},
	// Prose with "decision:" is no tag unless its value opens with a
	// decision word (issue 47: the first read as reject on 3b48d04).
	{"prose colon is no tag", "This is a big decision: no way I can rush it.", Continue, false},
	{"prose colon yes is no tag", "It's a decision: yes, it matters to me, so give me time.", Continue, false},
	{"prose colon then real tag", "This is a big decision: no way I can rush it.\nDECISION: continue", Continue, true},
	{"weak tag opening with a value", "Thanks, that helps. My decision: accept", Accept, true},
	{"weak tag of one word", "Fair enough, so my decision: no.", Reject, true},
	{"weak tag yes then a decision word", "Thanks. My decision: yes, I accept.", Accept, true},
}

func TestParse(t *testing.T) {
	if len(parseCases) < 30 {
		t.Fatalf("only %d cases", len(parseCases))
	}
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) {
			d, ok := Parse(c.in)
			if d != c.want || ok != c.ok {
				t.Errorf("Parse(%q) = %q, %v; want %q, %v", c.in, d, ok, c.want, c.ok)
			}
		})
	}
}

// A parse failure is never acceptance.
func TestParseFailureIsNeverAccept(t *testing.T) {
	for _, c := range parseCases {
		if d, ok := Parse(c.in); !ok && d != Continue {
			t.Errorf("Parse(%q) failed with %q, want continue", c.in, d)
		}
	}
}

func TestStripDecision(t *testing.T) {
	cases := []struct{ in, want string }{
		{"That sounds fair.\nDECISION: accept", "That sounds fair."},
		{"I'll go with it.\n\n**DECISION:** accept\n", "I'll go with it."},
		{"Let me think. DECISION: continue", "Let me think."},
		{"Thanks.\n\n### Decision\n**Reject**", "Thanks."},
		{"Okay.\n---\nDECISION: accept", "Okay."},
		{"<think>They have a point. Accept?</think>\nI need more time.\nDECISION: continue", "I need more time."},
		{"<think>cut off while thinking", ""},
		{"Visible.<think>never closed DECISION: accept", "Visible."},
		{"hidden reasoning</think>Not for me.\nDECISION: reject", "Not for me."},
		{`{"reply": "I can't accept that.", "decision": "reject"}`, "I can't accept that."},
		{`{"decision": "continue"}`, ""},
		{"Alright.\n<decision>accept</decision>", "Alright."},
		{"It is a big decision - I need time.", "It is a big decision - I need time."},
		{"My decision is: accept.", ""},
		{"No tag here at all.", "No tag here at all."},
	}
	for _, c := range cases {
		if got := StripDecision(c.in); got != c.want {
			t.Errorf("StripDecision(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Nothing a persuader sees carries a parseable decision tag.
func TestStripDecisionRemovesEveryTag(t *testing.T) {
	for _, c := range parseCases {
		s := StripDecision(c.in)
		if _, ok := Parse(s); ok {
			t.Errorf("StripDecision(%q) = %q still parses", c.in, s)
		}
		if strings.Contains(s, "<think>") {
			t.Errorf("StripDecision(%q) = %q keeps <think>", c.in, s)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	msg := strings.Repeat("I hear you, and I appreciate the detail about the schedule. ", 8) + "\n**DECISION:** continue"
	for b.Loop() {
		Parse(msg)
		StripDecision(msg)
	}
}

// Prose that merely mentions a decision keeps its text and decides nothing.
func TestProseDecisionWordIsNotATag(t *testing.T) {
	for _, in := range []string{
		"It's a big decision - no way I'm doing this today.",
		"The decision is yours, and no pressure at all from me on it whatever you end up choosing.",
		"Decision-making is hard for me.",
	} {
		if got := StripDecision(in); got != in {
			t.Errorf("StripDecision(%q) = %q", in, got)
		}
		if d, ok := Parse(in); ok {
			t.Errorf("Parse(%q) = %q, want no decision", in, d)
		}
	}
}
