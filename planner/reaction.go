package planner

import (
	"strings"
)

// Reaction is one kind of persuadee reaction the planner observes, read
// from the visible reply text only (Probe-RPO paper: "the persuadee's last
// reaction").
type Reaction uint8

// The reactions, as bit positions of a Reactions set.
const (
	// Voiced: the reply raises a worry or objection of its own ("What
	// bothers me is ...", "Before I answer that: ...").
	Voiced Reaction = iota
	// Pushback: the reply rejects the persuader's move itself ("That's
	// just a claim", "Stop telling me what to do").
	Pushback
	// Positive: the reply welcomes a move ("That helps", "Fair point").
	Positive
	// Question: the reply asks the persuader something.
	Question
	// Deflect: the reply puts the decision off ("Not yet", "Let me think
	// about it").
	Deflect
	// Exhausted: the reply says there is nothing more to tell ("That's
	// really all of it"). Choice: a sixth reaction beyond the other
	// five, because it tells a planner that asking for more
	// concerns has stopped paying.
	Exhausted
	// NumReactions is the number of reactions.
	NumReactions = 6
)

var reactionNames = [NumReactions]string{"voiced", "pushback", "positive", "question", "deflect", "exhausted"}

// String returns the reaction's stable name.
func (r Reaction) String() string {
	if int(r) < NumReactions {
		return reactionNames[r]
	}
	return "unknown"
}

// Reactions is a set of reactions (bit i = Reaction i); one reply can
// show several ("That helps. But what bothers me is ...").
type Reactions uint8

// Has reports whether r is in s.
func (s Reactions) Has(r Reaction) bool { return s&(1<<r) != 0 }

// Strings returns the names in s in Reaction order (never nil).
func (s Reactions) Strings() []string {
	out := []string{}
	for r := Reaction(0); r < NumReactions; r++ {
		if s.Has(r) {
			out = append(out, r.String())
		}
	}
	return out
}

// cue is a phrase (space-separated lower-case words, matched on word
// boundaries) that signals a reaction.
type cue struct {
	phrase string
	r      Reaction
	// negatable cues do not count after a negator within three words
	// ("not sure that helps").
	negatable bool
}

// cueIndex maps a cue's first word to the indices of the cues starting
// with it.
var cueIndex = map[string][]int{}

// cueWords[i] is cues[i].phrase split at spaces.
var cueWords [][]string

func init() {
	for i, c := range cues {
		w := strings.Fields(c.phrase)
		cueWords = append(cueWords, w)
		cueIndex[w[0]] = append(cueIndex[w[0]], i)
	}
}

// cues is the rule table. Choice: the phrases are ordinary English
// markers of each reaction (worry words, objection formulas, thanks,
// putting-off formulas), written so that they cover the simulator's reply
// banks and the common ways an LLM persuadee phrases the same reactions;
// docs/training.md lists the rules and their limits.
var cues = []cue{
	// Voicing a worry.
	{"worried", Voiced, true}, {"worries me", Voiced, true}, {"my worry", Voiced, false}, {"i worry", Voiced, true},
	{"concerned", Voiced, true}, {"my concern", Voiced, false}, {"concern is", Voiced, false},
	{"bothers me", Voiced, true}, {"sticks with me", Voiced, false}, {"keep coming back to", Voiced, false},
	{"being frank", Voiced, false}, {"before i answer", Voiced, false}, {"has to come first", Voiced, false},
	{"can't say yes while", Voiced, false}, {"there's something first", Voiced, false},
	{"now that you mention", Voiced, false}, {"touches on", Voiced, false}, {"which reminds me", Voiced, false},
	{"on that point", Voiced, false}, {"bring that up", Voiced, false}, {"close to home", Voiced, false},
	{"hear this", Voiced, false}, {"what i actually think", Voiced, false}, {"nobody's asked me", Voiced, false},
	{"says about me", Voiced, false}, {"since you're asking", Voiced, false}, {"since you ask", Voiced, false},
	{"putting it off", Voiced, false}, {"part of me", Voiced, false}, {"the problem is", Voiced, false},
	{"the issue is", Voiced, false}, {"the thing is", Voiced, false}, {"i'm afraid", Voiced, true},
	{"afraid of", Voiced, true}, {"scared", Voiced, true}, {"nervous about", Voiced, true}, {"what if", Voiced, false},
	{"my fear", Voiced, false}, {"hesitant because", Voiced, false}, {"the catch is", Voiced, false},
	{"good question", Voiced, false}, {"scares me", Voiced, true}, {"terrifies me", Voiced, true},
	// Nothing more to tell.
	{"all of it", Exhausted, false}, {"heard my main", Exhausted, false}, {"nothing else", Exhausted, false},
	{"whole list", Exhausted, false}, {"already said", Exhausted, false}, {"already told you", Exhausted, false},
	{"that's everything", Exhausted, false},
	// Welcoming a move.
	{"helps", Positive, true}, {"fair point", Positive, true}, {"good point", Positive, true},
	{"makes more sense", Positive, true}, {"makes sense", Positive, true}, {"hadn't looked at it", Positive, false},
	{"answers part", Positive, false}, {"appreciate", Positive, true}, {"thanks for", Positive, false},
	{"thank you for", Positive, false}, {"i like that", Positive, true}, {"doable", Positive, true},
	{"hard to argue", Positive, false}, {"what i needed", Positive, true}, {"evidence i needed", Positive, true},
	{"could picture", Positive, true}, {"reassuring", Positive, true}, {"sounds good", Positive, true},
	{"sounds reasonable", Positive, true}, {"you get where", Positive, false}, {"actually listened", Positive, false},
	{"that's helpful", Positive, true}, {"i'll give you that", Positive, false}, {"good to know", Positive, true},
	// Rejecting the move itself.
	{"not convinced", Pushback, false}, {"changes anything", Pushback, false}, {"just a claim", Pushback, false},
	{"doesn't make it true", Pushback, false}, {"heard that before", Pushback, false},
	{"doesn't speak to", Pushback, false}, {"not evidence", Pushback, false}, {"it's an opinion", Pushback, false},
	{"don't get it", Pushback, false}, {"who i am", Pushback, false}, {"doing it wrong", Pushback, false},
	{"corrected", Pushback, false}, {"judged", Pushback, false}, {"being pushed", Pushback, false},
	{"you push", Pushback, false}, {"pushing me", Pushback, false}, {"decide for myself", Pushback, false},
	{"telling me what", Pushback, false}, {"too big", Pushback, false}, {"a lot to put on me", Pushback, false},
	{"can't even think", Pushback, false}, {"yes-or-no", Pushback, false}, {"pressured", Pushback, false},
	{"pressuring me", Pushback, false}, {"stop telling", Pushback, false}, {"not helpful", Pushback, false},
	{"that's not true", Pushback, false}, {"i disagree", Pushback, false}, {"don't buy", Pushback, false},
	// Putting the decision off.
	{"not ready", Deflect, false}, {"think about it", Deflect, false}, {"not yet", Deflect, false},
	{"not persuaded", Deflect, false}, {"need more than that", Deflect, false}, {"not that simple", Deflect, false},
	{"not there yet", Deflect, false}, {"when i'm ready", Deflect, false}, {"my call", Deflect, false},
	{"sleep on it", Deflect, false}, {"even start", Deflect, false}, {"how it would actually work", Deflect, false},
	{"can't promise", Deflect, false}, {"let me think", Deflect, false}, {"not now", Deflect, false},
	{"i'm not sure yet", Deflect, false}, {"maybe later", Deflect, false}, {"need time", Deflect, false},
	{"need some time", Deflect, false}, {"i'll see", Deflect, false},
}

