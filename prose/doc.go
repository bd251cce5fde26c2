// Package prose is the one reading of a message's surface that the move
// tagger (package tagger) and the persuadee's perception (package
// perception) share: the tokeniser, the sentence and clause split,
// question detection, negation scope, keyword mention matching, the
// closed word classes (negators, second-person words, discourse markers,
// wh-words, auxiliaries, subjects, number words, stop words) and one
// bounded memo. Each reader keeps only its own rules on top of it, so
// the two never disagree about what a word, a sentence or a question is.
//
// It is the ground floor: it imports no other package of the project.
package prose

// Flag marks a token's word class (bits; a token may have several).
type Flag uint16

// The token flags. The word classes are closed lists (words.go).
const (
	// Num: digits, or a number word ("two", "half").
	Num Flag = 1 << iota
	// Percent and Dollar: the one-character tokens '%' and '$'.
	Percent
	Dollar
	// Upper: the word starts with an ASCII upper-case letter in the text.
	Upper
	// Negator: not, never, don't, won't, nobody, without, ...
	Negator
	// You: a second-person word (you, your, you're, ...).
	You
	// Marker: a discourse marker skipped when finding a clause's head
	// (so, and, well, honestly, ...).
	Marker
	// WH: a wh-word (what, how, why, ...).
	WH
	// Aux: an auxiliary that can head a yes/no question (will, would,
	// can, are, do, ...).
	Aux
	// Subject: a subject that follows an auxiliary at the head of a
	// question (you, I, we, it, that, ...).
	Subject
	// Stop: a stop word (function words and words too general to carry
	// content; StopWords).
	Stop
)

// Token is one word, number or sign of a text.
type Token struct {
	// Start and End are the token's byte span in Doc.Text.
	Start, End int32
	// s, e are its span in the normalised text (Doc.Word).
	s, e int32
	// Clause is the index of its clause in Doc.Clauses.
	Clause int32
	// Hash is FNV-1a 64 of the normalised word (Doc.Word).
	Hash  uint64
	Flags Flag
}

// Clause is a comma-, colon-, dash-, bracket- or quote-delimited part of
// a sentence: tokens First..End-1 of sentence Sent.
type Clause struct {
	First, End int32
	Sent       int32
}

// Sentence is a run of text ended by '.', '!', '?', ';', a line break or
// an ellipsis: clauses FirstClause..EndClause-1, tokens First..End-1.
type Sentence struct {
	FirstClause, EndClause int32
	First, End             int32
	// Marked: it ends with '?' (or is an unterminated last sentence whose
	// head is a wh-word or an auxiliary).
	Marked bool
	// Opens: it opens like a question (OpensQuestion).
	Opens bool
	// Question: the one reading of whether the sentence asks; see
	// (*Doc).parse.
	Question bool
}

// Doc is a text read once: its normalised words, tokens, clauses and
// sentences. A Doc made by Parse is immutable and safe to share until
// Reparse or Reset reads another text into it.
type Doc struct {
	// Text is the text as given.
	Text      string
	norm      []byte
	normStr   string // norm as a string (Parse, Reparse), "" for a Reset doc
	Tokens    []Token
	Clauses   []Clause
	Sentences []Sentence
	// unmarked: the text has no sentence mark at all (capitalBreak).
	unmarked bool
}

// Parse reads text into a new Doc (see Reset for the rules).
func Parse(text string) *Doc {
	d := &Doc{}
	d.Reparse(text)
	return d
}

// Reparse reads text into d as Parse does, reusing d's token, clause and
// sentence buffers. Its words (Word) are substrings of one new string,
// so they stay valid after d is read again; d's tokens, clauses and
// sentences do not.
func (d *Doc) Reparse(text string) {
	d.parse(text)
	d.normStr = string(d.norm)
}

