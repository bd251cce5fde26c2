package baseline

import (
	"slices"
	"strings"
)

// Voiced-content extraction for the script persuader: it reads what the
// persuadee said and picks short content phrases to echo back.

// phrase is one voiced content phrase.
type phrase struct {
	// text is what the persuader echoes: the content words with a
	// determiner turned to the persuader's point of view ("my schedule"
	// -> "your schedule", "the cost" -> "the cost").
	text string
	// key is the content words alone, used to tell new phrases from ones
	// already addressed.
	key string
}

// connector words may join two content words inside one phrase.
func connector(w string) bool { return w == "of" || w == "and" || w == "or" }

// maxPhraseWords caps an echoed phrase's length in words (an inner "of",
// "and" or "or" counts).
const maxPhraseWords = 4

// stopwords are words never echoed: function words, pronouns, auxiliaries,
// common verbs, hedges and feeling words (the concern is what the feeling
// is about), discourse words and the vocabulary of deciding.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
a about above across after again against all almost along already also although always am among an and another any
anybody anyone anything anyway anywhere are aren't around as at away back be became because become been before
being below besides between both but by can can't cannot could couldn't did didn't do does doesn't doing don't done
down during each either else enough even ever every everybody everyone everything except few for from further get
gets getting got gotten had hadn't has hasn't have haven't having he he'd he'll he's her here hers herself him himself
his how however i i'd i'll i'm i've if in instead into is isn't it it'd it'll it's its itself just least less let
let's like likely made make makes making many may maybe me might mine more most much must my myself near need needs
neither never no nobody none nor not nothing now of off often on once one only onto or other others otherwise ought
our ours ourselves out over own per perhaps please quite rather really same say says said saying see seem seems she
should shouldn't since so some somebody someone something sometimes somewhat soon still such than that that's the
their theirs them themselves then there there's these they they'd they'll they're they've thing things think
thinking this those though through thus to too toward towards under unless until up upon us very via was wasn't we
we'd we'll we're we've well were weren't what what's whatever when whenever where whether which while who whoever
whole whom whose why will with within without won't would wouldn't yes yet you you'd you'll you're you've your
yours yourself yourselves
ok okay sure fine right yeah yep nope hmm oh ah well honestly actually basically probably possibly certainly
definitely totally simply literally seriously frankly truly exactly kind sort lot lots bit stuff way ways part
point idea question questions answer mean means meant know knew known feel feels felt feeling want wants wanted
wanting like liked try tried trying keep kept come came coming go goes going went gone take takes took taking
give gives gave giving tell told telling ask asked asking asks look looks looking looked put puts seem seemed
worry worries worried worrying concern concerns concerned bother bothers bothered bothering afraid scared nervous
unsure hesitant anxious uneasy uncomfortable doubt doubts wonder wondering guess suppose hope hoping hoped
good great bad nice hard easy big small little real true sure certain clear last first next new old able
decide decided deciding decision decisions agree agreed accept accepted reject yes no maybe convince convinced
persuade persuaded pressure pushed push rush rushed rushing hurry sign mention mentioned mentions talk talking talked said tell
respond believe stop pass
thanks thank sorry glad happy sounds sound fair enough
helps helped help work works worked agrees agreeing makes sounded gets got seems
huh hmm hm wow ugh meh hey aha alright hello hi sir madam
hear heard hears hearing listen listened listening speak speaks spoke raise raised raising claim claims claimed
true false convinced convince changes change changed appreciate appreciated respect respected opinion opinions
evidence proof facts fact louder loud hold holds holding held matter matters mattered doubt sounds
understand understood explain explained care cares cared sense makes reason reasons wrong
before after ever again anymore enough either another besides instead course really
condition conditions agree deal count promise offer offered suggest suggested
lose losing lost round here frank honest straight
left leave leaving made happen happened happens started stopped went ended turned
today tomorrow yesterday tonight week weeks day days month months year years time times moment
word words keeps comes stays stand answers argue ready pushing easier based solid seeing picture bring brings
funny follow knowing changing mind hits step steps simple putting plan plans space
`) {
		stopwords[w] = true
		nonContent[w] = true
	}
}

// determiners that may open an echoed phrase, mapped to the persuader's
// point of view.
var determiners = map[string]string{
	"the": "the", "my": "your", "our": "your", "your": "my", "this": "the", "that": "the", "these": "the", "those": "the",
}

// extract returns up to max phrases voiced in text whose keys are not in
// skip and whose words are not in stop, preferring later sentences (a
// reply usually states its concern last) and returning them in text
// order.
//
// Choice: a phrase is a maximal run of content words within one clause,
// possibly joined by "of", "and" or "or", at most four words (the last
// four are kept); a content word has at least three letters and is not a
// stopword, a number word, a word of the proposal or the names, or a word
// of the persuader's own previous turn.
func extract(text string, skip map[string]bool, stop stopSet, max int) []phrase {
	if hasNonASCII(text) {
		text = punctReplacer.Replace(text)
	}
	cands, sents := candidates(text, stop)
	return choose(cands, sents, skip, max)
}

// candidate is one phrase of a text, with the sentence it is in (0 the
// first) and its position among the text's phrases.
type candidate struct {
	p    phrase
	sent int
	pos  int
}

// candidates splits text (ASCII punctuation) into its phrases (see
// extract) and returns them in text order with the number of sentence
// ends seen.
func candidates(text string, stop stopSet) (cands []candidate, sents int) {
	var b phraseBuilder
	prev := ""
	i := 0
	for i < len(text) {
		c := text[i]
		switch {
		case isWordByte(c):
			j := i
			for j < len(text) && (isWordByte(text[j]) || text[j] == '\'' && j+1 < len(text) && isWordByte(text[j+1])) {
				j++
			}
			w := strings.TrimSuffix(strings.ToLower(text[i:j]), "'s")
			switch {
			case content(w, stop):
				b.add(w, prev)
			case connector(w) && b.open():
				// "standard of clean", "overhead and salaries"; dropped
				// again if no content word follows.
				b.run = append(b.run, w)
			default:
				cands = b.flush(cands, sents)
			}
			prev = w
			i = j
		case c == '.' || c == '!' || c == '?' || c == ';' || c == '\n':
			cands = b.flush(cands, sents)
			sents++
			prev = ""
			i++
		case c == ',' || c == ':' || c == '(' || c == ')' || c == '"':
			cands = b.flush(cands, sents)
			prev = ""
			i++
		default:
			if c >= '0' && c <= '9' {
				cands = b.flush(cands, sents)
				prev = ""
			}
			i++
		}
	}
	return b.flush(cands, sents), sents
}

// phraseBuilder collects the words of the phrase being read.
type phraseBuilder struct {
	run []string
	det string // the determiner before the first word, mapped (determiners)
}

// add appends content word w; prev is the word before it.
func (b *phraseBuilder) add(w, prev string) {
	if len(b.run) == 0 {
		b.det = determiners[prev]
	}
	b.run = append(b.run, w)
}

// open reports whether a connector may follow: the run ends on a content
// word.
func (b *phraseBuilder) open() bool { return len(b.run) > 0 && !connector(b.run[len(b.run)-1]) }

// flush ends the phrase being read, appending it to cands (sentence sent)
// unless it holds no content word, and returns cands.
func (b *phraseBuilder) flush(cands []candidate, sent int) []candidate {
	run, det := b.run, b.det
	b.run, b.det = b.run[:0], ""
	if len(run) > 0 && connector(run[len(run)-1]) {
		run = run[:len(run)-1]
	}
	if len(run) == 0 {
		return cands
	}
	if len(run) > maxPhraseWords {
		run = run[len(run)-maxPhraseWords:]
		det = ""
	}
	if connector(run[0]) {
		run = run[1:]
	}
	key := strings.Join(run, " ")
	t := key
	if det != "" {
		t = det + " " + key
	}
	return append(cands, candidate{phrase{text: t, key: key}, sent, len(cands)})
}

// nounLike scores how much p looks like a noun phrase: 2 for a
// determiner before it, 1 more for several words.
func nounLike(p phrase) int {
	n := 0
	if p.text != p.key {
		n += 2
	}
	if strings.Contains(p.key, " ") {
		n++
	}
	return n
}

// choose picks up to max of cands whose keys are not in skip: the latest
// sentences first (of sents+1) and, within one, the most noun-like
// (nounLike), later phrases first (a reply usually ends on its point). It
// returns them in text order.
func choose(cands []candidate, sents int, skip map[string]bool, max int) []phrase {
	var chosen []candidate
	taken := func(key string) bool {
		return slices.ContainsFunc(chosen, func(c candidate) bool { return c.p.key == key })
	}
	for s := sents; s >= 0 && len(chosen) < max; s-- {
		for want := 3; want >= 0 && len(chosen) < max; want-- {
			for ci := len(cands) - 1; ci >= 0 && len(chosen) < max; ci-- {
				c := cands[ci]
				if c.sent != s || nounLike(c.p) != want || skip[c.p.key] || taken(c.p.key) {
					continue
				}
				// A bare single word ending in -ed or -ly is most often a
				// verb or an adverb ("packed", "really"), never a topic.
				if want == 0 && len(c.p.key) > 4 && (strings.HasSuffix(c.p.key, "ed") || strings.HasSuffix(c.p.key, "ly")) {
					continue
				}
				chosen = append(chosen, c)
			}
		}
	}
	slices.SortFunc(chosen, func(a, b candidate) int { return a.pos - b.pos })
	out := make([]phrase, len(chosen))
	for i, c := range chosen {
		out[i] = c.p
	}
	return out
}

// isWordByte: ASCII letters and any byte of a non-ASCII character (after
// punctReplacer has mapped typographic punctuation to ASCII).
func isWordByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 }

// punctReplacer maps typographic apostrophes, quotes, dashes and the
// ellipsis to their ASCII reading.
var punctReplacer = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", "\"", "\u201d", "\"",
	"\u2013", ",", "\u2014", ",", "\u2026", ".")

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// numberWords are never content.
var numberWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`two three four five six seven eight nine ten eleven twelve thirteen fourteen
fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred
thousand million billion half once twice dozen`) {
		numberWords[w] = true
		nonContent[w] = true
	}
}

// nonContent is stopwords and numberWords together: one lookup per word.
// (filled by the init functions that fill those two).
var nonContent = map[string]bool{}

// stopSet is the scenario's stop words (proposal and names) plus the words
// of the persuader's own previous utterance, which are not echoed back.
type stopSet struct {
	words map[string]bool
	own   []string
}

func (s stopSet) has(w string) bool { return s.words[w] || slices.Contains(s.own, w) }

func content(w string, stop stopSet) bool {
	return len(w) >= 3 && !nonContent[w] && !stop.has(w)
}

// joinPhrases renders up to two phrases as "a" or "a and b".
func joinPhrases(ps []phrase) string {
	switch len(ps) {
	case 0:
		return ""
	case 1:
		return ps[0].text
	default:
		return ps[0].text + " and " + ps[1].text
	}
}
