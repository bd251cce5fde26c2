package llm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/tidwall/sjson"
)

// Request bodies are written here rather than by openai-go's MarshalJSON,
// whose reflection, union marshalers and extra-field merge were about a
// quarter of the client's CPU with 64 concurrent episodes
// (BenchmarkConcurrentEpisodes). The bytes are the same as openai-go's
// (TestBodiesMatchOpenAIGo): its field order, an extra field replacing a
// standard field in place, the remaining extra fields after the standard
// ones in sorted key order, each encoded as openai-go encodes it (sjson).

// chatRequestBody returns the JSON body of p, whose messages are msgs (the
// messages chatMessages converted). Errors: a non-finite float, an extra
// field sjson cannot encode.
func chatRequestBody(msgs []Message, p *openai.ChatCompletionNewParams) ([]byte, error) {
	n := 160
	for _, m := range msgs {
		n += len(m.Content) + 32
	}
	w := objWriter{b: make([]byte, 0, n), extras: p.ExtraFields()}
	if w.key("messages") {
		w.b = append(w.b, '[')
		for i, m := range msgs {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, `{"content":`...)
			w.b = appendJSONString(w.b, m.Content)
			w.b = append(w.b, `,"role":`...)
			w.b = appendJSONString(w.b, m.Role)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	if w.key("model") {
		w.b = appendJSONString(w.b, p.Model)
	}
	w.optBool("logprobs", p.Logprobs)
	w.optInt("max_tokens", p.MaxTokens)
	w.optInt("seed", p.Seed)
	w.optFloat("temperature", p.Temperature)
	w.optInt("top_logprobs", p.TopLogprobs)
	w.optFloat("top_p", p.TopP)
	w.strings("stop", p.Stop.OfStringArray)
	return w.finish()
}

// completionRequestBody returns the JSON body of p, whose prompt is prompts (one
// string for one prompt, else a list). The prompts' longest common prefix
// is escaped once and copied into each (the probe forks of a turn share
// the whole transcript). Errors are chatRequestBody's.
func completionRequestBody(prompts []string, p *openai.CompletionNewParams) ([]byte, error) {
	pre := sharedPrefix(prompts)
	n := 160
	for _, s := range prompts {
		n += len(s) + 8
	}
	w := objWriter{b: make([]byte, 0, n), extras: p.ExtraFields()}
	if w.key("prompt") {
		if len(prompts) == 1 {
			w.b = appendJSONString(w.b, prompts[0])
		} else {
			w.b = append(w.b, '[')
			esc := appendJSONStringBody(make([]byte, 0, len(pre)+len(pre)/8+16), pre) // the shared prefix, escaped once
			for i, s := range prompts {
				if i > 0 {
					w.b = append(w.b, ',')
				}
				w.b = append(w.b, '"')
				w.b = append(w.b, esc...)
				w.b = appendJSONStringBody(w.b, s[len(pre):])
				w.b = append(w.b, '"')
			}
			w.b = append(w.b, ']')
		}
	}
	if w.key("model") {
		w.b = appendJSONString(w.b, string(p.Model))
	}
	w.optInt("logprobs", p.Logprobs)
	w.optInt("max_tokens", p.MaxTokens)
	w.optInt("seed", p.Seed)
	w.optFloat("temperature", p.Temperature)
	w.optFloat("top_p", p.TopP)
	w.strings("stop", p.Stop.OfStringArray)
	return w.finish()
}

// sharedPrefix returns the longest common prefix of prompts (at least two)
// that ends where every prompt starts a new rune, so escaping the prefix
// and each rest separately gives each prompt's escaping; "" for fewer than
// two prompts.
func sharedPrefix(prompts []string) string {
	if len(prompts) < 2 {
		return ""
	}
	n := len(prompts[0])
	for _, s := range prompts[1:] {
		n = min(n, len(s))
		for i := 0; i < n; i++ {
			if s[i] != prompts[0][i] {
				n = i
				break
			}
		}
	}
	// A prefix ending before a continuation byte would split a rune; one
	// ending before a rune start escapes alike alone and in each prompt
	// (an invalid byte is escaped on its own either way).
	for n > 0 && slices.ContainsFunc(prompts, func(s string) bool { return n < len(s) && !utf8.RuneStart(s[n]) }) {
		n--
	}
	return prompts[0][:n]
}

// objWriter writes one JSON object: standard fields through key, then the
// extra fields not used in place by finish.
type objWriter struct {
	b      []byte
	extras map[string]any
	used   []string // extra fields written in place of a standard one
	err    error
}

// key starts field k (comma, quoted key) and, when an extra field of the
// same name replaces it, writes that value and reports false; true means
// the caller writes the value.
func (w *objWriter) key(k string) bool {
	if len(w.b) == 0 {
		w.b = append(w.b, '{')
	} else {
		w.b = append(w.b, ',')
	}
	w.b = appendJSONString(w.b, k)
	w.b = append(w.b, ':')
	if v, ok := w.extras[k]; ok {
		w.used = append(w.used, k)
		val, err := extraValue(v)
		if err != nil && w.err == nil {
			w.err = fmt.Errorf("llm: extra field %q: %w", k, err)
		}
		w.b = append(w.b, val...)
		return false
	}
	return true
}

func (w *objWriter) optBool(k string, o param.Opt[bool]) {
	if o.Valid() && w.key(k) {
		w.b = strconv.AppendBool(w.b, o.Value)
	}
}

func (w *objWriter) optInt(k string, o param.Opt[int64]) {
	if o.Valid() && w.key(k) {
		w.b = strconv.AppendInt(w.b, o.Value, 10)
	}
}

func (w *objWriter) optFloat(k string, o param.Opt[float64]) {
	if o.Valid() && w.key(k) {
		if math.IsInf(o.Value, 0) || math.IsNaN(o.Value) {
			if w.err == nil {
				w.err = fmt.Errorf("llm: %s: unsupported value %v", k, o.Value)
			}
			return
		}
		w.b = appendJSONFloat(w.b, o.Value)
	}
}

func (w *objWriter) strings(k string, ss []string) {
	if len(ss) > 0 && w.key(k) {
		w.b = append(w.b, '[')
		for i, s := range ss {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = appendJSONString(w.b, s)
		}
		w.b = append(w.b, ']')
	}
}

// finish appends the extra fields not written in place, in sorted key
// order, and closes the object.
func (w *objWriter) finish() ([]byte, error) {
	if len(w.extras) > len(w.used) {
		keys := make([]string, 0, len(w.extras)-len(w.used))
		for k := range w.extras {
			if !slices.Contains(w.used, k) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			val, err := extraValue(w.extras[k])
			if err != nil {
				return nil, fmt.Errorf("llm: extra field %q: %w", k, err)
			}
			member, err := sjson.SetRawBytes([]byte("{}"), param.EscapeSJSONKey(k), val)
			if err != nil {
				return nil, fmt.Errorf("llm: extra field %q: %w", k, err)
			}
			w.b = append(w.b, ',')
			w.b = append(w.b, member[1:len(member)-1]...)
		}
	}
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}'), nil
}

