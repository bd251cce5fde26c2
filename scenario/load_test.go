package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/scenarios"
)

const fixture = "testdata/valid.jsonl"

func readFixture(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureLines returns the fixture's three lines without newlines.
func fixtureLines(t *testing.T) []string {
	return strings.Split(strings.TrimSuffix(string(readFixture(t)), "\n"), "\n")
}

func loadErr(t *testing.T, err error) *LoadError {
	t.Helper()
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("want *LoadError, got %T: %v", err, err)
	}
	return le
}

// wantProblems compares rendered problems exactly.
func wantProblems(t *testing.T, err error, want ...string) {
	t.Helper()
	le := loadErr(t, err)
	var got []string
	for _, p := range le.Problems {
		got = append(got, p.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got  %q\n want %q", got, want)
	}
}

func TestLoadFileValid(t *testing.T) {
	ss, err := LoadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 3 {
		t.Fatalf("got %d scenarios, want 3", len(ss))
	}
	s := ss[0]
	if s.ID != "fx-health-001" || s.Split != Train || s.Family != Healthcare || s.Closeness != Professional {
		t.Errorf("scenario 0 header: %+v", s)
	}
	if s.Persuader != (Party{Name: "Dana", Role: "infection-control lead"}) {
		t.Errorf("persuader = %+v", s.Persuader)
	}
	h := s.Hidden
	if h.Resistance != EntrenchedBelief || h.InitialStance != -0.4 || len(h.Concerns) != 3 {
		t.Errorf("hidden = %+v", h)
	}
	if c := h.Concerns[2]; c.ID != "efficacy" || !reflect.DeepEqual(c.Keywords, []string{"strain", "effective", "match"}) {
		t.Errorf("concern 2 = %+v", c)
	}
	if !reflect.DeepEqual(h.Traits, map[string]float64{"agreeable": 3.5, "open": 2}) {
		t.Errorf("traits = %v", h.Traits)
	}
	if s.Outcome != nil || h.Constraints != nil {
		t.Errorf("unexpected outcome/constraints: %+v %v", s.Outcome, h.Constraints)
	}

	o := ss[1].Outcome
	if o == nil || o.Donation == nil || *o.Donation != 0.5 || o.IntendedDonation != nil || o.Turns != 10 || len(o.PersuaderUtterances) != 2 {
		t.Fatalf("outcome = %+v", o)
	}
	if ss[1].Provenance != (Provenance{Source: "PersuasionForGood", Ref: "20180904-045349_715_live", License: "Apache-2.0"}) {
		t.Errorf("provenance = %+v", ss[1].Provenance)
	}
	if ss[1].Persuader.Name != "" || ss[1].Hidden.Resistance != AutonomyResistance {
		t.Errorf("scenario 1: %+v", ss[1])
	}
	if ss[2].Split != Heldout || ss[2].Hidden.Resistance != IdentityThreat || ss[2].Hidden.InitialStance != -0.7 ||
		!reflect.DeepEqual(ss[2].Hidden.Constraints, []string{"cannot pay more than 500 a term"}) {
		t.Errorf("scenario 2: %+v", ss[2])
	}
}

func TestReadJSONLEmptyAndBlank(t *testing.T) {
	// An empty or blank file is an error, not "ok: 0 scenarios".
	_, err := ReadJSONL("empty", strings.NewReader(""))
	wantProblems(t, err, "empty: no scenarios (the file is empty or blank)")
	_, err = ReadJSONL("blank", strings.NewReader("\n  \n"))
	wantProblems(t, err, "blank: no scenarios (the file is empty or blank)")
	// Blank lines are skipped but still counted, and a missing final
	// newline and CRLF endings are accepted.
	lines := fixtureLines(t)
	in := "\n  \n" + lines[0] + "\r\n\n" + lines[1]
	ss, err := ReadJSONL("x", strings.NewReader(in))
	if err != nil || len(ss) != 2 || ss[1].ID != "fx-charity-002" {
		t.Fatalf("blank lines: %d %v", len(ss), err)
	}
	// The line number of the bad line counts the blank ones.
	_, err = ReadJSONL("x", strings.NewReader("\n\n{"))
	wantProblems(t, err, "x:3: (json): unexpected EOF")
}

func TestMalformedJSON(t *testing.T) {
	lines := fixtureLines(t)
	in := lines[0] + "\n" + `{"id": "a",}` + "\n" + lines[1] + " trailing\n"
	ss, err := ReadJSONL("bad.jsonl", strings.NewReader(in))
	if ss != nil {
		t.Errorf("partial result returned: %d scenarios", len(ss))
	}
	wantProblems(t, err,
		"bad.jsonl:2: (json): invalid character '}' looking for beginning of object key string",
		"bad.jsonl:3: (json): invalid character after top-level value",
	)
}

func TestUnknownResistance(t *testing.T) {
	line := strings.Replace(fixtureLines(t)[0], `"resistance":"EB"`, `"resistance":"XX"`, 1)
	_, err := ReadJSONL("f", strings.NewReader(line))
	wantProblems(t, err, `f:1: hidden.resistance: "XX" is not allowed (want one of: EB, IT, AR, AA)`)
}

func TestMissingRequired(t *testing.T) {
	l := fixtureLines(t)[0]
	l = strings.Replace(l, `"resistance":"EB",`, ``, 1)
	l = strings.Replace(l, `"proposal":"Get the seasonal flu shot at the staff clinic this week.",`, ``, 1)
	_, err := ReadJSONL("f", strings.NewReader(l))
	wantProblems(t, err, "f:1: hidden.resistance: missing", "f:1: proposal: missing")
}

func TestUnknownFieldAndNested(t *testing.T) {
	l := fixtureLines(t)[0]
	// A typo in a nested party, an empty keyword, a stance out of range.
	l = strings.Replace(l, `"role":"night-shift nurse"`, `"rol":"night-shift nurse"`, 1)
	l = strings.Replace(l, `"keywords":["strain","effective","match"]`, `"keywords":["strain",""]`, 1)
	l = strings.Replace(l, `"initial_stance":-0.4`, `"initial_stance":-1.5`, 1)
	_, err := ReadJSONL("f", strings.NewReader(l))
	wantProblems(t, err,
		"f:1: hidden.concerns[2].keywords[1]: must not be empty",
		"f:1: hidden.initial_stance: -1.5 is below the minimum -1",
		"f:1: persuadee.rol: unknown field (allowed: name, role)",
		"f:1: persuadee.role: missing",
	)
}

func TestConcernCountAndCheck(t *testing.T) {
	l := fixtureLines(t)[1]
	one := strings.Replace(l, `,{"id":"pressure","description":"I dislike being told what to do with my pay.","keywords":["choice","decide"]}`, ``, 1)
	_, err := ReadJSONL("f", strings.NewReader(one))
	wantProblems(t, err, "f:1: hidden.concerns: 1 items, want at least 2")

	// Duplicate concern ids pass the schema and are caught by Check.
	dup := strings.Replace(l, `"id":"pressure"`, `"id":"trust"`, 1)
	_, err = ReadJSONL("f", strings.NewReader(dup))
	wantProblems(t, err, `f:1: hidden.concerns[1].id: duplicate concern id "trust"`)
}

func TestDuplicateID(t *testing.T) {
	lines := fixtureLines(t)
	in := lines[0] + "\n" + lines[1] + "\n" + lines[0] + "\n"
	_, err := ReadJSONL("d.jsonl", strings.NewReader(in))
	wantProblems(t, err, "d.jsonl:3: id: duplicate id fx-health-001 (first on line 1)")
}

func TestDuplicateIDAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	lines := fixtureLines(t)
	os.WriteFile(a, []byte(lines[0]+"\n"+lines[1]+"\n"), 0o644)
	os.WriteFile(b, []byte(lines[2]+"\n"+lines[1]+"\n"), 0o644)
	ss, err := LoadFiles(a, b)
	if ss != nil {
		t.Error("partial result")
	}
	wantProblems(t, err, b+":2: id: duplicate id fx-charity-002 (first on "+a+":2)")
}

