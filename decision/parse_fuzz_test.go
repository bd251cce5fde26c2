package decision

import (
	"strings"
	"testing"
)

// FuzzParse checks Parse's promises on any reply, seeded with the messy
// outputs of parseCases: a failed parse is Continue and never acceptance,
// a parsed decision is one of the four; a reply ending in the strong tag
// "DECISION: I do not accept ..." is a refusal whatever prose comes before
// it (prose without JSON objects or markup tags, which take precedence by
// design) and whatever follows the negated word on its line (without a
// second "decision"); and what StripDecision leaves has no "<think>" and,
// for a reply without a JSON object (whose reply field is free text), no
// parseable decision.
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		f.Add(c.in, "")
		f.Add(c.in, c.name)
	}
	f.Fuzz(func(t *testing.T, text, tail string) {
		d, ok := Parse(text)
		if !ok && d != Continue {
			t.Fatalf("Parse(%q) failed with %q, want continue", text, d)
		}
		if ok && !d.Valid() {
			t.Fatalf("Parse(%q) = %q, not a decision", text, d)
		}
		s := StripDecision(text)
		if strings.Contains(s, "<think>") {
			t.Fatalf("StripDecision(%q) = %q keeps <think>", text, s)
		}
		if d, ok := Parse(s); ok && !strings.Contains(text, "{") {
			t.Fatalf("StripDecision(%q) = %q still parses as %q", text, s, d)
		}
		if strings.ContainsAny(text, "{<") || strings.ContainsAny(tail, "{<\n\r") || strings.Contains(lowerASCII(tail), "decision") {
			return
		}
		neg := text + "\nDECISION: I do not accept " + tail
		if d, ok := Parse(neg); d != Reject || !ok {
			t.Fatalf("Parse(%q) = %q, %v; want reject", neg, d, ok)
		}
	})
}
