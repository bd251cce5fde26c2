package tagger

import (
	"strings"
	"testing"
)

func acts(as ...Act) ActSet {
	var s ActSet
	for _, a := range as {
		s = s.With(a)
	}
	return s
}

const (
	D = Diagnostic
	E = Evidence
	P = Plan
	C = Commitment
	A = Autonomy
)

// labelled are hand-labelled utterances: the act set and pressure count a
// careful reader assigns under the definitions of the Probe-RPO paper's
// Figure 5 and the project's documented choices (docs/tagger.md).
var labelled = []struct {
	text     string
	want     ActSet
	pressure int
}{
	// Diagnostic: open questions about concerns, feelings, constraints.
	{"What worries you most about starting physical therapy?", acts(D), 0},
	{"How do you feel about moving your savings?", acts(D), 0},
	{"Can you tell me more about what's holding you back?", acts(D), 0},
	{"What would make this easier?", acts(D), 0},
	{"Sam, what's on your mind?", acts(D), 0},
	{"Do you have any concerns about the cost?", acts(D), 0},
	{"Is anything worrying you about the side effects?", acts(D), 0},
	{"I'd love to hear what matters most to you here.", acts(D), 0},
	{"what would help you most right now", acts(D), 0}, // unterminated question
	// Hard negatives for diagnostic.
	{"How are you doing today?", 0, 0},                       // small talk
	{"Have you heard of Save the Children?", 0, 0},           // yes/no knowledge check
	{"I know how you feel.", 0, 0},                           // statement, not a question
	{"Don't you think every child deserves a chance?", 0, 0}, // rhetorical
	{"What if we looked at it another way?", 0, 0},           // hypothetical
	// Evidence.
	{"Studies show that 70% of patients improve within six weeks.", acts(E), 0},
	{"On average, people in your position save about forty dollars a month.", acts(E), 0},
	{"Records show the clinic has a long track record with cases like this.", acts(E), 0},
	{"According to the programme's own report, 3 out of 4 people finish it.", acts(E), 0},
	{"In similar cases the documented results were good.", acts(E), 0},
	{"Most people who try it for two weeks keep going.", acts(E), 0},
	// Numbers that are not evidence (documented choice).
	{"It only takes 2 minutes.", 0, 0},
	{"I agree with that, 100 reasons or not.", 0, 0},
	{"The research team will collect the forms.", 0, 0},
	// Plan.
	{"Next Tuesday at 3 pm I'll set up the first appointment.", acts(P), 0},
	{"Step one: we could start with a 10-minute walk for the first two weeks.", acts(P), 0},
	{"I'll call the office and book a slot by the end of the week.", acts(P), 0},
	{"After that, I'll check in with you once a week.", acts(P), 0},
	{"Step one would be a small trial.", acts(P), 0}, // "trial" alone is not evidence
	{"I know your schedule is packed.", 0, 0},        // "schedule" as a noun is not a plan
	{"What are you waiting for?", 0, 1},              // pressure, not an open question
	{"Would you be willing to schedule a visit on Monday?", acts(C, P), 0},
	// Commitment.
	{"Would you be willing to sign up today?", acts(C), 0},
	{"Will you try it for a month?", acts(C), 0},
	{"Can I count on you?", acts(C), 0},
	{"Shall we go ahead?", acts(C), 0},
	{"Are you in?", acts(C), 0},
	{"Let's do it today.", acts(C), 0},
	{"How much would you like to donate?", acts(C), 0},
	{"When can we start?", acts(C), 0},
	{"Sounds good?", acts(C), 0},
	{"Do you want to give it a try?", acts(C), 0},
	// Hard negatives for commitment.
	{"Do you donate to charities often?", 0, 0}, // habitual, not a request
	{"That would be unacceptable to me.", 0, 0}, // "accept" only as a whole word
	{"How much do you spend on coffee each day?", acts(D), 0},
	// Autonomy.
	{"It's entirely your decision.", acts(A), 0},
	{"No pressure at all.", acts(A), 0},
	{"Whatever you decide, I'm fine with it.", acts(A), 0},
	{"You're free to say no.", acts(A), 0},
	{"Take your time.", acts(A), 0},
	{"I won't pressure you.", acts(A), 0},
	{"I won\u2019t pressure you.", acts(A), 0}, // curly apostrophe
	{"I'm not going to push you on this.", acts(A), 0},
	{"You don't have to decide now.", acts(A), 0},
	// Hard negatives for autonomy.
	{"It's not your decision alone.", 0, 0},
	{"The amount you choose to donate goes to the charity.", 0, 0},
	// Pressure.
	{"You have to decide now.", 0, 2},
	{"This is your last chance, everyone else already signed up.", 0, 2},
	{"Don't be selfish. If you really cared you would do it.", 0, 2},
	{"I'm going to push you on this.", 0, 1},
	{"You must be tired.", 0, 0}, // epistemic "must"
	{"It's never too late to start.", 0, 0},
	{"No need to feel guilty.", 0, 0},
	// Several acts in one utterance.
	{"I hear you on the cost. The documented results for people in a similar situation show most manage it within two weeks. Would you be willing to try it next Tuesday? It's entirely your decision.", acts(E, C, P, A), 0},
	{"No pressure, but you must sign today. Will you?", acts(A), 1},
	{"What worries you most? And would you be willing to start on Monday?", acts(D, C, P), 0},
	{"", 0, 0},
}

func TestTagLabelled(t *testing.T) {
	if len(labelled) < 40 {
		t.Fatalf("only %d labelled utterances", len(labelled))
	}
	for _, c := range labelled {
		got := Tag(c.text)
		if got.Acts != c.want || got.Pressure != c.pressure {
			t.Errorf("Tag(%q) = %v pressure %d, want %v pressure %d",
				c.text, got.Acts.Strings(), got.Pressure, c.want.Strings(), c.pressure)
		}
	}
}

func TestTagLongAndOdd(t *testing.T) {
	// Far past the pooled buffer sizes: still correct, and the pool copes.
	long := strings.Repeat("The weather is mild and the park is green. ", 2000) + "Would you be willing to join?"
	if got := Tag(long); got.Acts != acts(C) || got.Pressure != 0 {
		t.Errorf("long text: got %v %d", got.Acts.Strings(), got.Pressure)
	}
	if got := Tag("¿Qué te preocupa? \u2014 café \u2026"); got.Acts != 0 {
		t.Errorf("non-ASCII text: got %v", got.Acts.Strings())
	}
	if got := Tag("???!!!...,,,"); got != (Tags{}) {
		t.Errorf("punctuation only: got %+v", got)
	}
}

func TestParseActRoundTrip(t *testing.T) {
	for _, a := range Acts {
		if b, ok := ParseAct(a.String()); !ok || b != a {
			t.Errorf("ParseAct(%q) = %v, %v", a.String(), b, ok)
		}
	}
}

// TestTagConcurrent checks that pooled scratch space is not shared between
// concurrent calls (run with -race).
func TestTagConcurrent(t *testing.T) {
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func(g int) {
			ok := true
			for i := 0; i < 200; i++ {
				c := labelled[(g*31+i)%len(labelled)]
				if got := Tag(c.text); got.Acts != c.want || got.Pressure != c.pressure {
					ok = false
				}
			}
			done <- ok
		}(g)
	}
	for g := 0; g < 4; g++ {
		if !<-done {
			t.Error("concurrent Tag disagreed with the sequential labels")
		}
	}
}