// Reset reads text into d, reusing d's buffers: the rules are those of
// Parse. After Reset, Word allocates (use Bytes where that matters).
//
// Rules:
//   - words are runs of ASCII letters or non-ASCII bytes, lower-cased; an
//     apostrophe (' or U+2018/U+2019) between letters stays inside the
//     word and is stored as '; a letter-digit boundary splits tokens
//     ("3pm" is "3", "pm");
//   - numbers are runs of digits with inner '.', ',' or ':' between digits
//     ("2.5", "1,000", "3:30");
//   - '%' and '$' are one-character tokens;
//   - '.', '!', '?', ';', a line break and U+2026 end a sentence ('?' marks
//     it; a '.' directly followed by a letter, as in "e.g." or "U.S.",
//     does not);
//   - ',', ':', '(', ')', '"', U+201C/U+201D, U+2013/U+2014 and a hyphen
//     with a space on either side (or a double hyphen) end a clause; other
//     characters (including an inner hyphen, as in "follow-up") only
//     separate words.
func (d *Doc) Reset(text string) {
	d.parse(text)
	d.normStr = ""
}

// Len returns the number of tokens.
func (d *Doc) Len() int { return len(d.Tokens) }

// Word returns token i's normalised word (lower-case, apostrophes
// straight).
func (d *Doc) Word(i int) string {
	t := &d.Tokens[i]
	if d.normStr != "" || len(d.norm) == 0 {
		return d.normStr[t.s:t.e]
	}
	return string(d.norm[t.s:t.e])
}

// Bytes returns token i's normalised word as bytes (read only; no
// allocation).
func (d *Doc) Bytes(i int) []byte {
	t := &d.Tokens[i]
	return d.norm[t.s:t.e]
}

// Norm returns the normalised text the tokens' words are spans of (read
// only), and token i's span in it.
func (d *Doc) Norm() []byte { return d.norm }

// Span returns token i's span in Norm.
func (d *Doc) Span(i int) (s, e int) { return int(d.Tokens[i].s), int(d.Tokens[i].e) }

// Sent returns the sentence index of token i.
func (d *Doc) Sent(i int) int { return int(d.Clauses[d.Tokens[i].Clause].Sent) }

// Head returns the index of the first token of clause c that is not a
// discourse marker, or -1 when the clause holds only markers.
func (d *Doc) Head(c int) int {
	cl := d.Clauses[c]
	for t := cl.First; t < cl.End; t++ {
		if d.Tokens[t].Flags&Marker == 0 {
			return int(t)
		}
	}
	return -1
}

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

const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

// Hash returns FNV-1a 64 of w (Token.Hash of a token whose word is w).
func Hash(w string) uint64 {
	h := fnvOffset
	for i := 0; i < len(w); i++ {
		h = (h ^ uint64(w[i])) * fnvPrime
	}
	return h
}

