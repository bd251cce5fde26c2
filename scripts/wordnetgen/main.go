// Command wordnetgen writes perception/lexicon.bin, the compact WordNet
// 3.0 lexicon package perception embeds, from the WordNet database files:
//
//	go run ./scripts/wordnetgen [-dir /usr/share/wordnet] [-out perception/lexicon.bin]
//
// Debian's wordnet-base installs the files (apt-get install wordnet-base).
// The format is documented in package internal/wordnetgen.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/persuarena/persuarena/internal/wordnetgen"
)

func main() {
	dir := flag.String("dir", "/usr/share/wordnet", "WordNet 3.0 database directory (data.noun, index.noun, noun.exc, ...)")
	out := flag.String("out", "perception/lexicon.bin", "output file")
	flag.Parse()
	var b bytes.Buffer
	if err := wordnetgen.Generate(*dir, &b); err != nil {
		fmt.Fprintln(os.Stderr, "wordnetgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "wordnetgen:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s (%d bytes)\n", *out, b.Len())
}
