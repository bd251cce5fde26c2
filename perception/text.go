package perception

import (
	"sync"

	"github.com/persuarena/persuarena/prose"
)

// token is one word or number of a message as the embedded reader sees
// it: package prose's token with its word, and what the reader looks up
// about the word once (wordInfo: its frame key, classes, lexical fields
// and base forms).
type token struct {
	w          string // lower-case word; "percent" for '%'
	i          int32  // index in the prose.Doc
	start, end int32  // byte span in the (corrected) text
	sent       int32
	clause     int32
	upper      bool      // the original word starts with an upper-case letter
	num        bool      // digits (not a number word)
	wi         *wordInfo // its key, classes, fields and base forms (read only)
	hash       uint64    // wordHash(w)
}

// sentence is a run of tokens ended by . ! ? ; or a line break.
type sentence struct {
	first, end int
	// question: the sentence asks without asserting (see asks).
	question bool
}

// doc is a message read by package prose, in the reader's terms.
type doc struct {
	text  string
	pd    *prose.Doc
	toks  []token
	sents []sentence
}

// shortQuestion is the most words a sentence that ends with '?' but does
// not open like a question may have to ask rather than assert.
//
// Choice: 5 ("Ready?", "Any other worries?"): chat text adds question
// marks to statements ("counsellors are bound by law to keep it
// private?"), and such a statement still brings what it says.
const shortQuestion = 5

// asks reports whether sentence s of pd asks without asserting: it opens
// like a question (prose), or it ends with '?' and is short.
func asks(pd *prose.Doc, s int) bool {
	st := pd.Sentences[s]
	return st.Opens || st.Marked && st.End-st.First <= shortQuestion
}

// docs holds prose.Docs whose buffers the reader reuses (tokenize).
var docs = sync.Pool{New: func() any { return new(prose.Doc) }}

// tokenize reads text with package prose into a pooled prose.Doc, each
// word's wordInfo from own. The doc's pd is for use while analysing
// only: release gives it back.
func tokenize(own *embCache, text string) doc {
	pd := docs.Get().(*prose.Doc)
	pd.Reparse(text)
	return fromProse(pd, own)
}

// release gives d.pd back for reuse and clears it. The tokens' words
// stay valid (prose.Doc.Reparse). Like the tagger's scratch space, a doc
// grown by a very long text is dropped, so one huge input does not pin
// its buffers.
func release(d *doc) {
	if d.pd != nil {
		if len(d.pd.Text) <= 1<<16 {
			docs.Put(d.pd)
		}
		d.pd = nil
	}
}

// fromProse converts pd to the reader's doc, each word's wordInfo from
// own.
func fromProse(pd *prose.Doc, own *embCache) doc {
	d := doc{text: pd.Text, pd: pd, toks: make([]token, len(pd.Tokens)), sents: make([]sentence, len(pd.Sentences))}
	for i := range pd.Tokens {
		t := &pd.Tokens[i]
		w := pd.Word(i)
		h := t.Hash
		if t.Flags&prose.Percent != 0 {
			w, h = "percent", wordHash("percent")
		}
		tk := token{w: w, i: int32(i), start: t.Start, end: t.End, sent: pd.Clauses[t.Clause].Sent, clause: t.Clause,
			upper: t.Flags&prose.Upper != 0, num: t.Flags&prose.Num != 0 && len(w) > 0 && w[0] >= '0' && w[0] <= '9', hash: h}
		tk.wi = own.word(w, h)
		d.toks[i] = tk
	}
	for s, st := range pd.Sentences {
		d.sents[s] = sentence{first: int(st.First), end: int(st.End), question: asks(pd, s)}
	}
	return d
}

func setOf(words string) map[string]bool { return prose.Set(words) }
