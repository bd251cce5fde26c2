package scenario

import (
	"strings"
)

// Voice returns the concern as the persuadee says it, in the first person:
// Voiced when set, otherwise FirstPerson(Description, persuadee) (the
// persuadee's name lets a description that opens with it, "Mr Tanaka
// feels ...", be rewritten). The result ends with sentence punctuation and
// starts with a capital; it is "" only when both fields are empty.
func (c *Concern) Voice(persuadee string) string {
	if v := strings.TrimSpace(c.Voiced); v != "" {
		return capitalFirst(endSentence(v))
	}
	return FirstPerson(c.Description, persuadee)
}

// FirstPerson rewrites a concern description written about the persuadee
// in the third person into the persuadee's own words, deterministically:
//
//   - a description already in the first person ("I ...", "My ...") or
//     with no sign of the third person is kept (only capitalised and
//     punctuated), so every built-in description is unchanged;
//   - a subject he/she (or the persuadee's name) becomes "I" and its verb
//     is conjugated ("she feels" -> "I feel", "he is" -> "I am");
//   - a description that opens with a third-person verb or a feeling
//     adjective has its subject restored ("feels she is being treated as
//     incompetent" -> "I feel I am being treated as incompetent";
//     "worried his savings are too small" -> "I worry my savings are too
//     small"; "afraid of needles" -> "I'm afraid of needles");
//   - he/she/him/his/her/hers/himself/herself elsewhere become I/me/my/
//     mine/myself ("her" is "my" before a noun, else "me");
//   - a verbless fragment about the persuadee (a gerund phrase, or at most
//     two words) is framed as a worry ("strangers caring for him" -> "I'm
//     worried about strangers caring for me");
//   - a subject-less verb in -s before a determiner or possessive gets "I"
//     ("Dreads the preparation day." -> "I dread the preparation day.",
//     "Values her privacy." -> "I value my privacy."), a verb of loss "I'd"
//     ("Loses visibility." -> "I'd lose visibility."); an opening adverb
//     keeps its place ("Never trusts doctors." -> "I never trust
//     doctors.", "Always late." -> "I'm always late.");
//   - in a question an auxiliary before he/she agrees with "I" ("Is she
//     sure?" -> "Am I sure?");
//   - "not" before a possessive, a determiner or "enough", and "too"
//     before an adjective not of a person, are about the matter, not the
//     persuadee ("not her responsibility" -> "It's not my
//     responsibility.", "too expensive for her" -> "It's too expensive
//     for me.", but "too old to change" -> "I'm too old to change.");
//   - a feeling adjective before a noun ("uncertain evidence") has no
//     subject to restore: such a description is quoted, "What worries me
//     is this: 'uncertain evidence'.", rather than voiced ungrammatically.
//
// Choice: a closed word list rather than a parser, so the rewrite is
// predictable and testable; it takes every he/she in a third-person
// description to mean the persuadee (docs/simulator/replies.md, "Voice and
// names").
// The output ends with sentence punctuation; "" for a blank description.
func FirstPerson(desc, persuadee string) string {
	if d := strings.TrimSpace(desc); d != "" && !thirdPersonSign(d, persuadee) {
		// the common case (every built-in set): nothing to rewrite, and
		// no allocation when d is already a sentence
		return capitalFirst(endSentence(d))
	}
	toks := tokenize(strings.TrimSpace(desc))
	if len(toks) == 0 {
		return ""
	}
	w := wordIdx(toks)
	if len(w) == 0 {
		return endSentence(joinToks(toks))
	}
	first := lowerWord(toks[w[0]])
	if firstPersonOpeners[first] {
		return capitalFirst(endSentence(joinToks(toks)))
	}
	third := false
	for _, i := range w {
		if pronounForms[lowerWord(toks[i])] {
			third = true
			break
		}
	}
	// A subject named by the persuadee's name: "Mr Tanaka feels ...".
	if n := nameSubjectLen(toks, w, persuadee); n > 0 {
		toks = append([]string{"she"}, toks[w[n-1]+1:]...)
		w = wordIdx(toks)
		first, third = "she", true
	}
	frame := ""
	second := ""
	if len(w) > 1 {
		second = lowerWord(toks[w[1]])
	}
	// A question opens with its verb ("Isn't it the school's job?"): no
	// subject is missing.
	question := strings.HasSuffix(strings.TrimSpace(desc), "?")
	switch {
	case first == "he" || first == "she":
		// handled by swapPronouns below
	case question:
	case implicitVerbs[first] != "" && adverbs[first] && second != "":
		// "Never trusts doctors": the subject goes before the adverb and
		// the verb after it is conjugated; with no verb after it the
		// adverb qualifies a state ("Always late" -> "I'm always late").
		switch {
		case pronounForms[second] || possessives[second] || determiners[second]:
			// "Still she refuses", "Only her kids matter": a subject or
			// a noun phrase follows; nothing to restore
		case feelingWords[second] || second == "worried":
			toks[w[0]] = "I'm " + lowerWord(toks[w[0]])
		case conjugate(second) != second:
			toks[w[0]] = "I " + lowerWord(toks[w[0]])
			toks[w[1]] = conjugate(second)
		case implicitVerbs[second] != "" || strings.HasSuffix(second, "ed"):
			toks[w[0]] = "I " + lowerWord(toks[w[0]])
		default:
			toks[w[0]] = "I'm " + lowerWord(toks[w[0]])
		}
		third = true
	case implicitVerbs[first] != "":
		toks[w[0]] = implicitVerbs[first]
		third = true
	case consequenceVerbs[first]:
		toks[w[0]] = "I'd " + conjugate(first)
		third = true
	case first == "worried" && len(w) == 1:
		toks[w[0]] = "I'm worried"
		third = true
	case first == "worried":
		toks[w[0]] = "I worry"
		third = true
	case first == "not" && (determiners[second] || possessives[second] || second == "worth" || second == "enough"):
		// "not her responsibility": the subject is the matter, not the
		// persuadee
		toks[w[0]] = "it's not"
		third = true
	case first == "too" && second != "" && !feelingWords[second] && !personalAdjectives[second]:
		// "too expensive for her": the matter is too expensive, not
		// the persuadee ("too tired", "too old" are about the persuadee)
		toks[w[0]] = "it's too"
		third = true
	case feelingWords[first] && first != "not" && first != "too" && attributive(second):
		// "uncertain evidence": an adjective before a noun, no subject
		// to restore; quoted rather than "I'm uncertain evidence."
		swapPronouns(toks)
		return quoteFrame + lowerFirst(strings.TrimRight(joinToks(toks), " .!;:,")) + "'."
	case feelingWords[first]:
		toks[w[0]] = "I'm " + lowerWord(toks[w[0]])
		third = true
	case impersonalVerbs[first]:
		// "Implies the team writes bad code": the matter implies it, not
		// the persuadee
		toks[w[0]] = "it " + lowerWord(toks[w[0]])
		third = true
	case subjectlessVerb(first, second):
		// "Dreads the preparation day."
		toks[w[0]] = "I " + conjugate(first)
		third = true
	case third && fragment(toks, w):
		frame = "I'm worried about "
	}
	if !third {
		return capitalFirst(endSentence(joinToks(toks)))
	}
	swapPronouns(toks)
	out := joinToks(toks)
	if frame != "" {
		out = frame + lowerFirst(out)
	}
	return capitalFirst(endSentence(out))
}

