package tagger

import "sync"

// This file turns an utterance into lower-case tokens grouped into clauses
// and sentences, and matches the compiled phrase table against them. It
// allocates nothing in steady state: all scratch space comes from a pool.

// tok is one word or number of the normalised text.
type tok struct {
	s, e   int32 // byte span in scratch.buf (lower-case, apostrophes normalised)
	clause int32 // index into scratch.clauses
	entry  int32 // index into words.entries; 0 = not a known word
	flags  uint16
}

// Token flags, set from the word table (and the character class for numbers).
const (
	fNum     uint16 = 1 << iota // digits, or a number word ("two", "half")
	fNeg                        // negator: not, never, don't, won't, ...
	fYou                        // second person: you, your, you're, ...
	fMarker                     // clause-initial discourse marker skipped when finding a question's head: so, and, well, ...
	fWH                         // wh-word heading an open question
	fAux                        // auxiliary heading a yes/no question
	fAuxAsk                     // auxiliary that can head a decision request: will, would, can, shall, are, do, ...
	fModal                      // will, would, can, could, shall, should
	fNegAux                     // negative auxiliary heading a rhetorical question: don't, won't, isn't, ...
	fPercent                    // the % sign
	fDollar                     // the $ sign
)

// clause is a comma/colon/dash-delimited part of a sentence.
type clause struct {
	first, end int32 // token range [first, end)
	sent       int32
}

// sentence is a run of text ended by . ! ? ; or a line break.
type sentence struct {
	firstClause, endClause int32
	// question: the sentence is a question (isQuestion), for the acts;
	// marked: it ends with '?' (or is an unterminated last sentence with a
	// wh- or auxiliary head), the question test the P4G strategy rules
	// were written and scored against (docs/tagger.md).
	question, marked bool
}

type scratch struct {
	buf     []byte
	toks    []tok
	clauses []clause
	sents   []sentence
	cues    []cue
	cflags  []uint16 // per-clause cue bits, see resolve
	lookup  bool     // tokenize looks words up in the table (Tag), or not (Mentions)
}

var pool = sync.Pool{New: func() any {
	return &scratch{
		buf:     make([]byte, 0, 512),
		toks:    make([]tok, 0, 96),
		clauses: make([]clause, 0, 24),
		sents:   make([]sentence, 0, 12),
		cues:    make([]cue, 0, 32),
		cflags:  make([]uint16, 0, 24),
	}
}}

func getScratch(lookup bool) *scratch {
	sc := pool.Get().(*scratch)
	sc.lookup = lookup
	sc.buf = sc.buf[:0]
	sc.toks = sc.toks[:0]
	sc.clauses = sc.clauses[:0]
	sc.sents = sc.sents[:0]
	sc.cues = sc.cues[:0]
	return sc
}

func putScratch(sc *scratch) {
	// Keep unusually large buffers out of the pool so one huge input does
	// not pin memory.
	if cap(sc.buf) > 1<<16 || cap(sc.toks) > 1<<13 {
		return
	}
	pool.Put(sc)
}

func (sc *scratch) word(t tok) []byte { return sc.buf[t.s:t.e] }

// wordByte[c] is c lower-cased when c is an ASCII letter, c itself when
// it is a non-ASCII byte other than 0xE2 (which may open U+20xx
// punctuation), else 0: the bytes the tokenizer copies into a word
// without looking further.
var wordByte = func() (t [256]byte) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 'a' && c <= 'z' || c >= 0x80 && c != 0xE2:
			t[c] = byte(c)
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	return t
}()

// plainRun copies the run of wordByte bytes of text from i into buf
// from w, lower-cased, folding them into the FNV-1a hash h, and returns
// the indexes after the run and the hash.
func plainRun(text string, i int, buf []byte, w int32, h uint64) (int, int32, uint64) {
	for ; i < len(text); i++ {
		l := wordByte[text[i]]
		if l == 0 {
			break
		}
		buf[w] = l
		w++
		h = (h ^ uint64(l)) * fnvPrime
	}
	return i, w, h
}

