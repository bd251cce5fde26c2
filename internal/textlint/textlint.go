// Package textlint checks conversation text for the defects that make a
// simulated persuadee read as stitched templates: sentences starting in lower case, keyword crumbs, a
// persuadee speaking of itself in the third person, an honorific used as
// a name, and one reply repeated across many turns.
//
// It only reads text: feed it turns with Add (from any persuader and
// persuadee, simulated or not) and read the Report. Every check is defined
// precisely in the doc of its Report field; docs/simulator/replies.md
// ("Text lint") gives the figures of the built-in sets.
package textlint

import (
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/scenario"
)

// Report accumulates the lint over turns. The zero value is ready to use.
type Report struct {
	// Replies and Utterances count the persuadee and persuader texts added.
	Replies, Utterances int
	// LowerStarts counts sentences (on either side) whose first letter is
	// a lower-case ASCII letter. A sentence starts the text or follows
	// '.', '!' or '?' and white space; a period after an abbreviation
	// ("e.g.", "Mr.", "etc.") or a single letter does not end a sentence.
	// Opening quotes and brackets before the letter are skipped.
	LowerStarts int
	// Crumbs counts replies containing a crumb: a sentence ending in '.'
	// or '!' of at most two words whose last word is a filler (really,
	// honestly, basically, though, anyway, actually, truly, seriously,
	// frankly, mostly, mainly, literally, obviously, clearly), e.g.
	// "Afford, really." or "Website, honestly.".
	Crumbs int
	// ThirdPerson counts replies in which the persuadee uses a
	// third-person singular pronoun (scenario.ThirdPerson: he, she, him,
	// his, her, hers, himself, herself and contractions). The persuadee
	// speaks of itself in the first person; a pronoun in its reply is
	// taken to be a third-person self-reference.
	ThirdPerson int
	// HonorificNames counts texts (either side) where a title (Mr, Mrs, Ms,
	// Mx, Miss, Dr, Prof, Rev, Revd, with or without a period) is not
	// followed by a space and a capitalised name: "Mr, what worries you?".
	HonorificNames int
	// counts holds how often each reply text was seen.
	counts map[string]int
	// Examples holds up to 5 offending texts per check, "check: text".
	Examples []string
	perKind  map[string]int
}

// Add lints one turn: the persuader's utterance and the persuadee's reply
// (either may be "" and is then skipped).
func (r *Report) Add(persuader, persuadee string) {
	if r.counts == nil {
		r.counts = map[string]int{}
		r.perKind = map[string]int{}
	}
	if persuader != "" {
		r.Utterances++
		r.common(persuader)
	}
	if persuadee == "" {
		return
	}
	r.Replies++
	r.counts[persuadee]++
	r.common(persuadee)
	for _, s := range Sentences(persuadee) {
		if Crumb(s) {
			r.Crumbs++
			r.example("crumb", persuadee)
			break
		}
	}
	if scenario.ThirdPerson(persuadee) {
		r.ThirdPerson++
		r.example("third person", persuadee)
	}
}

func (r *Report) common(text string) {
	for _, s := range Sentences(text) {
		if LowerStart(s) {
			r.LowerStarts++
			r.example("lower-case start", text)
		}
	}
	if HonorificAsName(text) {
		r.HonorificNames++
		r.example("honorific as name", text)
	}
}

func (r *Report) example(kind, text string) {
	if r.perKind[kind] < 5 {
		r.perKind[kind]++
		r.Examples = append(r.Examples, kind+": "+text)
	}
}

// Top returns the most frequent reply and its count (ties go to the
// lexically smallest text, so the report is deterministic), or "", 0.
func (r *Report) Top() (string, int) {
	best, n := "", 0
	for t, c := range r.counts {
		if c > n || c == n && t < best {
			best, n = t, c
		}
	}
	return best, n
}

// TopShare is the most frequent reply's share of all replies, in [0, 1]
// (0 with no replies).
func (r *Report) TopShare() float64 {
	if r.Replies == 0 {
		return 0
	}
	_, n := r.Top()
	return float64(n) / float64(r.Replies)
}

