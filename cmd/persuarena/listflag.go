package main

import (
	"strings"

	"github.com/spf13/pflag"
)

// commaList is a list flag split on commas, without CSV quoting: a
// backslash makes the next character literal ("a\,b" is one item "a,b",
// `a\\b` is `a\b`), so any file name can be passed, quotes included. The
// flag may be repeated; its first use replaces the default, later ones
// append, as pflag's StringSlice does.
type commaList struct {
	p       *[]string
	changed bool
}

// splitList splits s on unescaped commas (see commaList).
func splitList(s string) []string {
	var out []string
	var b strings.Builder
	esc := false
	for _, r := range s {
		switch {
		case esc:
			b.WriteRune(r)
			esc = false
		case r == '\\':
			esc = true
		case r == ',':
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteRune(r)
		}
	}
	if esc {
		b.WriteRune('\\')
	}
	return append(out, b.String())
}

func (c *commaList) Set(s string) error {
	v := splitList(s)
	if !c.changed {
		*c.p, c.changed = v, true
	} else {
		*c.p = append(*c.p, v...)
	}
	return nil
}

func (c *commaList) Type() string { return "strings" }

func (c *commaList) String() string {
	esc := make([]string, len(*c.p))
	for i, s := range *c.p {
		esc[i] = strings.NewReplacer(`\`, `\\`, ",", `\,`).Replace(s)
	}
	return "[" + strings.Join(esc, ",") + "]"
}

// Append, Replace and GetSlice make it a pflag.SliceValue; Replace
// (setting a value back) makes the next Set replace it again.
func (c *commaList) Append(s string) error { *c.p = append(*c.p, s); return nil }
func (c *commaList) Replace(v []string) error {
	*c.p, c.changed = append([]string(nil), v...), false
	return nil
}
func (c *commaList) GetSlice() []string { return *c.p }

var _ pflag.SliceValue = (*commaList)(nil)
