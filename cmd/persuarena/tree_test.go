package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The command tree is built by constructors, never by init functions
// registering on a package-level root: no file of the command has an init
// function or a package-level variable (flag values live in each
// constructor's locals, so no value outlives one execution). Only blank
// interface assertions (var _ I = ...) are allowed.
func TestNoInitNoGlobals(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			files++
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && d.Name.Name == "init" {
						t.Errorf("%s: func init()", fset.Position(d.Pos()))
					}
				case *ast.GenDecl:
					if d.Tok != token.VAR {
						continue
					}
					for _, s := range d.Specs {
						for _, id := range s.(*ast.ValueSpec).Names {
							if id.Name != "_" {
								t.Errorf("%s: package-level variable %s in %s", fset.Position(id.Pos()), id.Name, name)
							}
						}
					}
				}
			}
		}
	}
	if files < 20 {
		t.Fatalf("parsed %d files: not the command's directory", files)
	}
}
