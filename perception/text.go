package perception

import "strings"

// token is one word or number of a message, lower-cased.
type token struct {
	w          string
	start, end int // byte span in the (corrected) text
	sent       int
	clause     int
	upper      bool // the original word starts with an upper-case letter
	num        bool
}

// sentence is a run of tokens ended by . ! ? ; or a line break.
type sentence struct {
	first, end int
	question   bool // ends with '?' or opens like a question
}

// doc is a tokenized message.
type doc struct {
	text  string
	toks  []token
	sents []sentence
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// tokenize splits text into lower-case tokens, clauses and sentences:
// words are runs of ASCII letters with inner apostrophes (' or U+2019,
// stored as '), numbers runs of digits with inner . , :; '.', '!', '?',
// ';' and line breaks end a sentence, ',', ':', dashes, brackets and
// quotes a clause. A sentence without '?' still counts as a question
// when it opens like one (see questionHead).
func tokenize(text string) doc {
	d := doc{text: text}
	sent, clause, first := 0, 0, 0
	endSent := func(q bool) {
		if len(d.toks) > first {
			// A sentence is a question when it opens like one, or when it
			// ends with '?' and is short ("Ready?", "Sound good?"): a long
			// statement with a stray '?' is still a statement.
			s := sentence{first: first, end: len(d.toks)}
			s.question = questionHead(d.toks[first:]) || q && len(d.toks)-first <= shortQuestion
			d.sents = append(d.sents, s)
			sent++
			clause++
		} else if q && len(d.sents) > 0 {
			d.sents[len(d.sents)-1].question = true
		}
		first = len(d.toks)
	}
	n := len(text)
	for i := 0; i < n; {
		c := text[i]
		switch {
		case isLetter(c):
			j := i
			var b strings.Builder
			for j < n {
				if isLetter(text[j]) {
					b.WriteByte(lowerByte(text[j]))
					j++
				} else if text[j] == '\'' && j+1 < n && isLetter(text[j+1]) {
					b.WriteByte('\'')
					j++
				} else if strings.HasPrefix(text[j:], "\u2019") && j+3 < n && isLetter(text[j+3]) {
					b.WriteByte('\'')
					j += 3
				} else {
					break
				}
			}
			d.toks = append(d.toks, token{w: b.String(), start: i, end: j, sent: sent, clause: clause, upper: c >= 'A' && c <= 'Z'})
			i = j
		case isDigit(c):
			j := i
			for j < n && (isDigit(text[j]) || (text[j] == '.' || text[j] == ',' || text[j] == ':') && j+1 < n && isDigit(text[j+1])) {
				j++
			}
			d.toks = append(d.toks, token{w: text[i:j], start: i, end: j, sent: sent, clause: clause, num: true})
			i = j
		case c == '%':
			d.toks = append(d.toks, token{w: "percent", start: i, end: i + 1, sent: sent, clause: clause})
			i++
		case c == '?':
			endSent(true)
			i++
		case c == '.' || c == '!' || c == ';' || c == '\n':
			if c == '.' && i+1 < n && isLetter(text[i+1]) {
				i++
				continue
			}
			endSent(false)
			i++
		case c == ',' || c == ':' || c == '(' || c == ')' || c == '"' || c == '-' && (i+1 < n && text[i+1] == ' ' || i > 0 && text[i-1] == ' '):
			clause++
			i++
		case strings.HasPrefix(text[i:], "\u2014") || strings.HasPrefix(text[i:], "\u2013") || strings.HasPrefix(text[i:], "\u201c") || strings.HasPrefix(text[i:], "\u201d"):
			clause++
			i += 3
		case strings.HasPrefix(text[i:], "\u2026"):
			endSent(false)
			i += 3
		default:
			i++
		}
	}
	endSent(false)
	return d
}

// shortQuestion is the most words a sentence ending with '?' may have to
// count as a question without opening like one.
const shortQuestion = 5

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// questionHead reports whether a sentence opens like a question without
// its '?': an auxiliary followed by a subject pronoun ("would you", "can
// we", "do you"), or a wh-word followed by an auxiliary or a second-person
// word ("what would", "how do you", "what worries you").
//
// Choice: a wh-word followed by a first-person or third-person subject
// ("what I mean", "how we do it") opens a statement.
func questionHead(ts []token) bool {
	i := 0
	for i < len(ts) && discourse[ts[i].w] {
		i++
	}
	if i+1 >= len(ts) {
		return false
	}
	h, nx := ts[i].w, ts[i+1].w
	switch {
	case auxHeads[h]:
		return subjects[nx]
	case whHeads[h]:
		if subjects[nx] && nx != "you" {
			return false
		}
		if auxHeads[nx] || nx == "you" || nx == "your" {
			return true
		}
		for _, t := range ts[i+1:] {
			if t.w == "you" || t.w == "your" {
				return true
			}
		}
	}
	return false
}

var (
	discourse = setOf("so and but well ok okay then now honestly just oh hey also anyway alright actually really")
	auxHeads  = setOf("will would can could shall should are is do does did have has may might won't wouldn't can't couldn't don't aren't isn't")
	subjects  = setOf("you i we it that this there they he she anyone anything")
	whHeads   = setOf("what what's how how's which why where when who")
)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
