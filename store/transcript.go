package store

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
)

// An episode's turns and probe read-outs are stored in its transcripts
// row (schema version 7) as two JSON texts, written and read by the
// functions below, so that saving an episode is two row inserts instead of
// one per turn and per read-out:
//
//	initial_json: [[probe, p, ok(, reason)], ...]  the t = 0 read-out
//	turns_json:   [[t, persuader_text, persuadee_text, decision, [act, ...],
//	                belief|null, dense|null, [[probe, p, ok], ...],
//	                persuader_ms, persuadee_ms, probe_ms,
//	                persuader_{prompt,completion,cached}_tokens, persuader_requests,
//	                persuadee_{prompt,completion,cached}_tokens, persuadee_requests,
//	                probe_{prompt,completion,cached}_tokens, probe_requests,
//	                probe_prompt_once_tokens, dense_probes, reply_cut], ...]
//
// in t order. The latencies, token counts and the last three (schema 8:
// Usage.PromptOnceTokens of the read-out, Turn.DenseProbes, Turn.ReplyCut
// as 0 or 1) are written up to the last one that is not zero (the
// simulator's turns have none), the rest read as 0. ok is 1 or 0; an unreadable reading may carry a fourth element, the
// reason the engine's answer was rejected (probe.Reading.Reason). Numbers
// are written in Go's shortest round-trip form, so every float64 loads back bit for bit; strings are JSON strings (bytes
// that are not UTF-8 are kept as they are). The views turns and
// probe_readings expose the texts as the tables of schema versions 1-6
// did, for plain SQL (docs/store.md).

// costFields is the number of latencies and token counts that follow a
// turn's readings; turnFields adds the three fields after them.
const (
	costFields = 15
	turnFields = costFields + 3
)

// appendReadings appends rs as [[probe, p, ok], ...], an unreadable
// reading with a Reason as [probe, p, 0, reason].
func appendReadings(b []byte, rs []probe.Reading) []byte {
	b = append(b, '[')
	for k, r := range rs {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, r.Probe)
		b = append(b, ',')
		b = strconv.AppendFloat(b, r.P, 'g', -1, 64)
		switch {
		case r.OK:
			b = append(b, ",1]"...)
		case r.Reason != "":
			b = append(b, ",0,"...)
			b = appendString(b, r.Reason)
			b = append(b, ']')
		default:
			b = append(b, ",0]"...)
		}
	}
	return append(b, ']')
}

// appendTurns appends ts, in ascending T, as turns_json.
func appendTurns(b []byte, ts []episode.Turn) []byte {
	order := turnOrder(ts)
	b = append(b, '[')
	for n := range ts {
		i := n
		if order != nil {
			i = order[n]
		}
		tu := &ts[i]
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(tu.T), 10)
		b = append(b, ',')
		b = appendString(b, tu.Persuader)
		b = append(b, ',')
		b = appendString(b, tu.Persuadee)
		b = append(b, ',')
		b = appendString(b, string(tu.Decision))
		b = append(b, ",["...)
		for k, a := range tu.Acts {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendString(b, a)
		}
		b = append(b, "],"...)
		b = appendOptFloat(b, tu.Belief)
		b = append(b, ',')
		b = appendOptFloat(b, tu.Dense)
		b = append(b, ',')
		b = appendReadings(b, tu.Probes)
		ms := [...]float64{tu.PersuaderMS, tu.PersuadeeMS, tu.ProbeMS}
		var n [turnFields - 3]int
		for k, u := range [...]*episode.Usage{&tu.PersuaderUsage, &tu.PersuadeeUsage, &tu.ProbeUsage} {
			n[4*k], n[4*k+1], n[4*k+2], n[4*k+3] = u.PromptTokens, u.CompletionTokens, u.CachedTokens, u.Requests
		}
		n[12], n[13] = tu.ProbeUsage.PromptOnceTokens, tu.DenseProbes
		if tu.ReplyCut {
			n[14] = 1
		}
		last := -1 // index of the last field that is not zero
		for k := turnFields - 1; k >= 0 && last < 0; k-- {
			if (k < 3 && ms[k] != 0) || (k >= 3 && n[k-3] != 0) {
				last = k
			}
		}
		for k := 0; k <= last; k++ {
			b = append(b, ',')
			if k < 3 {
				b = strconv.AppendFloat(b, ms[k], 'g', -1, 64)
			} else {
				b = strconv.AppendInt(b, int64(n[k-3]), 10)
			}
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// turnOrder returns the indices of ts in ascending T (ts itself is not
// modified), or nil when ts is already in that order, the usual case.
func turnOrder(ts []episode.Turn) []int {
	if slices.IsSortedFunc(ts, func(a, b episode.Turn) int { return a.T - b.T }) {
		return nil
	}
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return ts[a].T - ts[b].T })
	return order
}