func TestTwoBadLinesBothReported(t *testing.T) {
	lines := fixtureLines(t)
	bad2 := strings.Replace(lines[1], `"closeness":"strangers"`, `"closeness":"distant"`, 1)
	bad3 := strings.Replace(lines[2], `"split":"heldout"`, `"split":"test"`, 1)
	bad3 = strings.Replace(bad3, `"keywords":["scholarship","fees","money"]`, `"keywords":[]`, 1)
	in := lines[0] + "\n" + bad2 + "\n\n" + bad3 + "\n"
	_, err := ReadJSONL("two.jsonl", strings.NewReader(in))
	wantProblems(t, err,
		`two.jsonl:2: closeness: "distant" is not allowed (want one of: intimate, close, acquainted, professional, strangers)`,
		`two.jsonl:4: hidden.concerns[1].keywords: 0 items, want at least 1`,
		`two.jsonl:4: split: "test" is not allowed (want one of: train, val, heldout)`,
	)
}

func TestTypeErrorsAndRoot(t *testing.T) {
	_, err := ReadJSONL("f", strings.NewReader("[1]\n"+`{"id":"a b"}`+"\n"))
	le := loadErr(t, err)
	if p := le.Problems[0]; p.String() != "f:1: (root): got array, want object" {
		t.Errorf("root: %s", p)
	}
	// Line 2 lacks 13 required fields and has a bad id.
	var ids, missing int
	for _, p := range le.Problems[1:] {
		if p.Line != 2 {
			t.Errorf("line %d", p.Line)
		}
		switch {
		case p.Field == "id" && p.Msg == `"a b" must not contain whitespace`:
			ids++
		case p.Msg == "missing":
			missing++
		default:
			t.Errorf("unexpected %s", p)
		}
	}
	if ids != 1 || missing != 13 {
		t.Errorf("ids %d missing %d", ids, missing)
	}

	l := strings.Replace(fixtureLines(t)[0], `"agreeable":3.5`, `"agreeable":"high"`, 1)
	_, err = ReadJSONL("f", strings.NewReader(l))
	wantProblems(t, err, "f:1: hidden.traits.agreeable: got string, want number")
}

