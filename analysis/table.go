package analysis

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/persuarena/persuarena/internal/tablefmt"
)

// pct and num are the tables' number formats (package tablefmt, shared by
// eval, analysis and report).
var pct, num = tablefmt.Pct, tablefmt.Num

// Table is a rendered analysis: a title, a header, rows of cells (already
// formatted strings, one per header column) and notes. Every typed result
// of the package renders to one or more Tables; the typed result keeps the
// numbers for plots and further work.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	// Notes are printed below the table (text, markdown); CSV omits them.
	Notes []string
}

// numericCell reports whether a cell reads as a number, so that its column
// is right-aligned: "12.5", "+0.31", "-", "3/8", "1.3e-06".
func numericCell(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || s == "-" {
		return true
	}
	if i := strings.IndexByte(s, '/'); i > 0 {
		return numericCell(s[:i]) && numericCell(s[i+1:])
	}
	_, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	return err == nil
}

// rightAligned returns, per column after the first, whether every body
// cell is numeric (or empty / "-") and at least one is a number.
func (t Table) rightAligned() []bool {
	out := make([]bool, len(t.Header))
	for j := range out {
		if j == 0 {
			continue
		}
		all, some := true, false
		for _, r := range t.Rows {
			if j < len(r) {
				c := strings.TrimSpace(r[j])
				all = all && numericCell(c)
				some = some || (c != "" && c != "-")
			}
		}
		out[j] = all && some
	}
	return out
}

// WriteText writes t as an aligned plain-text table: the title, the header,
// the rows (text columns left-aligned, numeric columns right-aligned, two
// spaces apart) and one "note:" line per note. Rows shorter than the header
// are padded with empty cells.
func (t Table) WriteText(w io.Writer) error {
	width := make([]int, len(t.Header))
	for j, h := range t.Header {
		width[j] = utf8.RuneCountInString(h)
	}
	for _, r := range t.Rows {
		for j := 0; j < len(width) && j < len(r); j++ {
			width[j] = max(width[j], utf8.RuneCountInString(r[j]))
		}
	}
	right := t.rightAligned()
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title + "\n")
	}
	line := func(cells []string) {
		var l strings.Builder
		for j := range width {
			c := ""
			if j < len(cells) {
				c = cells[j]
			}
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(c))
			if j > 0 {
				l.WriteString("  ")
			}
			if right[j] {
				l.WriteString(pad + c)
			} else {
				l.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(t.Header)
	for _, r := range t.Rows {
		line(r)
	}
	for _, n := range t.Notes {
		b.WriteString("note: " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCSV writes the header and rows as RFC 4180 CSV (no title, no
// notes), for spreadsheets and scripts.
func (t Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(t.Header)
	for _, r := range t.Rows {
		cw.Write(r)
	}
	cw.Flush()
	return cw.Error()
}

// WriteMarkdown writes t as a GitHub-flavoured Markdown table: the title in
// bold, the table (numeric columns right-aligned, '|' escaped) and the notes
// as a list.
func (t Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		b.WriteString("**" + mdEscape(t.Title) + "**\n\n")
	}
	row := func(cells []string) {
		b.WriteString("|")
		for j := range t.Header {
			c := ""
			if j < len(cells) {
				c = cells[j]
			}
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for _, r := range t.rightAligned() {
		if r {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			b.WriteString("- " + mdEscape(n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Write renders t in format "text", "csv" or "markdown" ("md").
// Errors: an unknown format, or the writer's error.
func (t Table) Write(w io.Writer, format string) error {
	switch format {
	case "text", "":
		return t.WriteText(w)
	case "csv":
		return t.WriteCSV(w)
	case "markdown", "md":
		return t.WriteMarkdown(w)
	}
	return fmt.Errorf("unknown format %q (want text, csv or markdown)", format)
}

// pval formats a p-value with two significant digits, in exponent form
// below 0.001 (e.g. 3.3e-06); NaN is "-".
func pval(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p == 0:
		return "0"
	case p < 1e-3:
		return strconv.FormatFloat(p, 'e', 1, 64)
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}
