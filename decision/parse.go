package decision

import (
	"encoding/json"
	"strings"
	"unicode"
)

// Parse reads the machine-readable decision from one persuadee message (its
// own latest reply only; docs/engines.md): either a tagged line such as
// "DECISION: accept" or a JSON object {"decision": "..."} (structured
// output). Reasoning inside <think>...</think>, and everything after an
// unterminated <think>, is ignored: a reply cut off while thinking carries no
// decision.
//
// Tolerated: case, surrounding whitespace, markdown (bold, backticks,
// headers, brackets), quotes, trailing punctuation, "Decision is:", a header
// "Decision" with the value on the next line, <decision>...</decision>, and
// synonyms:
//
//	accept:      accept, agree, yes (and inflections); "accept, no
//	             conditions", "accept (no conditions)"
//	conditional: conditional, accept with conditions, accept/agree/yes if,
//	             accept but ..., maybe if, provided, on condition
//	reject:      reject, decline, refuse, no, unacceptable, unwilling,
//	             disagree, a negated accept ("No, I don't accept",
//	             "I do not agree")
//	continue:    continue, undecided, pending, none, not yet, no decision
//
// Words match whole: "unacceptable" is a refusal, not "accept". A reply
// without a tag that opens with a capitalised decision word ("REJECT. I
// won't.", "ACCEPT!") is read as that decision. When several tagged
// lines exist the last one counts. ok is false when there is no tag or its
// value is not recognised; callers then ask once for a repair and otherwise
// treat the reply as Continue (a protocol violation), never as acceptance.
func Parse(text string) (d Decision, ok bool) {
	body := StripThink(text)
	if v, found := jsonDecision(body); found {
		return classify(v)
	}
	if v, found := xmlDecision(body); found {
		return classify(v)
	}
	lines := strings.Split(body, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		v, _, strong, found := tagValue(lines[i])
		if !found {
			continue
		}
		if v == "" { // header style: value on the next non-empty line
			v = headerValue(lines[i+1:])
		}
		if d, ok := classify(v); ok || strong {
			return d, ok
		}
		// A weak tag in prose ("a big decision - let me think") that says
		// nothing recognisable is not the protocol line; look further up.
	}
	d, _, ok = leadingKeyword(body)
	return d, ok
}

// leadingKeyword reads an untagged reply that opens with a decision word
// written in capitals, alone or followed by punctuation: "REJECT. I won't
// give.", "ACCEPT!" (models that drop the tag but keep its value). Only
// capitals count, so prose such as "Accept that I need time" is no tag.
// rest is the reply after the word and its punctuation.
func leadingKeyword(body string) (d Decision, rest string, ok bool) {
	s := strings.TrimLeft(strings.TrimSpace(body), " \t*_`#>[(\"'")
	n := 0
	for n < len(s) && s[n] >= 'A' && s[n] <= 'Z' {
		n++
	}
	if n < len(s) && !strings.ContainsRune(".:!,;-—–*_`])\"'\n\r", rune(s[n])) {
		return Continue, "", false
	}
	switch s[:n] {
	case "ACCEPT", "ACCEPTED", "AGREE":
		d = Accept
	case "CONDITIONAL":
		d = Conditional
	case "REJECT", "REJECTED", "DECLINE", "REFUSE":
		d = Reject
	case "CONTINUE", "PENDING", "UNDECIDED":
		d = Continue
	default:
		return Continue, "", false
	}
	return d, strings.TrimLeft(s[n:], " \t.:!,;-—–*_`])\"'"), true
}