func TestLongLine(t *testing.T) {
	// A line far beyond bufio.Scanner's 64 KiB default.
	long := strings.Repeat("x", 200_000)
	l := strings.Replace(fixtureLines(t)[0], `"background":"The hospital`, `"background":"`+long+` The hospital`, 1)
	ss, err := ReadJSONL("f", strings.NewReader(l+"\n"))
	if err != nil || len(ss) != 1 || len(ss[0].Background) < 200_000 {
		t.Fatalf("long line: %v", err)
	}
}

func TestWriteFileRoundTrip(t *testing.T) {
	ss, err := LoadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "one.jsonl"), filepath.Join(dir, "two.jsonl")
	if err := WriteFile(p1, ss); err != nil {
		t.Fatal(err)
	}
	again, err := LoadFile(p1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, ss) {
		t.Error("reloaded scenarios differ")
	}
	if err := WriteFile(p2, again); err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(p1)
	b2, _ := os.ReadFile(p2)
	if !bytes.Equal(b1, b2) {
		t.Error("re-write is not byte-identical")
	}
	// The fixture is written in canonical form, so it survives unchanged.
	if !bytes.Equal(b1, readFixture(t)) {
		t.Errorf("canonical write differs from fixture:\n%s", b1)
	}
	if n := bytes.Count(b1, []byte("\n")); n != 3 || b1[len(b1)-1] != '\n' {
		t.Errorf("%d newlines", n)
	}
	if fi, _ := os.Stat(p1); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	// No temporary files are left behind.
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d entries in dir", len(ents))
	}
}

