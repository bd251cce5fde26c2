package scenario

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteListOneCheckFiles(t *testing.T) {
	ss, err := ResolveAll("arena")
	if err != nil {
		t.Fatal(err)
	}
	held := Filter(ss, Heldout)
	var buf bytes.Buffer
	if err := WriteList(context.Background(), &buf, []string{"arena"}, Heldout); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(held)+1 || !strings.HasPrefix(lines[0], "ID") || !strings.HasPrefix(lines[1], held[0].ID+" ") {
		t.Fatalf("%d lines for %d held-out scenarios:\n%s", len(lines), len(held), strings.Join(lines[:2], "\n"))
	}
	if err := WriteList(context.Background(), &buf, []string{"arena"}, "test"); err == nil || !strings.Contains(err.Error(), `--split "test"`) {
		t.Fatalf("bad split: %v", err)
	}

	buf.Reset()
	if err := WriteOne(context.Background(), &buf, []string{"arena"}, held[0].ID, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"id": "`+held[0].ID+`"`) || strings.Contains(buf.String(), `"hidden"`) {
		t.Fatalf("public view:\n%s", buf.String())
	}
	if err := WriteOne(context.Background(), &buf, []string{"arena"}, "nope", false); err == nil || err.Error() != `no scenario with id "nope"` {
		t.Fatalf("unknown id: %v", err)
	}

	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	err = CheckFiles(context.Background(), &buf, []string{"arena", bad})
	if err == nil || err.Error() != "1 of 2 files invalid" {
		t.Fatalf("CheckFiles: %v", err)
	}
	if !strings.Contains(buf.String(), "arena: ok: ") || !strings.Contains(buf.String(), bad+":1") {
		t.Fatalf("CheckFiles output:\n%s", buf.String())
	}
	// A file that cannot be read: a whole-file problem, line 0.
	buf.Reset()
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	if err := CheckFiles(context.Background(), &buf, []string{missing}); err == nil || buf.String() != missing+": stat: no such file or directory\n" {
		t.Fatalf("CheckFiles(missing): %v\n%s", err, buf.String())
	}
	// No argument: the built-in sets, as list and stats default to.
	buf.Reset()
	if err := CheckFiles(context.Background(), &buf, nil); err != nil || buf.String() != "p4g: ok: 982 scenarios\narena: ok: 1788 scenarios\n" {
		t.Fatalf("CheckFiles(nil): %v\n%s", err, buf.String())
	}
}

// Fingerprint is FNV-1a 64 of "a\x00b\x00": the empty list gives the
// offset basis cbf29ce484222325; order matters.
func TestFingerprint(t *testing.T) {
	if got := Fingerprint(nil); got != "cbf29ce484222325" {
		t.Fatalf("empty: %s", got)
	}
	ab := Fingerprint([]Scenario{{ID: "a"}, {ID: "b"}})
	if ab == Fingerprint([]Scenario{{ID: "b"}, {ID: "a"}}) || len(ab) != 16 {
		t.Fatalf("order ignored or bad length: %s", ab)
	}
}