// Distinct is the number of distinct reply texts.
func (r *Report) Distinct() int { return len(r.counts) }

// String renders the figures on one line.
func (r *Report) String() string {
	top, n := r.Top()
	return fmt.Sprintf("replies %d, utterances %d, lower-case starts %d, crumbs %d (%.1f %%), third person %d, honorific as name %d, distinct replies %d, top reply %d (%.2f %%) %q",
		r.Replies, r.Utterances, r.LowerStarts, r.Crumbs, pct(r.Crumbs, r.Replies), r.ThirdPerson, r.HonorificNames,
		r.Distinct(), n, 100*r.TopShare(), top)
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// abbreviations end with a period that does not end a sentence.
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "vs": true, "mr": true, "mrs": true, "ms": true, "mx": true, "dr": true,
	"prof": true, "rev": true, "revd": true, "st": true, "no": false, "approx": true, "cf": true,
}

// Sentences splits text into sentences (see Report.LowerStarts for where
// a sentence ends); each keeps its end punctuation, trimmed of spaces.
func Sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(text) && strings.IndexByte(".!?\"')]", text[j]) >= 0 {
			j++
		}
		if j < len(text) && text[j] != ' ' && text[j] != '\n' && text[j] != '\t' {
			i = j - 1
			continue
		}
		if c == '.' && j == i+1 {
			// the word before the period
			k := i
			for k > start && text[k-1] != ' ' && text[k-1] != '(' && text[k-1] != '"' {
				k--
			}
			w := strings.ToLower(text[k:i])
			if abbreviations[w] || len(w) == 1 && w[0] >= 'a' && w[0] <= 'z' {
				i = j - 1
				continue
			}
		}
		if s := strings.TrimSpace(text[start:j]); s != "" {
			out = append(out, s)
		}
		start = j
		i = j - 1
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// LowerStart reports whether sentence s starts (after opening quotes,
// brackets and dashes) with a lower-case ASCII letter.
func LowerStart(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\'' || c == '(' || c == '[' || c == '-' || c == ' ' || c == '*':
			continue
		case c >= 'a' && c <= 'z':
			return true
		default:
			return false
		}
	}
	return false
}

// fillers are the words a crumb ends on.
var fillers = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`really honestly basically though anyway actually truly seriously frankly
mostly mainly literally obviously clearly`) {
		fillers[w] = true
	}
}

// Crumb reports whether sentence s is a keyword crumb (see Report.Crumbs).
func Crumb(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || (s[len(s)-1] != '.' && s[len(s)-1] != '!') {
		return false
	}
	w := words(s)
	return len(w) > 0 && len(w) <= 2 && fillers[strings.ToLower(w[len(w)-1])]
}

// words returns the letter runs (with inner apostrophes) of s.
func words(s string) []string {
	var out []string
	i := 0
	for i < len(s) {
		if !letter(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && (letter(s[j]) || s[j] == '\'' && j+1 < len(s) && letter(s[j+1])) {
			j++
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func letter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 }

// titles are the honorifics HonorificAsName looks for, as written.
var titles = map[string]bool{"Mr": true, "Mrs": true, "Ms": true, "Mx": true, "Miss": true, "Dr": true,
	"Prof": true, "Rev": true, "Revd": true, "MR": true, "DR": true}

// HonorificAsName reports whether text uses a title as if it were a name:
// a title (see Report.HonorificNames) not followed by one space and a
// capital letter ("Mr, ..." or "... Dr.").
func HonorificAsName(text string) bool {
	i := 0
	for i < len(text) {
		if !letter(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && letter(text[j]) {
			j++
		}
		if titles[text[i:j]] && (i == 0 || !letter(text[i-1])) {
			k := j
			if k < len(text) && text[k] == '.' {
				k++
			}
			if !(k+1 < len(text) && text[k] == ' ' && text[k+1] >= 'A' && text[k+1] <= 'Z') {
				return true
			}
		}
		i = j
	}
	return false
}
