package analysis

import (
	"math"
	"strconv"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/stats"
)

// Rate is a full-acceptance rate with its Wilson 95% interval.
type Rate struct {
	// Accepted of N scored episodes ended in full acceptance.
	Accepted, N int
	// Rate is Accepted/N in [0, 1]; NaN when N is 0.
	Rate float64
	// Lo and Hi bound the Wilson score 95% interval (stats.Wilson with
	// stats.Z95), in [0, 1]; (0, 1) when N is 0.
	Lo, Hi float64
}

// NewRate returns the Rate of accepted out of n.
func NewRate(accepted, n int) Rate {
	r := Rate{Accepted: accepted, N: n, Rate: math.NaN()}
	if n > 0 {
		r.Rate = float64(accepted) / float64(n)
	}
	r.Lo, r.Hi = stats.Wilson(accepted, n, stats.Z95)
	return r
}

// acceptRate is the full-acceptance Rate of scored episodes.
func acceptRate(eps []*episode.Episode) Rate {
	k := 0
	for _, ep := range eps {
		if ep.Terminal == decision.TermAccept {
			k++
		}
	}
	return NewRate(k, len(eps))
}

// ProfileRow is one row of Table 6: a resistance type, a domain family, or
// the pooled "all" row, with one Rate per arm.
type ProfileRow struct {
	// Dimension is "all", "resistance" or "family".
	Dimension string
	// Value is the resistance type (EB, IT, AR, AA), the family name, or
	// "all"; "unknown" for episodes without one.
	Value string
	// Cells holds one Rate per arm, in ProfileAcceptance.Arms order.
	Cells []Rate
}

// ProfileAcceptance is the Probe-RPO paper's Table 6: the full-acceptance
// rate by hidden resistance type and by domain family, per arm (columns).
type ProfileAcceptance struct {
	Arms   []Arm
	Labels []string
	// Rows: "all" first, then the resistance types present in the data in
	// scenario.Resistances order (EB, IT, AR, AA), then the families present
	// in scenario.Families order; values outside those lists follow their
	// dimension, sorted.
	Rows []ProfileRow
	// Failed counts the failed episodes left out.
	Failed int
}

// AcceptanceByProfile computes Table 6 over eps (Probe-RPO paper, Table 6).
// Rates are over scored (non-failed) episodes.
func AcceptanceByProfile(eps []*episode.Episode) ProfileAcceptance {
	return sliceStream(eps, StreamOptions{Ungrouped: true}).AcceptanceByProfile()
}

func strs[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

func label(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}

// Table renders Table 6: one row per ProfileRow, two columns per arm (full
// acceptance % and n). The Wilson intervals stay in the typed result.
func (p ProfileAcceptance) Table() Table {
	t := Table{Title: "Full acceptance (%) by hidden resistance type and domain family (Probe-RPO paper, Table 6)",
		Header: []string{"dimension", "value"}, Notes: failedNote(p.Failed)}
	for _, l := range p.Labels {
		t.Header = append(t.Header, l+" acc%", l+" n")
	}
	for _, r := range p.Rows {
		cells := []string{r.Dimension, r.Value}
		for _, c := range r.Cells {
			cells = append(cells, pct(c.Rate), strconv.Itoa(c.N))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// Grid is the Probe-RPO paper's Table 7: full acceptance per persuader (rows) and
// persuadee (columns).
type Grid struct {
	Persuaders, Persuadees []string
	// Cells[i][j] is persuader i against persuadee j; N is 0 where the
	// pair was not played.
	Cells [][]Rate
	// Failed counts the failed episodes left out.
	Failed int
}

// AcceptanceGrid computes Table 7 over eps (Probe-RPO paper, Table 7), persuaders
// and persuadees in order of first appearance.
func AcceptanceGrid(eps []*episode.Episode) Grid {
	return sliceStream(eps, StreamOptions{Ungrouped: true}).AcceptanceGrid()
}

// Table renders Table 7: one row per persuader, two columns per persuadee
// (full acceptance % and n).
func (g Grid) Table() Table {
	t := Table{Title: "Full acceptance (%) per persuader and persuadee (Probe-RPO paper, Table 7)",
		Header: []string{"persuader"}, Notes: failedNote(g.Failed)}
	for _, pee := range g.Persuadees {
		t.Header = append(t.Header, pee+" acc%", pee+" n")
	}
	for i, per := range g.Persuaders {
		cells := []string{per}
		for _, c := range g.Cells[i] {
			cells = append(cells, pct(c.Rate), strconv.Itoa(c.N))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}
