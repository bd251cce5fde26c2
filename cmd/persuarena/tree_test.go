package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/scenario"
)

// The command tree is built by constructors, never by init functions
// registering on a package-level root: no file of the command has an init
// function or a package-level variable (flag values live in each
// constructor's locals, so no value outlives one execution). Only blank
// interface assertions (var _ I = ...) are allowed.
func TestNoInitNoGlobals(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files++
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "init" {
					t.Errorf("%s: an init function", fset.Position(d.Pos()))
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, s := range d.Specs {
					for _, id := range s.(*ast.ValueSpec).Names {
						if id.Name != "_" {
							t.Errorf("%s: package-level variable %s", fset.Position(id.Pos()), id.Name)
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

// A flag a newcomer may try for choosing scenario sets is refused with a
// hint naming --scenarios, on every command that takes it (the root's
// flag error function is inherited); other unknown flags, and commands
// without --scenarios, keep pflag's bare error.
func TestUnknownFlagHints(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--set", "arena"}, "unknown flag: --set (a scenario set is chosen with --scenarios)"},
		{[]string{"eval", "--scenario=arena"}, "unknown flag: --scenario (a scenario set is chosen with --scenarios)"},
		{[]string{"eval", "--scenario-set", "arena"}, "unknown flag: --scenario-set (a scenario set is chosen with --scenarios)"},
		{[]string{"eval", "--from", "arena"}, "unknown flag: --from (a scenario set is chosen with --scenarios)"},
		{[]string{"train", "--data", "arena"}, "unknown flag: --data (a scenario set is chosen with --scenarios)"},
		{[]string{"memory", "learn", "--sets", "arena"}, "unknown flag: --sets (a scenario set is chosen with --scenarios)"},
		{[]string{"scenarios", "list", "--set", "arena"}, "unknown flag: --set (a scenario set is chosen with --scenarios)"},
		{[]string{"eval", "--nope"}, "unknown flag: --nope"},
		{[]string{"runs", "list", "--set", "arena"}, "unknown flag: --set"},
	} {
		_, _, err := execRoot(t, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// scenarios list, stats and validate take the sets as --scenarios as well
// as arguments, with the same output; with neither, --scenarios' default
// (the built-in sets) applies.
func TestScenariosFlagEqualsArguments(t *testing.T) {
	for _, sub := range []string{"list", "stats", "validate"} {
		byArg, _, err := execRoot(t, "scenarios", sub, "arena")
		if err != nil {
			t.Fatalf("%s arena: %v", sub, err)
		}
		byFlag, _, err := execRoot(t, "scenarios", sub, "--scenarios", "arena")
		if err != nil {
			t.Fatalf("%s --scenarios arena: %v", sub, err)
		}
		if byFlag != byArg || byArg == "" {
			t.Errorf("scenarios %s --scenarios arena:\n%s\nwant (as scenarios %s arena):\n%s", sub, byFlag, sub, byArg)
		}
		byDefault, _, err := execRoot(t, "scenarios", sub)
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		both, _, err := execRoot(t, "scenarios", sub, "p4g", "arena")
		if err != nil || byDefault != both || both == byArg {
			t.Errorf("scenarios %s (%v):\n%s\nwant (as scenarios %s p4g arena):\n%s", sub, err, byDefault, sub, both)
		}
	}
	if list, _, err := execRoot(t, "scenarios", "list", "--split", "heldout", "--scenarios", "arena", "p4g"); err != nil ||
		strings.Count(list, "\n") != 1+120+120 {
		t.Errorf("list --scenarios arena p4g, held-out: %v, %d lines, want the header and 240", err, strings.Count(list, "\n"))
	}
}

// scenarios show searches --scenarios; --from, its old name, still works,
// hidden, with a one-line hint on standard error.
func TestScenariosShowFromIsScenarios(t *testing.T) {
	ss, err := scenario.Resolve("arena")
	if err != nil {
		t.Fatal(err)
	}
	id := ss[0].ID
	want, stderr, err := execRoot(t, "scenarios", "show", id, "--scenarios", "arena")
	if err != nil || !strings.Contains(want, `"id": "`+id+`"`) || stderr != "" {
		t.Fatalf("show --scenarios arena: %v, stderr %q\n%s", err, stderr, want)
	}
	got, stderr, err := execRoot(t, "scenarios", "show", id, "--from", "arena")
	if err != nil || got != want {
		t.Errorf("show --from arena: %v\n%s\nwant:\n%s", err, got, want)
	}
	if stderr != "--from is now --scenarios\n" {
		t.Errorf("show --from: stderr %q, want the hint", stderr)
	}
	if _, _, err := execRoot(t, "scenarios", "show", id, "--scenarios", "p4g"); err == nil || err.Error() != `no scenario with id "`+id+`"` {
		t.Errorf("show %s --scenarios p4g: %v", id, err)
	}
	help, _, err := execRoot(t, "scenarios", "show", "--help")
	if err != nil || !strings.Contains(help, "--scenarios") || strings.Contains(help, "--from") {
		t.Errorf("show --help (%v): want --scenarios and no --from:\n%s", err, help)
	}
}

// masp eval and cache take the p4g task's scenario set as --scenarios,
// another name of --from (which also names ESConv and CB files).
func TestMASPScenariosIsFrom(t *testing.T) {
	for _, sub := range []string{"eval", "cache"} {
		root := newRootCmd()
		c, _, err := root.Find([]string{"masp", sub})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ParseFlags([]string{"--scenarios", "arena"}); err != nil {
			t.Fatal(err)
		}
		if got := c.Flags().Lookup("from").Value.String(); got != "arena" {
			t.Errorf("masp %s --scenarios arena: --from %q", sub, got)
		}
	}
}
