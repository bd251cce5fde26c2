package perception

import "github.com/persuarena/persuarena/prose"

// Reading what a sentence asserts. A concern counts as answered only by
// words the message asserts (docs/simulator/reader.md, "What a sentence
// asserts"):
//
//   - a question asserts nothing (asks);
//   - a bare list asserts nothing: a sentence without a predicate (no
//     auxiliary or copula, no verb after another word of its clause), and
//     a run of three or more short clauses without one ("cost,
//     stranger, private life: research, evidence, plan");
//   - a denied complement asserts nothing: what follows a negated verb of
//     saying, knowing or believing ("I can't honestly tell you that ...",
//     "I'm not sure that ...") up to the end of the sentence or a "but";
//     so does what follows "I wish I could say" or "who knows";
//   - a retracted sentence asserts nothing: the sentences before one that
//     denies them, back to a question, and its own words before it
//     ("... I don't believe that's true.", "That's a lie.", "Just
//     kidding.", "Some would claim ..., but I'm not convinced.");
//   - an admission ("I have no answer to that") concedes the concerns
//     named in it or in the sentence before it (Conceded), and so does
//     taking an answer back (a retraction, or "I can't tell you that
//     ...") for the concerns it names, unless the message answers them
//     elsewhere ("I won't pretend it's cheap, but ..."): the worry stands;
//   - the words of a sentence with a manipulation cue bring nothing.
//
// Of the asserted words, those that can bring something are content
// words that are none of: the concerns' own words (their keywords and the
// words of their descriptions: restating a worry answers nothing; one of
// them per sentence counts, as an answer names what it answers), words
// of acknowledging ("fair point"), of a worry or problem ("would be a
// problem", "a real risk"), or generic words of a persuasion move
// ("research", "evidence", "plan", "results", "encouraging"), which name
// an answer without giving one.

// Per-token flags (textInfo.tokFlags).
const (
	// tfContent: a content word (content).
	tfContent uint8 = 1 << iota
	// tfBrings: asserted, and a word that can bring an answer.
	tfBrings
	// tfSpecific: tfBrings, and not a word of the proposal: what an
	// answer to the worry just voiced must carry (Read).
	tfSpecific
	// tfSeed: asserted, and one of the concerns' own words: at most one
	// per sentence brings something (newWords).
	tfSeed
	// tfListed: an item of a list (a run of three or more one-word
	// items, or a clause of a list run): it names a word without saying
	// anything of it.
	tfListed
)

// Closed word lists of the assertion reading.
var (
	// determiners and prepositions: a verb-capable word right after one
	// is a noun ("the plan", "for research").
	nounHeads = setOf("the a an this that these those my your our their his her its some any every each no all both " +
		"either neither many much few several most more less of in on at by for with from to into onto over under " +
		"about after before between through during without within across along around behind beyond near per via than as like")
	// copulas and auxiliaries beyond prose's Aux class, and the
	// contractions that carry one.
	predicateWords = setOf("be been being am it's that's there's here's what's who's he's she's let's must ought " +
		"gets got makes made keeps kept helps helped works worked means")
	// verbs of saying, knowing and believing, and truth words: negated,
	// they deny what follows; speechActs, negated, take it back (the
	// persuader will not say it: the worry stands).
	speechActs = setOf("tell told say said claim claimed promise promised guarantee guaranteed pretend assure swear vouch")
	epistemic  = setOf("tell told say said claim claimed promise promised guarantee guaranteed pretend assure swear vouch " +
		"argue suggest believe believed think thought know knew sure certain true case convinced prove " +
		"proven buy right correct accurate")
	contrastive = setOf("but however though although yet still")
	// worry and problem words: naming the worry, not answering it.
	worryWords = setOf("problem problems issue issues risk risks risky downside downsides drawback drawbacks trouble " +
		"troubles difficulty difficulties hassle pain nightmare struggle obstacle obstacles barrier barriers challenge " +
		"challenges burden concern concerns worry worries fear fears afraid scary daunting")
	// generic words of a persuasion move: they name an answer ("the
	// research", "a plan", "the evidence is encouraging") without giving
	// one.
	genericWords = setOf("research researchers evidence data study studies studied results result findings outcome " +
		"outcomes experience experiences documented record records track encouraging positive reassuring promising " +
		"plan plans planning approach option options solution solutions idea ideas information details facts fact " +
		"proof step steps process method strategy benefit benefits advantage advantages situation situations case " +
		"cases similar typical usual generally mostly worth effort expected expect easier harder matter matters " +
		"answer answers reply response point points " +
		// the when and how much of any plan: a day or a first small step
		// answers no particular worry
		"monday tuesday wednesday thursday friday saturday sunday weekend morning evening afternoon night " +
		"tomorrow tonight next first second third start starting begin beginning trial small short light quick " +
		"concrete detail arrange arranged check send sent review " +
		// the words of leaving the choice: a move, not a reason
		"entirely decision decisions choice choices call decide deciding pressure rush obligation respect whatever " +
		"free pace yours")
)

