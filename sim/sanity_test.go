package sim_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/persuader"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// row is one persuader's outcome on a scenario set.
type row struct {
	name    string
	n       int
	term    map[decision.Terminal]int
	accType map[scenario.Resistance][2]int // accepts, episodes
	nonMono int
	turns   int
	bT      float64
	bTBy    map[decision.Terminal]float64 // sum of B_T by terminal state
	mixed   int                           // scenarios whose rollouts end differently
}

func (r *row) pct(t decision.Terminal) float64 { return 100 * float64(r.term[t]) / float64(r.n) }

func (r *row) accOf(t scenario.Resistance) float64 {
	x := r.accType[t]
	if x[1] == 0 {
		return 0
	}
	return 100 * float64(x[0]) / float64(x[1])
}

// outcomes plays every built-in persuader against the default simulator on
// the held-out split of set, rollouts episodes per scenario.
func outcomes(t *testing.T, set string, rollouts int, cfg sim.Config) []*row {
	t.Helper()
	all, err := scenario.Resolve(set)
	if err != nil {
		t.Fatal(err)
	}
	held := scenario.Filter(all, scenario.Heldout)
	if len(held) < 100 {
		t.Skipf("%s has %d held-out scenarios; not generated yet", set, len(held))
	}
	pee := sim.New(cfg)
	var rows []*row
	for _, name := range []string{"script", "pushy", "informer", "random"} {
		per, err := persuader.New(name)
		if err != nil {
			t.Fatal(err)
		}
		r := &row{name: name, term: map[decision.Terminal]int{}, accType: map[scenario.Resistance][2]int{}, bTBy: map[decision.Terminal]float64{}}
		for i := range held {
			sc := &held[i]
			first := decision.Terminal("")
			mixed := false
			for k := 0; k < rollouts; k++ {
				ep, err := episode.Run(context.Background(), episode.Config{}, sc, per, pee, episode.Seed(2024, sc.ID, k))
				if err != nil || ep.Terminal == decision.TermFailed {
					t.Fatalf("%s/%s: %v %s", name, sc.ID, err, ep.Error)
				}
				r.n++
				r.term[ep.Terminal]++
				a := r.accType[sc.Hidden.Resistance]
				a[1]++
				if ep.Terminal == decision.TermAccept {
					a[0]++
				}
				r.accType[sc.Hidden.Resistance] = a
				if nonMonotonic(ep, 0.02) {
					r.nonMono++
				}
				r.turns += len(ep.Turns)
				b, _ := ep.FinalBelief()
				r.bT += b
				r.bTBy[ep.Terminal] += b
				if k == 0 {
					first = ep.Terminal
				}
				mixed = mixed || ep.Terminal != first
			}
			if mixed {
				r.mixed++
			}
		}
		rows = append(rows, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s held-out, %d rollout(s):\n%-9s %6s %6s %6s %6s %6s %5s %6s %6s %6s %6s | acc by type EB IT AR AA\n", set, rollouts,
		"persuader", "acc", "cond", "pend", "rej", "nonmon", "turns", "B_T", "B|acc", "B|pend", "mixed")
	for _, r := range rows {
		by := func(t decision.Terminal) float64 {
			if r.term[t] == 0 {
				return 0
			}
			return r.bTBy[t] / float64(r.term[t])
		}
		fmt.Fprintf(&b, "%-9s %6.1f %6.1f %6.1f %6.1f %6.1f %5.1f %6.2f %6.2f %6.2f %6.1f | %5.1f %5.1f %5.1f %5.1f\n", r.name,
			r.pct(decision.TermAccept), r.pct(decision.TermConditional), r.pct(decision.TermPending), r.pct(decision.TermReject),
			100*float64(r.nonMono)/float64(r.n), float64(r.turns)/float64(r.n), r.bT/float64(r.n),
			by(decision.TermAccept), by(decision.TermPending), 100*float64(r.mixed)/float64(len(held)),
			r.accOf(scenario.EntrenchedBelief), r.accOf(scenario.IdentityThreat), r.accOf(scenario.AutonomyResistance), r.accOf(scenario.AmbivalentAvoidance))
	}
	t.Log("\n" + b.String())
	return rows
}

// nonMonotonic reports whether B_t both rises and falls by more than eps
// over the episode (B_0 .. B_T).
func nonMonotonic(ep *episode.Episode, eps float64) bool {
	if ep.B0 == nil {
		return false
	}
	prev := *ep.B0
	up, down := false, false
	for _, t := range ep.Turns {
		if t.Belief == nil {
			continue
		}
		b := *t.Belief
		up = up || b-prev > eps
		down = down || prev-b > eps
		prev = b
	}
	return up && down
}

// TestOutcomeTable prints the outcome tables (SIM_TABLE=1 go test -run
// OutcomeTable -v ./sim/).
func TestOutcomeTable(t *testing.T) {
	if os.Getenv("SIM_TABLE") == "" {
		t.Skip("set SIM_TABLE=1 to print the outcome tables")
	}
	for _, set := range []string{"arena", "p4g"} {
		for _, v := range []string{"default", "soft", "hard"} {
			cfg, _ := sim.Variant(v)
			t.Log("variant " + v)
			outcomes(t, set, 3, cfg)
		}
	}
}
