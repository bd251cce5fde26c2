package tagger

import (
	"slices"
	"strings"

	"github.com/persuarena/persuarena/prose"
)

// This file holds the rule tables: word classes and phrase patterns, each
// with the cue it raises. docs/tagger.md explains how cues become acts.
//
// Pattern syntax (compiled once at init): tokens separated by spaces; a
// token is a literal word, several alternatives joined by "/"
// ("try/trying/tried"), "#" for a number (digits or a number word), "*"
// for any one token, "$" or "%" for the sign itself, and "." for the end
// of the clause. Patterns never cross a clause boundary. Words are written
// lower-case with a straight apostrophe.

// cueKind is what a matched pattern signals.
type cueKind uint8

const (
	kEvidence   cueKind = iota // evidence, always
	kPlan                      // plan detail, always
	kCommit                    // commitment ask in any sentence (negated: nothing)
	kAutonomy                  // autonomy (negated: nothing)
	kPressure                  // pressure marker (negated: nothing)
	kPolar                     // "pressure you": negated -> autonomy, else pressure
	kPolarAsk                  // "asking you to": negated -> autonomy, else commitment
	kElicit                    // elicitation phrase -> diagnostic (negated: nothing)
	kQCommit                   // decision request, counted only in a question ("sound good?")
	kDecision                  // decision term; makes a yes/no or when/how-much question a commitment ask
	kFocus                     // concern/feeling word; makes a question diagnostic
	kWhFocus                   // "easier", "matter": makes an open (wh-) question diagnostic
	kWhDecide                  // "how about", "why not", "how much", "when": question head that asks for a decision when a decision term follows
	kBlock                     // not pressure: hides pressure markers starting at the same word ("you must be tired")
	kAmountHead                // "how much", "what amount": question head asking for an amount
	kSmallTalk                 // "how are you": a question clause that is small talk, not diagnostic
	kPermission                // "can I share": a question clause asking leave to speak, never an ask
)

type cue struct {
	kind       cueKind
	start, end int32 // token range
	clause     int32
}

// Pattern token operators.
const (
	opLit uint8 = iota
	opNum
	opAny
	opEnd
	opSym
)

type ptok struct {
	op  uint8
	lit []string // alternatives (opLit) or the sign (opSym)
	// ids are the word-table entries of lit: a token matches when its
	// entry is one of them (an integer compare, no string compare).
	ids []int32
}

func (p *ptok) has(entry int32) bool {
	for _, id := range p.ids {
		if id == entry {
			return true
		}
	}
	return false
}

type pattern struct {
	kind cueKind
	toks []ptok
	src  string
}

type wordEntry struct {
	flags uint16
	// pats are the patterns starting with this word whose second token is
	// not a literal word (or that have one token); pairs indexes the others
	// by this entry and the entry of their second word, so a frequent first
	// word ("you", "i") only tries the patterns its actual successor can
	// continue. hasNext reports whether pairs holds any for this word.
	pats    []uint16
	hasNext bool
}

// pairTable is an open-addressing hash table from a pair of word entries
// (first and second word of a pattern) to the patterns starting with them,
// in compile order: one probe per token instead of a map lookup.
type pairTable struct {
	keys  []uint64 // first<<32 | second; 0 = empty (entries are >= 1)
	vals  [][]uint16
	mask  uint64
	nkeys int
}

func newPairTable() *pairTable {
	const size = 1 << 13
	return &pairTable{keys: make([]uint64, size), vals: make([][]uint16, size), mask: size - 1}
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func pairSlot(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> 32 }

// get returns the patterns starting with entries a, b (nil when none).
func (t *pairTable) get(a, b int32) []uint16 {
	k := pairKey(a, b)
	for i := pairSlot(k) & t.mask; ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case k:
			return t.vals[i]
		case 0:
			return nil
		}
	}
}

