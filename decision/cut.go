package decision

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// CutReply returns what a persuader may see of a persuadee message that
// the engine cut off at its length limit (finish_reason "length";
// docs/llm-roles.md): the visible text as StripDecision reads it (for a
// JSON object cut before it closed, the part of its "reply" string that
// was written), trimmed to its last complete sentence, one ending in '.',
// '!' or '?' (with any closing quotes or brackets); "" when no sentence was
// completed. A cut message carries no decision: the caller records it as
// such, never parses one from it.
func CutReply(text string) string {
	body := StripThink(text)
	visible := ""
	if _, _, _, ok := decisionObject(body); ok {
		visible = StripDecision(body)
	} else if v, ok := partialString(body, "reply"); ok {
		visible = v
	} else {
		visible = StripDecision(body)
	}
	return lastSentence(visible)
}

// partialString reads the string value of key in a JSON object that may be
// cut off anywhere after the value's opening quote: the characters written
// so far, JSON escapes decoded (an escape cut in half is dropped). ok is
// false when body does not open a JSON object (code fences allowed) with
// that key.
func partialString(body, key string) (string, bool) {
	s := strings.TrimSpace(body)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "```json"), "```")
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return "", false
	}
	i := strings.Index(s, strconv.Quote(key))
	if i < 0 {
		return "", false
	}
	s = strings.TrimLeft(s[i+len(key)+2:], " \t\r\n")
	if !strings.HasPrefix(s, ":") {
		return "", false
	}
	s = strings.TrimLeft(s[1:], " \t\r\n")
	if !strings.HasPrefix(s, `"`) {
		return "", false
	}
	s = s[1:]
	var b strings.Builder
	for len(s) > 0 {
		switch c := s[0]; {
		case c == '"':
			return b.String(), true
		case c != '\\':
			r, n := utf8.DecodeRuneInString(s)
			b.WriteRune(r)
			s = s[n:]
			continue
		}
		// An escape: decode it whole, or stop at a cut one.
		n := 2
		if len(s) >= 2 && s[1] == 'u' {
			n = 6
		}
		if len(s) < n {
			break
		}
		v, err := strconv.Unquote(`"` + s[:n] + `"`)
		if err != nil {
			break
		}
		b.WriteString(v)
		s = s[n:]
	}
	return b.String(), true
}

// lastSentence trims s after its last sentence end: '.', '!' or '?' that
// ends s or is followed by white space, with the closing quotes and
// brackets that follow it; "" when s has none.
func lastSentence(s string) string {
	s = strings.TrimSpace(s)
	end := -1
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(s) && strings.IndexByte(`"')]`, s[j]) >= 0 {
			j++
		}
		if strings.HasPrefix(s[j:], "”") || strings.HasPrefix(s[j:], "’") {
			j += len("”")
		}
		if j == len(s) || s[j] == ' ' || s[j] == '\n' || s[j] == '\t' || s[j] == '\r' {
			end = j
		}
	}
	if end < 0 {
		return ""
	}
	return strings.TrimSpace(s[:end])
}