// leadIns are one-word questions that open a confession ("Honestly? I
// can't afford it.").
var leadIns = map[string]bool{"honestly": true, "frankly": true, "truthfully": true, "seriously": true}

// negators cancel a negatable cue when one of the three words before it.
var negators = map[string]bool{"not": true, "no": true, "never": true, "don't": true, "doesn't": true,
	"didn't": true, "isn't": true, "wasn't": true, "won't": true, "hardly": true, "barely": true, "nothing": true}

// TagReaction reads the reactions of one persuadee reply from its visible
// text alone (it never sees a decision line or hidden data). Rules: the
// text is lower-cased, typographic apostrophes are made ASCII, and it is
// split into words (letters, digits, inner apostrophes and hyphens) per
// sentence; a cue phrase matches a run of whole words within one sentence
// (cues). A negatable cue preceded within three words of its sentence by a
// negator ("not", "don't", "never", ...) does not count ("I'm not
// worried", "that doesn't help"). Question: a sentence ending in '?' with
// at least three words; a one-word "Honestly?" / "Frankly?" is a lead-in
// that voices a worry, not a question.
// The empty reply gives the empty set.
func TagReaction(text string) Reactions {
	var out Reactions
	text = strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(strings.ToLower(text))
	for _, sent := range sentences(text) {
		ws := sentWords(sent.text)
		if sent.question && len(ws) >= 3 {
			out |= 1 << Question
		}
		if sent.question && len(ws) == 1 && leadIns[ws[0]] {
			out |= 1 << Voiced // "Honestly? ..." opens a worry
		}
		for i, w := range ws {
			for _, ci := range cueIndex[w] {
				c, cw := &cues[ci], cueWords[ci]
				if i+len(cw) > len(ws) || !equalWords(ws[i:i+len(cw)], cw) {
					continue
				}
				if c.negatable && negatedAt(ws, i) {
					continue
				}
				out |= 1 << c.r
			}
		}
	}
	return out
}

type sentence struct {
	text     string
	question bool
}

// sentences splits lower-cased text at . ! ? ; and line breaks.
func sentences(text string) []sentence {
	var out []sentence
	start := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) {
			switch text[i] {
			case '.', '!', '?', ';', '\n':
			default:
				continue
			}
		}
		if s := strings.TrimSpace(text[start:i]); s != "" {
			out = append(out, sentence{text: s, question: i < len(text) && text[i] == '?'})
		}
		start = i + 1
	}
	return out
}

// sentWords splits a sentence into words: runs of letters, digits and
// bytes of non-ASCII characters, with inner apostrophes and hyphens kept.
func sentWords(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		word := false
		if i < len(s) {
			c := s[i]
			word = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80 ||
				(c == '\'' || c == '-') && start >= 0 && i+1 < len(s) && s[i+1] != ' '
		}
		if word && start < 0 {
			start = i
		} else if !word && start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	return out
}

func equalWords(a, b []string) bool {
	for i := range b {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// negatedAt reports whether one of the three words before ws[i] is a
// negator or ends in "n't".
func negatedAt(ws []string, i int) bool {
	for j := max(0, i-3); j < i; j++ {
		if negators[ws[j]] || strings.HasSuffix(ws[j], "n't") {
			return true
		}
	}
	return false
}