// retractFrames deny what the message said before them.
var retractFrames = []string{
	"!that/this/it/which .. not/isn't/wasn't .. true/so/right/correct/accurate/real/case",
	"!that's/it's/that_is/it_is/this_is/which_is not true/so/right/correct/accurate/real",
	"!don't/do_not/doesn't/didn't/not .. believe/buy/think/convinced .. that/it/this/so/true/right/that's/it's",
	"!isn't/wasn't/not .. the case", "!not/isn't/aren't/wasn't convinced/persuaded", "a lie", "lie/lies/lying", "false/untrue", "a myth", "not really", "just/only kidding",
	"just/only joking",
}

// admitFrames admit having no answer.
var admitFrames = []string{
	"!no answer/reply/response/solution/comeback/counter/fix", "!don't/do_not have .. answer/reply/solution/response",
	"!can't/cannot .. argue/answer/respond/deny", "!no way around/round", "!nothing @iwe can say/do", "got me there",
	"!i've/i_have got nothing",
}

// wishFrames deny what follows without a negation of their own.
var wishFrames = []string{"wish @iwe could/can", "if only", "who knows", "no idea/clue whether/if/how", "!not sure/certain"}

// assertions sets ti.tokFlags (tfContent, tfBrings, tfSpecific, tfSeed,
// tfListed),
// the sfList sentence flags, and the concerns the message admits having
// no answer to (ti.admitted) and those whose answer it takes back
// (ti.takenBack).
//
// sets and ats are the frame sets each sentence matched, and where
// (frameBank.match).
func (sc *scene) assertions(ti *textInfo, sets []uint32, ats [][numFrameSets]int32) {
	d := ti.d
	pd := d.pd
	marks := make([]bool, 2*len(d.toks))
	asserted, listed := marks[:len(d.toks)], marks[len(d.toks):]
	for si, st := range d.sents {
		if st.question || ti.sentFlags[si]&(sfCue|sfClaim) != 0 {
			continue // a question asks; a cue's or a fabrication's sentence brings nothing
		}
		s := d.toks[st.first].sent
		ps := pd.Sentences[s]
		// predicates per clause
		pred, items := false, 0
		for c := ps.FirstClause; c < ps.EndClause; c++ {
			cl := pd.Clauses[c]
			if sc.hasPredicate(d, int(cl.First), int(cl.End)) {
				pred = true
			} else if cl.End-cl.First <= 3 {
				items++
			}
		}
		if !pred {
			ti.sentFlags[si] |= sfList
			continue // a bare list
		}
		for c := ps.FirstClause; c < ps.EndClause; c++ {
			cl := pd.Clauses[c]
			if items >= 3 && cl.End-cl.First <= 3 && !sc.hasPredicate(d, int(cl.First), int(cl.End)) {
				for i := cl.First; i < cl.End; i++ {
					listed[i] = true
				}
				continue // an item of a list run
			}
			for i := cl.First; i < cl.End; i++ {
				asserted[i] = true
			}
		}
		for _, it := range listItems(d, st) {
			asserted[it], listed[it] = false, true // an item of a run of three or more
		}
		// denied complements
		ts := d.toks[st.first:st.end]
		denyFrom, takeBack := -1, false
		for k, t := range ts {
			if t.wi.cls&wEpistemic != 0 && pd.Negated(int(t.i)) {
				denyFrom, takeBack = k+1, t.wi.cls&wSpeech != 0
				break
			}
		}
		if at := int(ats[si][fsWish]); sets[si]&(1<<fsWish) != 0 && (denyFrom < 0 || at < denyFrom) {
			denyFrom = at
		}
		if denyFrom >= 0 {
			for k := denyFrom; k < len(ts); k++ {
				if ts[k].wi.cls&wContrast != 0 && (k == 0 || ts[k-1].clause != ts[k].clause) {
					break
				}
				asserted[st.first+k] = false
			}
			if takeBack {
				for k := denyFrom; k < len(ts) && !asserted[st.first+k]; k++ {
					ti.takenBack |= ti.tokHit[st.first+k]
				}
			}
		}
		// a retraction denies what the message said before it, back to a
		// question ("I can't tell you that A. B. I don't believe that's
		// true." takes back A and B)
		if sets[si]&(1<<fsRetract) != 0 {
			// and what its own sentence said before it ("Some would
			// claim A, but I'm not convinced.")
			for k := 0; k < int(ats[si][fsRetract]); k++ {
				asserted[st.first+k] = false
				ti.takenBack |= ti.tokHit[st.first+k]
			}
			for sj := si - 1; sj >= 0 && !d.sents[sj].question; sj-- {
				for i := d.sents[sj].first; i < d.sents[sj].end; i++ {
					asserted[i] = false
				}
				ti.takenBack |= ti.sentHit[sj]
			}
		}
		if sets[si]&(1<<fsAdmit) != 0 {
			ti.admitted |= ti.sentHit[si]
			if si > 0 {
				ti.admitted |= ti.sentHit[si-1]
			}
		}
	}
	for i, t := range d.toks {
		if listed[i] {
			ti.tokFlags[i] |= tfListed
		}
		if !content(t) {
			continue
		}
		ti.tokFlags[i] |= tfContent
		if !asserted[i] || t.wi.cls&(wWorry|wGeneric) != 0 {
			continue
		}
		if sc.seedHitTok(&t) || sc.exact[t.w] != 0 {
			ti.tokFlags[i] |= tfSeed
			continue
		}
		ti.tokFlags[i] |= tfBrings
		if !sc.pubStem[stem(t.w)] {
			ti.tokFlags[i] |= tfSpecific
		}
	}
}

