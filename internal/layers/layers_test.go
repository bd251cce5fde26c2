package layers

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/persuarena/persuarena"

// root is the module's root directory (this package is internal/layers).
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return r
}

var (
	rowRE = regexp.MustCompile(`^\| (\d+) [^|]*\| (.*) \|$`)
	pkgRE = regexp.MustCompile("`([^`]+)`")
)

// table reads docs/architecture.md's layer table: package path (relative
// to the module) -> layer.
func table(t *testing.T, root string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layers := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := rowRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, p := range pkgRE.FindAllStringSubmatch(m[2], -1) {
			if l, dup := layers[p[1]]; dup {
				t.Errorf("docs/architecture.md: %s in layers %d and %d", p[1], l, n)
			}
			layers[p[1]] = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(layers) < 40 {
		t.Fatalf("docs/architecture.md: %d packages in the layer table; is the table still there?", len(layers))
	}
	return layers
}

// imports returns the module-internal imports of each package directory
// (relative path) of the module, from its non-test files.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "python" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(f.Comments, func(g *ast.CommentGroup) bool { return strings.Contains(g.Text(), "go:build ignore") }) {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if q, ok := strings.CutPrefix(p, module+"/"); ok && !slices.Contains(out[rel], q) {
				out[rel] = append(out[rel], q)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLayers checks docs/architecture.md's layers: each package is in the
// table (by its path, or a "DIR/..." row for a tree), each table entry is
// a package, and no import goes to a higher layer.
func TestLayers(t *testing.T) {
	r := root(t)
	layers := table(t, r)
	pkgs := imports(t, r)
	for p := range layers {
		_, ok := pkgs[p]
		if dir, tree := strings.CutSuffix(p, "/..."); tree {
			for q := range pkgs {
				ok = ok || q == dir || strings.HasPrefix(q, dir+"/")
			}
		}
		if !ok {
			t.Errorf("docs/architecture.md lists %s, which is no package of the module", p)
		}
	}
	// layerOf is a package's layer: its own row, else a "DIR/..." row.
	layerOf := func(p string) (int, bool) {
		if l, ok := layers[p]; ok {
			return l, true
		}
		for q, l := range layers {
			if dir, tree := strings.CutSuffix(q, "/..."); tree && (p == dir || strings.HasPrefix(p, dir+"/")) {
				return l, true
			}
		}
		return 0, false
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		l, ok := layerOf(p)
		if !ok {
			t.Errorf("package %s has no layer: add it to the table in docs/architecture.md", p)
			continue
		}
		for _, q := range pkgs[p] {
			if lq, ok := layerOf(q); ok && lq > l {
				t.Errorf("%s (layer %d) imports %s (layer %d): an import may not go up", p, l, q, lq)
			}
		}
	}
}