// add appends pattern id under the pair a, b (init only).
func (t *pairTable) add(a, b int32, id uint16) {
	k := pairKey(a, b)
	i := pairSlot(k) & t.mask
	for t.keys[i] != 0 && t.keys[i] != k {
		i = (i + 1) & t.mask
	}
	if t.keys[i] == 0 {
		t.nkeys++
		if t.nkeys > len(t.keys)/2 {
			panic("tagger: pair table too full")
		}
		t.keys[i] = k
	}
	t.vals[i] = append(t.vals[i], id)
}

var (
	patterns   []pattern
	words      = newWordTable()
	pairs      = newPairTable()
	numPats    []uint16
	symbolPats [256][]uint16
)

// wordTable is an open-addressing hash table from word to wordEntry, keyed
// by the FNV-1a hash (prose.Hash) the tokenizer computes while it lower-cases a word, so
// a lookup costs one probe and one comparison and no second hashing.
type wordTable struct {
	keys    []string
	slot    []int32 // index into entries + 1; 0 = empty
	entries []wordEntry
	mask    uint64
}

func newWordTable() *wordTable {
	const size = 1 << 12 // a few hundred words; keep the load low
	return &wordTable{keys: make([]string, size), slot: make([]int32, size), entries: []wordEntry{{}}, mask: size - 1}
}

// find returns the entry index of w (hash h), or 0 when absent.
func (t *wordTable) find(w []byte, h uint64) int32 {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slot[i]
		if e == 0 {
			return 0
		}
		if t.keys[i] == string(w) {
			return e
		}
	}
}

// index returns the entry index of w, or 0 when absent.
func (t *wordTable) index(w string) int32 { return t.find([]byte(w), prose.Hash(w)) }

// entry returns the entry of w, adding an empty one when absent (init only).
func (t *wordTable) entry(w string) *wordEntry {
	h := prose.Hash(w)
	if e := t.find([]byte(w), h); e != 0 {
		return &t.entries[e]
	}
	if len(t.entries) > len(t.slot)/2 {
		panic("tagger: word table too full")
	}
	i := h & t.mask
	for t.slot[i] != 0 {
		i = (i + 1) & t.mask
	}
	t.entries = append(t.entries, wordEntry{})
	t.keys[i] = w
	t.slot[i] = int32(len(t.entries) - 1)
	return &t.entries[len(t.entries)-1]
}

// Word classes (single words; flags on tokens).
var (
	// Auxiliaries that can open a decision request ("will you...", "are you
	// willing..."); habitual "do you donate?" and past "did/have/was"
	// cannot ("do you want to..." is a phrase of its own).
	auxAskWords = "will would can could shall should are may won't wouldn't"
	// Modal verbs: with an amount head they make an amount request ("how
	// much would you like to give?" but not "how much do you spend?").
	modalWords = "will would can could shall should won't wouldn't"
)