// char classes for the tokenizer.
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 }

// tokenize fills sc.toks, sc.clauses and sc.sents from text.
//
// Rules (documented in docs/tagger.md):
//   - words are runs of ASCII letters or non-ASCII bytes, lower-cased; an
//     apostrophe (' or U+2018/U+2019) between letters stays inside the word
//     and is stored as '; a letter-digit boundary splits tokens ("3pm" is
//     "3", "pm");
//   - numbers are runs of digits with inner '.', ',' or ':' between digits
//     ("2.5", "1,000", "3:30");
//   - '%' and '$' are one-character tokens;
//   - '.', '!', '?', ';', a line break and U+2026 end a sentence ('?' marks
//     it a question; a '.' directly followed by a letter, as in "e.g." or
//     "U.S.", does not);
//   - ',', ':', '(', ')', '"', U+201C/U+201D, U+2013/U+2014 and a hyphen
//     with a space on either side end a clause; other characters
//     (including an inner hyphen, as in "follow-up") only separate words.
func (sc *scratch) tokenize(text string) {
	clauseStart := int32(0)
	sentStartClause := int32(0)
	endClause := func() {
		n := int32(len(sc.toks))
		if n > clauseStart {
			sc.clauses = append(sc.clauses, clause{first: clauseStart, end: n, sent: int32(len(sc.sents))})
		}
		clauseStart = n
	}
	endSentence := func(q bool) {
		endClause()
		nc := int32(len(sc.clauses))
		if nc > sentStartClause {
			sc.sents = append(sc.sents, sentence{firstClause: sentStartClause, endClause: nc, question: sc.isQuestion(sentStartClause, nc, q), marked: q})
		} else if q && len(sc.sents) > 0 {
			// "...?!" or "? ?": a question mark right after a sentence end
			// still marks the sentence before it.
			sc.sents[len(sc.sents)-1].question = true
			sc.sents[len(sc.sents)-1].marked = true
		}
		sentStartClause = nc
	}
	n := len(text)
	// The normalised text is never longer than text (a curly apostrophe
	// shrinks, every other byte is copied or dropped), so buf is sized
	// once and written by index: w is its length.
	if cap(sc.buf) < n {
		sc.buf = make([]byte, 0, n)
	}
	buf := sc.buf[:n]
	w := int32(0)
	for i := 0; i < n; {
		c := text[i]
		switch {
		case wordByte[c] != 0 || c == 0xE2 && !(i+2 < n && text[i+1] == 0x80):
			start := w
			h := fnvOffset
			for i < n {
				// the plain bytes (wordByte) in a tight loop
				i, w, h = plainRun(text, i, buf, w, h)
				if i >= n {
					break
				}
				c = text[i]
				if c == '\'' && i+1 < n && isLetter(text[i+1]) && w > start {
					buf[w] = '\''
					w++
					h = (h ^ uint64('\'')) * fnvPrime
					i++
				} else if c == 0xE2 && i+2 < n && text[i+1] == 0x80 {
					// U+2018/U+2019 inside a word is an apostrophe; any
					// other U+20xx punctuation ends the word.
					if (text[i+2] == 0x98 || text[i+2] == 0x99) && i+3 < n && isLetter(text[i+3]) && w > start {
						buf[w] = '\''
						w++
						h = (h ^ uint64('\'')) * fnvPrime
						i += 3
						continue
					}
					break
				} else if c >= 0x80 {
					buf[w] = c
					w++
					h = (h ^ uint64(c)) * fnvPrime
					i++
				} else {
					break
				}
			}
			sc.addTok(buf, start, w, h)
		case isDigit(c):
			start := w
			for i < n {
				c = text[i]
				if isDigit(c) {
					buf[w] = c
					w++
					i++
				} else if (c == '.' || c == ',' || c == ':') && i+1 < n && isDigit(text[i+1]) && w > start {
					buf[w] = c
					w++
					i++
				} else {
					break
				}
			}
			sc.toks = append(sc.toks, tok{s: start, e: w, clause: int32(len(sc.clauses)), flags: fNum})
		case c == '%' || c == '$':
			start := w
			buf[w] = c
			w++
			f := fPercent
			if c == '$' {
				f = fDollar
			}
			sc.toks = append(sc.toks, tok{s: start, e: start + 1, clause: int32(len(sc.clauses)), flags: f})
			i++
		case c == '?':
			endSentence(true)
			i++
		case c == '!' || c == ';' || c == '\n' || c == '\r':
			endSentence(false)
			i++
		case c == '.':
			if i+1 < n && isLetter(text[i+1]) {
				i++ // "e.g", "u.s": not a sentence end
				continue
			}
			endSentence(false)
			i++
		case c == ',' || c == ':' || c == '(' || c == ')' || c == '"':
			endClause()
			i++
		case c == '-':
			if (i > 0 && text[i-1] == ' ') || (i+1 < n && text[i+1] == ' ') || (i+1 < n && text[i+1] == '-') {
				endClause()
			}
			i++
		case c == 0xE2 && i+2 < n && text[i+1] == 0x80 && text[i+2]&0xC0 == 0x80:
			// a whole U+20xx character; in invalid UTF-8 ("\xe2\x80" then a
			// new sequence) only the lead byte is skipped (default)
			switch text[i+2] {
			case 0x93, 0x94, 0x9C, 0x9D: // en/em dash, curly double quotes
				endClause()
			case 0xA6: // ellipsis
				endSentence(false)
			}
			i += 3
		default:
			i++
		}
	}
	sc.buf = buf[:w]
	// A trailing sentence without terminal punctuation.
	endClause()
	if nc := int32(len(sc.clauses)); nc > sentStartClause {
		// Choice: an unterminated last sentence whose head is a wh-word or
		// an auxiliary ("how much would like to donate") is a question too.
		q := false
		if h := sc.head(sc.clauses[sentStartClause]); h >= 0 && sc.toks[h].flags&(fWH|fAux) != 0 {
			q = true
		}
		sc.sents = append(sc.sents, sentence{firstClause: sentStartClause, endClause: nc, question: sc.isQuestion(sentStartClause, nc, q), marked: q})
	}
	// Tokens carry the index their clause gets when it closes: empty
	// clauses are never appended, so the index is stable.
}

