package tagger

import (
	"sync"

	"github.com/persuarena/persuarena/prose"
)

// This file takes an utterance's tokens, clauses and sentences from
// package prose, looks each word up in the rule tables, and matches the
// compiled phrase table against them. It allocates nothing in steady
// state: all scratch space comes from a pool.

// tok is one word or number of the normalised text.
type tok struct {
	s, e   int32 // byte span in scratch.buf (prose's normalised text)
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
	// question: the sentence asks (prose.Sentence.Question), for the
	// acts; marked: it ends with '?' (or is an unterminated last sentence
	// with a wh- or auxiliary head; prose.Sentence.Marked), the question
	// test the P4G strategy rules were written and scored against
	// (docs/tagger.md).
	question, marked bool
}

type scratch struct {
	doc     *prose.Doc // the text's reading; own is the pooled one Tag parses into
	own     prose.Doc
	buf     []byte
	toks    []tok
	clauses []clause
	sents   []sentence
	cues    []cue
	cflags  []uint16 // per-clause cue bits, see resolve
}

var pool = sync.Pool{New: func() any {
	return &scratch{
		toks:    make([]tok, 0, 96),
		clauses: make([]clause, 0, 24),
		sents:   make([]sentence, 0, 12),
		cues:    make([]cue, 0, 32),
		cflags:  make([]uint16, 0, 24),
	}
}}

func getScratch() *scratch {
	sc := pool.Get().(*scratch)
	sc.doc, sc.buf = nil, nil
	sc.toks = sc.toks[:0]
	sc.clauses = sc.clauses[:0]
	sc.sents = sc.sents[:0]
	sc.cues = sc.cues[:0]
	return sc
}

func putScratch(sc *scratch) {
	// Keep unusually large buffers out of the pool so one huge input does
	// not pin memory.
	if cap(sc.own.Norm()) > 1<<16 || cap(sc.toks) > 1<<13 {
		return
	}
	sc.doc = nil
	pool.Put(sc)
}

func (sc *scratch) word(t tok) []byte { return sc.buf[t.s:t.e] }

// fromDoc fills sc.toks, sc.clauses and sc.sents from d (package prose's
// reading of the text): each word's table entry and flags are looked up
// by the hash prose computed, numbers and signs keep prose's classes.
func (sc *scratch) fromDoc(d *prose.Doc) {
	sc.doc = d
	sc.buf = d.Norm()
	for i := range d.Tokens {
		t := &d.Tokens[i]
		s, e := d.Span(i)
		k := tok{s: int32(s), e: int32(e), clause: t.Clause}
		switch {
		case t.Flags&prose.Percent != 0:
			k.flags = fPercent
		case t.Flags&prose.Dollar != 0:
			k.flags = fDollar
		case t.Flags&prose.Num != 0 && e > s && isDigit(sc.buf[s]):
			k.flags = fNum
		default:
			if en := words.find(sc.buf[s:e], t.Hash); en != 0 {
				k.entry = en
				k.flags = words.entries[en].flags
			}
		}
		sc.toks = append(sc.toks, k)
	}
	for _, c := range d.Clauses {
		sc.clauses = append(sc.clauses, clause{first: c.First, end: c.End, sent: c.Sent})
	}
	for _, s := range d.Sentences {
		sc.sents = append(sc.sents, sentence{firstClause: s.FirstClause, endClause: s.EndClause, question: s.Question, marked: s.Marked})
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// head returns the index of the first token of c that is not a discourse
// marker, or -1 when the clause holds only markers.
func (sc *scratch) head(c clause) int32 {
	for t := c.first; t < c.end; t++ {
		if sc.doc.Tokens[t].Flags&prose.Marker == 0 {
			return t
		}
	}
	return -1
}

// negated reports whether token t is in a negator's scope (prose's
// rule, Doc.Negated).
func (sc *scratch) negated(t int32) bool { return sc.doc.Negated(int(t)) }

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
