package scenario

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/scenarios"
)

//go:embed schema.json
var schemaJSON []byte

// SchemaJSON returns a copy of the JSON Schema (draft 2020-12) every
// scenario line is validated against. It mirrors the JSON tags of Scenario
// exactly and sets additionalProperties to false everywhere, so misspelt
// fields are errors.
func SchemaJSON() []byte { return slices.Clone(schemaJSON) }

// schemaURL is the schema's $id; errors carry locations below it.
const schemaURL = "https://github.com/persuarena/persuarena/scenario/schema.json"

type compiledSchema struct {
	sch *jsonschema.Schema
	doc any // the decoded schema document, to list allowed property names
}

// compiled compiles the embedded schema once. The schema ships with the
// binary and is covered by tests, so a compile failure is a programming
// error and panics.
var compiled = sync.OnceValue(func() compiledSchema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		panic("scenario: embedded schema.json is not JSON: " + err.Error())
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		panic("scenario: embedded schema.json: " + err.Error())
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		panic("scenario: embedded schema.json does not compile: " + err.Error())
	}
	return compiledSchema{sch: sch, doc: doc}
})

// Problem is one validation problem found while loading or writing
// scenarios. It renders as "file:line: field: msg".
type Problem struct {
	// File is the file name (or "builtin:NAME" for an embedded set).
	File string
	// Line is the 1-based line number; 0 for a problem of the whole file
	// (Field "(file)"), which renders as "file: msg".
	Line int
	// Field is a dotted JSON path such as "hidden.concerns[2].keywords",
	// "(json)" for malformed JSON, "(root)" for the whole line.
	Field string
	// Msg says what is wrong.
	Msg string
}