// ThirdPerson reports whether text contains a third-person singular
// pronoun (he, she, him, his, her, hers, himself, herself and their
// contractions), the words FirstPerson rewrites. A persuadee speaking of
// itself never needs them; the text lint (package internal/textlint) and the
// loader's check of a concern's voiced field use it.
func ThirdPerson(text string) bool {
	toks := tokenize(text)
	for _, i := range wordIdx(toks) {
		if pronounForms[lowerWord(toks[i])] {
			return true
		}
	}
	return false
}

// thirdPersonSign reports, without allocating, whether s might need a
// rewrite: it contains a third-person pronoun, opens with a word that
// implies a missing subject (a third-person verb, a feeling word,
// "worried"), or opens with a word of the persuadee's name. False means
// FirstPerson keeps s as it is.
func thirdPersonSign(s, persuadee string) bool {
	var buf [24]byte
	first := true
	for i := 0; i < len(s); {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80) {
			i++
			continue
		}
		j := i
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 0x80 ||
			s[j] == '\'' && j+1 < len(s) && s[j+1] >= 'a' && s[j+1] <= 'z') {
			j++
		}
		w := s[i:j]
		if len(w) <= len(buf) {
			n := 0
			ascii := true
			for k := 0; k < len(w); k++ {
				b := w[k]
				if b >= 0x80 {
					ascii = false
					break
				}
				if b >= 'A' && b <= 'Z' {
					b += 'a' - 'A'
				}
				buf[n] = b
				n++
			}
			if !ascii {
				return true // typographic apostrophes and the like: take the slow path
			}
			lw := buf[:n]
			if pronounForms[string(lw)] {
				return true
			}
			if first && (implicitVerbs[string(lw)] != "" || feelingWords[string(lw)] || consequenceVerbs[string(lw)] ||
				string(lw) == "worried" || n > 1 && lw[n-1] == 's' && nextOpensNounPhrase(s[j:])) {
				return true
			}
		}
		if first {
			for k := 0; k < len(persuadee); {
				for k < len(persuadee) && persuadee[k] == ' ' {
					k++
				}
				e := k
				for e < len(persuadee) && persuadee[e] != ' ' {
					e++
				}
				if f := strings.TrimSuffix(persuadee[k:e], "."); f != "" && strings.EqualFold(f, w) {
					return true
				}
				k = e
			}
		}
		first = false
		i = j
	}
	return false
}