// Mix spreads the bits of a hash such as Hash's (the MurmurHash3
// finaliser): FNV-1a's low bits hardly depend on a word's first letters,
// and words share endings, so tables and filters index by Mix(h).
func Mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// HashBytes is Hash of string(w), without the string.
func HashBytes(w []byte) uint64 {
	h := fnvOffset
	for _, c := range w {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 }

func (d *Doc) parse(text string) {
	d.Text = text
	// about one token per five bytes of chat text: room for most texts
	// in one allocation each
	if want := len(text)/5 + 4; cap(d.Tokens) < want {
		d.Tokens = make([]Token, 0, want)
		d.Clauses = make([]Clause, 0, want/3+1)
		d.Sentences = make([]Sentence, 0, want/8+1)
	}
	d.Tokens = d.Tokens[:0]
	d.Clauses = d.Clauses[:0]
	d.Sentences = d.Sentences[:0]
	clauseStart := int32(0)
	sentStartClause := int32(0)
	endClause := func() {
		n := int32(len(d.Tokens))
		if n > clauseStart {
			d.Clauses = append(d.Clauses, Clause{First: clauseStart, End: n, Sent: int32(len(d.Sentences))})
		}
		clauseStart = n
	}
	endSentence := func(q bool) {
		endClause()
		nc := int32(len(d.Clauses))
		if nc > sentStartClause {
			d.addSentence(sentStartClause, nc, q)
		} else if q && len(d.Sentences) > 0 {
			// "...?!" or "? ?": a question mark right after a sentence
			// end still marks the sentence before it.
			s := &d.Sentences[len(d.Sentences)-1]
			s.Marked, s.Question = true, true
		}
		sentStartClause = nc
	}
	n := len(text)
	// A text without any sentence mark (chat with its punctuation dropped)
	// is split where a capital letter opens a sentence (capitalBreak).
	unmarked := true
	for i := 0; i < len(text) && unmarked; i++ {
		switch text[i] {
		case '.', '!', '?', ';', '\n':
			unmarked = false
		case 0xE2: // U+2026, the ellipsis
			unmarked = !(i+2 < len(text) && text[i+1] == 0x80 && text[i+2] == 0xA6)
		}
	}
	d.unmarked = unmarked
	// The normalised text is never longer than text (a curly apostrophe
	// shrinks, every other byte is copied or dropped), so norm is sized
	// once and written by index: w is its length.
	if cap(d.norm) < n {
		d.norm = make([]byte, 0, n)
	}
	buf := d.norm[:n]
	w := int32(0)
	for i := 0; i < n; {
		c := text[i]
		switch {
		case wordByte[c] != 0 || c == 0xE2 && !(i+2 < n && text[i+1] == 0x80):
			start, ts := w, i
			h := fnvOffset
			for i < n {
				// the plain bytes (wordByte) in a tight loop
				for ; i < n; i++ {
					l := wordByte[text[i]]
					if l == 0 {
						break
					}
					buf[w] = l
					w++
					h = (h ^ uint64(l)) * fnvPrime
				}
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
			f := classOf(buf[start:w], h)
			if text[ts] >= 'A' && text[ts] <= 'Z' {
				f |= Upper
				if unmarked && capitalBreak(d, f, buf[start:w]) {
					endSentence(false)
				}
			}
			d.Tokens = append(d.Tokens, Token{Start: int32(ts), End: int32(i), s: start, e: w, Clause: int32(len(d.Clauses)), Hash: h, Flags: f})
		case isDigit(c):
			start, ts := w, i
			h := fnvOffset
			for i < n {
				c = text[i]
				if isDigit(c) || (c == '.' || c == ',' || c == ':') && i+1 < n && isDigit(text[i+1]) && w > start {
					buf[w] = c
					w++
					h = (h ^ uint64(c)) * fnvPrime
					i++
				} else {
					break
				}
			}
			d.Tokens = append(d.Tokens, Token{Start: int32(ts), End: int32(i), s: start, e: w, Clause: int32(len(d.Clauses)), Hash: h, Flags: Num})
		case c == '%' || c == '$':
			buf[w] = c
			f := Percent
			if c == '$' {
				f = Dollar
			}
			d.Tokens = append(d.Tokens, Token{Start: int32(i), End: int32(i + 1), s: w, e: w + 1, Clause: int32(len(d.Clauses)),
				Hash: (fnvOffset ^ uint64(c)) * fnvPrime, Flags: f})
			w++
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
	d.norm = buf[:w]
	// A trailing sentence without terminal punctuation.
	endClause()
	if nc := int32(len(d.Clauses)); nc > sentStartClause {
		// Choice: an unterminated last sentence whose head is a wh-word or
		// an auxiliary ("how much would like to donate") is marked too.
		q := false
		for h := d.Clauses[sentStartClause].First; h < int32(len(d.Tokens)); h++ {
			if f := d.Tokens[h].Flags; f&Marker == 0 {
				q = f&(WH|Aux) != 0
				break
			}
		}
		d.addSentence(sentStartClause, nc, q)
	}
}

// capitalBreak reports whether a capitalised word (flags f, word w)
// opens a new sentence in a text without sentence marks: a word that
// opens sentences (a subject, second-person, wh-, auxiliary or discourse
// word other than "I") right after a lower-case word of the same
// sentence other than a preposition, article, possessive or conjunction
// ("... whatever you choose Would you be open to it"), or, for a wh- or
// second-person word, which no name is, after any lower-case word
// ("... how you feel about this What worries you").
//
// Choice: only texts with no '.', '!', '?', ';', line break or ellipsis
// at all are split this way, so a name in ordinary text ("I told Will.")
// never splits a sentence; other capitalised words ("... aside Studies
// show ...") split no sentence but end a negator's scope (Negated), so
// chat whose names stand mid-sentence ("have you heard of Save the
// Children") keeps its sentences.
func capitalBreak(d *Doc, f Flag, w []byte) bool {
	if f&(Subject|You|WH|Aux|Marker) == 0 || w[0] == 'i' && (len(w) == 1 || w[1] == '\'') {
		return false
	}
	n := len(d.Tokens)
	if n == 0 || len(d.Sentences) > 0 && n == int(d.Sentences[len(d.Sentences)-1].End) {
		return false
	}
	if f&(WH|You) != 0 && f&Aux == 0 {
		// never a name: "... about this What worries you"
		p := d.Tokens[n-1]
		return p.Flags&(Upper|Num|Percent|Dollar) == 0
	}
	return capitalAfter(d, n)
}

// capitalAfter reports whether token n, capitalised, follows a lower-case
// word that no name follows (beforeNames).
func capitalAfter(d *Doc, n int) bool {
	if n == 0 {
		return false
	}
	p := d.Tokens[n-1]
	return p.Flags&(Upper|Num|Percent|Dollar) == 0 && !beforeNames[string(d.norm[p.s:p.e])]
}

// beforeNames are the words a name follows inside a sentence.
var beforeNames = Set("of to in on at by for with from into about the a an my your our their his her its this that " +
	"these those and or than as like via per called named")

// addSentence appends the sentence of clauses [c0, c1), marked or not.
//
// The reading of a question: a sentence asks when it opens like a
// question (OpensQuestion), whatever its end mark ("would you try it this
// week."), or when it ends with '?' ("you've heard of Save the
// Children?").
//
// Choice: chat users drop question marks, so the opening words decide
// alone; a statement with a question mark asks too (for confirmation),
// and a reader that cares what it asserts reads Opens beside it.
func (d *Doc) addSentence(c0, c1 int32, marked bool) {
	s := Sentence{FirstClause: c0, EndClause: c1, First: d.Clauses[c0].First, End: d.Clauses[c1-1].End, Marked: marked}
	// the sentence's head: its first word that is no discourse marker,
	// in whichever clause ("So, do we start?")
	for h := s.First; h < s.End; h++ {
		if d.Tokens[h].Flags&Marker == 0 {
			s.Opens = d.opensQuestion(h, s.End)
			break
		}
	}
	s.Question = s.Opens || marked
	d.Sentences = append(d.Sentences, s)
}

// opensQuestion reports whether the sentence whose head token is h (and
// which ends before token end) opens like a question: an auxiliary
// followed by a subject ("would you", "do we"), or a wh-word followed by
// an auxiliary, or by a word other than a subject with a second-person
// word later ("what worries you").
//
// Choice: a wh-word followed by a subject ("what you give", "how we do
// it") opens a statement.
func (d *Doc) opensQuestion(h, end int32) bool {
	if h+1 >= end {
		return false
	}
	f := d.Tokens[h].Flags
	nx := d.Tokens[h+1].Flags
	switch {
	case f&Aux != 0 && f&WH == 0:
		return nx&Subject != 0
	case f&WH != 0:
		if nx&Aux != 0 {
			return true // "what would", "how do you"
		}
		if nx&(Subject|You) != 0 {
			return false // "what you give", "how we do it": statements
		}
		for t := h + 1; t < end; t++ {
			if d.Tokens[t].Flags&You != 0 {
				return true
			}
		}
	}
	return false
}

// OpensQuestion reports whether sentence s opens like a question (see
// Sentence.Opens).
func (d *Doc) OpensQuestion(s int) bool { return d.Sentences[s].Opens }
