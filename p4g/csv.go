package p4g

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/internal/filelimit"
)

// table is one CSV file read whole: header, rows, and the line on which
// each row starts, so that errors can name file, line and field.
type table struct {
	path  string
	cols  map[string]int
	rows  [][]string
	lines []int
}

// readTable reads path and checks that every column in required is in
// the header. Errors name the file (and the line for malformed CSV).
func readTable(path string, required []string) (*table, error) {
	f, err := filelimit.Open(path, filelimit.Data)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:1: empty file, want a header row", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t := &table{path: path, cols: map[string]int{}}
	for i, h := range header {
		h = strings.TrimPrefix(h, "\ufeff") // tolerate a UTF-8 byte-order mark
		if _, dup := t.cols[h]; !dup {
			t.cols[h] = i
		}
	}
	for _, c := range required {
		if _, ok := t.cols[c]; !ok {
			return nil, fmt.Errorf("%s:1: field %s: missing column", path, c)
		}
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// csv.ParseError already carries the line and column.
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		t.rows = append(t.rows, rec)
		t.lines = append(t.lines, line)
	}
	return t, nil
}

// get returns the trimmed value of column col in row i.
func (t *table) get(i int, col string) string {
	return strings.TrimSpace(t.rows[i][t.cols[col]])
}

// errf builds an error "path:line: field col: msg" for row i.
func (t *table) errf(i int, col, format string, args ...any) error {
	return fmt.Errorf("%s:%d: field %s: %s", t.path, t.lines[i], col, fmt.Sprintf(format, args...))
}

// float parses column col of row i; ok is false for an empty value.
func (t *table) float(i int, col string) (v float64, ok bool, err error) {
	s := t.get(i, col)
	if s == "" || strings.EqualFold(s, "NA") || strings.EqualFold(s, "nan") {
		return 0, false, nil
	}
	v, err = strconv.ParseFloat(s, 64)
	if err != nil || v != v {
		return 0, false, t.errf(i, col, "%q is not a number", s)
	}
	return v, true, nil
}

// int parses an integer column that may be written as a float ("4.0");
// ok is false for an empty value.
func (t *table) int(i int, col string) (v int, ok bool, err error) {
	f, ok, err := t.float(i, col)
	if err != nil || !ok {
		return 0, ok, err
	}
	if f != float64(int(f)) {
		return 0, false, t.errf(i, col, "%q is not a whole number", t.get(i, col))
	}
	return int(f), true, nil
}

// role parses the B4 role column: 0 persuader, 1 persuadee.
func (t *table) role(i int) (int, error) {
	v, ok, err := t.int(i, "B4")
	if err != nil {
		return 0, err
	}
	if !ok || (v != 0 && v != 1) {
		return 0, t.errf(i, "B4", "%q is not a role (want 0 persuader or 1 persuadee)", t.get(i, "B4"))
	}
	return v, nil
}

// unit parses the keys of a dialogue-unit row: the dialogue id (B2,
// non-empty), the turn index (Turn, an integer >= 0) and the role (B4, as
// role). Errors name the row and column.
func (t *table) unit(i int) (id string, turn, role int, err error) {
	id = t.get(i, "B2")
	if id == "" {
		return "", 0, 0, t.errf(i, "B2", "empty dialogue id")
	}
	turn, ok, err := t.int(i, "Turn")
	if err != nil {
		return "", 0, 0, err
	}
	if !ok || turn < 0 {
		return "", 0, 0, t.errf(i, "Turn", "%q is not a turn index (want 0, 1, ...)", t.get(i, "Turn"))
	}
	if role, err = t.role(i); err != nil {
		return "", 0, 0, err
	}
	return id, turn, role, nil
}
