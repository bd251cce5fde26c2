package scenario

import (
	"strings"
	"testing"
)

func TestParseSplit(t *testing.T) {
	for in, want := range map[string]Split{"train": Train, "val": Val, "heldout": Heldout, "all": "", "": ""} {
		if got, err := ParseSplit(in); got != want || err != nil {
			t.Errorf("ParseSplit(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"test", "Train", "held-out", " all"} {
		if _, err := ParseSplit(bad); err == nil || !strings.Contains(err.Error(), `unknown split "`+bad+`"`) {
			t.Errorf("ParseSplit(%q): %v", bad, err)
		}
	}
}
