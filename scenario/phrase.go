package scenario

import "strings"

// Person is the grammatical person ProposalPhrase renders a proposal in.
type Person int

const (
	// PersonSecond keeps the proposal addressed to the persuadee, as the
	// persuader says it: "donate part of your task payment to Save the
	// Children".
	PersonSecond Person = iota
	// PersonFirst is the persuadee's own words: "donate part of my task
	// payment to Save the Children".
	PersonFirst
	// PersonThird speaks about the persuadee: "donate part of their task
	// payment to Save the Children".
	PersonThird
)

// proposalSeps end a proposal's main clause; the clause is the text up to
// the first of them that does not open the proposal.
var proposalSeps = []string{": ", "; ", " - ", " (", ". "}

// swaps maps a second-person word to its first- and third-person forms
// (index PersonFirst, PersonThird).
var swaps = map[string][3]string{
	"you":      {PersonFirst: "me", PersonThird: "them"},
	"your":     {PersonFirst: "my", PersonThird: "their"},
	"yours":    {PersonFirst: "mine", PersonThird: "theirs"},
	"yourself": {PersonFirst: "myself", PersonThird: "themselves"},
}

// ProposalPhrase renders a scenario proposal, an imperative addressed to
// the persuadee ("Donate part of your task payment to Save the Children:
// any amount from $0 up to your full $2."), as a verb phrase that reads
// after "to", "I'll" or "intends to" ("donate part of your task payment to
// Save the Children"), in the person who: PersonSecond for the
// persuader's words, PersonFirst for the persuadee's, PersonThird for a
// description of the persuadee (any other value reads as PersonSecond).
// The persuader, the simulator's replies,
// the self-play user and the BDI target all render the proposal here, so
// the two sides of a dialogue name it in the same words.
//
// It keeps the main clause (the text before the first ": ", "; ", " - ",
// " (" or ". " that is not at its start), drops trailing ".!?,;: " and
// spaces, and lower-cases an initial capital followed by a lower-case
// letter ("NASA" stays). A clause that opens like a noun phrase (a, an,
// the, this, that, my, our) becomes "go ahead with ..."; a leading "to"
// is dropped. In PersonFirst and PersonThird the second-person words you,
// your, yours and yourself become me/my/mine/myself or
// them/their/theirs/themselves (a trailing punctuation mark is kept).
// Commas inside the clause are kept.
//
// It returns "" when nothing is left (an empty proposal, or punctuation
// only); callers supply their own fallback phrase.
//
// Choice: the P4G paper's and the Probe-RPO paper's proposals are
// imperatives; the rules are the project's own, chosen so that every
// shipped proposal renders as a grammatical phrase.
func ProposalPhrase(proposal string, who Person) string {
	p := strings.TrimSpace(proposal)
	for _, sep := range proposalSeps {
		if i := strings.Index(p, sep); i > 0 {
			p = p[:i]
		}
	}
	p = strings.TrimRight(p, ".!?,;: ")
	if len(p) >= 2 && p[0] >= 'A' && p[0] <= 'Z' && p[1] >= 'a' && p[1] <= 'z' {
		p = string(p[0]+'a'-'A') + p[1:]
	}
	if p == "" {
		return ""
	}
	switch strings.ToLower(strings.Fields(p)[0]) {
	case "a", "an", "the", "this", "that", "my", "our":
		p = "go ahead with " + p
	case "to":
		p = strings.TrimSpace(p[2:])
	}
	if who != PersonFirst && who != PersonThird {
		return p
	}
	ws := strings.Fields(p)
	for i, w := range ws {
		core := strings.TrimRight(w, ".,;:!?")
		if s, ok := swaps[core]; ok {
			ws[i] = s[who] + w[len(core):]
		}
	}
	return strings.Join(ws, " ")
}
