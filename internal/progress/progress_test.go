package progress

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// Off a terminal, 20 items print a line at every tenth: 2, 4, ..., 20.
func TestLinesOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 20, "eval")
	for range 19 {
		b.Increment()
	}
	b.Add(1)
	b.Wait()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, l := range lines {
		want := regexp.MustCompile(`^eval: ` + []string{"2", "4", "6", "8", "10", "12", "14", "16", "18", "20"}[i] + `/20 \(\d+\.\ds\)$`)
		if !want.MatchString(l) {
			t.Errorf("line %d: %q", i, l)
		}
	}
}