// isQuestion reports whether the sentence of clauses [c0, c1) is a
// question: it ends with '?' (mark), or it opens like one
// (opensQuestion) whatever its end mark.
//
// Choice: question detection does not hang on '?': chat users drop the
// mark ("would you try it this week."). A statement that ends with '?'
// stays a question here (P4G persuaders ask "you've heard of Save the
// Children?"); its evidence and plan cues count either way, and package
// perception reads long ones as statements for concern engagement.
func (sc *scratch) isQuestion(c0, c1 int32, mark bool) bool {
	if !sc.lookup {
		return mark // Mentions needs no sentence types
	}
	h := sc.head(sc.clauses[c0])
	if h < 0 {
		return mark
	}
	if sc.opensQuestion(h, sc.clauses[c1-1].end) {
		return true
	}
	return mark
}

// questionSubjects are the subjects that follow an auxiliary at the head
// of a question ("would you", "can we", "is it").
var questionSubjects = map[string]bool{"you": true, "i": true, "we": true, "it": true, "that": true, "this": true,
	"there": true, "they": true, "he": true, "she": true, "anyone": true, "anything": true, "u": true}

// opensQuestion reports whether the sentence whose head token is h (and
// which ends before token end) opens like a question: an auxiliary
// followed by a subject ("would you", "do we"), or a wh-word followed by
// an auxiliary, or by a word other than a subject with a second-person
// word later ("what worries you"). A wh-word followed by a subject ("what
// you give", "how we do it") opens a statement.
func (sc *scratch) opensQuestion(h, end int32) bool {
	if h+1 >= end {
		return false
	}
	f := sc.toks[h].flags
	nx := sc.toks[h+1]
	nw := string(sc.word(nx))
	switch {
	case f&fAux != 0 && f&fWH == 0:
		return questionSubjects[nw]
	case f&fWH != 0:
		if nx.flags&fAux != 0 {
			return true // "what would", "how do you"
		}
		if questionSubjects[nw] || nx.flags&fYou != 0 {
			return false // "what you give", "how we do it": statements
		}
		for t := h + 1; t < end; t++ {
			if sc.toks[t].flags&fYou != 0 {
				return true
			}
		}
	}
	return false
}

