package perception

import (
	"strings"
	"testing"
)

// TestFramePreCheckNeverRejectsAMatch checks that mayMatch, the
// signature pre-check of frameBank.match, is true wherever a frame
// matches: every frame is written out as a sentence (each item's first
// alternative, a field's first word, "very" for *, "really" for a gap),
// and every match found in it must pass the pre-check.
func TestFramePreCheckNeverRejectsAMatch(t *testing.T) {
	c := newEmbCache()
	seen := map[*frame]bool{}
	var all []*frame
	for _, fs := range frames.byKey {
		for _, f := range fs {
			if !seen[f] {
				seen[f] = true
				all = append(all, f)
			}
		}
	}
	matched := 0
	for _, f := range all {
		var ws []string
		for _, it := range f.items {
			switch {
			case it.gap:
				ws = append(ws, "really")
			case it.any:
				ws = append(ws, "very")
			case it.field != 0:
				ws = append(ws, cueFields[fieldNames[it.field-1]][0])
			default:
				ws = append(ws, it.alts[0]...)
			}
		}
		d := tokenize(c, "Well, "+strings.Join(ws, " ")+".")
		ts := d.toks
		keys, fields := signature(ts)
		for i := range ts {
			for _, g := range ts[i].wi.frames {
				if !matchItems(g.items, ts, i) {
					continue
				}
				if g == f {
					matched++
				}
				if !g.mayMatch(&keys, fields) {
					t.Errorf("frame %q matches %q from word %d, but the pre-check rejects it", g.source, d.text, i)
				}
			}
		}
		release(&d)
	}
	// a frame whose first word is negated or inflected oddly may not
	// match its own rendering; nearly all do
	if matched < len(all)*9/10 {
		t.Fatalf("only %d of %d frames match their own rendering: the check sees too few matches", matched, len(all))
	}
}