func appendOptFloat(b []byte, p *float64) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, *p, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string: '"', '\\' and control
// characters escaped, every other byte as it is. Clean runs are found
// eight bytes at a time.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && !needsEscape8(load8(s[i:i+8])) {
			i += 8
			continue
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// load8 returns the first eight bytes of s, little-endian.
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// needsEscape8 reports whether any of the eight bytes of x is below 0x20,
// '"' or '\\' (may report true for none, never false for one: the exact
// check follows byte by byte).
func needsEscape8(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - lo) &^ v & hi }
	return (x-lo*0x20)&^x&hi != 0 || hasZero(x^(lo*'"')) != 0 || hasZero(x^(lo*'\\')) != 0
}

// errTranscript is wrapped by every decoding error.
var errTranscript = errors.New("malformed stored transcript")

// jsonReader decodes the texts appendTurns and appendReadings write (and
// the same values with any JSON whitespace). Unescaped strings are
// substrings of the text, so decoding allocates only the slices.
type jsonReader struct {
	s   string
	i   int
	err error
}

func (r *jsonReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at offset %d", errTranscript, what, r.i)
	}
}

func (r *jsonReader) ws() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// tok consumes byte c (after whitespace) and reports whether it was there.
func (r *jsonReader) tok(c byte) bool {
	r.ws()
	if r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

func (r *jsonReader) want(c byte) {
	if !r.tok(c) {
		r.fail("want " + strconv.QuoteRune(rune(c)))
	}
}

// more is called after an element of an array: it consumes ',' and
// reports true, or consumes ']' and reports false.
func (r *jsonReader) more() bool {
	if r.tok(',') {
		return true
	}
	r.want(']')
	return false
}

// open consumes '[' and reports whether the array has elements.
func (r *jsonReader) open() bool {
	r.want('[')
	return r.err == nil && !r.tok(']')
}

// number returns the text of the next JSON number.
func (r *jsonReader) number() string {
	r.ws()
	j := r.i
	for j < len(r.s) {
		c := r.s[j]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			j++
			continue
		}
		break
	}
	if j == r.i {
		r.fail("want a number")
	}
	n := r.s[r.i:j]
	r.i = j
	return n
}

func (r *jsonReader) float() float64 {
	n := r.number()
	if r.err != nil {
		return 0
	}
	v, err := strconv.ParseFloat(n, 64)
	if err != nil {
		r.fail("number " + strconv.Quote(n))
	}
	return v
}

func (r *jsonReader) optFloat() *float64 {
	r.ws()
	if len(r.s)-r.i >= 4 && r.s[r.i:r.i+4] == "null" {
		r.i += 4
		return nil
	}
	v := r.float()
	return &v
}

func (r *jsonReader) int() int {
	n := r.number()
	if r.err != nil {
		return 0
	}
	v, err := strconv.Atoi(n)
	if err != nil {
		r.fail("integer " + strconv.Quote(n))
	}
	return v
}

func (r *jsonReader) str() string {
	r.want('"')
	if r.err != nil {
		return ""
	}
	start := r.i
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case '"':
			v := r.s[start:r.i]
			r.i++
			return v
		case '\\':
			return r.escaped(start)
		}
		r.i++
	}
	r.fail("unterminated string")
	return ""
}