// String renders p as "file:line: field: msg", omitting an empty field;
// a problem of the whole file (line 0) as "file: msg", with no line to
// look for.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d: ", p.Line)
	} else {
		b.WriteString(": ")
	}
	if p.Field != "" && !(p.Line == 0 && p.Field == "(file)") {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// LoadError collects every problem found in one load or write, in file and
// line order. Loaders return it (as error) with no scenarios: a scenario set
// with any problem is rejected whole.
type LoadError struct {
	Problems []Problem
}

// Error renders all problems, one per line.
func (e *LoadError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// loc is where an id was first seen.
type loc struct {
	file string
	line int
}

// loader reads one or more JSONL sources, sharing the duplicate-id index
// across them.
type loader struct {
	ctx      context.Context
	seen     map[string]loc
	problems []Problem
	out      []Scenario
}

func newLoader(ctx context.Context) *loader { return &loader{ctx: ctx, seen: map[string]loc{}} }

// MaxProblems is the most problems one load reports: past it, reading
// stops with a last problem saying so.
//
// Choice: 1,000, more than anyone fixes in one pass, while a file that is
// not JSONL at all (a binary, random bytes) fails at once instead of
// collecting a problem per line of its whole size.
const MaxProblems = 1000

// errTooManyProblems stops a read once MaxProblems are collected.
var errTooManyProblems = errors.New("too many problems")

// read parses all lines of r. It returns only I/O errors, l.ctx's error
// (checked at every line, so that a long load ends at once when it is
// cancelled) and errTooManyProblems; validation problems accumulate in
// l.problems.
func (l *loader) read(name string, r io.Reader) error {
	// bufio.Reader rather than Scanner: scenario lines with full P4G
	// transcripts can exceed Scanner's 64 KiB default token limit.
	br := bufio.NewReader(r)
	before := len(l.out) + len(l.problems)
	for n := 1; ; n++ {
		if err := l.ctx.Err(); err != nil {
			return fmt.Errorf("%s:%d: loading stopped: %w", name, n, err)
		}
		if len(l.problems) >= MaxProblems {
			l.problems = append(l.problems, Problem{File: name, Line: n, Field: "(file)",
				Msg: fmt.Sprintf("over %d problems: reading stopped (is this a JSONL scenario file?)", MaxProblems)})
			return errTooManyProblems
		}
		line, long, err := readLine(br, MaxLineBytes)
		switch {
		case long:
			l.problems = append(l.problems, Problem{File: name, Line: n, Field: "(line)",
				Msg: fmt.Sprintf("longer than %d bytes (MaxLineBytes); one scenario per line", MaxLineBytes)})
		case n == 1 && bytes.HasPrefix(line, []byte("\xef\xbb\xbf")):
			l.problems = append(l.problems, Problem{File: name, Line: n, Field: "(file)",
				Msg: "starts with a UTF-8 byte-order mark; save the file as UTF-8 without one"})
		case !utf8.Valid(line):
			l.problems = append(l.problems, Problem{File: name, Line: n, Field: "(line)",
				Msg: fmt.Sprintf("invalid UTF-8 at byte %d", invalidAt(line))})
		case len(line) > 0:
			l.line(name, n, line)
		}
		if err == io.EOF {
			if len(l.out)+len(l.problems) == before {
				l.problems = append(l.problems, Problem{File: name, Field: "(file)", Msg: "no scenarios (the file is empty or blank)"})
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
}

// MaxLineBytes is the longest scenario line accepted, in bytes (4 MiB).
// The built-in sets' longest line is under 8 KiB; a longer line is
// almost certainly not one scenario (a whole file without newlines, a
// binary), and reading it whole would cost unbounded memory.
const MaxLineBytes = 4 << 20

// readLine reads one line up to and including '\n'. A line longer than
// max bytes is consumed and discarded and reported as long; err is io.EOF
// at the end of input (with what is left of the last line).
func readLine(br *bufio.Reader, max int) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !long && len(line)+len(chunk) > max {
			long, line = true, nil
		}
		if !long {
			line = append(line, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, long, err
		}
	}
}

// invalidAt returns the byte offset of the first invalid UTF-8 sequence.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// line validates and decodes one line.
func (l *loader) line(name string, n int, raw []byte) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return
	}
	var probs []Problem
	add := func(field, msg string) {
		probs = append(probs, Problem{File: name, Line: n, Field: field, Msg: msg})
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		add("(json)", err.Error())
		l.problems = append(l.problems, probs...)
		return
	}
	if m, ok := inst.(map[string]any); ok {
		if id, ok := m["id"].(string); ok && id != "" {
			if first, dup := l.seen[id]; dup {
				where := fmt.Sprintf("line %d", first.line)
				if first.file != name {
					where = fmt.Sprintf("%s:%d", first.file, first.line)
				}
				add("id", fmt.Sprintf("duplicate id %s (first on %s)", id, where))
			} else {
				l.seen[id] = loc{name, n}
			}
		}
	}
	s, fps := checkInstance(inst, raw)
	for _, fp := range fps {
		add(fp.Field, fp.Problem)
	}
	if len(probs) > 0 {
		slices.SortStableFunc(probs, func(a, b Problem) int {
			if c := strings.Compare(a.Field, b.Field); c != 0 {
				return c
			}
			return strings.Compare(a.Msg, b.Msg)
		})
		l.problems = append(l.problems, probs...)
		return
	}
	l.out = append(l.out, s)
}

// result returns the scenarios, or nil and a *LoadError if any problem was
// found.
func (l *loader) result() ([]Scenario, error) {
	if len(l.problems) > 0 {
		return nil, &LoadError{Problems: l.problems}
	}
	return l.out, nil
}

// checkInstance validates a decoded JSON instance (and its raw bytes)
// against the schema, decodes it into a Scenario and runs Check. It returns
// every schema problem; decoding and Check run only on schema-valid input.
func checkInstance(inst any, raw []byte) (Scenario, []FieldError) {
	cs := compiled()
	var s Scenario
	if err := cs.sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return s, []FieldError{{Field: "(root)", Problem: err.Error()}}
		}
		return s, schemaProblems(ve, inst, cs.doc)
	}
	return decodeChecked(raw)
}