// StripDecision returns what the persuader may see of a persuadee message:
// the text without any <think>...</think> block (an unterminated <think>
// removes everything after it; a lone "</think>" removes everything before
// it), without every decision tag (the tagged line, or the tail of a line
// from the tag on, and the value line of a header-style tag), without a
// <decision> element, without a leading capitalised decision word (see
// Parse), and, for a structured-output JSON object, only its
// "reply" (or "message", "response", "text") field. Surrounding whitespace
// is trimmed.
func StripDecision(text string) string {
	body := StripThink(text)
	if obj, _, _, ok := decisionObject(body); ok {
		for _, k := range []string{"reply", "message", "response", "text", "content"} {
			if s, ok := Field(obj, k).(string); ok {
				return strings.TrimSpace(s)
			}
		}
		return ""
	}
	if i := strings.Index(lowerASCII(body), "<decision>"); i >= 0 {
		lo := lowerASCII(body)
		if j := strings.Index(lo[i:], "</decision>"); j >= 0 {
			body = body[:i] + body[i+j+len("</decision>"):]
		} else {
			body = body[:i]
		}
	}
	lines := strings.Split(body, "\n")
	out := lines[:0]
	skipValue := false
	for li, ln := range lines {
		if skipValue {
			if strings.TrimSpace(trimMarkup(ln)) == "" {
				continue
			}
			skipValue = false
			continue
		}
		v, at, strong, found := tagValue(ln)
		if found && !strong {
			hv := v
			if hv == "" { // header style, as Parse reads it
				hv = headerValue(lines[li+1:])
			}
			_, found = classify(hv)
		}
		if !found {
			out = append(out, ln)
			continue
		}
		if v == "" {
			skipValue = true
		}
		// A line may hold several tags ("Decision: continue0 Decision:
		// continue"): cut at each until none is left.
		keep := ln[:at]
		for {
			v, at, strong, found := tagValue(keep)
			if found && !strong {
				_, found = classify(v)
			}
			if !found || at >= len(keep) {
				break
			}
			keep = keep[:at]
		}
		if keep := strings.TrimRight(keep, " \t*_`#>[(\"'-—–|"); strings.TrimSpace(keep) != "" {
			out = append(out, keep)
		}
	}
	s := strings.TrimSpace(strings.Join(out, "\n"))
	// A horizontal rule left dangling above a removed tag.
	for _, hr := range []string{"---", "***", "___"} {
		s = strings.TrimSpace(strings.TrimSuffix(s, hr))
	}
	// Every leading keyword goes: "CONDITIONAL!CONDITIONAL" would leave a
	// second one that Parse still reads.
	for {
		_, rest, ok := leadingKeyword(s)
		if !ok {
			break
		}
		s = strings.TrimSpace(rest)
	}
	return s
}

// headerValue is the value of a header-style tag ("Decision:" alone on
// its line): the first non-empty line of rest without markup, or "".
func headerValue(rest []string) string {
	for _, ln := range rest {
		if s := strings.TrimSpace(trimMarkup(ln)); s != "" {
			return s
		}
	}
	return ""
}

// StripThink removes reasoning blocks (docs/engines.md): every
// <think>...</think> block (tags in any ASCII case), everything after an
// unterminated <think>, and everything before a lone </think> (chat
// templates that open the block in the prompt).
func StripThink(text string) string {
	lo := lowerASCII(text)
	if i := strings.Index(lo, "</think>"); i >= 0 && !strings.Contains(lo[:i], "<think>") {
		text, lo = text[i+len("</think>"):], lo[i+len("</think>"):]
	}
	for {
		i := strings.Index(lo, "<think>")
		if i < 0 {
			return text
		}
		j := strings.Index(lo[i:], "</think>")
		if j < 0 {
			return text[:i]
		}
		end := i + j + len("</think>")
		text, lo = text[:i]+text[end:], lo[:i]+lo[end:]
	}
}

// tagValue finds the last decision tag in one line. It returns the value
// after the tag (markup removed; "" for a bare header-style tag), the byte
// offset where the tag begins (including "final"/"my" and markup before
// it), whether the tag is strong (it starts the line, or is written
// "DECISION"), and whether a tag was found.
func tagValue(line string) (value string, at int, strong, found bool) {
	lo := lowerASCII(line)
	end := len(lo)
	for {
		i := strings.LastIndex(lo[:end], "decision")
		if i < 0 {
			return "", 0, false, false
		}
		end = i
		if i > 0 && isLetter(lo[i-1]) {
			continue
		}
		j := i + len("decision")
		if j < len(lo) && isLetter(lo[j]) { // "decisions", "decisive"
			continue
		}
		j = skipMarkup(lo, j)
		if strings.HasPrefix(lo[j:], "is") && (j+2 == len(lo) || !isLetter(lo[j+2])) {
			j = skipMarkup(lo, j+2)
		}
		sep := ""
		for _, s := range []string{"->", "=>", ":", "=", "—", "–", "-"} {
			if strings.HasPrefix(lo[j:], s) {
				j += len(s)
				sep = s
				break
			}
		}
		rest := strings.TrimSpace(trimMarkup(line[j:]))
		start := tagStart(lo, i)
		strong = strings.TrimSpace(trimMarkup(line[:start])) == "" || line[i:i+len("decision")] == "DECISION"
		dash := sep == "-" || sep == "—" || sep == "–"
		switch {
		case dash && j < len(lo) && lo[j] != ' ' && lo[j] != '\t' && line[i:i+len("decision")] != "DECISION":
			// "decision-making" is a word, not a tag.
			continue
		case sep == "" && (rest != "" || !strong):
			// Without a separator only a bare header ("## Decision") is a tag.
			continue
		case !strong && (sep != ":" && sep != "=" || len(words(rest)) > maxWeakWords || !weakValue(rest)):
			// In prose only "decision: <short value>" that opens with a
			// decision word is a tag; "a big decision - no way" and "a big
			// decision: no way I can rush it" are not.
			continue
		}
		return rest, start, strong, true
	}
}

