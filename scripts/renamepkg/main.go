// Command renamepkg renames top-level packages of this module and every
// reference to them: scripts/rename-packages runs it with the module's
// renames. Run it from the module root on a clean tree:
//
//	go run ./scripts/renamepkg [-backticked OLD,...] OLD=NEW...
//
// For each OLD=NEW it git-mvs the directory OLD to NEW (skipped when OLD
// is gone and NEW exists, so a second run changes nothing; an error when
// both exist), then rewrites the tracked files:
//
//   - Go files (outside third_party and testdata): the package clause
//     (OLD and OLD_test in NEW/), the import paths MODULE/OLD and
//     MODULE/OLD/..., and, in files that import OLD under its own name,
//     each qualified use OLD.X whose OLD resolves to no local declaration
//     (the parser's resolution: a variable or parameter named OLD keeps
//     its name). A file that imports OLD and already declares or uses an
//     identifier NEW is an error, since the rename would shadow it.
//   - Comments in those Go files and the text of *.md files, scripts/ and
//     .ci/ (the text rules): MODULE/OLD; OLD.X where X is an exported
//     top-level name of the package; OLD/ENTRY where ENTRY is a file or
//     directory of NEW/; ./OLD as a path; "package OLD" and "package
//     `OLD`" (in Go comments also across two lines); and, for the names
//     in -backticked, `OLD` standing alone in backticks (use it only for
//     names that mean nothing else in the docs).
//
// String literals other than import paths are left as they are: they are
// output (error prefixes, data paths outside the module), and the rename
// changes names, not behaviour. Edited Go files are gofmt-formatted (which
// also re-sorts their imports). This program, its test and
// scripts/rename-packages are not rewritten, since they name the old
// packages on purpose.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// rename is one OLD=NEW pair with what the text rules need to know of the
// package.
type rename struct {
	old, new string
	// exported holds the package's exported top-level names (OLD.X).
	exported map[string]bool
	// entries holds the names of the files and directories in NEW/
	// (OLD/ENTRY).
	entries map[string]bool
	// backticked: `OLD` alone in backticks is the package.
	backticked bool
}

// isSelf reports whether f is one of the files that name the old packages
// on purpose: this program, its test and scripts/rename-packages.
func isSelf(f string) bool {
	return f == "scripts/rename-packages" || strings.HasPrefix(f, "scripts/renamepkg/")
}

func main() {
	backticked := flag.String("backticked", "", "comma-separated OLD names whose `OLD` alone in backticks is the package")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: renamepkg [-backticked OLD,...] OLD=NEW...")
		os.Exit(2)
	}
	if err := run(flag.Args(), strings.Split(*backticked, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "renamepkg:", err)
		os.Exit(1)
	}
}

func run(pairs, backticked []string) error {
	mod, err := modulePath()
	if err != nil {
		return err
	}
	bt := map[string]bool{}
	for _, b := range backticked {
		bt[strings.TrimSpace(b)] = true
	}
	var rs []*rename
	for _, p := range pairs {
		old, new, ok := strings.Cut(p, "=")
		if !ok || !isIdent(old) || !isIdent(new) {
			return fmt.Errorf("%q: want OLD=NEW, both top-level package names", p)
		}
		if err := move(old, new); err != nil {
			return err
		}
		r := &rename{old: old, new: new, backticked: bt[old]}
		if r.exported, r.entries, err = describe(new); err != nil {
			return err
		}
		rs = append(rs, r)
	}
	files, err := trackedFiles()
	if err != nil {
		return err
	}
	changed := 0
	for _, f := range files {
		if isSelf(f) || strings.HasPrefix(f, "third_party/") {
			continue
		}
		var did bool
		switch {
		case strings.HasSuffix(f, ".go"):
			if strings.Contains("/"+f, "/testdata/") {
				continue
			}
			did, err = rewriteGo(f, mod, rs)
		case strings.HasSuffix(f, ".md") || strings.HasPrefix(f, "scripts/") || strings.HasPrefix(f, ".ci/"):
			did, err = rewriteText(f, mod, rs)
		}
		if err != nil {
			return err
		}
		if did {
			changed++
		}
	}
	fmt.Printf("renamepkg: %d files rewritten\n", changed)
	return nil
}

