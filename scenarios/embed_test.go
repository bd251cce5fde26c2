package scenarios

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The embedded gzip parts must hold exactly the committed .jsonl sets;
// after regenerating a set, run `go generate ./scenarios`.
func TestEmbeddedCopiesMatchSources(t *testing.T) {
	for _, name := range Names {
		want, err := os.ReadFile(name + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		got, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s's embedded parts hold %d bytes that differ from %s.jsonl (%d bytes): run go generate ./scenarios", name, len(got), name, len(want))
		}
		gzs, err := filepath.Glob(name + ".*.jsonl.gz")
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for _, f := range gzs {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			size += int(st.Size())
		}
		if sps, _ := Splits(name); len(gzs) != 3 || len(sps) != 3 || size*4 > len(want) {
			t.Errorf("%s: %d parts (%v) of %d bytes for %d, splits %v: want 3 compressed parts", name, len(gzs), gzs, size, len(want), sps)
		}
	}
	if _, err := Open("nope"); err == nil {
		t.Error("Open(nope) did not fail")
	}
	if _, err := OpenSplit("nope", "train"); err == nil {
		t.Error("OpenSplit(nope) did not fail")
	}
}

// Each part holds the lines of its split, numbered as in NAME.jsonl; a
// split without lines is empty.
func TestOpenSplitLines(t *testing.T) {
	for _, name := range Names {
		src, err := os.ReadFile(name + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(src, []byte("\n"))
		sps, err := Splits(name)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, sp := range sps {
			p, err := OpenSplit(name, sp)
			if err != nil {
				t.Fatal(err)
			}
			got := bytes.SplitAfter(p.JSONL, []byte("\n"))
			got = got[:len(got)-1] // after the last '\n'
			if len(got) != len(p.Lines) || len(got) == 0 {
				t.Fatalf("%s %s: %d lines, %d numbers", name, sp, len(got), len(p.Lines))
			}
			for i, n := range p.Lines {
				if !bytes.Equal(got[i], lines[n-1]) || !bytes.Contains(got[i], []byte(`"split":"`+sp+`"`)) {
					t.Fatalf("%s %s: line %d is not %s.jsonl:%d of split %s", name, sp, i+1, name, n, sp)
				}
			}
			total += len(got)
		}
		if total != bytes.Count(src, []byte("\n")) {
			t.Errorf("%s: parts hold %d lines of %d", name, total, bytes.Count(src, []byte("\n")))
		}
		if p, err := OpenSplit(name, "nosuch"); err != nil || p.JSONL != nil || p.Lines != nil {
			t.Errorf("%s: split nosuch gave %d bytes, %v", name, len(p.JSONL), err)
		}
	}
}

// BenchmarkOpen measures decompressing both embedded sets whole (the
// cost the compression adds to a command that loads every split; the JSON
// decoding is BenchmarkResolveBuiltins in package scenario).
func BenchmarkOpen(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, name := range Names {
			if _, err := Open(name); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkOpenHeldout measures decompressing the held-out part of both
// sets (what the default eval decompresses).
func BenchmarkOpenHeldout(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, name := range Names {
			if _, err := OpenSplit(name, "heldout"); err != nil {
				b.Fatal(err)
			}
		}
	}
}