// escaped decodes the rest of a string that has an escape at r.i and
// started at start.
func (r *jsonReader) escaped(start int) string {
	b := []byte(r.s[start:r.i])
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			r.i++
			return string(b)
		case c != '\\':
			b = append(b, c)
			r.i++
			continue
		}
		if r.i+1 >= len(r.s) {
			break
		}
		e := r.s[r.i+1]
		r.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			c1 := r.hex4()
			if utf16.IsSurrogate(c1) && r.i+1 < len(r.s) && r.s[r.i] == '\\' && r.s[r.i+1] == 'u' {
				r.i += 2
				c1 = utf16.DecodeRune(c1, r.hex4())
			}
			b = utf8.AppendRune(b, c1)
		default:
			r.fail("bad escape")
			return ""
		}
		if r.err != nil {
			return ""
		}
	}
	r.fail("unterminated string")
	return ""
}

func (r *jsonReader) hex4() rune {
	if r.i+4 > len(r.s) {
		r.fail("short \\u escape")
		return 0
	}
	v, err := strconv.ParseUint(r.s[r.i:r.i+4], 16, 16)
	if err != nil {
		r.fail("bad \\u escape")
	}
	r.i += 4
	return rune(v)
}

// readings decodes [[probe, p, ok], ...]; nil when empty.
func (r *jsonReader) readings() []probe.Reading {
	if !r.open() {
		return nil
	}
	var rs []probe.Reading
	for r.err == nil {
		var x probe.Reading
		r.want('[')
		x.Probe = r.str()
		r.want(',')
		x.P = r.float()
		r.want(',')
		switch ok := r.int(); ok {
		case 0, 1:
			x.OK = ok == 1
		default:
			r.fail("ok flag not 0 or 1")
		}
		if !x.OK && r.tok(',') {
			x.Reason = r.str()
		}
		r.want(']')
		rs = append(rs, x)
		if !r.more() {
			break
		}
	}
	return rs
}

func (r *jsonReader) end() {
	r.ws()
	if r.err == nil && r.i != len(r.s) {
		r.fail("trailing text")
	}
}

// decodeReadings parses initial_json.
func decodeReadings(s string) ([]probe.Reading, error) {
	r := jsonReader{s: s}
	rs := r.readings()
	r.end()
	return rs, r.err
}

// decodeTurns parses turns_json into a non-nil slice with capacity hint n
// (the row's n_turns); every turn's Acts is non-nil, its Probes nil when
// empty (the normalisations Episodes documents).
func decodeTurns(s string, n int) ([]episode.Turn, error) {
	r := jsonReader{s: s}
	ts := make([]episode.Turn, 0, max(n, 0))
	if r.open() {
		for r.err == nil {
			ts = append(ts, episode.Turn{})
			tu := &ts[len(ts)-1]
			r.want('[')
			tu.T = r.int()
			for _, p := range [...]*string{&tu.Persuader, &tu.Persuadee, (*string)(&tu.Decision)} {
				r.want(',')
				*p = r.str()
			}
			r.want(',')
			tu.Acts = []string{}
			if r.open() {
				for r.err == nil {
					tu.Acts = append(tu.Acts, r.str())
					if !r.more() {
						break
					}
				}
			}
			for _, p := range [...]**float64{&tu.Belief, &tu.Dense} {
				r.want(',')
				*p = r.optFloat()
			}
			r.want(',')
			tu.Probes = r.readings()
			costs := [turnFields]*float64{&tu.PersuaderMS, &tu.PersuadeeMS, &tu.ProbeMS}
			ints := [turnFields]*int{}
			for k, u := range [...]*episode.Usage{&tu.PersuaderUsage, &tu.PersuadeeUsage, &tu.ProbeUsage} {
				ints[3+4*k], ints[4+4*k], ints[5+4*k], ints[6+4*k] = &u.PromptTokens, &u.CompletionTokens, &u.CachedTokens, &u.Requests
			}
			cut := 0
			ints[15], ints[16], ints[17] = &tu.ProbeUsage.PromptOnceTokens, &tu.DenseProbes, &cut
			for k := 0; k < turnFields && r.err == nil && r.tok(','); k++ {
				if k < 3 {
					*costs[k] = r.float()
				} else {
					*ints[k] = r.int()
				}
			}
			switch cut {
			case 0, 1:
				tu.ReplyCut = cut == 1
			default:
				r.fail("reply_cut flag not 0 or 1")
			}
			r.want(']')
			if !r.more() {
				break
			}
		}
	}
	r.end()
	if r.err != nil {
		return nil, r.err
	}
	return ts, nil
}
