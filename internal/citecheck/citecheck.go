// Package citecheck finds citations of documents that do not ship: the
// project's method reference ("SPEC" with a section sign), the numbered
// paper files ("seed" with a three-digit number) and tracker issues
// ("issue" with a number). Product code, CLI help and docs cite papers by
// name instead (docs/papers.md). The package's test walks the module and
// fails on any finding.
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

// pattern matches the forbidden citations. The spaces are written as [ ]
// so that this file does not match itself.
var pattern = regexp.MustCompile(`SPEC[ ]§|\bseed[ ]00[0-9]|\b[Ii]ssue[ ][0-9]+`)

// Finding is one forbidden citation: the file (slash-separated, relative to
// the scanned root), the 1-based line and the line's text.
type Finding struct {
	File string
	Line int
	Text string
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
		for n := 1; sc.Scan(); n++ {
			if pattern.MatchString(sc.Text()) {
				out = append(out, Finding{File: rel, Line: n, Text: strings.TrimSpace(sc.Text())})
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("citecheck: %s: %w", rel, err)
		}
		return nil
	})
	return out, err
}
