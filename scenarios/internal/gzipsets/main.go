// Command gzipsets writes the embedded copies of each built-in set
// NAME.jsonl of package scenarios (run by `go generate ./scenarios` after
// a set is regenerated); the binary embeds only these:
//
//   - NAME.SPLIT.jsonl.gz: the set's lines of one split (the canonical
//     `"split":"SPLIT"` member of each line), in file order, gzip at best
//     compression, so a command that needs one split decompresses only its
//     part;
//   - NAME.splits: the split of every line of NAME.jsonl, one per line, so
//     the whole set can be put back together in its order.
//
// Output is deterministic (no name or time in the gzip header). It fails
// on the first file it cannot read or write, and on a line without exactly
// one canonical split member.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

func main() {
	for _, name := range os.Args[1:] {
		if err := split(name); err != nil {
			fmt.Fprintln(os.Stderr, "gzipsets:", err)
			os.Exit(1)
		}
	}
}

// splitMember is a line's canonical split member (scenario.Marshal writes
// it in this form; the sets are canonical).
var splitMember = regexp.MustCompile(`"split":"([a-z]+)"`)

func split(name string) error {
	raw, err := os.ReadFile(name + ".jsonl")
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	parts := map[string]*bytes.Buffer{}
	var order bytes.Buffer
	for i, line := range bytes.SplitAfter(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			if len(line) > 0 {
				return fmt.Errorf("%s.jsonl:%d: blank line", name, i+1)
			}
			continue
		}
		m := splitMember.FindAllSubmatch(line, -1)
		if len(m) != 1 {
			return fmt.Errorf("%s.jsonl:%d: %d canonical split members, want 1", name, i+1, len(m))
		}
		sp := string(m[0][1])
		if parts[sp] == nil {
			parts[sp] = &bytes.Buffer{}
		}
		parts[sp].Write(line)
		order.WriteString(sp + "\n")
	}
	// Parts of splits the set no longer has, and the whole-set copy of
	// earlier versions, must not stay embedded.
	old, err := filepath.Glob(name + ".*jsonl.gz")
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	for _, sp := range slices.Sorted(maps.Keys(parts)) {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := zw.Write(parts[sp].Bytes()); err != nil {
			return fmt.Errorf("%s: compress: %w", name, err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("%s: compress: %w", name, err)
		}
		if err := os.WriteFile(name+"."+sp+".jsonl.gz", buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	if err := os.WriteFile(name+".splits", order.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
