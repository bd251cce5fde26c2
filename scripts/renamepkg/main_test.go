package main

import (
	"os"
	"path/filepath"
	"testing"
)

const mod = "example.com/m"

func testRenames() []*rename {
	return []*rename{{
		old: "repo", new: "reporeward", backticked: true,
		exported: map[string]bool{"Spec": true, "Resolve": true},
		entries:  map[string]bool{"spec.go": true, "specs": true},
	}, {
		old: "persuader", new: "baseline",
		exported: map[string]bool{"New": true, "Names": true},
		entries:  map[string]bool{"templates.go": true},
	}}
}

// TestApplyRules pins each text rule and the look-alikes it must leave:
// role names, CLI names, other packages' files, paths outside the module.
func TestApplyRules(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"import example.com/m/repo and example.com/m/repo/pack", "import example.com/m/reporeward and example.com/m/reporeward/pack"},
		{"example.com/m/repository, example.com/m/repo.go stay; example.com/m/repo.", "example.com/m/repository, example.com/m/repo.go stay; example.com/m/reporeward."},
		{"`repo.Spec`, [repo.Resolve], persuader.New(name)", "`reporeward.Spec`, [reporeward.Resolve], baseline.New(name)"},
		{"repo.Other, x.repo.Spec, runs/repo.go, persuader.Act", "repo.Other, x.repo.Spec, runs/repo.go, persuader.Act"},
		{"(`persuader/templates.go`) and repo/specs/a.yaml", "(`baseline/templates.go`) and reporeward/specs/a.yaml"},
		{"persuader/persuadee/scenario#rollout, data/repo/spec.go", "persuader/persuadee/scenario#rollout, data/repo/spec.go"},
		{"go test ./persuader -bench . and ../repo/specs", "go test ./baseline -bench . and ../reporeward/specs"},
		{"./persuaders and ./repo-x", "./persuaders and ./repo-x"},
		{"Package repo implements; package `persuader` holds; (package\n`repo`)", "Package reporeward implements; package `baseline` holds; (package\n`reporeward`)"},
		{"packages repo, package repos, package `repo, the persuader package", "packages repo, package repos, package `repo, the persuader package"},
		{"`repo` and `persuader` and `repo:negotiation`, persuarena repo ab", "`reporeward` and `persuader` and `repo:negotiation`, persuarena repo ab"},
	} {
		if got := applyRules(c.in, mod, testRenames()); got != c.want {
			t.Errorf("applyRules(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestRewriteGo renames the import, the qualified uses and the comments of
// a file that also has a parameter named like the package, whose uses keep
// their name; a second pass changes nothing.
func TestRewriteGo(t *testing.T) {
	t.Chdir(t.TempDir())
	src := `package user

import (
	"fmt"

	"example.com/m/persuader"
	"example.com/m/eval"
)

// Run calls persuader.New; see package
// persuader.
func Run(persuader fmt.Stringer) string {
	p, _ := persuader.String(), 0
	return p
}

func Make() any { v, _ := persuader.New("script"); return v }
`
	want := `package user

import (
	"fmt"

	"example.com/m/baseline"
	"example.com/m/eval"
)

// Run calls baseline.New; see package
// baseline.
func Run(persuader fmt.Stringer) string {
	p, _ := persuader.String(), 0
	return p
}

func Make() any { v, _ := baseline.New("script"); return v }
`
	if err := os.WriteFile("user.go", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for pass, wantChanged := range []bool{true, false} {
		changed, err := rewriteGo("user.go", mod, testRenames())
		if err != nil {
			t.Fatal(err)
		}
		if changed != wantChanged {
			t.Errorf("pass %d: changed = %v, want %v", pass, changed, wantChanged)
		}
		got, _ := os.ReadFile("user.go")
		if string(got) != want {
			t.Errorf("pass %d: got\n%s\nwant\n%s", pass, got, want)
		}
	}
}

// TestRewriteGoPackageClause renames the clauses of the moved package and
// of its external test package, and no other directory's.
func TestRewriteGoPackageClause(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, f := range []struct{ name, src, want string }{
		{"baseline/a.go", "package persuader\n", "package baseline\n"},
		{"baseline/a_test.go", "package persuader_test\n", "package baseline_test\n"},
		{"other/a.go", "package persuader\n", "package persuader\n"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.name, []byte(f.src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := rewriteGo(f.name, mod, testRenames()); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(f.name); string(got) != f.want {
			t.Errorf("%s: got %q, want %q", f.name, got, f.want)
		}
	}
}

// TestRewriteGoClash refuses a file that imports the package and already
// has an identifier of the new name, which the rename would shadow.
func TestRewriteGoClash(t *testing.T) {
	t.Chdir(t.TempDir())
	src := "package user\n\nimport \"example.com/m/persuader\"\n\nfunc F(baseline int) any { v, _ := persuader.New(\"x\"); return v }\n"
	if err := os.WriteFile("user.go", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := rewriteGo("user.go", mod, testRenames()); err == nil {
		t.Fatal("rewriteGo: no error for a file that already has an identifier baseline")
	}
}
