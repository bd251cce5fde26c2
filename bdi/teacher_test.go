package bdi

import (
	"strings"
	"testing"
)

func TestParseState(t *testing.T) {
	good := `{"belief":"b","desire":"d","intention":"i","receptivity":0.4,"confidence":"0.7","valence":-0.2}`
	for _, c := range []struct {
		name, in, err string
	}{
		{"plain", good, ""},
		{"think and fence", "<think>let me see {not json}</think>\nHere you go:\n```json\n" + good + "\n```", ""},
		{"prose around", "Sure! " + good + " Hope this helps.", ""},
		{"case and aliases", `{"Belief":"b","DESIRE":"d","Intention":"i","openness":0.4,"commitment":0.7,"valence":-0.2}`, ""},
		{"braces in strings", `{"belief":"b {x}","desire":"d","intention":"i","receptivity":0.4,"confidence":0.7,"valence":-0.2}`, ""},
		{"missing field", `{"belief":"b","desire":"d","intention":"i","receptivity":0.4,"confidence":0.7}`, `"valence" missing`},
		{"out of range", `{"belief":"b","desire":"d","intention":"i","receptivity":1.4,"confidence":0.7,"valence":0}`, "receptivity = 1.4 outside [0, 1]"},
		{"not a number", `{"belief":"b","desire":"d","intention":"i","receptivity":"high","confidence":0.7,"valence":0}`, `"receptivity" = "high" is not a number`},
		{"truncated", `{"belief":"b","desire":"d"`, "no JSON object"},
		{"no json", "RATIONAL", "no JSON object"},
		{"belief not string", `{"belief":3,"desire":"d","intention":"i","receptivity":0.4,"confidence":0.7,"valence":0}`, `"belief" is not a string`},
	} {
		s, err := ParseState(c.in)
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if s.Receptivity != 0.4 || s.Confidence != 0.7 || s.Valence != -0.2 || s.Desire != "d" {
				t.Errorf("%s: %+v", c.name, s)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
}