// quoteFrame opens the sentence FirstPerson gives a description it cannot
// turn into a grammatical first-person sentence: the description follows
// in single quotes.
const quoteFrame = "What worries me is this: '"

// impersonalVerbs open a description whose missing subject is the
// proposal or the matter, not the persuadee ("Implies the team writes bad
// code." -> "It implies ..."): verbs of meaning and demand.
var impersonalVerbs = map[string]bool{"implies": true, "means": true, "suggests": true, "signals": true,
	"requires": true, "involves": true, "entails": true, "demands": true}

// consequenceVerbs open a description of what the proposal would cost the
// persuadee ("Loses visibility."): voiced as a conditional, "I'd lose".
var consequenceVerbs = map[string]bool{"loses": true, "risks": true, "forfeits": true, "sacrifices": true, "wastes": true}

// determiners open a noun phrase; after a word ending in -s they mark it as
// a verb with its object ("dreads the preparation day").
var determiners = map[string]bool{}

// possessives are the possessive pronouns, third person included (the
// rewrite happens after the framing is chosen).
var possessives = map[string]bool{"my": true, "his": true, "her": true, "their": true, "its": true, "our": true, "your": true}

// predicativeFollowers may follow a feeling word used of the persuadee
// ("afraid of", "sure she can", "tired and", "unsure whether"): function
// words, pronouns and the adverbs that modify an adjective.
var predicativeFollowers = map[string]bool{}

// personalAdjectives after "too" describe the persuadee ("too old to
// change"); any other word after "too" describes the matter ("too
// expensive").
var personalAdjectives = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the a an this that these those any every each some another no`) {
		determiners[w] = true
	}
	for _, w := range strings.Fields(`old young sick ill unwell weak frail slow shy poor set stubborn independent`) {
		personalAdjectives[w] = true
	}
	for _, w := range strings.Fields(`about of with by for at in on from to into over up out off than as after before between among
that whether if how what when where who why which because though although unless until while
and or but so nor he she it they we you i him her his them me my their its our there this these those the a an
enough anymore still yet again too very really rather quite
he's she's it's they're there's i'm`) {
		predicativeFollowers[w] = true
	}
}

// attributive reports whether next, the word after a feeling adjective
// that opens a description, makes the adjective attributive: a noun
// follows ("uncertain evidence") rather than a complement, a pronoun or
// nothing.
func attributive(next string) bool {
	return next != "" && !predicativeFollowers[next] && !feelingWords[next] && !strings.HasSuffix(next, "ly")
}

// subjectlessVerb reports whether first, the opening word of a
// description, is a third-person verb whose subject is missing: a word in
// -s that conjugate changes, followed by a determiner or a possessive
// ("dreads the ...", "values her privacy"). The determiner or possessive
// tells a verb from a plural noun ("Kids need ...").
func subjectlessVerb(first, second string) bool {
	return (determiners[second] || possessives[second]) && strings.HasSuffix(first, "s") && conjugate(first) != first
}

// nextOpensNounPhrase reports whether the first word of s is one of
// determiners or possessives (case-insensitive), without allocating.
func nextOpensNounPhrase(s string) bool {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	j := i
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
		j++
	}
	if j == i || j-i > 8 || j < len(s) && s[j] >= 0x80 {
		return false
	}
	var buf [8]byte
	for k := i; k < j; k++ {
		b := s[k]
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		buf[k-i] = b
	}
	return determiners[string(buf[:j-i])] || possessives[string(buf[:j-i])]
}

// pronounForms are the third-person singular forms FirstPerson rewrites.
var pronounForms = map[string]bool{
	"he": true, "she": true, "him": true, "his": true, "her": true, "hers": true, "himself": true, "herself": true,
	"he's": true, "she's": true, "he'd": true, "she'd": true, "he'll": true, "she'll": true,
}

// firstPersonOpeners mark a description already in the persuadee's voice.
var firstPersonOpeners = map[string]bool{
	"i": true, "i'm": true, "i've": true, "i'd": true, "i'll": true, "my": true, "me": true, "myself": true,
	"we": true, "we're": true, "we've": true, "we'd": true, "our": true,
}

// implicitVerbs maps a third-person verb that opens a subject-less
// description to the first-person opening that replaces it.
var implicitVerbs = map[string]string{}

func init() {
	for _, v := range strings.Fields(`feels thinks believes worries fears wants needs hates dislikes likes loves