func TestWriteFileInvalidWritesNothing(t *testing.T) {
	ss, err := LoadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	old := []byte("previous contents\n")
	os.WriteFile(path, old, 0o644)

	bad := append([]Scenario(nil), ss...)
	bad[1].Hidden.Resistance = "XX"
	bad[2].ID = bad[0].ID
	err = WriteFile(path, bad)
	wantProblems(t, err,
		path+`:2: hidden.resistance: "XX" is not allowed (want one of: EB, IT, AR, AA)`,
		path+":3: id: duplicate id fx-health-001 (first on line 1)",
	)
	if b, _ := os.ReadFile(path); !bytes.Equal(b, old) {
		t.Errorf("existing file changed: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in dir, want 1", len(ents))
	}
	// A nil concern keyword list marshals as null, which the schema rejects.
	bad = append([]Scenario(nil), ss...)
	bad[0].Hidden = ss[0].Hidden
	bad[0].Hidden.Concerns = []Concern{{ID: "a", Description: "d"}, {ID: "b", Description: "d", Keywords: []string{"k"}}}
	if err := Validate("v", bad); err == nil || err.Error() != "v:1: hidden.concerns[0].keywords: got null, want array" {
		t.Errorf("Validate: %v", err)
	}
}

func TestFilterByID(t *testing.T) {
	ss, err := LoadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if got := Filter(ss, Train); len(got) != 2 || got[0].ID != "fx-health-001" || got[1].ID != "fx-charity-002" {
		t.Errorf("train: %v", got)
	}
	if got := Filter(ss, Val); len(got) != 0 {
		t.Errorf("val: %d", len(got))
	}
	if got := Filter(ss, ""); len(got) != 3 {
		t.Errorf("all: %d", len(got))
	}
	if s, ok := ByID(ss, "fx-edu-003"); !ok || s.Family != Education {
		t.Errorf("ByID: %v %v", ok, s.ID)
	}
	if _, ok := ByID(ss, "nope"); ok {
		t.Error("ByID found a missing id")
	}
}

