// Package golden compares a test's output with a text file under testdata
// and rewrites the file when the test runs with -update, in the manner of
// Pebble's data-driven tests: a golden file is a sequence of cases, each a
// header line, a "----" line and the expected output, so a failure names
// the case and shows the lines that differ instead of a hash.
//
// Re-record after an intended change with
//
//	go test ./pkg -run TestName -update
//
// and review the change with git diff.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is registered in every test binary that imports this package.
var update = flag.Bool("update", false, "rewrite the golden files under testdata from the code's output")

// Separator is the line between a case's header and its expected output.
const Separator = "----"

// maxHunks and context bound the failure report: enough to read the
// first differences, not a whole re-recorded file.
const (
	maxHunks = 4
	context  = 3
)

// File builds the text of a golden file case by case.
type File struct {
	buf bytes.Buffer
}

// Case appends one case: header (one line, no newline), the separator,
// then output, which gets a final newline when it lacks one, then a blank
// line.
func (f *File) Case(header string, output []byte) {
	f.buf.WriteString(header)
	f.buf.WriteString("\n" + Separator + "\n")
	f.buf.Write(output)
	if len(output) == 0 || output[len(output)-1] != '\n' {
		f.buf.WriteByte('\n')
	}
	f.buf.WriteByte('\n')
}

// Bytes returns the file's text so far.
func (f *File) Bytes() []byte { return f.buf.Bytes() }

// Check compares got with the golden file at path (relative to the test's
// package directory, normally under testdata). With -update it writes got
// to path instead (creating its directory) and passes. Otherwise a missing
// file or any difference fails t with the differing lines, each hunk
// labelled with the header of the case it falls in.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (record it with go test -run %s -update)", err, t.Name())
	}
	if d := Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs from the output (- golden, + got; accept an intended change with go test -run %s -update):\n%s", path, t.Name(), d)
	}
}

// Diff returns a readable report of the lines where got differs from want,
// "" when they are equal. Lines are compared position by position after
// the common leading and trailing lines are set aside, so an inserted or
// deleted line shows as the region from it to the end of the change. At
// most maxHunks hunks are shown, each with context lines around it and the
// header of its case (the line before the nearest Separator above it).
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	pre := 0
	for pre < len(w) && pre < len(g) && w[pre] == g[pre] {
		pre++
	}
	suf := 0
	for suf < len(w)-pre && suf < len(g)-pre && w[len(w)-1-suf] == g[len(g)-1-suf] {
		suf++
	}
	wm, gm := w[pre:len(w)-suf], g[pre:len(g)-suf]
	var b strings.Builder
	fmt.Fprintf(&b, "golden %d lines, got %d; the first difference is at line %d\n", len(w), len(g), pre+1)
	hunks := 0
	for i := 0; i < max(len(wm), len(gm)) && hunks < maxHunks; {
		if i < len(wm) && i < len(gm) && wm[i] == gm[i] {
			i++
			continue
		}
		end := i
		for end < max(len(wm), len(gm)) && !(end < len(wm) && end < len(gm) && wm[end] == gm[end]) {
			end++
		}
		writeHunk(&b, w, pre, wm, gm, i, end)
		hunks++
		i = end
	}
	if hunks == maxHunks {
		b.WriteString("… (further differences not shown)\n")
	}
	return b.String()
}

// writeHunk writes the differing lines [i, end) of the golden's middle wm
// and got's middle gm (both starting at line pre of the golden w), with
// context lines of w around them.
func writeHunk(b *strings.Builder, w []string, pre int, wm, gm []string, i, end int) {
	lo, hi := pre+i, pre+min(end, len(wm))
	fmt.Fprintf(b, "@@ line %d", lo+1)
	if h := header(w, lo); h != "" {
		fmt.Fprintf(b, ", case %q", h)
	}
	b.WriteString(" @@\n")
	for k := max(0, lo-context); k < lo; k++ {
		fmt.Fprintf(b, "  %s\n", w[k])
	}
	for k := i; k < min(end, len(wm)); k++ {
		fmt.Fprintf(b, "- %s\n", wm[k])
	}
	for k := i; k < min(end, len(gm)); k++ {
		fmt.Fprintf(b, "+ %s\n", gm[k])
	}
	for k := hi; k < min(len(w), hi+context); k++ {
		fmt.Fprintf(b, "  %s\n", w[k])
	}
}

// header returns the header of the case that line i of w falls in: the
// line before the nearest Separator at or above i; "" when there is none.
func header(w []string, i int) string {
	for k := min(i, len(w)-1); k > 0; k-- {
		if w[k] == Separator {
			return w[k-1]
		}
	}
	return ""
}