// extraValue encodes an extra field's value as openai-go does (sjson).
func extraValue(v any) ([]byte, error) {
	enc, err := sjson.SetBytes([]byte("{}"), "v", v)
	if err != nil {
		return nil, err
	}
	return enc[len(`{"v":`) : len(enc)-1], nil
}

// rawChat and rawCompletion are the params passed to openai-go with a body
// of ours (option.WithRequestBody): they marshal to "{}" at no cost, and
// the option replaces that body.
var rawChat, rawCompletion = func() (openai.ChatCompletionNewParams, openai.CompletionNewParams) {
	var c openai.ChatCompletionNewParams
	var p openai.CompletionNewParams
	param.SetJSON([]byte("{}"), &c)
	param.SetJSON([]byte("{}"), &p)
	return c, p
}()

// appendJSONFloat appends f as encoding/json (and openai-go) write a
// float64: ES6 number formatting, exponent form below 1e-6 and from 1e21.
func appendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendJSONString appends s as a quoted JSON string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendJSONStringBody(b, s)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendJSONStringBody appends s escaped as openai-go's encoder escapes it
// (encoding/json without HTML escaping): quote, backslash and control
// characters, U+2028 and U+2029 escaped, each invalid UTF-8 byte as
// \ufffd; everything else as is.
func appendJSONStringBody(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}
