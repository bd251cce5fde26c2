package analysis

import (
	"strconv"

	"github.com/persuarena/persuarena/episode"
)

// ActPoint is the act mix of one persuader turn.
type ActPoint struct {
	// T is the persuader turn, 1..Tmax.
	T int
	// N counts the persuader utterances at turn T.
	N int
	// Count holds, per act (ActCurves.Acts order), the utterances at turn T
	// containing it.
	Count []int
	// Share is Count/N per act, in [0, 1] (NaN never occurs: points exist
	// only where N > 0). Acts are multi-label, so shares need not sum to 1.
	Share []float64
}

// ActSeries is one arm's act curves.
type ActSeries struct {
	Arm   Arm
	Label string
	// Points run over turns 1..the arm's longest episode; a turn no episode
	// reached is absent.
	Points []ActPoint
}

// ActCurves is the Probe-RPO paper's Figure 5: the share of persuader utterances
// containing each of the five persuasion acts, by persuader turn, per arm.
type ActCurves struct {
	// Acts are the act names in tagger.Acts order (diagnostic, evidence,
	// plan, commitment, autonomy).
	Acts   []string
	Series []ActSeries
	// Failed counts the failed episodes left out.
	Failed int
}

// ActsByTurn computes Figure 5 over eps (Probe-RPO paper, Figure 5) from
// the tagged acts stored with each turn; act names the tagger does not know
// are ignored.
func ActsByTurn(eps []*episode.Episode) ActCurves {
	return sliceStream(eps, StreamOptions{Ungrouped: true}).ActsByTurn()
}

// Table renders Figure 5's data: one row per arm and turn with n and the
// percentage of utterances containing each act.
func (c ActCurves) Table() Table {
	t := Table{Title: "Persuasion acts by persuader turn, % of utterances (Probe-RPO paper, Figure 5)",
		Header: []string{"persuader", "t", "n"}, Notes: failedNote(c.Failed)}
	for _, a := range c.Acts {
		t.Header = append(t.Header, a+"%")
	}
	for _, s := range c.Series {
		for _, p := range s.Points {
			cells := []string{s.Label, strconv.Itoa(p.T), strconv.Itoa(p.N)}
			for _, x := range p.Share {
				cells = append(cells, pct(x))
			}
			t.Rows = append(t.Rows, cells)
		}
	}
	t.Notes = append(t.Notes, "an utterance can hold several acts, so a row need not sum to 100")
	return t
}
