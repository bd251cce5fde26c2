// Package citecheck finds citations of documents that do not ship: the
// project's method reference ("SPEC" with a section sign), the numbered
// paper files ("seed" with a three-digit number) and tracker issues
// ("issue" with a number). Product code, CLI help and docs cite papers by
// name instead (docs/papers.md).
//
// It also finds references to trackers and work sessions a reader cannot
// open, and narration of the code's history: "the <topic> issue", "the
// <issue>'s minimum", "an <earlier> session", "<used to> take 2 GB",
// "<exactly as> before" (the angle brackets keep this file from matching
// itself). Such text says where a choice came from instead of why the
// code is as it is, and means nothing to a newcomer; write the reason
// (the measurement, the constraint) instead. Upstream projects' trackers
// cited by project (llama.cpp's issue #7197, a GitHub URL) are references
// a reader can follow and are not flagged.
//
// The package's test walks the module and fails on any finding.
package citecheck

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The rules, each a Finding's Rule. The spaces in the patterns are
// written as [ ] so that this file does not match itself.
const (
	// Citation is a citation of a document that does not ship.
	Citation = "citation"
	// Tracker is a reference to an unnamed tracker or session, or history
	// narration.
	Tracker = "tracker"
)

// citation matches the forbidden citations.
var citation = regexp.MustCompile(`SPEC[ ]§|\bseed[ ]00[0-9]|\b[Ii]ssue[ ][0-9]+`)

// tracker matches references to the project's own trackers and sessions
// and history narration. An issue is flagged when it has no project in
// front: possessive, named by its topic or place in a sequence ("the
// <simulator> issue", "the <previous> issue"), cited in parentheses
// ("(<performance> issue)") or speaking ("the <issue> lists"). "issue"
// as plain English ("the issue is", a phrase the planner matches) and
// upstream trackers named by project pass. A session is flagged only
// with a word that places it in the project's history ("an <earlier>
// session"), since "the session" is also the running conversation.
// History: "used to <verb>" (not "is used to"), and "as before" after
// "exactly", "just" or "the same".
var tracker = regexp.MustCompile(`(?i)` +
	`\b(?:the|this|that|an?|its)[ ]issue's\b` +
	`|\b(?:performance|simulator|fidelity|speed|memory|training|previous|earlier|prior|last|next|original|parent|same|other|open|closed)[ ]issues?\b` +
	`|\((?:the[ ])?(?:[a-z-]+[ ])?issue\)` +
	`|\bthe[ ]issues?[ ](?:lists?|asks?|asked|says|said|wants?|wanted|requires?|required|names?|named|gives?|gave|specifies|specified|calls?[ ]for|proposes?|proposed)\b` +
	`|\b(?:earlier|previous|prior|last|later|next|former|past)[ ](?:sessions?|helpers?|engineers?)\b` +
	`|\bused[ ]to[ ](?:take|be|have|need|run|print|read|write|keep|cost|fail|give|hold|load|allocate|block|call|panic|return)\b` +
	`|\b(?:exactly|just|same)[ ]as[ ]before\b`)

// usedTo matches "used to" as "employed to", which the tracker pattern's
// "used to <verb>" does not mean.
var usedTo = regexp.MustCompile(`(?i)\b(?:is|are|was|were|be|been|being|gets?|got|it's|that's)[ ]used[ ]to\b`)

// Finding is one forbidden reference: the file (slash-separated, relative
// to the scanned root), the 1-based line, the line's text and the Rule
// (Citation or Tracker) it breaks.
type Finding struct {
	File string
	Line int
	Text string
	Rule string
}

func (f Finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Text) }

// Scanned reports whether the file at rel (slash-separated, relative to the
// module root) is product text the check covers: non-test .go files and .md
// files, outside .git, third_party/, vendor/ and testdata/ (whose bytes
// tests compare).
func Scanned(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		switch part {
		case ".git", "third_party", "vendor", "testdata":
			return false
		}
	}
	switch {
	case strings.HasSuffix(rel, "_test.go"):
		return false
	case strings.HasSuffix(rel, ".go"), strings.HasSuffix(rel, ".md"):
		return true
	}
	return false
}

// Scan walks root and returns every forbidden citation in the files Scanned
// selects, in path and line order. Errors: a failed directory walk or file
// read, wrapped with the path.
func Scan(root string) ([]Finding, error) {
	var out []Finding
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("citecheck: %s: %w", path, err)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return fmt.Errorf("citecheck: %s: %w", path, err)
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && !Scanned(rel+"/x.go") {
				return filepath.SkipDir
			}
			return nil
		}
		if !Scanned(rel) {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("citecheck: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("citecheck: %s: %w", rel, err)
		}
		for i, line := range lines {
			next := ""
			if i+1 < len(lines) {
				next = lines[i+1]
			}
			if rule := check(line, next); rule != "" {
				out = append(out, Finding{File: rel, Line: i + 1, Text: strings.TrimSpace(line), Rule: rule})
			}
		}
		return nil
	})
	return out, err
}

// check returns the rule that line breaks, or "". A phrase wrapped onto
// next counts for line when it starts on line: line is joined to next with
// next's indentation and comment marker ("//", "#", "*", ">") dropped, and
// a match wholly on next is left for next's own check.
func check(line, next string) string {
	joined := line + " " + continuation(next)
	for _, r := range []struct {
		name string
		re   *regexp.Regexp
	}{{Citation, citation}, {Tracker, tracker}} {
		for _, m := range r.re.FindAllStringIndex(joined, -1) {
			if m[0] >= len(line) {
				continue
			}
			if r.re == tracker && usedToAt(joined, m[0]) {
				continue
			}
			return r.name
		}
	}
	return ""
}

// usedToAt reports whether the tracker match at start in s is "used to"
// preceded by a form of "be" or "get" (usedTo).
func usedToAt(s string, start int) bool {
	for _, m := range usedTo.FindAllStringIndex(s, -1) {
		if m[1] == start+len("used to") && m[0] < start {
			return true
		}
	}
	return false
}

// continuation is next without its indentation and leading comment
// marker, as it reads when a wrapped sentence continues onto it.
func continuation(next string) string {
	t := strings.TrimSpace(next)
	for _, mark := range []string{"//", "#", "*", ">"} {
		if rest, ok := strings.CutPrefix(t, mark); ok {
			return strings.TrimSpace(rest)
		}
	}
	return t
}