prefers doubts suspects distrusts trusts knows expects finds sees says claims insists refuses resents lacks
misses wonders assumes considers cares struggles gets gives takes keeps works lives spends sleeps earns
owes pays worked lived felt thought believed feared wanted needed hated disliked liked loved preferred doubted
suspected distrusted trusted knew expected found saw said claimed refused lost tried got had went used grew
spent became watched struggled decided heard never always still already just only often rarely barely
can can't cannot could couldn't will won't would wouldn't should shouldn't might must did didn't`) {
		implicitVerbs[v] = "I " + conjugate(v)
	}
	for k, v := range map[string]string{"is": "I'm", "isn't": "I'm not", "was": "I was", "wasn't": "I wasn't",
		"has": "I have", "hasn't": "I haven't", "does": "I do", "doesn't": "I don't", "feels": "I feel"} {
		implicitVerbs[k] = v
	}
}

// feelingWords open a description with an implicit "I'm": "afraid of
// needles", "not sure she can afford it".
var feelingWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`afraid scared frightened terrified nervous anxious concerned unsure uncertain
unconvinced sceptical skeptical suspicious wary reluctant embarrassed ashamed tired exhausted frustrated fed
upset angry annoyed confused overwhelmed uncomfortable unhappy doubtful convinced sure certain busy proud
determined too not convinced unwilling unable happy content stuck torn`) {
		feelingWords[w] = true
	}
}

// conjugate turns a third-person singular present verb into the first
// person ("feels" -> "feel", "worries" -> "worry", "watches" -> "watch",
// "is" -> "am", "has" -> "have"); other words (past tense, modals,
// adverbs) are returned unchanged.
func conjugate(v string) string {
	switch v {
	case "is":
		return "am"
	case "isn't":
		return "am not"
	case "has":
		return "have"
	case "hasn't":
		return "haven't"
	case "does":
		return "do"
	case "doesn't":
		return "don't"
	case "goes":
		return "go"
	case "lies", "dies", "ties":
		return v[:len(v)-1]
	case "always", "perhaps", "sometimes", "was", "less", "unless", "this", "thus", "plus", "yes":
		return v
	}
	n := len(v)
	switch {
	case n > 4 && strings.HasSuffix(v, "ies"):
		return v[:n-3] + "y"
	case n > 4 && (strings.HasSuffix(v, "sses") || strings.HasSuffix(v, "shes") || strings.HasSuffix(v, "ches") ||
		strings.HasSuffix(v, "xes") || strings.HasSuffix(v, "zes")):
		return v[:n-2]
	case n > 2 && strings.HasSuffix(v, "s") && !strings.HasSuffix(v, "ss") && !strings.HasSuffix(v, "us") &&
		!strings.HasSuffix(v, "is") && !strings.HasSuffix(v, "'s"):
		return v[:n-1]
	}
	return v
}

// adverbs may stand between a subject and its verb ("she never trusts").
var adverbs = map[string]bool{}

// objectFollowers are words after which "her" is an object ("me"), not a
// possessive ("my"): function words, and verbs that take an object and a
// bare infinitive ("makes her look old").
var objectFollowers = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`never always still just really also already often usually only even simply
probably definitely rarely sometimes actually truly barely hardly`) {
		adverbs[w] = true
	}
	for _, w := range strings.Fields(`the a an to and or but nor that this these those about for from with in on at by
