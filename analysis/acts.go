package analysis

import (
	"strconv"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/tagger"
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

// ActCurves is seed 000 Figure 5: the share of persuader utterances
// containing each of the five persuasion acts, by persuader turn, per arm.
type ActCurves struct {
	// Acts are the act names in tagger.Acts order (diagnostic, evidence,
	// plan, commitment, autonomy).
	Acts   []string
	Series []ActSeries
	// Failed counts the failed episodes left out.
	Failed int
}

// ActsByTurn computes Figure 5 over eps (SPEC §2, seed 000 Figure 5) from
// the tagged acts stored with each turn; act names the tagger does not know
// are ignored.
func ActsByTurn(eps []*episode.Episode) ActCurves {
	eps, failed := Scored(eps)
	c := ActCurves{Failed: failed}
	for _, a := range tagger.Acts {
		c.Acts = append(c.Acts, a.String())
	}
	arms, labels, groups := byArm(eps)
	for i, a := range arms {
		s := ActSeries{Arm: a, Label: labels[i]}
		byT := map[int]*ActPoint{}
		tmax := 0
		for _, ep := range groups[i] {
			for _, t := range ep.Turns {
				p := byT[t.T]
				if p == nil {
					p = &ActPoint{T: t.T, Count: make([]int, len(tagger.Acts))}
					byT[t.T] = p
				}
				p.N++
				var set tagger.ActSet
				for _, name := range t.Acts {
					if act, ok := tagger.ParseAct(name); ok {
						set = set.With(act)
					}
				}
				for k, act := range tagger.Acts {
					if set.Has(act) {
						p.Count[k]++
					}
				}
				tmax = max(tmax, t.T)
			}
		}
		for t := 1; t <= tmax; t++ {
			if p := byT[t]; p != nil {
				p.Share = make([]float64, len(p.Count))
				for k, n := range p.Count {
					p.Share[k] = float64(n) / float64(p.N)
				}
				s.Points = append(s.Points, *p)
			}
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// Table renders Figure 5's data: one row per arm and turn with n and the
// percentage of utterances containing each act.
func (c ActCurves) Table() Table {
	t := Table{Title: "Persuasion acts by persuader turn, % of utterances (seed 000 Figure 5)",
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
