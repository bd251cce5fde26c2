package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/persuarena/persuarena/scenarios"
)

// ResolveOrBuiltins is ResolveAllContext(ctx, refs...), or every
// built-in set (scenarios.Names) when refs is empty.
func ResolveOrBuiltins(ctx context.Context, refs []string) ([]Scenario, error) {
	if len(refs) == 0 {
		refs = scenarios.Names
	}
	return ResolveAllContext(ctx, refs...)
}

// WriteList writes one line per scenario of refs (the built-in sets when
// empty) in split ("" for all): id, split, family, resistance type and
// domain (cut to 50 runes), as an aligned table with a header. Errors: an
// unknown split, Resolve's errors, or w's.
func WriteList(ctx context.Context, w io.Writer, refs []string, split Split) error {
	sp, err := ParseSplit(string(split))
	if err != nil {
		return fmt.Errorf("--split %q: %w", split, err)
	}
	split = sp
	ss, err := ResolveOrBuiltins(ctx, refs)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSPLIT\tFAMILY\tRES\tDOMAIN")
	for _, s := range Filter(ss, split) {
		d := []rune(s.Domain)
		if len(d) > 50 {
			d = append(d[:47], []rune("...")...)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Split, s.Family, s.Hidden.Resistance, string(d))
	}
	return tw.Flush()
}

// WriteOne writes the scenario id of refs (the built-in sets when empty)
// as indented JSON; public writes only its Public view (what a persuader
// sees). Errors: no scenario with that id, Resolve's errors, or w's.
func WriteOne(ctx context.Context, w io.Writer, refs []string, id string, public bool) error {
	ss, err := ResolveOrBuiltins(ctx, refs)
	if err != nil {
		return err
	}
	s, ok := ByID(ss, id)
	if !ok {
		return fmt.Errorf("no scenario with id %q", id)
	}
	var v any = s
	if public {
		v = s.Public()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// CheckFiles loads every ref (the built-in sets when refs is empty) and
// writes each problem of an invalid one (file:line: field: problem;
// "file: problem" for a file that cannot be read or holds no scenario) or
// "REF: ok: N scenarios" to w. It returns an error counting the invalid
// refs, nil when all are valid, or ctx's error (wrapped) when it ends
// first.
func CheckFiles(ctx context.Context, w io.Writer, refs []string) error {
	if len(refs) == 0 {
		refs = scenarios.Names
	}
	bad := 0
	for _, ref := range refs {
		ss, err := ResolveAllContext(ctx, ref)
		var le *LoadError
		switch {
		case ctx.Err() != nil:
			return err
		case errors.As(err, &le):
			for _, p := range le.Problems {
				fmt.Fprintln(w, p)
			}
			bad++
		case err != nil:
			// A file that cannot be read is a whole-file problem
			// (Problem with line 0: "file: problem").
			msg := strings.TrimPrefix(err.Error(), ref+": ")
			var pe *fs.PathError
			if errors.As(err, &pe) {
				msg = pe.Op + ": " + pe.Err.Error()
			}
			fmt.Fprintln(w, Problem{File: ref, Field: "(file)", Msg: msg})
			bad++
		default:
			fmt.Fprintf(w, "%s: ok: %d scenarios\n", ref, len(ss))
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d files invalid", bad, len(refs))
	}
	return nil
}
