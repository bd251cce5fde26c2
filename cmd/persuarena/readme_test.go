package main

import (
	"os"
	"strings"
	"testing"
)

// readmeSection returns the text of README.md's section under heading
// (a whole line such as "## Set-up: two commands") up to the next heading
// of the same or a higher level, or fails t.
func readmeSection(t *testing.T, readme, heading string) string {
	t.Helper()
	level := strings.Index(heading, " ")
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no heading %q", heading)
	}
	rest := readme[i+len(heading)+2:]
	at, fenced := 0, false
	for _, l := range strings.SplitAfter(rest, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if n := strings.IndexFunc(l, func(r rune) bool { return r != '#' }); !fenced && n > 0 && n <= level && strings.HasPrefix(l[n:], " ") {
			return rest[:at]
		}
		at += len(l)
	}
	return rest
}

// commands returns the command lines (not blank, not comments) of the
// sh code blocks of md.
func commands(md string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in
		case in && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#"):
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// The README's set-up section lists exactly its two commands (the main
// job, the tests) and needs only Go; the real-engine script, which needs
// npm, cmake and a C++ compiler, has a heading of its own naming them.
func TestReadmeSetUp(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	setup := readmeSection(t, readme, "## Set-up: two commands")
	top := setup
	if i := strings.Index(setup, "\n### "); i >= 0 {
		top = setup[:i]
	}
	if got := commands(top); len(got) != 2 || got[0] != "go run ./cmd/persuarena eval" || got[1] != "go test ./..." {
		t.Errorf("set-up commands %q, want the main job and the tests", got)
	}
	if !strings.Contains(top, "Needs Go 1.26") {
		t.Error("the set-up section no longer says what it needs")
	}
	eng := readmeSection(t, readme, "### Real-engine checks")
	if got := commands(eng); len(got) != 1 || got[0] != "scripts/real-engine" {
		t.Errorf("real-engine commands %q", got)
	}
	for _, need := range []string{"npm", "cmake", "C++ compiler"} {
		if !strings.Contains(eng, need) {
			t.Errorf("the real-engine heading does not name its requirement %q", need)
		}
	}
}