// listItems returns the items of the runs of three or more one-word
// items in sentence st ("cost, travel and time", "your donate and task
// and payment and children", "research, evidence and a plan"): content
// words, each after an optional article, joined by "and", "or" or a
// clause break (a comma). Such a run names words without saying
// anything of each.
func listItems(d doc, st sentence) []int {
	var out, run []int
	flush := func() {
		if len(run) >= 3 {
			out = append(out, run...)
		}
		run = run[:0]
	}
	item := func(i int) int { // the item's word at i (after an article), or -1
		if i < st.end && (d.toks[i].w == "a" || d.toks[i].w == "an" || d.toks[i].w == "the") {
			i++
		}
		if i < st.end && content(d.toks[i]) && d.toks[i].wi.cls&wPredicate == 0 {
			return i
		}
		return -1
	}
	for i := st.first; i < st.end; {
		w := item(i)
		if w < 0 {
			if c := d.toks[i].w; c != "and" && c != "or" {
				flush()
			}
			i++
			continue
		}
		if len(run) == 0 || !joined(d, run[len(run)-1], i) {
			flush()
		}
		run = append(run, w)
		i = w + 1
	}
	flush()
	return out
}

// joined reports whether an item ending at token a and one starting at
// token b are joined as list items: b right after a across a clause
// break, or after "and"/"or" (with or without the break).
func joined(d doc, a, b int) bool {
	switch {
	case b == a+1:
		return d.toks[a].clause != d.toks[b].clause
	case b == a+2:
		c := d.toks[a+1].w
		return c == "and" || c == "or"
	}
	return false
}

// hasPredicate reports whether tokens first..end-1 of d (one clause) hold
// a predicate: an auxiliary, copula or contraction carrying one, a
// negative auxiliary, or a word with a verb sense after another word of
// the clause that is no determiner or preposition.
func (sc *scene) hasPredicate(d doc, first, end int) bool {
	pd := d.pd
	l := theLexicon()
	for i := first; i < end; i++ {
		t := d.toks[i]
		f := pd.Tokens[t.i].Flags
		if f&prose.Aux != 0 || t.wi.cls&wPredicate != 0 || f&prose.Negator != 0 && len(t.w) > 3 && t.w[len(t.w)-3:] == "n't" {
			return true
		}
		if n := len(t.w); n > 3 && (t.w[n-3:] == "'re" || t.w[n-3:] == "'ve" || t.w[n-3:] == "'ll") || n > 2 && (t.w[n-2:] == "'d" || t.w[n-2:] == "'m") {
			return true
		}
		if t.num {
			continue
		}
		if i == first {
			// an imperative: a verb before a determiner, pronoun or
			// preposition ("keep the tablets", "call them")
			if i+1 >= end || d.toks[i+1].wi.cls&wNounHead == 0 && pd.Tokens[d.toks[i+1].i].Flags&(prose.Subject|prose.You) == 0 && d.toks[i+1].w != "them" && d.toks[i+1].w != "me" && d.toks[i+1].w != "us" {
				continue
			}
		} else if d.toks[i-1].wi.cls&wNounHead != 0 {
			continue
		}
		for _, id := range t.wi.bases {
			if l.canVerb(id) {
				return true
			}
		}
	}
	return false
}
