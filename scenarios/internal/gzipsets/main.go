// Command gzipsets writes NAME.jsonl.gz beside each built-in set
// NAME.jsonl of package scenarios (run by `go generate ./scenarios` after
// a set is regenerated): the binary embeds the compressed copies only.
// Output is deterministic (no name or time in the gzip header, best
// compression). It fails on the first file it cannot read or write.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
)

func main() {
	for _, name := range os.Args[1:] {
		if err := compress(name); err != nil {
			fmt.Fprintln(os.Stderr, "gzipsets:", err)
			os.Exit(1)
		}
	}
}

func compress(name string) error {
	raw, err := os.ReadFile(name + ".jsonl")
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if _, err := zw.Write(raw); err != nil {
		return fmt.Errorf("%s: compress: %w", name, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("%s: compress: %w", name, err)
	}
	if err := os.WriteFile(name+".jsonl.gz", buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
