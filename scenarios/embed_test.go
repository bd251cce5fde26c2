package scenarios

import (
	"bytes"
	"os"
	"testing"
)

// The embedded gzip copies must hold exactly the committed .jsonl sets;
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
			t.Errorf("%s.jsonl.gz holds %d bytes that differ from %s.jsonl (%d bytes): run go generate ./scenarios", name, len(got), name, len(want))
		}
		gz, err := os.ReadFile(name + ".jsonl.gz")
		if err != nil {
			t.Fatal(err)
		}
		if len(gz)*4 > len(want) {
			t.Errorf("%s.jsonl.gz is %d bytes for %d: not compressed?", name, len(gz), len(want))
		}
	}
	if _, err := Open("nope"); err == nil {
		t.Error("Open(nope) did not fail")
	}
}

// BenchmarkOpen measures decompressing both embedded sets (the cost the
// compression adds to start-up; the JSON decoding is BenchmarkResolveBuiltins
// in package scenario).
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