// addTok appends the word buf[start:end] (FNV-1a hash h) and looks up
// its table entry and flags.
func (sc *scratch) addTok(buf []byte, start, end int32, h uint64) {
	t := tok{s: start, e: end, clause: int32(len(sc.clauses))}
	if sc.lookup {
		if e := words.find(buf[start:end], h); e != 0 {
			t.entry = e
			t.flags = words.entries[e].flags
		}
	}
	sc.toks = append(sc.toks, t)
}

// head returns the index of the first token of c that is not a discourse
// marker, or -1 when the clause holds only markers.
func (sc *scratch) head(c clause) int32 {
	for t := c.first; t < c.end; t++ {
		if sc.toks[t].flags&fMarker == 0 {
			return t
		}
	}
	return -1
}

// negWindow is how many tokens before a cue a negator may stand: four
// covers "I'm not going to pressure you" and "no need to feel guilty".
const negWindow = 4

// negated reports whether one of the up to negWindow tokens before token
// t, in the same clause, is a negator.
func (sc *scratch) negated(t int32) bool {
	c := sc.toks[t].clause
	for k := t - 1; k >= t-negWindow && k >= 0; k-- {
		if sc.toks[k].clause != c {
			return false
		}
		if sc.toks[k].flags&fNeg != 0 {
			return true
		}
	}
	return false
}

// match runs the phrase table over the tokens and fills sc.cues with every
// pattern occurrence (all lengths, in token order).
func (sc *scratch) match() {
	for i := range sc.toks {
		t := sc.toks[i]
		if t.flags&fNum != 0 {
			sc.tryAll(numPats, int32(i))
		}
		if t.flags&(fPercent|fDollar) != 0 {
			sc.tryAll(symbolPats[sc.buf[t.s]], int32(i))
			continue
		}
		if t.entry == 0 {
			continue
		}
		e := &words.entries[t.entry]
		sc.tryAll(e.pats, int32(i))
		if e.hasNext && i+1 < len(sc.toks) {
			if n := sc.toks[i+1]; n.entry != 0 && n.clause == t.clause {
				sc.tryAll(pairs.get(t.entry, n.entry), int32(i))
			}
		}
	}
}

func (sc *scratch) tryAll(ids []uint16, i int32) {
	for _, id := range ids {
		p := &patterns[id]
		if end, ok := sc.matchAt(p, i); ok {
			sc.cues = append(sc.cues, cue{kind: p.kind, start: i, end: end, clause: sc.toks[i].clause})
		}
	}
}

// matchAt checks pattern p (whose first token already matched) at token i
// and returns the exclusive end token.
func (sc *scratch) matchAt(p *pattern, i int32) (int32, bool) {
	cl := sc.toks[i].clause
	j := i + 1
	for k := 1; k < len(p.toks); k++ {
		pt := &p.toks[k]
		switch pt.op {
		case opEnd:
			if int(j) < len(sc.toks) && sc.toks[j].clause == cl {
				return 0, false
			}
			continue
		}
		if int(j) >= len(sc.toks) || sc.toks[j].clause != cl {
			return 0, false
		}
		t := sc.toks[j]
		switch pt.op {
		case opAny:
		case opNum:
			if t.flags&fNum == 0 {
				return 0, false
			}
		case opSym:
			if t.flags&(fPercent|fDollar) == 0 || sc.buf[t.s] != pt.lit[0][0] {
				return 0, false
			}
		case opLit:
			if t.entry == 0 || !pt.has(t.entry) {
				return 0, false
			}
		}
		j++
	}
	return j, true
}
