package scenario

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Count is the number of scenarios with one value of a field.
type Count struct {
	// Key is the field value (enum value or free text).
	Key string
	// N is the number of scenarios with that value, >= 1.
	N int
}

// SplitStats summarises the scenarios of one split.
type SplitStats struct {
	Split Split
	// Total is the number of scenarios in the split.
	Total int
	// Resistance counts hidden resistance types (canonical order).
	Resistance []Count
	// Domains is the number of distinct domain strings in the split.
	Domains int
}

// Stats summarises a scenario set, for comparing a generated or imported set
// with the Probe-RPO paper's Table 2 (splits 1,468 / 200 / 120; held-out
// resistance mix IT 36, EB 45, AR 22, AA 17; ~1,400 distinct domains).
//
// Every []Count lists only values that occur: enum fields in their
// canonical order (Splits, Families, Resistances, Closenesses) followed by
// any non-canonical values alphabetically; free-text fields
// (Relationship) alphabetically.
type Stats struct {
	// Total is the number of scenarios.
	Total      int
	Split      []Count
	Family     []Count
	Resistance []Count
	Closeness  []Count
	// Relationship counts the free-text relationship strings.
	Relationship []Count
	// Domains is the number of distinct domain strings.
	Domains int
	// MeanInitialStance is the mean hidden initial stance, in [-1, 1]; 0
	// when Total is 0.
	MeanInitialStance float64
	// MeanConcerns is the mean number of hidden concerns per scenario
	// (2-6 for valid scenarios); 0 when Total is 0.
	MeanConcerns float64
	// PerSplit has one entry per split that occurs, in Split order.
	PerSplit []SplitStats
}

// counts tallies keys in canonical order, then the rest alphabetically.
func counts(keys []string, canonical []string) []Count {
	tally := map[string]int{}
	for _, k := range keys {
		tally[k]++
	}
	var out []Count
	for _, k := range canonical {
		if n := tally[k]; n > 0 {
			out = append(out, Count{k, n})
			delete(tally, k)
		}
	}
	rest := make([]string, 0, len(tally))
	for k := range tally {
		rest = append(rest, k)
	}
	slices.Sort(rest)
	for _, k := range rest {
		out = append(out, Count{k, tally[k]})
	}
	return out
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func distinct(keys []string) int {
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
	}
	return len(seen)
}

// Summarize computes Stats for ss. It is deterministic: the result depends
// only on the multiset of scenarios' field values, never on map order.
func Summarize(ss []Scenario) Stats {
	st := Stats{Total: len(ss)}
	var split, family, res, clo, rel, dom []string
	var stance float64
	var concerns int
	for _, s := range ss {
		split = append(split, string(s.Split))
		family = append(family, string(s.Family))
		res = append(res, string(s.Hidden.Resistance))
		clo = append(clo, string(s.Closeness))
		rel = append(rel, s.Relationship)
		dom = append(dom, s.Domain)
		stance += s.Hidden.InitialStance
		concerns += len(s.Hidden.Concerns)
	}
	st.Split = counts(split, strs(Splits))
	st.Family = counts(family, strs(Families))
	st.Resistance = counts(res, strs(Resistances))
	st.Closeness = counts(clo, strs(Closenesses))
	st.Relationship = counts(rel, nil)
	st.Domains = distinct(dom)
	if st.Total > 0 {
		st.MeanInitialStance = stance / float64(st.Total)
		st.MeanConcerns = float64(concerns) / float64(st.Total)
	}
	for _, c := range st.Split {
		sub := Filter(ss, Split(c.Key))
		var r, d []string
		for _, s := range sub {
			r = append(r, string(s.Hidden.Resistance))
			d = append(d, s.Domain)
		}
		st.PerSplit = append(st.PerSplit, SplitStats{
			Split: Split(c.Key), Total: len(sub),
			Resistance: counts(r, strs(Resistances)), Domains: distinct(d),
		})
	}
	return st
}

func pct(n, total int) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(total))
}

// WriteText renders st as aligned plain-text tables: a header line with
// totals and means, then for each field a table of value, count and share
// of the total, and a resistance-by-split table (count and share of that
// split). It returns the first write error.
func (st Stats) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenarios\t%d\n", st.Total)
	fmt.Fprintf(tw, "distinct domains\t%d\n", st.Domains)
	if st.Total > 0 {
		fmt.Fprintf(tw, "mean initial stance\t%+.3f\n", st.MeanInitialStance)
		fmt.Fprintf(tw, "mean concerns\t%.2f\n", st.MeanConcerns)
	}
	table := func(title string, cs []Count) {
		fmt.Fprintf(tw, "\n%s\tn\t%%\n", title)
		for _, c := range cs {
			fmt.Fprintf(tw, "%s\t%d\t%s\n", c.Key, c.N, pct(c.N, st.Total))
		}
	}
	table("split", st.Split)
	table("family", st.Family)
	table("resistance", st.Resistance)
	table("closeness", st.Closeness)
	table("relationship", st.Relationship)
	if len(st.PerSplit) > 0 {
		// Rows: every resistance type seen anywhere, canonical order; two
		// cells (count, share of the split) per split.
		row := func(cells ...string) {
			for len(cells) > 0 && cells[len(cells)-1] == "" {
				cells = cells[:len(cells)-1] // no trailing padding
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		head := []string{"resistance by split"}
		doms := []string{"distinct domains"}
		for _, ps := range st.PerSplit {
			head = append(head, string(ps.Split), "%")
			doms = append(doms, fmt.Sprint(ps.Domains), "")
		}
		fmt.Fprintln(tw)
		row(head...)
		for _, rc := range st.Resistance {
			cells := []string{rc.Key}
			for _, ps := range st.PerSplit {
				n := 0
				for _, c := range ps.Resistance {
					if c.Key == rc.Key {
						n = c.N
					}
				}
				cells = append(cells, fmt.Sprint(n), pct(n, ps.Total))
			}
			row(cells...)
		}
		row(doms...)
	}
	return tw.Flush()
}
