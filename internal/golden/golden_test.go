package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDiff(t *testing.T) {
	var w, g File
	w.Case("case a", []byte("1\n2\n3"))
	w.Case("case b", []byte("x\ny\nz\n"))
	g.Case("case a", []byte("1\n2\n3"))
	g.Case("case b", []byte("x\nY\nz\n"))
	if d := Diff(string(w.Bytes()), string(w.Bytes())); d != "" {
		t.Errorf("equal texts: %q", d)
	}
	want := "golden 13 lines, got 13; the first difference is at line 10\n" +
		"@@ line 10, case \"case b\" @@\n" +
		"  case b\n  ----\n  x\n" +
		"- y\n" +
		"+ Y\n" +
		"  z\n  \n  \n"
	if d := Diff(string(w.Bytes()), string(g.Bytes())); d != want {
		t.Errorf("diff:\n%s\nwant:\n%s", d, want)
	}
	// A line added at the end of the last case: nothing on the golden side.
	if d, want := Diff("h\n----\na\n", "h\n----\na\nb\n"), "golden 4 lines, got 5; the first difference is at line 4\n@@ line 4, case \"h\" @@\n  h\n  ----\n  a\n+ b\n  \n"; d != want {
		t.Errorf("insertion:\n%s\nwant:\n%s", d, want)
	}
}

func TestCheckUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "g.txt")
	*update = true
	defer func() { *update = false }()
	Check(t, path, []byte("h\n----\nv\n"))
	*update = false
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "h\n----\nv\n" {
		t.Fatalf("written %q, %v", b, err)
	}
	Check(t, path, []byte("h\n----\nv\n"))
}
