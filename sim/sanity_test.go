package sim_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/cidata"
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
		per, err := baseline.New(name)
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
				checkReplies(t, sc, ep)
				r.n++
				r.term[ep.Terminal]++
				a := r.accType[sc.Hidden.Resistance]
				a[1]++
				if ep.Terminal == decision.TermAccept {
					a[0]++
				}
				r.accType[sc.Hidden.Resistance] = a
				if episode.RisesAndFalls(ep.Beliefs(), episode.RiseFallStep) {
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

// TestSanity checks the simulator's qualitative behaviour against the
// built-in persuaders on both held-out sets (default config, three
// rollouts per scenario): statistically clear gaps, not exact numbers, and
// the final belief's shape by outcome.
func TestSanity(t *testing.T) {
	cidata.Slow(t, "plays 2 x 4 x 360 episodes")
	for _, set := range []string{"arena", "p4g"} {
		t.Run(set, func(t *testing.T) {
			rows := outcomes(t, set, 3, sim.DefaultConfig())
			by := map[string]*row{}
			for _, r := range rows {
				by[r.name] = r
			}
			for _, r := range rows {
				if a := r.pct(decision.TermAccept); a > 90 {
					t.Errorf("%s accepts %.1f%% (> 90%%)", r.name, a)
				}
				if r.name != "pushy" && r.pct(decision.TermReject) >= by["pushy"].pct(decision.TermReject) {
					t.Errorf("%s rejects %.1f%%, not below pushy's %.1f%%", r.name, r.pct(decision.TermReject), by["pushy"].pct(decision.TermReject))
				}
			}
			script, pushy, informer, random := by["script"], by["pushy"], by["informer"], by["random"]
			// four standard errors of the gap (binomial, from the two
			// shares on their episodes): a clear gap, whatever the shares
			ps, pp := script.pct(decision.TermAccept)/100, pushy.pct(decision.TermAccept)/100
			se := 100 * math.Sqrt(ps*(1-ps)/float64(script.n)+pp*(1-pp)/float64(pushy.n))
			if gap := script.pct(decision.TermAccept) - pushy.pct(decision.TermAccept); gap < 4*se {
				t.Errorf("script - pushy Accept = %.1f pp, want >= %.1f (four standard errors)", gap, 4*se)
			}
			if a, r := pushy.pct(decision.TermAccept), pushy.pct(decision.TermReject); a >= 15 || r <= 40 {
				t.Errorf("pushy Accept %.1f%% Reject %.1f%%, want < 15 and > 40", a, r)
			}
			if p := informer.pct(decision.TermPending); p < 50 {
				t.Errorf("informer pending %.1f%%, want mostly pending (>= 50)", p)
			}
			if a := random.pct(decision.TermAccept); a >= script.pct(decision.TermAccept) || a < pushy.pct(decision.TermAccept) {
				t.Errorf("random Accept %.1f%% not between pushy and script", a)
			}
			// The belief sits near 0 while acceptance is far off (it is
			// calibrated on asks), so random's mostly low trajectories seldom
			// move by 0.02 both ways; script's, which climb, do. (People's
			// reported beliefs under GPT-5 do in 75 % of PersuasionTrace
			// rounds: episode.RisesAndFalls, docs/fidelity.md.)
			if nm := 100 * float64(script.nonMono) / float64(script.n); nm < 10 {
				t.Errorf("script: %.1f%% non-monotonic belief trajectories, want >= 10", nm)
			}
			// B_T follows the outcome without saturating (docs/simulator/fit.md,
			// "Hand calibration against the built-in persuaders"):
			// accept > conditional > pending, accept below 0.95, pending
			// below 0.5.
			bt := func(term decision.Terminal) float64 { return script.bTBy[term] / float64(script.term[term]) }
			acc, cond, pend := bt(decision.TermAccept), bt(decision.TermConditional), bt(decision.TermPending)
			if !(acc > cond && cond > pend) || acc >= 0.95 || pend >= 0.5 {
				t.Errorf("script B_T by outcome: accept %.3f, conditional %.3f, pending %.3f; want ordered, accept < 0.95, pending < 0.5", acc, cond, pend)
			}
		})
	}
}

// leakWords are type labels and trait names a reply must never contain.
var leakWords = []string{"identity threat", "entrenched", "ambivalen", "autonomy resistance", "reactance",
	"resistance type", "agreeable", "neurotic", "conscientious", "extrovert", "self_direction", "universalism"}

// checkReplies fails on an empty reply, a reply equal to the previous
// one, or one that names a type label or trait.
func checkReplies(t *testing.T, sc *scenario.Scenario, ep *episode.Episode) {
	t.Helper()
	prev := ""
	for _, tr := range ep.Turns {
		low := strings.ToLower(tr.Persuadee)
		if low == "" || tr.Persuadee == prev {
			t.Fatalf("%s turn %d: empty or repeated reply %q", sc.ID, tr.T, tr.Persuadee)
		}
		for _, w := range leakWords {
			if strings.Contains(low, w) {
				t.Fatalf("%s turn %d: reply leaks %q: %q", sc.ID, tr.T, w, tr.Persuadee)
			}
		}
		prev = tr.Persuadee
	}
}

// BenchmarkSimEpisodeInformer runs the built-in informer (ten turns, no
// asks) against the simulator on the arena held-out scenarios.
func BenchmarkSimEpisodeInformer(b *testing.B) {
	all, err := scenario.Resolve("arena")
	if err != nil {
		b.Fatal(err)
	}
	held := scenario.Filter(all, scenario.Heldout)
	if len(held) == 0 {
		b.Skip("no arena held-out scenarios")
	}
	per, err := baseline.New("informer")
	if err != nil {
		b.Fatal(err)
	}
	pee := sim.New(sim.DefaultConfig())
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := episode.Run(ctx, episode.Config{}, &held[i%len(held)], per, pee, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}