// maxWeakWords bounds the value of a tag inside prose ("...my decision:
// accept").
const maxWeakWords = 8

// weakOpeners are the words a tag inside prose may open its value with:
// the protocol's values and their synonyms, never "yes", "no" or "maybe",
// which open ordinary sentences ("a big decision: no way I can rush it").
var weakOpeners = set("accept", "accepts", "accepted", "agree", "agreed", "conditional", "conditionally",
	"reject", "rejected", "decline", "declined", "refuse", "refused", "continue", "undecided", "pending", "none")

// weakValue reports whether v can be the value of a tag inside prose: it
// opens with a decision word (weakOpeners), is one word alone ("my
// decision: no."), opens with "yes" or "no" followed by a decision word
// ("my decision: yes, I accept"), or is "not yet" / "no decision" (see
// classify).
func weakValue(v string) bool {
	ws := words(v)
	switch {
	case len(ws) == 0:
		return false
	case len(ws) == 1, weakOpeners[ws[0]]:
		return true
	case ws[0] == "yes" || ws[0] == "no":
		for _, w := range ws[1:] {
			if weakOpeners[w] {
				return true
			}
		}
	}
	return ws[0] == "not" && ws[1] == "yet" || ws[0] == "no" && ws[1] == "decision"
}

// tagStart widens a tag at byte i back over "final "/"my " and markup.
func tagStart(lo string, i int) int {
	k := i
	for k > 0 && strings.ContainsRune(" \t*_`#>[(\"'", rune(lo[k-1])) {
		k--
	}
	for _, w := range []string{"final", "my", "the"} {
		if k >= len(w) && lo[k-len(w):k] == w && (k == len(w) || !isLetter(lo[k-len(w)-1])) {
			k -= len(w)
			for k > 0 && strings.ContainsRune(" \t*_`#>[(\"'", rune(lo[k-1])) {
				k--
			}
		}
	}
	return k
}

func skipMarkup(lo string, j int) int {
	for j < len(lo) && strings.ContainsRune(" \t*_`#)]\"'", rune(lo[j])) {
		j++
	}
	return j
}

// trimMarkup removes markdown emphasis, headers, bullets, quotes and
// brackets around a value.
func trimMarkup(s string) string {
	return strings.Trim(s, " \t\r*_`#>[](){}\"'“”‘’")
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 }

// xmlDecision reads <decision>value</decision>.
func xmlDecision(body string) (string, bool) {
	lo := lowerASCII(body)
	i := strings.LastIndex(lo, "<decision>")
	if i < 0 {
		return "", false
	}
	v := body[i+len("<decision>"):]
	if j := strings.Index(lowerASCII(v), "</decision>"); j >= 0 {
		v = v[:j]
	}
	return strings.TrimSpace(v), true
}

// jsonDecision reads the "decision" field of the last JSON object in body
// that has one (code fences allowed around it).
func jsonDecision(body string) (string, bool) {
	obj, _, _, ok := decisionObject(body)
	if !ok {
		return "", false
	}
	v, _ := Field(obj, "decision").(string)
	return v, true
}

// decisionObject finds the last balanced {...} in body that decodes as a
// JSON object with a "decision" key (any case); it returns the object and
// its byte span.
func decisionObject(body string) (map[string]any, int, int, bool) {
	return LastObject(body, func(obj map[string]any) bool { return Field(obj, "decision") != nil })
}

// LastObject finds the last balanced {...} in text (braces inside JSON
// strings skipped; code fences and prose around it allowed) that decodes
// as a JSON object and, when want is non-nil, satisfies want. It tries
// the 8 last candidates, each ending before the previous one starts, and
// returns the object and its byte span text[start:end]; ok is false when
// none fits. Used for structured-output replies here and for the JSON
// verdicts of package llmagent's judges.
func LastObject(text string, want func(map[string]any) bool) (obj map[string]any, start, end int, ok bool) {
	end = len(text)
	for tries := 0; tries < 8; tries++ {
		j := strings.LastIndexByte(text[:end], '}')
		if j < 0 {
			return nil, 0, 0, false
		}
		i := matchOpen(text, j)
		if i < 0 {
			return nil, 0, 0, false
		}
		var o map[string]any
		if err := json.Unmarshal([]byte(text[i:j+1]), &o); err == nil && (want == nil || want(o)) {
			return o, i, j + 1, true
		}
		end = i
	}
	return nil, 0, 0, false
}

