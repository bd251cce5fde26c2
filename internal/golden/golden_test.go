package golden

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/persuarena/persuarena/episode"
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

func TestEpisodeJSON(t *testing.T) {
	b0 := 0.5
	ep := &episode.Episode{ScenarioID: "s", Turns: []episode.Turn{{T: 1, Persuader: "a\nb"}, {T: 2}}, B0: &b0}
	got, err := EpisodeJSON(ep)
	if err != nil {
		t.Fatal(err)
	}
	flat, err := json.Marshal(ep)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(got, []byte("\n")); n != 3 {
		t.Errorf("%d newlines, want 3 (one before each turn, one after the last):\n%s", n, got)
	}
	if !bytes.Equal(bytes.ReplaceAll(got, []byte("\n"), nil), flat) {
		t.Errorf("without its newlines\n%s\nis not json.Marshal's\n%s", got, flat)
	}
}
