package decision

import "testing"

// Replies an engine cut at max_tokens (finish_reason "length"), in both
// protocols, and what the persuader may see of them.
func TestCutReply(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"text mid-sentence", "I see your point. But the cost worries me, and the ti", "I see your point."},
		{"text before the tag", "That helps a lot! I think I can try it.\nDECISION: acc", "That helps a lot! I think I can try it."},
		{"no whole sentence", "Well, I suppose that if the", ""},
		{"quoted end", `She said "no." Then we`, `She said "no."`},
		{"decimal is no end", "It costs 3.5 percent of my", ""},
		{"json cut in the reply", `{"reply": "Fine. I'd want to \"see\" the numbers first, but`, `Fine.`},
		{"json escapes", `{"reply": "Okay.\nLet me think about`, "Okay."},
		{"json cut in an escape", `{"reply": "Sure! And \u00`, "Sure!"},
		{"json cut after the reply", `{"reply": "No. Not today.", "decis`, "No. Not today."},
		{"json complete", `{"reply": "Yes. Count me in.", "decision": "accept"}`, "Yes. Count me in."},
		{"fenced json", "```json\n{\"reply\": \"Hmm? Maybe.\", \"de", "Hmm? Maybe."},
		{"cut while thinking", "<think>They have a point, but I", ""},
		{"thinking then cut text", "<think>ok</think>I like it. But wh", "I like it."},
	} {
		if got := CutReply(c.in); got != c.want {
			t.Errorf("%s: CutReply(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}