// matchOpen returns the index of the '{' balancing the '}' at j, skipping
// braces inside JSON strings, or -1.
func matchOpen(s string, j int) int {
	depth := 0
	inStr := false
	for k := j; k >= 0; k-- {
		c := s[k]
		if c == '"' && !(k > 0 && s[k-1] == '\\') {
			inStr = !inStr
			continue
		}
		if inStr {
			continue
		}
		switch c {
		case '}':
			depth++
		case '{':
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// Field returns obj[key], or else the value of a key equal to key under
// Unicode case folding ("Decision" for "decision"); nil when there is
// none.
func Field(obj map[string]any, key string) any {
	if v, ok := obj[key]; ok {
		return v
	}
	for k, v := range obj {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

// words splits a value into lower-case words of letters and apostrophes
// (curly apostrophes folded), so punctuation never glues to a word.
func words(v string) []string {
	v = strings.NewReplacer("’", "'", "‘", "'").Replace(strings.ToLower(v))
	return strings.FieldsFunc(v, func(r rune) bool {
		return !(unicode.IsLetter(r) || r == '\'' || r == '/')
	})
}

var (
	acceptWords = set("accept", "accepts", "accepted", "accepting", "agree", "agrees", "agreed", "agreeing",
		"yes", "yeah", "yep")
	rejectWords = set("reject", "rejects", "rejected", "rejecting", "decline", "declines", "declined", "declining",
		"refuse", "refuses", "refused", "refusing", "no", "nope",
		"unacceptable", "unwilling", "disagree", "disagrees", "disagreed")
	condWords     = set("conditional", "conditionally", "conditions", "condition", "provided", "providing")
	continueWords = set("continue", "continuing", "undecided", "pending", "none", "undetermined", "unsure",
		"tbd", "n/a", "null", "considering", "deciding", "thinking")
	negators = set("not", "don't", "dont", "do't", "never", "cannot", "can't", "cant", "won't", "wont",
		"doesn't", "didn't", "unable", "no", "nor")
	// condAfter are words that, shortly after an accept word, make it
	// conditional ("accept with conditions", "yes if", "agree, but ...").
	condAfter = set("if", "but", "conditional", "provided", "providing", "condition", "conditions", "conditionally", "once", "assuming", "unless", "as")
)

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// classify maps a decision value to a Decision (see Parse).
func classify(v string) (Decision, bool) {
	ws := words(v)
	for i, w := range ws {
		next := ""
		if i+1 < len(ws) {
			next = ws[i+1]
		}
		switch {
		case continueWords[w]:
			return Continue, true
		case w == "not" && (next == "yet" || next == "decided" || next == "sure"),
			w == "no" && (next == "decision" || next == "choice" || next == "final" || next == "answer"),
			w == "maybe" && next != "if" && next != "yes":
			return Continue, true
		case condWords[w]:
			return Conditional, true
		case w == "maybe" || w == "perhaps": // "maybe if", "maybe yes"
			return Conditional, true
		case acceptWords[w]:
			for k := i - 1; k >= 0 && k >= i-3; k-- {
				if negators[ws[k]] {
					return Reject, true
				}
			}
			for k := i + 1; k < len(ws) && k <= i+4; k++ {
				if condAfter[ws[k]] && !(ws[k] == "as" && (k+1 >= len(ws) || ws[k+1] != "long")) && !noCondition(ws, k) {
					return Conditional, true
				}
			}
			return Accept, true
		case rejectWords[w]:
			return Reject, true
		case negators[w] && next != "" && acceptWords[next]:
			return Reject, true
		}
	}
	return Continue, false
}

// noCondition reports whether the condition word ws[k] is denied: "no
// conditions", "zero conditions", "without conditions", "without any
// (other, further) conditions", "not conditional". "provided" and
// "providing" are never denied, nor a negator that governs something else
// ("no problem, provided ...", "not without conditions").
func noCondition(ws []string, k int) bool {
	prev := func(d int) string {
		if k-d < 0 {
			return ""
		}
		return ws[k-d]
	}
	switch ws[k] {
	case "condition", "conditions":
		switch {
		case prev(1) == "no" || prev(1) == "zero":
			return true
		case prev(1) == "without":
			return prev(2) != "not"
		case prev(1) == "any" || prev(1) == "other" || prev(1) == "further":
			return prev(2) == "no" || prev(2) == "without" && prev(3) != "not"
		}
	case "conditional", "conditionally":
		return prev(1) == "not"
	}
	return false
}

// lowerASCII folds A-Z only, so byte offsets match the original string.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
