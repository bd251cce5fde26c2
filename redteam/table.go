package redteam

import (
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/internal/tablefmt"
)

// Table renders r for a terminal: the honest references, then one row per
// family (held-out acceptance and moved share in percent, mean r_t, the
// search's acceptance, failed episodes, and against each reference the
// episodes only the family / only the reference won with McNemar's p,
// and whether it wins), then each family's best held-out episode.
func (r *Result) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Red team: persuadee %s, %d search scenarios, %d held-out scenarios, %d episodes\n\n",
		r.Persuadee, r.SearchScenarios, r.TestScenarios, r.Episodes)
	head := []string{"persuader", "accept %", "moved %", "mean r_t", "search %", "failed"}
	for _, ref := range r.References {
		head = append(head, "vs "+ref.Name)
	}
	head = append(head, "wins")
	rows := [][]string{head}
	row := func(name string, s Score, search string) []string {
		return []string{name, tablefmt.Pct(s.Accept), tablefmt.Pct(s.Moved), tablefmt.Num(s.MeanDense, 4, true), search, fmt.Sprint(s.Failed)}
	}
	for _, s := range r.References {
		c := row(s.Name+" (ref)", s, "")
		for range r.References {
			c = append(c, "")
		}
		rows = append(rows, append(c, ""))
	}
	for _, f := range r.Families {
		c := row(f.Family, f.Held, tablefmt.Pct(f.SearchAccept))
		for _, v := range f.Versus {
			c = append(c, fmt.Sprintf("+%d/-%d p %.2g", v.More, v.Fewer, v.P))
		}
		w := "no"
		if f.Wins {
			w = "YES"
		}
		rows = append(rows, append(c, w))
	}
	width := make([]int, len(head))
	for _, c := range rows {
		for i, x := range c {
			width[i] = max(width[i], len(x))
		}
	}
	for ri, c := range rows {
		b.WriteString("|")
		for i, x := range c {
			if i == 0 {
				fmt.Fprintf(&b, " %-*s |", width[i], x)
			} else {
				fmt.Fprintf(&b, " %*s |", width[i], x)
			}
		}
		b.WriteString("\n")
		if ri == 0 {
			b.WriteString("|")
			for i := range c {
				b.WriteString(strings.Repeat("-", width[i]+2) + "|")
			}
			b.WriteString("\n")
		}
	}
	verdict := "no degenerate family beats an honest reference"
	if r.Win {
		verdict = "a degenerate family beats an honest reference: do not train against this persuadee"
	}
	fmt.Fprintf(&b, "\nwins: significantly more full acceptances than a reference on the same episodes (McNemar exact p < %.2g); %s\n", Alpha, verdict)
	for _, f := range r.Families {
		fmt.Fprintf(&b, "\n%s (%s): best held-out episode %s, %s\n", f.Family, FamilyDoc(f.Family), f.Example.Scenario, f.Example.Terminal)
		for _, m := range f.Example.Transcript {
			fmt.Fprintf(&b, "  %s: %s\n", m.Speaker, m.Text)
		}
	}
	return b.String()
}