of as if when so into over up down out off again too than then because while before after until like
look feel seem think want do go be pay wait lose worry work leave stay change decide sound get give make
take tell know see any some all anything everything nothing something how what why where who whether
it its them him me you us enough more less
healthy safe happy busy awake alive sick ill tired old young fit strong calm comfortable stupid weak better worse
alone`) {
		objectFollowers[w] = true
	}
}

// swapPronouns rewrites third-person singular pronouns in toks into the
// first person in place, conjugating the verb after a subject he/she.
func swapPronouns(toks []string) {
	w := wordIdx(toks)
	next := func(k int) string { // the word after word k, "" at a clause end
		if k+1 >= len(w) {
			return ""
		}
		if between := strings.TrimSpace(strings.Join(toks[w[k]+1:w[k+1]], "")); between != "" {
			return ""
		}
		return lowerWord(toks[w[k+1]])
	}
	question := strings.HasSuffix(strings.TrimSpace(joinToks(toks)), "?")
	for k, i := range w {
		low := lowerWord(toks[i])
		rep := ""
		switch low {
		case "he", "she":
			rep = "I"
			// In a question the verb may come first ("Is she sure?"):
			// conjugate that auxiliary instead ("Am I sure?").
			if prev := k - 1; question && prev >= 0 && next(prev) == low {
				if aux, ok := invertedAux[lowerWord(toks[w[prev]])]; ok {
					if c := toks[w[prev]][0]; c >= 'A' && c <= 'Z' {
						aux = strings.ToUpper(aux[:1]) + aux[1:]
					}
					toks[w[prev]] = aux
					break
				}
			}
			// conjugate the verb, skipping adverbs
			for j := k + 1; j < len(w); j++ {
				v := lowerWord(toks[w[j]])
				if adverbs[v] {
					continue
				}
				toks[w[j]] = conjugate(v)
				break
			}
		case "he's", "she's":
			rep = "I'm"
			if nx := next(k); nx == "been" || nx == "got" || nx == "had" {
				rep = "I've"
			}
		case "he'd", "she'd":
			rep = "I'd"
		case "he'll", "she'll":
			rep = "I'll"
		case "him":
			rep = "me"
		case "himself", "herself":
			rep = "myself"
		case "hers":
			rep = "mine"
		case "his":
			rep = "my"
			if nx := next(k); nx == "" || objectFollowers[nx] {
				rep = "mine"
			}
		case "her":
			rep = "my"
			if nx := next(k); nx == "" || objectFollowers[nx] {
				rep = "me"
			}
		default:
			continue
		}
		if rep != "I" && rep[0] != 'I' && toks[i][0] >= 'A' && toks[i][0] <= 'Z' {
			rep = strings.ToUpper(rep[:1]) + rep[1:]
		}
		toks[i] = rep
	}
}

// invertedAux maps an auxiliary that precedes a subject he/she in a
// question to its form before "I".
var invertedAux = map[string]string{"is": "am", "isn't": "aren't", "was": "was", "wasn't": "wasn't",
	"does": "do", "doesn't": "don't", "has": "have", "hasn't": "haven't"}

// fragment reports whether the words of toks read as a verbless phrase: a
// gerund in the first two words ("losing his independence", "strangers
// caring for him") or at most two words ("his pension"), with no auxiliary
// or modal.
func fragment(toks []string, w []int) bool {
	for _, i := range w {
		if finiteWords[lowerWord(toks[i])] || strings.HasSuffix(lowerWord(toks[i]), "n't") {
			return false
		}
	}
	if len(w) <= 2 {
		return true
	}
	for _, i := range w[:2] {
		if l := lowerWord(toks[i]); len(l) > 4 && strings.HasSuffix(l, "ing") {
			return true
		}
	}
	return false
}

// finiteWords are auxiliaries and modals: a text containing one has a
// finite verb and is not a fragment.
var finiteWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`is are was were am be been has have had do does did will would can could shall
should may might must he's she's it's that's there's he'd she'd he'll she'll`) {
		finiteWords[w] = true
	}
}

