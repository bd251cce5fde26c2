// Command gocount prints, for each package directory given, the size
// figures a refactoring reports before and after: the lines of its
// non-test .go files, its distinct imports, its functions, and the sum
// and maximum of their cyclomatic complexities.
//
//	go run ./scripts/gocount fidelity simfit masp
//
// A function's complexity is gocyclo's: 1, plus 1 for each if, for,
// range, non-default case of a switch or select, && and ||. Function
// literals count towards the function that holds them.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gocount DIR...")
		os.Exit(2)
	}
	fmt.Printf("%-28s %7s %7s %6s %7s %6s\n", "package", "lines", "imports", "funcs", "cyclo", "max")
	for _, dir := range os.Args[1:] {
		c, err := count(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gocount:", err)
			os.Exit(1)
		}
		fmt.Printf("%-28s %7d %7d %6d %7d %6d\n", dir, c.lines, c.imports, c.funcs, c.cyclo, c.max)
	}
}

// counts are one package directory's figures.
type counts struct {
	lines, imports, funcs, cyclo, max int
}

// count reads the non-test .go files directly in dir (not below it).
func count(dir string) (counts, error) {
	var c counts
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return c, err
	}
	sort.Strings(files)
	imports := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return c, err
		}
		c.lines += strings.Count(string(src), "\n")
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return c, fmt.Errorf("parse %s: %w", name, err)
		}
		for _, im := range f.Imports {
			imports[im.Path.Value] = true
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := cyclomatic(fd.Body)
			c.funcs++
			c.cyclo += n
			c.max = max(c.max, n)
		}
	}
	c.imports = len(imports)
	return c, nil
}

// cyclomatic is the complexity of a function body.
func cyclomatic(body *ast.BlockStmt) int {
	n := 1
	ast.Inspect(body, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}
