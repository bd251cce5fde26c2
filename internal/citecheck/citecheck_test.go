package citecheck

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestModuleCitesPapersByName fails when product code, CLI help or docs cite
// documents that do not ship. Rewrite such a citation to the paper's name
// (docs/papers.md), e.g. "Probe-RPO paper, Table 5".
func TestModuleCitesPapersByName(t *testing.T) {
	found, err := Scan(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("cite the paper by name (docs/papers.md): %s", f)
	}
}

// TestScanFindsPlanted plants each forbidden form in a temporary tree and
// checks that Scan reports exactly those lines, and nothing from test files,
// testdata/ or third_party/.
func TestScanFindsPlanted(t *testing.T) {
	dir := t.TempDir()
	sp, sd, is := "SPEC "+"§2", "seed "+"000 Table 5", "issue "+"3 §5"
	files := map[string]string{
		"a/code.go":            "package a\n\n// ok line\n// see " + sd + "\n",
		"cmd/x/help.go":        "package x\n\nconst help = \"(" + sp + ")\"\n",
		"docs/page.md":         "# Page\n\nDecided in " + is + ".\nAlso Issue " + "12.\n",
		"README.md":            "fine\n",
		"a/code_test.go":       "package a\n// " + sd + "\n",
		"a/testdata/golden.md": sd + "\n",
		"third_party/x/y.go":   "package y // " + sp + "\n",
		"docs/clean.md":        "Probe-RPO paper, Table 5; seeds 000 to 004 of the RNG; tissue 3\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{"a/code.go", 4, "// see " + sd},
		{"cmd/x/help.go", 3, "const help = \"(" + sp + ")\""},
		{"docs/page.md", 3, "Decided in " + is + "."},
		{"docs/page.md", 4, "Also Issue " + "12."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Scan = %v\nwant %v", got, want)
	}
}
