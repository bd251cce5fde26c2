package scenarios

import (
	"bytes"
	"io"
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

// Reader streams exactly Open's bytes, and closing it early is safe.
func TestReaderMatchesOpen(t *testing.T) {
	for _, name := range Names {
		want, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Reader(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: Reader gave %d bytes (err %v), Open %d", name, len(got), err, len(want))
		}
		r, err = Reader(name)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 10)
		if _, err := io.ReadFull(r, head); err != nil || !bytes.Equal(head, want[:10]) {
			t.Fatalf("%s: first bytes %q, %v", name, head, err)
		}
		r.Close()
		r.Close()
	}
	if _, err := Reader("nope"); err == nil {
		t.Error("Reader(nope) did not fail")
	}
}
