package prose

import (
	"strings"
	"unsafe"
)

// The closed word classes, lower-case with a straight apostrophe. They
// are the only word lists both readers rely on; each reader's own lists
// (the tagger's cue phrases, the perception layer's cues) live with it.
const (
	// NumberWords are number words (Num).
	NumberWords = "one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty " +
		"sixty seventy eighty ninety hundred thousand million billion half third quarter dozen"
	// Negators are the words whose scope Negated reads.
	Negators = "not no never don't won't can't cannot isn't aren't wasn't weren't doesn't didn't shouldn't wouldn't " +
		"couldn't mustn't haven't hasn't dont wont cant isnt arent doesnt didnt shouldnt wouldnt couldnt nobody nothing " +
		"without neither nor hardly"
	// YouWords are second-person words (You).
	YouWords = "you your you're you'd you've you'll yours yourself yourselves u ur youre"
	// Markers are discourse markers (Marker), skipped at a clause's head.
	Markers = "so and but or ok okay well also then now honestly just oh hey anyway alright actually really right " +
		"yes yeah sure great please first finally lastly hmm hi hello thanks"
	// WHWords are wh-words (WH).
	WHWords = "what what's whats how how's hows which why where when who whom whose"
	// AuxWords are auxiliaries that can head a yes/no question (Aux).
	AuxWords = "will would can could shall should are is am was were do does did have has had may might won't " +
		"wouldn't can't couldn't don't aren't isn't wanna"
	// SubjectWords are subjects that follow an auxiliary at the head of a
	// question (Subject).
	SubjectWords = "you i we it that this there they he she anyone anything u"
)

// StopWords are function words and words too general to carry a topic
// or count as content (Stop).
const StopWords = `a an the and or but if so as at by for from in into of on onto to with without about above after
again against all am are aren't be because been before being below between both can can't cannot could couldn't
did didn't do does doesn't doing don't down during each few further had hadn't has hasn't have haven't having he
he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've is isn't it it's its
itself let's me more most mustn't my myself no nor not off once only other ought our ours ourselves out over own
same shan't she she'd she'll she's should shouldn't some such than that that's their theirs them themselves then
there there's these they they'd they'll they're they've this those through too under until up very was wasn't we
we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's
will won't would wouldn't you you'd you'll you're you've your yours yourself yourselves also just really quite
lot lots thing things something anything everything nothing way ways one ones get gets got make makes made go goes
going went gone take takes took come comes came say says said tell told know knows knew think thinks thought see
sees saw look looks want wants need needs like likes well yes yeah ok okay sure maybe perhaps even still already
much many any every each bit kind sort part course fact actually honestly basically totally completely truly
right good great fine nice better best bad worse let lets put keep keeps give gives gave try tries tried use used
feel feels felt mean means meant seem seems seemed time times day days year years week weeks people person
someone anyone everyone thank thanks please hi hello hey oh yet ever never always often sometimes usually
another able around back away here now today whether though although however since unless until upon per via
its it'd it'll that'd that'll who'd who'll what'd what'll mine ours theirs hers his yours`

// classes maps a word to its flags.
var classes = func() map[string]Flag {
	m := map[string]Flag{}
	for _, c := range []struct {
		words string
		f     Flag
	}{
		{NumberWords, Num}, {Negators, Negator}, {YouWords, You}, {Markers, Marker}, {WHWords, WH},
		{AuxWords, Aux}, {SubjectWords, Subject}, {StopWords, Stop},
	} {
		for _, w := range strings.Fields(c.words) {
			m[w] |= c.f
		}
	}
	return m
}()

// classTable holds classes in an open-addressing table probed by the
// word's hash (Hash), which the tokeniser has already computed: a look-up
// hashes nothing, and most words (not in any class) stop at an empty
// slot. Its size is a power of two at least four times the words.
var classTable = func() []classEntry {
	size := 1
	for size < 4*len(classes) {
		size <<= 1
	}
	t := make([]classEntry, size)
	for w, f := range classes {
		h := Hash(w)
		i := classSlot(h, len(t))
		for t[i].w != "" {
			i = (i + 1) & (len(t) - 1)
		}
		t[i] = classEntry{h: h, w: w, f: f}
	}
	return t
}()

type classEntry struct {
	h uint64
	w string
	f Flag
}

// classSlot is the first slot of hash h in a table of n slots (Fibonacci
// hashing: FNV-1a's low bits vary little between words of one ending).
func classSlot(h uint64, n int) int { return int(h * 0x9e3779b97f4a7c15 >> 40 & uint64(n-1)) }

// classOfHash returns the flags of word w, whose Hash is h.
func classOfHash(w string, h uint64) Flag {
	for i := classSlot(h, len(classTable)); ; i = (i + 1) & (len(classTable) - 1) {
		e := &classTable[i]
		if e.w == "" {
			return 0
		}
		if e.h == h && e.w == w {
			return e.f
		}
	}
}

// classOf returns the flags of word w (of hash h).
func classOf(w []byte, h uint64) Flag {
	if len(w) == 0 {
		return 0
	}
	// the string is neither kept nor outlives w, which is not written
	// during the call
	return classOfHash(unsafe.String(&w[0], len(w)), h)
}

// Class returns the word-class flags of a lower-case word (0 for none).
func Class(w string) Flag { return classOfHash(w, Hash(w)) }

// IsStop reports whether w is a stop word.
func IsStop(w string) bool { return Class(w)&Stop != 0 }

// Set returns the words of a space-separated list as a set (for a
// reader's own lists).
func Set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