// Phrase tables, by cue.
var rules = []struct {
	kind  cueKind
	pats  []string
	about string
}{
	// Blocks come first so that, at a shared first word, they are seen
	// before the pressure patterns they hide.
	{kBlock, []string{
		"you must be", "you must have", "you have to say", "you have to offer", "if you have to",
		"you have to do is", "you have to wait",
	}, "epistemic or neutral uses of pressure words"},
	{kEvidence, []string{
		"studies", "a/the/one/this/that study", "study found/finds/shows/showed",
		"research shows/showed/suggests/suggested/found/finds/says", "researchers found/report/reported/say",
		"data", "evidence", "statistics/statistically",
		"survey/surveys", "clinical trial/trials", "trials show/showed/found", "documented", "on average", "records show/shows",
		"the records", "in similar cases", "in cases like yours", "according to",
		"results show/showed/suggest", "the results", "track record", "proven", "peer reviewed",
		"meta analysis", "a/the majority of", "most people who", "most people in",
		"most of the people who", "# %", "# percent", "# per cent", "# out of #", "one in #",
		"# in every", "twice as", "three times", "# times more/less/as/higher/lower/likelier",
		"half of", "a third of", "a quarter of", "millions/thousands/hundreds/billions of",
		"# people/patients/participants/families/children/kids/users/customers/students/employees/cases/studies/trials/households/donors",
		"$ # can/could/will", "# dollars can/could/will", "# cents can/could/will",
	}, "figures, results, documented precedent"},
	{kPlan, []string{
		"on/next/this/by/until/every/before/after/from monday/tuesday/wednesday/thursday/friday/saturday/sunday",
		"monday/tuesday/wednesday/thursday/friday/saturday/sunday at #",
		"on/every mondays/tuesdays/wednesdays/thursdays/fridays/saturdays/sundays",
		"starting/from/by/until tomorrow", "tomorrow at/morning/afternoon/evening", "next week/month",
		"later this week/month", "by the end of the week/month", "end of the week/month",
		"step one/two/three/1/2/3", "first step", "next step", "a small step",
		"# am/pm/o'clock", "o'clock", "schedule a/an/the/it/time/something",
		"i'll/we'll/i/we/can/could schedule", "scheduled for", "scheduling", "appointment/appointments",
		"calendar", "book a/an/the", "i'll/i set up", "i can/could/will set up", "we can/could/will set up",
		"we'll set up", "let me set up", "set up a/an", "i'll send/call/text/email/bring/handle/arrange/book",
		"i'll take care of", "i can take care of", "i'll check in", "check in", "reminder/reminders",
		"remind you", "we could/can start with", "you could/can start with", "start with just",
		"start by", "start small", "for the first # days/weeks/months", "the first # days/weeks",
		"first week/month", "once/twice a week/day/month", "# minutes a/each/every day", "# days a week",
		"# times a week/day", "by the end of", "after that", "and then we", "then we'll",
		"i'll go with you", "i'll be there", "fill out", "sign up sheet",
	}, "logistics: who, what, when, conditions"},
	{kCommit, []string{
		"let's/lets do it/this/that", "let's/lets go ahead", "let's/lets get started", "let's/lets get you",
		"let's/lets sign", "let's/lets start", "let's/lets begin", "let's/lets try", "let's/lets give it",
		"let's/lets book", "let's/lets make it", "let's/lets lock", "let's/lets commit", "let's/lets move forward",
		"let's/lets go for it", "i'd like you to", "i'd love for you to", "i'd love you to",
		"please say yes", "say yes", "please sign/join/donate/commit/agree/consider/try",
		"i'll put you down", "i'll sign you up", "i need your answer", "i need a decision",
		"i need an answer", "give me your answer", "let me know if you're in", "let me know if you'd like to",
		"let me know when you're ready", "let me know your decision", "count you in", "i hope you'll",
		"i hope you will", "can i count on you", "do we have a deal", "i encourage you to",
		"i'd encourage you to", "i would encourage you to", "i'm/i am asking for", "we were hoping for you to",
		"i was hoping you'd/you would", "let me know how much", "let me know what amount",
	}, "requests for a decision outside questions"},
	{kAutonomy, []string{
		"your decision", "your choice", "your call", "up to you", "entirely yours", "completely yours",
		"yours to make", "you get to decide/choose", "you can decide/choose whether/if/what",
		"let you decide/choose", "for you to decide/choose", "whatever you decide/choose", "no pressure",
		"without any pressure", "no obligation", "free to say no", "free to decline",
		"free to walk away", "free to stop", "free to change your mind", "ok/okay/fine to say no",
		"ok/okay/fine if you say no", "ok/okay/fine if you decide", "ok/okay/fine if you'd rather",
		"take your time", "no rush", "no hurry", "in your own time", "at your own pace",
		"you don't/dont have to", "you do not have to", "you don't/dont need to",
		"you do not need to", "under no obligation", "i respect/i'll respect", "i will respect",
		"respect your decision/choice", "change your mind", "opt out", "stop at any time",
		"stop anytime", "no hard feelings", "either way is fine",
	}, "leaving the choice to the persuadee"},
	{kPolar, []string{
		"pressure/pressuring/push/pushing/force/forcing/rush/rushing you", "pressure on you",
		"feel pressured/obligated/obliged/rushed/forced",
	}, "negated: autonomy; otherwise: pressure"},
	{kPolarAsk, []string{"asking you to"}, "negated: autonomy; otherwise: commitment"},
	{kPressure, []string{
		"you have to", "you've got to", "you got to", "you must", "you really have/need to", "you really must",
		"you just have to", "you need to decide/do/sign/act/commit/agree", "decide now/immediately",
		"decide right now", "right now or", "now or never", "last chance", "final chance",
		"before it's too late", "it'll/it'd be too late", "it will/would be too late", "running out of time",
		"time is running out", "don't/dont wait", "don't/dont miss", "everyone/everybody else already/has/have/is/did",
		"all your friends have/already/are", "don't/dont be selfish", "stop being selfish", "being selfish",
		"you're/you/your/youre selfish", "you're/you/your/youre * selfish", "you are selfish", "you are * selfish",
		"selfish of you", "stingy", "if you really/truly cared", "if you cared",
		"you'll/you'd regret", "you will/would regret", "no excuses", "excuses", "what are you waiting for",
		"shame on you", "you should be ashamed", "ashamed of yourself", "you owe", "you feel/felt guilty",
		"you should/will/would feel guilty", "you'll feel guilty", "don't/dont let * down",
		"you'll/you'd let * down", "you will/would let * down", "you're letting * down", "you are letting * down",
		"hurry", "act now", "today only", "only today", "offer ends", "stop stalling",
		"stalling", "come on", "i insist", "i won't take no", "not an option", "you can't/cannot say no",
		"you can't/cannot refuse", "no reason not to", "only a fool", "you'd be crazy/foolish",
		"irresponsible", "stop overthinking", "stop hesitating", "don't/dont think twice", "don't/dont overthink",
		"just do it",
	}, "urgency, ultimatums, guilt, obligation"},
	{kElicit, []string{
		"tell me more", "tell me about", "tell me what", "tell me how", "tell me why",
		"i'd love/like to hear", "i would love/like to hear", "i'd love/like to know",
		"i would love/like to know", "i'd like to understand", "i want to understand",
		"help me understand", "walk/talk me through", "i'm/i am curious", "i wonder what",
		"what's on your mind", "share what", "share how", "share your", "say more",
	}, "open requests to hear the persuadee out"},
	{kQCommit, []string{
		"sound/sounds good", "sound/sounds like a plan", "does that work for you", "does that work",
		"how does that sound", "what do you say", "how about it", "deal .", "agreed .", "are you in .",
		"you're in .", "are you on board", "is that a yes", "is it a deal", "can i count on you",
		"can we count on you", "do you want/wanna to", "do you agree", "do you accept",
		"would that be okay/ok/alright/fine", "what do you think about starting/signing/trying/joining/donating",
	}, "decision requests that are one only as questions"},
	{kDecision, []string{
		"try/trying", "give/giving it a try/go/shot", "give/giving this a try/go/shot", "up for", "start/starting", "begin/beginning", "sign/signing",
		"join/joining", "donate/donating", "give a/some/something", "give #", "give $", "commit/committing", "agree",
		"accept", "willing", "ready", "consider/considering", "go ahead", "book/booking", "enrol/enroll/enrolling",
		"register/registering", "do it/this/that", "count on", "on board", "deal", "move forward",
		"take the first step", "take that step", "make a donation", "pledge", "contribute/contributing",
		"up for it", "a yes", "decide", "go for it", "help", "make it", "lock in", "get started",
	}, "decision terms"},
	{kFocus, []string{
		"worry/worries/worried/worrying", "concern/concerns/concerned", "hesitant/hesitation/hesitate",
		"hold/holding * back", "doubt/doubts", "reservation/reservations", "question/questions",
		"feel/feelings/feeling", "afraid", "fear/fears", "unsure", "uncomfortable", "bother/bothering/bothers",
		"on your mind", "stopping", "in the way", "constraint/constraints", "obstacle/obstacles",
		"difficult", "tricky", "challenge/challenges", "problem/problems", "downside/downsides",
		"risk/risks", "unclear", "missing",
	}, "concern and feeling words"},
	{kWhFocus, []string{
		"easier", "harder", "help", "matters/matter", "important", "prefer", "need/needs", "biggest", "think",
		"most", "best", "work for", "fit",
	}, "words that make an open what/how question diagnostic without a \"you\""},
	{kAmountHead, []string{
		"how much/many", "what amount/percentage/portion/percent", "which amount",
	}, "question heads asking for an amount"},
	{kSmallTalk, []string{
		"how are you/u/things", "how r you/u", "how's it going", "how is it going", "how is/was your day/weekend/morning",
		"how's your day/weekend/morning", "how have you been", "how about you", "what about you",
		"where are you from/located", "where are you .", "where do you live", "how is/was the weather",
		"how's the weather", "what if",
	}, "small-talk questions, never diagnostic"},
	{kWhDecide, []string{
		"how soon", "how about", "why not", "when", "how would you feel about", "how would it feel to",
		"what would you think about",
	}, "question heads that can ask for a decision"},
	{kPermission, []string{
		"can/could/may i share/tell/show/offer/suggest/add/mention/explain/say/point",
		"is it ok/okay/alright if i", "would you mind if i", "mind if i",
	}, "requests for leave to speak, never a commitment ask"},
}