// decodeChecked decodes one scenario line strictly (unknown fields are
// errors) and runs Check.
func decodeChecked(raw []byte) (Scenario, []FieldError) {
	var s Scenario
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		field := "(json)"
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			field = te.Field
		}
		return s, []FieldError{{Field: field, Problem: err.Error()}}
	}
	return s, checkProblems(&s)
}

// decodeEmbedded is decodeChecked for a line of an embedded set: the
// same strictness (unknown members are errors) and the same Check, with
// the JSON v2 decoder (github.com/go-json-experiment/json, the Go team's
// implementation of the encoding/json/v2 proposal), which decodes the
// built-in sets 3.4x faster than encoding/json: their decoding was most
// of the start-up of 'eval --split all'.
//
// Choice: only the embedded sets, which Marshal wrote: v2 matches member
// names case-sensitively and rejects duplicate names and invalid UTF-8,
// where encoding/json accepts them; user files keep decodeChecked's v1
// semantics and messages. TestEmbeddedDecodersAgree checks that both
// decoders give every embedded line the same scenario.
func decodeEmbedded(raw []byte) (Scenario, []FieldError) {
	var s Scenario
	if err := jsonv2.Unmarshal(raw, &s, jsonv2.RejectUnknownMembers(true)); err != nil {
		return s, []FieldError{{Field: "(json)", Problem: err.Error()}}
	}
	return s, checkProblems(&s)
}

// checkProblems is s.Check's error as the decoders report it: nil, or
// one FieldError.
func checkProblems(s *Scenario) []FieldError {
	err := s.Check()
	if err == nil {
		return nil
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return []FieldError{*fe}
	}
	return []FieldError{{Field: "(root)", Problem: err.Error()}}
}

// schemaProblems flattens a validation error tree into one FieldError per
// leaf, with JSON-pointer instance locations turned into dotted paths.
func schemaProblems(ve *jsonschema.ValidationError, inst, schemaDoc any) []FieldError {
	var out []FieldError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if _, ok := e.ErrorKind.(*kind.PropertyNames); !ok && len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		path := dottedPath(inst, e.InstanceLocation)
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				out = append(out, FieldError{Field: joinField(path, m), Problem: "missing"})
			}
		case *kind.AdditionalProperties:
			allowed := allowedProperties(schemaDoc, e.SchemaURL)
			for _, p := range k.Properties {
				msg := "unknown field"
				if len(allowed) > 0 {
					msg += " (allowed: " + strings.Join(allowed, ", ") + ")"
				}
				out = append(out, FieldError{Field: joinField(path, p), Problem: msg})
			}
		default:
			out = append(out, FieldError{Field: orRoot(path), Problem: kindMessage(e)})
		}
	}
	walk(ve)
	return out
}

