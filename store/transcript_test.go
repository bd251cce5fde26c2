package store

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
)

// The transcript texts round-trip every string (control characters,
// quotes, bytes that are not UTF-8) and every finite float64 exactly, and
// come out in T order.
func TestTranscriptRoundTrip(t *testing.T) {
	tiny, third := math.SmallestNonzeroFloat64, 1.0
	third /= 3
	ts := []episode.Turn{
		{T: 3, Persuader: "bad \xff\xfe utf-8", Persuadee: "\x00\x1f\"\\\u2028", Decision: decision.Accept,
			Acts: []string{}, Belief: &tiny, PersuaderMS: math.MaxFloat64, ProbeMS: -1e-300,
			ProbeUsage: episode.Usage{PromptTokens: math.MaxInt64, Requests: -1}},
		{T: 1, Persuader: "first", Decision: decision.Continue, Acts: []string{"a", "b\nc"},
			Probes: []probe.Reading{{Probe: "ca", P: third, OK: true}, {Probe: "p\"e", P: 0, OK: false}},
			Belief: &third, Dense: &third},
	}
	b := appendTurns(nil, ts)
	// Costs are written up to the last one that is not zero.
	const first = `[1,"first","","continue",["a","b\nc"],0.3333333333333333,0.3333333333333333,[["ca",0.3333333333333333,1],["p\"e",0,0]]]`
	if string(b[1:1+len(first)]) != first {
		t.Errorf("turn without costs encoded as\n%s\nwant prefix %s", b, first)
	}
	got, err := decodeTurns(string(b), 0)
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want := []episode.Turn{ts[1], ts[0]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip of %s\n got %+v\nwant %+v", b, got, want)
	}
	// An unreadable reading keeps the reason its answer was rejected.
	rs := []probe.Reading{{Probe: "x", P: 0.1, OK: true}, {Probe: "y", Reason: `post-sampling "Yes" 1`}}
	enc := string(appendReadings(nil, rs))
	if want := `[["x",0.1,1],["y",0,0,"post-sampling \"Yes\" 1"]]`; enc != want {
		t.Fatalf("readings encoded as %s, want %s", enc, want)
	}
	if got, err := decodeReadings(enc); err != nil || !reflect.DeepEqual(got, rs) {
		t.Fatalf("readings: %+v, %v", got, err)
	}
	if got, err := decodeReadings("[]"); err != nil || got != nil {
		t.Fatalf("empty readings: %#v, %v", got, err)
	}
}

// The reader takes any JSON spelling of the layout: whitespace, every
// escape (surrogate pairs too), exponents.
func TestTranscriptDecodesJSON(t *testing.T) {
	const s = ` [ [ 2 , "\u00e9\ud83d\ude42\/\b\f\r\t" , "" , "reject" , [ "x" ] , null , -2.5E-1 , [ [ "ca" , 0.5 , 1 ] ] ,
		1e3 , 0 , 0 , 1 , 2 , 3 , 4 , 5 , 6 , 7 , 8 , 9 , 10 , 11 , 12 ] , [1, "", "", "continue", [], null, null, [], 0, 2.5] ] `
	got, err := decodeTurns(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []episode.Turn{{T: 2, Persuader: "é🙂/\b\f\r\t", Decision: decision.Reject, Acts: []string{"x"},
		Dense: fp(-0.25), PersuaderMS: 1000,
		PersuaderUsage: episode.Usage{PromptTokens: 1, CompletionTokens: 2, CachedTokens: 3, Requests: 4},
		PersuadeeUsage: episode.Usage{PromptTokens: 5, CompletionTokens: 6, CachedTokens: 7, Requests: 8},
		ProbeUsage:     episode.Usage{PromptTokens: 9, CompletionTokens: 10, CachedTokens: 11, Requests: 12},
		Probes:         []probe.Reading{{Probe: "ca", P: 0.5, OK: true}}},
		{T: 1, Decision: decision.Continue, Acts: []string{}, PersuadeeMS: 2.5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{``, `[`, `[[1,"a"]]`, `[]x`, `[[1,"a","b","c",[],null,null,[["ca",0.5,2]]]]`, `[[1,"a","b","c",[],null,null,[],1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]]`, `[[1,"a","b","c",[],null,null,[],1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,2]]`, `[["1"]]`} {
		if _, err := decodeTurns(bad, 0); !errors.Is(err, errTranscript) {
			t.Errorf("decodeTurns(%q): %v, want errTranscript", bad, err)
		}
	}
}

// needsEscape8 flags a word exactly when one of its bytes needs an escape.
func TestNeedsEscape8(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			want := c < 0x20 || c == '"' || c == '\\'
			if got := needsEscape8(load8(string(w))); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", c, pos, got, want)
			}
		}
	}
}