func TestResolve(t *testing.T) {
	// Built-in sets load (they may still be empty placeholders).
	for _, name := range []string{"p4g", "arena"} {
		if _, err := Resolve(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	ss, err := Resolve(fixture)
	if err != nil || len(ss) != 3 {
		t.Fatalf("file: %d %v", len(ss), err)
	}
	ss, err = ResolveAll("p4g", fixture)
	if err != nil || len(ss) < 3 {
		t.Fatalf("ResolveAll: %d %v", len(ss), err)
	}
	if _, err := Resolve(filepath.Join(t.TempDir(), "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestSchemaCompiles(t *testing.T) {
	if compiled().sch == nil {
		t.Fatal("schema did not compile")
	}
}

// BenchmarkResolveBuiltins loads both embedded sets, as every command does
// at start-up (performance issue: start-up to first episode ≤ 50 ms).
func BenchmarkResolveBuiltins(b *testing.B) {
	for b.Loop() {
		if _, err := ResolveAll("p4g", "arena"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBuiltinSetsPassTheSchema validates the embedded sets in full (JSON
// schema, Check, unique ids): loading them at run time skips the schema
// pass, so this test is what keeps them valid.
func TestBuiltinSetsPassTheSchema(t *testing.T) {
	for _, name := range scenarios.Names {
		raw, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		full, err := ReadJSONL("builtin:"+name, bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fast, err := Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(full) < 100 || !reflect.DeepEqual(full, fast) {
			t.Fatalf("%s: %d scenarios with the schema, %d without, or they differ", name, len(full), len(fast))
		}
	}
}

// TestTrustedLoadStillChecks: the schema-free path of the embedded sets
// still reports unknown fields, Check failures, duplicate ids and a line
// embedded in another split's part, with file, line and field.
func TestTrustedLoadStillChecks(t *testing.T) {
	raw, err := scenarios.Open("arena")
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.SplitN(raw, []byte("\n"), 2)[0]
	bad := bytes.Replace(first, []byte(`{"id":`), []byte(`{"colour":"red","id":`), 1)
	l := newLoader(context.Background())
	l.decodeTrusted("builtin:test", []numbered{{1, first, ""}, {2, first, ""}, {3, bad, ""}, {4, first, Val}})
	_, err = l.result()
	var le *LoadError
	if !errors.As(err, &le) || len(le.Problems) != 4 {
		t.Fatalf("want 4 problems, got %v", err)
	}
	if p := le.Problems[0]; p.Line != 2 || p.Field != "id" || !strings.Contains(p.Msg, "duplicate id") {
		t.Fatalf("duplicate: %+v", p)
	}
	if p := le.Problems[1]; p.Line != 3 || !strings.Contains(p.Msg, "colour") {
		t.Fatalf("unknown field: %+v", p)
	}
	if p := le.Problems[2]; p.Line != 4 || p.Field != "split" || !strings.Contains(p.Msg, "embedded in the val part") {
		t.Fatalf("split: %+v", p)
	}
}

// TestReadJSONLBadBytes: invalid UTF-8, a byte-order mark and an
// over-long line are problems naming file, line and field; the other lines
// are still checked, and nothing is returned.
func TestReadJSONLBadBytes(t *testing.T) {
	lines := fixtureLines(t)
	bad := strings.Replace(lines[1], "fx-charity-002", "fx-charity-\xff02", 1)
	_, err := ReadJSONL("u.jsonl", strings.NewReader(lines[0]+"\n"+bad+"\n"))
	wantProblems(t, err, fmt.Sprintf("u.jsonl:2: (line): invalid UTF-8 at byte %d", strings.Index(bad, "\xff")))
	_, err = ReadJSONL("bom.jsonl", strings.NewReader("\xef\xbb\xbf"+lines[0]+"\n"+lines[1]))
	wantProblems(t, err, "bom.jsonl:1: (file): starts with a UTF-8 byte-order mark; save the file as UTF-8 without one")
	long := "{" + strings.Repeat(" ", MaxLineBytes) + "}"
	_, err = ReadJSONL("big.jsonl", strings.NewReader(lines[0]+"\n"+long+"\n"+lines[1]+"\n"+long))
	wantProblems(t, err,
		fmt.Sprintf("big.jsonl:2: (line): longer than %d bytes (MaxLineBytes); one scenario per line", MaxLineBytes),
		fmt.Sprintf("big.jsonl:4: (line): longer than %d bytes (MaxLineBytes); one scenario per line", MaxLineBytes))
}

// ResolveSplit gives exactly Filter(ResolveAll(...), split) for every
// split of the built-in sets (so no scenario is in another split's
// embedded part), and every embedded line names its split in the
// canonical form the generator of the parts looks for.
func TestResolveSplitMatchesFilter(t *testing.T) {
	all, err := ResolveAll("p4g", "arena")
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range append([]Split{""}, Splits...) {
		got, err := ResolveSplit(sp, "p4g", "arena")
		if err != nil {
			t.Fatal(err)
		}
		want := Filter(all, sp)
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("split %q: ResolveSplit gave %d scenarios, Filter %d (or they differ)", sp, len(got), len(want))
		}
	}
	for _, name := range scenarios.Names {
		raw, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
			if n := bytes.Count(line, []byte(`"split":"`)); n != 1 {
				t.Fatalf("%s:%d: %d canonical split members, want 1", name, i+1, n)
			}
		}
	}
}

func BenchmarkResolveHeldout(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ResolveSplit(Heldout, "p4g", "arena"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEmbeddedDecodersAgree decodes every line of both embedded sets with
// decodeEmbedded (JSON v2, the start-up path) and decodeChecked
// (encoding/json, the path of user files): the scenarios must be equal,
// without problems, so the faster decoder never reads a built-in set
// differently.
func TestEmbeddedDecodersAgree(t *testing.T) {
	n := 0
	for _, name := range scenarios.Names {
		raw, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, ln := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
			v1, p1 := decodeChecked(ln)
			v2, p2 := decodeEmbedded(ln)
			if len(p1) > 0 || len(p2) > 0 || !reflect.DeepEqual(v1, v2) {
				t.Fatalf("%s line %d: decoders differ (problems %v / %v)", name, i+1, p1, p2)
			}
			n++
		}
	}
	if n != 2770 {
		t.Errorf("%d lines decoded, want the 2,770 of the built-in sets", n)
	}
	// The v2 path stays strict: an unknown member and a failed Check are
	// problems, as on the v1 path.
	if _, p := decodeEmbedded([]byte(`{"id":"x","bogus":1}`)); len(p) != 1 || p[0].Field != "(json)" {
		t.Errorf("unknown member: %v", p)
	}
	if _, p := decodeEmbedded([]byte(`{"id":""}`)); len(p) != 1 {
		t.Errorf("failed Check: %v", p)
	}
}