// kindMessage words one leaf error for a human reading a data file.
func kindMessage(e *jsonschema.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		return fmt.Sprintf("%s is not allowed (want one of: %s)", jsonText(k.Got), strings.Join(want, ", "))
	case *kind.Type:
		return fmt.Sprintf("got %s, want %s", k.Got, strings.Join(k.Want, " or "))
	case *kind.MinLength:
		if k.Want == 1 {
			return "must not be empty"
		}
		return fmt.Sprintf("length %d, want at least %d", k.Got, k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("%d items, want at least %d", k.Got, k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("%d items, want at most %d", k.Got, k.Want)
	case *kind.Minimum:
		return fmt.Sprintf("%s is below the minimum %s", ratText(k.Got), ratText(k.Want))
	case *kind.Maximum:
		return fmt.Sprintf("%s is above the maximum %s", ratText(k.Got), ratText(k.Want))
	case *kind.Pattern:
		if k.Want == `^[^\s]+$` {
			return fmt.Sprintf("%q must not contain whitespace", k.Got)
		}
		return fmt.Sprintf("%q does not match %s", k.Got, k.Want)
	case *kind.PropertyNames:
		if k.Property == "" {
			return "empty key not allowed"
		}
		return fmt.Sprintf("key %q not allowed", k.Property)
	}
	// Kinds the embedded schema does not produce today: use the library's
	// own wording without its location prefix.
	leaf := &jsonschema.ValidationError{ErrorKind: e.ErrorKind}
	return strings.TrimPrefix(leaf.Error(), "at '': ")
}

func ratText(r *big.Rat) string {
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// joinField appends object key k to a dotted path; keys that are not plain
// identifiers are written as ["key"].
func joinField(path, k string) string {
	if !plainKey.MatchString(k) {
		return path + "[" + strconv.Quote(k) + "]"
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

func orRoot(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}

// dottedPath converts JSON pointer tokens into "a.b[2].c" by walking the
// instance, so array indices and object keys that look numeric are told
// apart.
func dottedPath(inst any, tokens []string) string {
	var path string
	cur := inst
	for _, t := range tokens {
		switch v := cur.(type) {
		case []any:
			path += "[" + t + "]"
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(v) {
				cur = v[i]
			} else {
				cur = nil
			}
		case map[string]any:
			path = joinField(path, t)
			cur = v[t]
		default:
			path = joinField(path, t)
			cur = nil
		}
	}
	return path
}

// allowedProperties lists, sorted, the "properties" names of the schema
// object at schemaLoc (an absolute URL with a JSON pointer fragment).
func allowedProperties(doc any, schemaLoc string) []string {
	_, frag, _ := strings.Cut(schemaLoc, "#")
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil
	}
	props, ok := m["properties"].(map[string]any)
	if !ok {
		return nil
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// ReadJSONL reads scenarios from r, one JSON object per non-blank line.
// Each line is validated against the schema (SchemaJSON), decoded into a
// Scenario and checked with (*Scenario).Check; ids must be unique
// ("duplicate id X (first on line N)" is reported on the later line). name
// labels problems (usually the file name).
//
// It collects every problem in the input and returns them as a *LoadError
// with nil scenarios; it never returns a partial set. I/O errors are
// returned as plain errors. Also problems: input with no scenario (empty
// or blank), a UTF-8 byte-order mark, invalid UTF-8 (never silently turned
// into U+FFFD) and a line longer than MaxLineBytes.
func ReadJSONL(name string, r io.Reader) ([]Scenario, error) {
	l := newLoader(context.Background())
	if err := l.read(name, r); err != nil && err != errTooManyProblems {
		return nil, err
	}
	return l.result()
}

// LoadFile reads the JSONL scenario file at path; see ReadJSONL and
// LoadFiles.
func LoadFile(path string) ([]Scenario, error) {
	return LoadFiles(path)
}

// LoadFiles reads several JSONL scenario files as one set, in order. Ids
// must be unique across all files. Problems from all files are collected
// (MaxProblems at most) into one *LoadError; an unreadable file stops
// loading with its error: the *fs.PathError of a missing one, or
// filelimit.ErrNotRegular (a directory, named pipe or device, refused
// before it is read) or filelimit.ErrTooLarge (over filelimit.Scenarios
// bytes), in one line naming the file.
func LoadFiles(paths ...string) ([]Scenario, error) {
	return resolve(context.Background(), paths, false, "")
}

// Resolve loads a scenario set by reference: a built-in set name ("p4g",
// "arena"; see package scenarios), problems labelled "builtin:NAME", or
// otherwise a JSONL file path. Use "./p4g" to read a file that shares a
// built-in set's name. Errors are as for LoadFile.
func Resolve(ref string) ([]Scenario, error) {
	return ResolveAll(ref)
}

// SetName names a scenario set by its reference (see Resolve): a
// built-in name as is, a file by its base name without ".jsonl"
// ("runs/x.jsonl" is "x").
func SetName(ref string) string {
	return strings.TrimSuffix(ref[strings.LastIndex(ref, "/")+1:], ".jsonl")
}

// ResolveAll loads several references (see Resolve) as one set; ids must
// be unique across them. It returns nil and a *LoadError listing every
// problem, or the first I/O error (see LoadFiles).
func ResolveAll(refs ...string) ([]Scenario, error) {
	return ResolveAllContext(context.Background(), refs...)
}

// ResolveAllContext is ResolveAll ending as soon as ctx does (checked at
// every line read), with an error wrapping ctx.Err().
func ResolveAllContext(ctx context.Context, refs ...string) ([]Scenario, error) {
	return resolve(ctx, refs, true, "")
}

// ResolveSplit is ResolveAll(refs...) filtered to split (Filter), but the
// built-in sets' other splits are neither decompressed nor decoded (each
// split is its own embedded part, package scenarios), so loading one split
// of the built-in sets costs a fraction of loading them whole (the default
// eval reads only held-out scenarios). Files are
// loaded and checked whole, then filtered. Ids are checked for duplicates
// among the kept scenarios of the built-in sets (their tests check the
// whole sets). An empty split means all. Errors are ResolveAll's.
func ResolveSplit(split Split, refs ...string) ([]Scenario, error) {
	return ResolveSplitContext(context.Background(), split, refs...)
}

// ResolveSplitContext is ResolveSplit ending as soon as ctx does (checked
// at every line read), with an error wrapping ctx.Err().
func ResolveSplitContext(ctx context.Context, split Split, refs ...string) ([]Scenario, error) {
	ss, err := resolve(ctx, refs, true, split)
	if err != nil {
		return nil, err
	}
	return Filter(ss, split), nil
}

// resolve loads refs in order, keeping only split's lines of the built-in
// sets (all when split is ""); built-in set names are recognised only
// when builtins is set.
func resolve(ctx context.Context, refs []string, builtins bool, split Split) ([]Scenario, error) {
	l := newLoader(ctx)
	for _, ref := range refs {
		var err error
		if builtins && slices.Contains(scenarios.Names, ref) {
			err = l.readBuiltin(ref, split)
		} else {
			err = l.readFile(ref)
		}
		if err == errTooManyProblems {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return l.result()
}

// numbered is one input line with its 1-based line number and, for a
// part of a built-in set, the split it was filed under.
type numbered struct {
	n     int
	raw   []byte
	split Split
}

// readBuiltin decodes the built-in set name (package scenarios), only its
// split part when split is set, else every part in the set's line order;
// problems are labelled "builtin:NAME" with the set's line numbers.
func (l *loader) readBuiltin(name string, split Split) error {
	sps := []string{string(split)}
	if split == "" {
		var err error
		if sps, err = scenarios.Splits(name); err != nil {
			return err
		}
	}
	parts, err := scenarios.OpenSplits(name, sps)
	if err != nil {
		return err
	}
	var lines []numbered
	for i, p := range parts {
		rest := p.JSONL
		for _, n := range p.Lines {
			end := bytes.IndexByte(rest, '\n')
			lines = append(lines, numbered{n: n, raw: rest[:end], split: Split(sps[i])})
			rest = rest[end+1:]
		}
	}
	if len(parts) > 1 {
		slices.SortFunc(lines, func(a, b numbered) int { return a.n - b.n })
	}
	l.decodeTrusted("builtin:"+name, lines)
	return nil
}

// decodeTrusted decodes lines of name without the JSON-schema pass:
// decoding stays strict (unknown fields are errors), and Check, duplicate
// ids and each line's filed split (when set) are still checked, problems
// collected in line order. It is for the embedded sets only, which the
// tests validate in full, because the schema pass costs most of a
// command's start-up. Lines are decoded on up to
// GOMAXPROCS goroutines, in contiguous runs, then kept in order.
func (l *loader) decodeTrusted(name string, lines []numbered) {
	type decoded struct {
		s   Scenario
		fps []FieldError
	}
	out := make([]decoded, len(lines))
	// Choice: at least 32 lines per goroutine; fewer are not worth one.
	workers := max(1, min(runtime.GOMAXPROCS(0), len(lines)/32))
	_ = parallel.Each(context.Background(), workers, workers, func(_ context.Context, w int) error {
		for i := w * len(lines) / workers; i < (w+1)*len(lines)/workers; i++ {
			out[i].s, out[i].fps = decodeEmbedded(bytes.TrimSpace(lines[i].raw))
		}
		return nil
	})
	for i, ln := range lines {
		s, fps := out[i].s, out[i].fps
		var probs []Problem
		for _, fp := range fps {
			probs = append(probs, Problem{File: name, Line: ln.n, Field: fp.Field, Msg: fp.Problem})
		}
		if len(fps) == 0 && ln.split != "" && s.Split != ln.split {
			probs = append(probs, Problem{File: name, Line: ln.n, Field: "split",
				Msg: fmt.Sprintf("%s, but embedded in the %s part (run go generate ./scenarios)", s.Split, ln.split)})
		}
		if first, dup := l.seen[s.ID]; dup && len(fps) == 0 {
			probs = append(probs, Problem{File: name, Line: ln.n, Field: "id",
				Msg: fmt.Sprintf("duplicate id %s (first on %s:%d)", s.ID, first.file, first.line)})
		}
		if len(probs) > 0 {
			l.problems = append(l.problems, probs...)
			continue
		}
		l.seen[s.ID] = loc{name, ln.n}
		l.out = append(l.out, s)
	}
}

// readFile reads the JSONL file path: a regular file of at most
// filelimit.Scenarios bytes, checked before it is opened.
func (l *loader) readFile(path string) error {
	f, err := filelimit.Open(path, filelimit.Scenarios)
	if err != nil {
		return err
	}
	defer f.Close()
	return l.read(path, f)
}

// Marshal returns the canonical one-line JSON of s (struct field order, no
// HTML escaping, no trailing newline), as WriteFile writes it.
func Marshal(s *Scenario) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Validate checks ss exactly as a load of the written file would (schema,
// Check, unique ids) and returns a *LoadError whose problems carry name and
// the 1-based index each scenario would have as a line, or nil.
func Validate(name string, ss []Scenario) error {
	_, err := encodeAll(name, ss)
	return err
}

// encodeAll marshals and validates ss into JSONL bytes.
func encodeAll(name string, ss []Scenario) ([]byte, error) {
	l := newLoader(context.Background())
	var buf bytes.Buffer
	for i := range ss {
		b, err := Marshal(&ss[i])
		if err != nil {
			l.problems = append(l.problems, Problem{File: name, Line: i + 1, Field: "(json)", Msg: err.Error()})
			continue
		}
		l.line(name, i+1, b)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if _, err := l.result(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteFile writes ss to path as JSONL: one compact JSON object per line in
// struct field order, each line ending in a newline. It validates every
// scenario first (see Validate) and writes nothing if any is invalid,
// returning the *LoadError. The write is atomic: a temporary file in the
// same directory is renamed over path, so readers never see a partial file
// and an existing file survives any failure untouched.
func WriteFile(path string, ss []Scenario) error {
	data, err := encodeAll(path, ss)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmpName := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmpName)
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	// CreateTemp makes 0600 files; data files are meant to be shared.
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmpName)
		return err
	}
	if err := os.Rename(tmpName, path); err != nil {
		os.Remove(tmpName)
		return err
	}
	return nil
}

// Filter returns the scenarios of ss in split, in their original order; an
// empty split returns all of ss. The result shares no backing array with ss.
func Filter(ss []Scenario, split Split) []Scenario {
	var out []Scenario
	for _, s := range ss {
		if split == "" || s.Split == split {
			out = append(out, s)
		}
	}
	return out
}

// ByID returns the scenario of ss with the given id, and whether it was
// found.
func ByID(ss []Scenario, id string) (Scenario, bool) {
	for _, s := range ss {
		if s.ID == id {
			return s, true
		}
	}
	return Scenario{}, false
}

// Fingerprint identifies a list of scenarios by their ids in order: the
// FNV-1a 64-bit hash of the ids, each followed by a NUL byte, as 16 hex
// digits. Trainer checkpoints store it so that a resume on another set or
// order is refused.
func Fingerprint(ss []Scenario) string {
	h := fnv.New64a()
	for i := range ss {
		h.Write([]byte(ss[i].ID))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}