func init() {
	addFlag := func(list string, f uint16) {
		for _, w := range strings.Fields(list) {
			words.entry(w).flags |= f
		}
	}
	// the closed word classes are prose's (one reading of the text)
	addFlag(prose.NumberWords, fNum)
	addFlag(prose.Negators, fNeg)
	addFlag(prose.YouWords, fYou)
	addFlag(prose.Markers, fMarker)
	addFlag(prose.WHWords, fWH)
	addFlag(prose.AuxWords, fAux)
	addFlag(auxAskWords, fAuxAsk)
	addFlag(modalWords, fModal)
	addFlag("don't won't can't isn't aren't wasn't weren't doesn't didn't shouldn't wouldn't couldn't haven't hasn't dont wont cant isnt arent doesnt didnt shouldnt wouldnt couldnt", fNegAux)
	for _, r := range rules {
		for _, src := range r.pats {
			compile(r.kind, src)
		}
	}
}

// compile adds one pattern and indexes it by its first token.
func compile(kind cueKind, src string) {
	fields := strings.Fields(src)
	p := pattern{kind: kind, src: src}
	for _, f := range fields {
		switch f {
		case "#":
			p.toks = append(p.toks, ptok{op: opNum})
		case "*":
			p.toks = append(p.toks, ptok{op: opAny})
		case ".":
			p.toks = append(p.toks, ptok{op: opEnd})
		case "$", "%":
			p.toks = append(p.toks, ptok{op: opSym, lit: []string{f}})
		default:
			pt := ptok{op: opLit, lit: strings.Split(f, "/")}
			for _, w := range pt.lit {
				if w == "" || w == "#" || w == "$" || w == "%" || w == "*" || w == "." {
					panic("tagger: pattern " + src + ": operators cannot be alternatives")
				}
				words.entry(w)
				pt.ids = append(pt.ids, words.index(w))
			}
			p.toks = append(p.toks, pt)
		}
	}
	id := uint16(len(patterns))
	patterns = append(patterns, p)
	first := p.toks[0]
	switch first.op {
	case opNum:
		numPats = append(numPats, id)
	case opSym:
		symbolPats[first.lit[0][0]] = append(symbolPats[first.lit[0][0]], id)
	case opLit:
		for _, w := range first.lit {
			e := words.entry(w)
			if len(p.toks) > 1 && p.toks[1].op == opLit {
				e.hasNext = true
				for _, nid := range p.toks[1].ids {
					pairs.add(words.index(w), nid, id)
				}
			} else {
				e.pats = append(e.pats, id)
			}
		}
	default:
		panic("tagger: pattern " + src + " must start with a word, a number or a sign")
	}
}

// Vocabulary returns every word of the tagger's tables (word classes and
// phrase patterns), lower-case, sorted: the words a spelling corrector
// must restore for the tagger to see its cues (package perception).
func Vocabulary() []string {
	out := make([]string, 0, len(words.entries))
	for _, k := range words.keys {
		if k != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
