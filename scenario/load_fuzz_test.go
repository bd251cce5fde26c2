package scenario

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadJSONL feeds any bytes to the scenario file reader, seeded with
// the fixture's lines and the broken variants the load tests use. The
// reader either returns scenarios and no error, or no scenarios and a
// *LoadError whose every problem names the file, a line within the input
// and a message; loaded ids are unique; a loaded set written back
// (Marshal, one line each) loads again and writes the same bytes (the
// canonical form is a fixed point; an empty object such as "traits": {}
// is not kept, so the scenarios themselves may differ in nil against
// empty); and the embedded sets' fast decoder (decodeEmbedded) reads
// every such canonical line to the same scenario as the checked decoder.
func FuzzReadJSONL(f *testing.F) {
	valid, err := os.ReadFile(fixture)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	lines := strings.Split(strings.TrimSuffix(string(valid), "\n"), "\n")
	for _, l := range lines {
		f.Add([]byte(l))
	}
	for _, s := range []string{"", "\n\n", `{"id": "a",}`, lines[0] + " trailing", "\xef\xbb\xbf" + lines[0],
		strings.Replace(lines[0], `"resistance":"EB"`, `"resistance":"XX"`, 1),
		strings.Replace(lines[0], `"initial_stance":-0.4`, `"initial_stance":-1.5`, 1),
		strings.Replace(lines[1], "fx-charity-002", "fx-charity-\xff02", 1),
		lines[0] + "\n" + lines[0], `{"id":"x","bogus":1}`, `[1,2]`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ss, err := ReadJSONL("f.jsonl", bytes.NewReader(in))
		if err != nil {
			var le *LoadError
			if ss != nil || !errors.As(err, &le) || len(le.Problems) == 0 {
				t.Fatalf("%d scenarios with error %T %v", len(ss), err, err)
			}
			nLines := bytes.Count(in, []byte("\n")) + 1
			for _, p := range le.Problems {
				if p.File != "f.jsonl" || p.Line < 0 || p.Line > nLines || p.Msg == "" {
					t.Fatalf("problem %+v (input of %d lines)", p, nLines)
				}
			}
			return
		}
		if len(ss) == 0 {
			t.Fatal("no scenarios and no error")
		}
		ids := map[string]bool{}
		var out bytes.Buffer
		for i := range ss {
			if ids[ss[i].ID] {
				t.Fatalf("id %q loaded twice", ss[i].ID)
			}
			ids[ss[i].ID] = true
			b, err := Marshal(&ss[i])
			if err != nil {
				t.Fatalf("Marshal of loaded scenario %d: %v", i, err)
			}
			v1, p1 := decodeChecked(b)
			if v2, p2 := decodeEmbedded(b); len(p1) > 0 || len(p2) > 0 || !reflect.DeepEqual(v1, v2) {
				t.Fatalf("decoders differ on %s (problems %v / %v)", b, p1, p2)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
		written := bytes.Clone(out.Bytes())
		again, err := ReadJSONL("f.jsonl", &out)
		if err != nil || len(again) != len(ss) {
			t.Fatalf("written back, the set does not load: %d scenarios, %v", len(again), err)
		}
		var rewritten bytes.Buffer
		for i := range again {
			b, _ := Marshal(&again[i])
			rewritten.Write(b)
			rewritten.WriteByte('\n')
		}
		if !bytes.Equal(rewritten.Bytes(), written) {
			t.Fatalf("written back and reloaded, the set writes differently:\n%s\n%s", written, rewritten.Bytes())
		}
	})
}