// nameSubjectLen returns how many leading words of toks name the persuadee
// (its full name, honorific and surname, surname or first name) when the
// name is followed by a verb-like word, or 0.
func nameSubjectLen(toks []string, w []int, persuadee string) int {
	name := strings.Fields(persuadee)
	if len(name) == 0 {
		return 0
	}
	var forms [][]string
	forms = append(forms, name)
	if a := strings.Fields(AddressName(persuadee)); len(a) > 0 {
		forms = append(forms, a, a[len(a)-1:])
	}
	forms = append(forms, name[:1])
	for _, f := range forms {
		if len(f) >= len(w) {
			continue
		}
		ok := true
		for j, x := range f {
			if !strings.EqualFold(strings.TrimSuffix(toks[w[j]], "."), strings.TrimSuffix(x, ".")) {
				ok = false
				break
			}
		}
		if !ok || IsHonorific(f[len(f)-1]) {
			continue
		}
		// only a name followed by a verb is a subject ("Will it hurt?" is not)
		if nx := lowerWord(toks[w[len(f)]]); implicitVerbs[nx] != "" || finiteWords[nx] || strings.HasSuffix(nx, "s") {
			return len(f)
		}
	}
	return 0
}

// tokenize splits s into words (letters, digits, inner apostrophes and
// hyphens) and the runs of other characters between them; joining the
// tokens gives s back.
func tokenize(s string) []string {
	var out []string
	isW := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
	}
	i := 0
	for i < len(s) {
		j := i
		if isW(s[i]) {
			for j < len(s) && (isW(s[j]) || (s[j] == '\'' || s[j] == '-') && j+1 < len(s) && isW(s[j+1]) && j > i) {
				j++
			}
		} else {
			for j < len(s) && !isW(s[j]) {
				j++
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// wordIdx returns the indices of the word tokens of toks.
func wordIdx(toks []string) []int {
	var w []int
	for i, t := range toks {
		if c := t[0]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80 {
			w = append(w, i)
		}
	}
	return w
}

// lowerWord lower-cases a word token and reads a typographic apostrophe
// as an ASCII one.
func lowerWord(t string) string {
	return strings.ToLower(strings.ReplaceAll(t, "\u2019", "'"))
}

func joinToks(toks []string) string { return strings.Join(toks, "") }

// endSentence makes s end with sentence punctuation.
func endSentence(s string) string {
	for s != "" && strings.IndexByte(" ,;:-", s[len(s)-1]) >= 0 {
		s = s[:len(s)-1]
	}
	if s == "" {
		return s
	}
	switch s[len(s)-1] {
	case '.', '!', '?':
		return s
	}
	return s + "."
}

func capitalFirst(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// lowerFirst lower-cases an initial capital that starts a lower-case word
// ("Losing" -> "losing"), leaving "I", acronyms and names alone only when
// they are all capitals.
func lowerFirst(s string) string {
	if len(s) >= 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z' {
		return string(s[0]-'A'+'a') + s[1:]
	}
	return s
}

// honorifics are titles that precede a surname, lower-case, without a
// trailing period.
var honorifics = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`mr mrs ms miss mx dr doctor prof professor rev revd reverend sir dame
fr father sister brother lord lady capt captain nurse`) {
		honorifics[w] = true
	}
}

// IsHonorific reports whether word is a title such as "Mr", "Dr." or
// "Prof" (case-insensitive, a trailing period allowed).
func IsHonorific(word string) bool {
	return honorifics[strings.ToLower(strings.TrimSuffix(word, "."))]
}

// AddressName returns how the other party addresses someone called name:
// the first name ("Dana Reyes" -> "Dana"), or, when the name opens with an
// honorific, the honorific and the surname ("Mr Tanaka" -> "Mr Tanaka",
// "Dr. Grace Okafor" -> "Dr Okafor", "Prof. Dr. Weber" -> "Prof Weber"). A
// name that is only honorifics, or blank, gives "".
//
// Choice: the honorific loses its period ("Dr Okafor"), the British
// style, so an address never ends a sentence for a reader or the tagger.
func AddressName(name string) string {
	f := strings.Fields(name)
	title := ""
	for len(f) > 0 && IsHonorific(f[0]) {
		if title == "" {
			title = strings.TrimSuffix(f[0], ".")
		}
		f = f[1:]
	}
	if len(f) == 0 {
		return ""
	}
	if title == "" {
		return f[0]
	}
	return title + " " + f[len(f)-1]
}
