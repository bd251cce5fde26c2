package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/persuarena/persuarena/probe"
)

// FuzzParseLogprobs feeds any body to the three log-prob readers (chat,
// legacy completions, llama-server's /completion), seeded with the
// engines' recorded answers under testdata (docs/engines.md). Each either
// fails with ErrMalformed or ErrLogprobsUnavailable or returns positions
// whose pooled Yes/No masses are finite and non-negative and whose probe
// reading, when readable, is a probability in [0, 1]. sanitizeJSON leaves
// valid JSON as it is and is idempotent.
func FuzzParseLogprobs(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seed bodies under testdata: %v", err)
	}
	seeds = append(seeds, filepath.Join("testdata", "nonfinite_logprobs.txt"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(1))
		f.Add(b, uint8(2))
	}
	f.Fuzz(func(t *testing.T, raw []byte, n uint8) {
		s := sanitizeJSON(raw)
		if json.Valid(raw) && !bytes.Equal(s, raw) {
			t.Fatalf("sanitizeJSON changed valid JSON %q to %q", raw, s)
		}
		if again := sanitizeJSON(s); !bytes.Equal(again, s) {
			t.Fatalf("sanitizeJSON not idempotent: %q then %q", s, again)
		}
		check := func(who string, tops [][]probe.TokenLogprob, err error) {
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrLogprobsUnavailable) {
					t.Fatalf("%s: error %v is neither ErrMalformed nor ErrLogprobsUnavailable", who, err)
				}
				return
			}
			for i, top := range tops {
				y, no := probe.Pool(probe.Answer{Top: top})
				if !(y >= 0 && no >= 0) || math.IsInf(y+no, 0) {
					t.Fatalf("%s position %d: masses %v, %v", who, i, y, no)
				}
				if r := probe.Read("p", probe.Answer{Top: top}); r.OK && !(r.P >= 0 && r.P <= 1) {
					t.Fatalf("%s position %d: reading %v", who, i, r.P)
				}
			}
		}
		for _, want := range [][2]bool{{false, false}, {true, false}, {true, true}} {
			r, _, err := parseChat(raw, want[0], want[1])
			var tops [][]probe.TokenLogprob
			if err == nil {
				tops = r.Top
			}
			check("chat", tops, err)
		}
		k := int(n%4) + 1
		for _, want := range []bool{false, true} {
			chs, _, _, err := parseCompletions(raw, k, want, map[int]string{1: "Yes", 2: "No"})
			for _, c := range chs {
				check("completions", c.Top, err)
			}
			check("completions", nil, err)
			chs, _, _, err = parseLlamaCompletion(raw, k, want)
			for _, c := range chs {
				check("llama /completion", c.Top, err)
			}
			check("llama /completion", nil, err)
		}
	})
}