// modulePath reads the module path from go.mod in the working directory.
func modulePath() (string, error) {
	f, err := os.Open("go.mod")
	if err != nil {
		return "", fmt.Errorf("run from the module root: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("go.mod: %w", err)
	}
	return "", errors.New("go.mod: no module line")
}

// move git-mvs old to new unless that is already done.
func move(old, new string) error {
	oldOK, newOK := isDir(old), isDir(new)
	switch {
	case oldOK && newOK:
		return fmt.Errorf("both %s/ and %s/ exist: move the files of %s/ by hand", old, new, old)
	case !oldOK && !newOK:
		return fmt.Errorf("neither %s/ nor %s/ exists", old, new)
	case !oldOK:
		return nil
	}
	out, err := exec.Command("git", "mv", old, new).CombinedOutput()
	if err != nil {
		return fmt.Errorf("git mv %s %s: %w: %s", old, new, err, out)
	}
	fmt.Printf("renamepkg: git mv %s %s\n", old, new)
	return nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// describe returns the exported top-level names of the package in dir
// (non-test files) and the names of dir's entries.
func describe(dir string) (exported, entries map[string]bool, err error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	exported, entries = map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	for _, de := range des {
		entries[de.Name()] = true
		n := de.Name()
		if de.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					exported[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							exported[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if id.IsExported() {
								exported[id.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return exported, entries, nil
}

func trackedFiles() ([]string, error) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var fs []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			fs = append(fs, f)
		}
	}
	return fs, nil
}

// edit replaces src[from:to] with text.
type edit struct {
	from, to int
	text     string
}

func rewriteGo(name, mod string, rs []*rename) (bool, error) {
	src, err := os.ReadFile(name)
	if err != nil {
		return false, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return false, err
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	var edits []edit
	dir := path.Dir(name)
	for _, r := range rs {
		if dir == r.new && (f.Name.Name == r.old || f.Name.Name == r.old+"_test") {
			edits = append(edits, edit{off(f.Name.Pos()), off(f.Name.End()), r.new + strings.TrimPrefix(f.Name.Name, r.old)})
		}
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return false, fmt.Errorf("%s: %w", name, err)
			}
			oldPath := mod + "/" + r.old
			if p != oldPath && !strings.HasPrefix(p, oldPath+"/") {
				continue
			}
			edits = append(edits, edit{off(im.Path.Pos()), off(im.Path.End()), strconv.Quote(mod + "/" + r.new + p[len(oldPath):])})
			if p != oldPath || (im.Name != nil && im.Name.Name != r.old) {
				continue
			}
			if im.Name != nil {
				edits = append(edits, edit{off(im.Name.Pos()), off(im.Name.End()), r.new})
			}
			var clash *ast.Ident
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					if n.Name == r.new && clash == nil {
						clash = n
					}
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == r.old && x.Obj == nil {
						edits = append(edits, edit{off(x.Pos()), off(x.End()), r.new})
					}
				}
				return true
			})
			if clash != nil {
				return false, fmt.Errorf("%s: imports %s and already has an identifier %s: pick another name", fset.Position(clash.Pos()), r.old, r.new)
			}
		}
	}
	for _, cg := range f.Comments {
		texts := make([]string, len(cg.List))
		for i, c := range cg.List {
			texts[i] = applyRules(c.Text, mod, rs)
			if i == 0 {
				continue
			}
			// "package" at the end of one line and the name at the
			// start of the next.
			for _, r := range rs {
				prev := strings.TrimRightFunc(texts[i-1], unicode.IsSpace) + " "
				body := strings.TrimLeftFunc(strings.TrimPrefix(texts[i], "//"), unicode.IsSpace)
				k := len(texts[i]) - len(body)
				if strings.HasPrefix(body, r.old) && afterPackage(prev+body, len(prev), len(prev)+len(r.old)) {
					texts[i] = texts[i][:k] + r.new + texts[i][k+len(r.old):]
				}
			}
		}
		for i, c := range cg.List {
			if texts[i] != c.Text {
				edits = append(edits, edit{off(c.Pos()), off(c.End()), texts[i]})
			}
		}
	}
	if len(edits) == 0 {
		return false, nil
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	out := append([]byte(nil), src...)
	for _, e := range edits {
		out = append(out[:e.from:e.from], append([]byte(e.text), out[e.to:]...)...)
	}
	if out, err = format.Source(out); err != nil {
		return false, fmt.Errorf("%s: gofmt after rewrite: %w", name, err)
	}
	if bytes.Equal(out, src) {
		return false, nil
	}
	return true, os.WriteFile(name, out, 0o644)
}

func rewriteText(name, mod string, rs []*rename) (bool, error) {
	src, err := os.ReadFile(name)
	if err != nil {
		return false, err
	}
	if !utf8.Valid(src) || bytes.IndexByte(src, 0) >= 0 {
		return false, nil
	}
	out := applyRules(string(src), mod, rs)
	if out == string(src) {
		return false, nil
	}
	st, err := os.Stat(name)
	if err != nil {
		return false, err
	}
	return true, os.WriteFile(name, []byte(out), st.Mode().Perm())
}

// applyRules applies the text rules (see the package comment) of every
// rename to s.
func applyRules(s, mod string, rs []*rename) string {
	for _, r := range rs {
		s = replace(s, mod+"/"+r.old, func(s string, i, j int) (string, bool) {
			c := at(s, j)
			end := c == '/' || !isPathByte(c) || c == '.' && !isIdentByte(at(s, j+1))
			return mod + "/" + r.new, end
		})
		s = replace(s, r.old+".", func(s string, i, j int) (string, bool) {
			return r.new + ".", !isPathByte(before(s, i)) && r.exported[identAt(s, j)]
		})
		s = replace(s, r.old+"/", func(s string, i, j int) (string, bool) {
			b := before(s, i)
			dotSlash := b == '/' && i >= 2 && s[i-2] == '.'
			return r.new + "/", (!isPathByte(b) || dotSlash) && r.entries[segmentAt(s, j)]
		})
		s = replace(s, "./"+r.old, func(s string, i, j int) (string, bool) {
			return "./" + r.new, !isIdentByte(at(s, j)) && at(s, j) != '-'
		})
		s = replace(s, r.old, func(s string, i, j int) (string, bool) {
			return r.new, afterPackage(s, i, j)
		})
		if r.backticked {
			s = strings.ReplaceAll(s, "`"+r.old+"`", "`"+r.new+"`")
		}
	}
	return s
}

// afterPackage reports whether the word s[i:j] follows the word
// "package" (any case) after white space, in backticks or without.
func afterPackage(s string, i, j int) bool {
	k := i
	switch tickL, tickR := before(s, i) == '`', at(s, j) == '`'; {
	case tickL && tickR:
		k--
	case tickL || tickR || isIdentByte(before(s, i)) || isIdentByte(at(s, j)):
		return false
	}
	pre := strings.TrimRightFunc(s[:k], unicode.IsSpace)
	n := len(pre) - len("package")
	if len(pre) == k || n < 0 || isIdentByte(before(pre, n)) {
		return false
	}
	return strings.EqualFold(pre[n:], "package")
}

// replace calls ok for each occurrence s[i:j] of old and replaces it with
// the text ok returns when ok says so.
func replace(s, old string, ok func(s string, i, j int) (string, bool)) string {
	var b strings.Builder
	last := 0
	for from := 0; ; {
		k := strings.Index(s[from:], old)
		if k < 0 {
			break
		}
		i, j := from+k, from+k+len(old)
		if t, yes := ok(s, i, j); yes {
			b.WriteString(s[last:i])
			b.WriteString(t)
			last = j
		}
		from = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func before(s string, i int) byte {
	if i > 0 {
		return s[i-1]
	}
	return 0
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isPathByte reports whether c may sit inside a path segment, so that a
// name next to it is part of a longer path or word.
func isPathByte(c byte) bool {
	return isIdentByte(c) || c == '.' || c == '/' || c == '-'
}

func identAt(s string, i int) string {
	j := i
	for j < len(s) && isIdentByte(s[j]) {
		j++
	}
	return s[i:j]
}

func segmentAt(s string, i int) string {
	j := i
	for j < len(s) && (isIdentByte(s[j]) || s[j] == '.' || s[j] == '-') {
		j++
	}
	return strings.TrimRight(s[i:j], ".")
}

func isIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}
