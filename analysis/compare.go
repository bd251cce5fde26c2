package analysis

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/tablefmt"
	"github.com/persuarena/persuarena/stats"
)

// DefaultResamples is the number of paired-bootstrap resamples of Compare
// (10,000, as the MASP paper reports its paired CIs).
const DefaultResamples = 10000

// MaxResamples bounds bootstrap resamples wherever a user sets them
// (--resamples of compare, report, fidelity, masp and study).
//
// Choice: a million, 100 times the default: intervals stop changing long
// before, and a million resamples of a large run take minutes, not days.
const MaxResamples = 1_000_000

// CompareOptions configures Compare.
type CompareOptions struct {
	// Intersection compares on the (scenario, rollout) keys both sides
	// hold instead of refusing when their scenario sets differ.
	Intersection bool
	// Seed seeds the paired bootstrap: same seed, same intervals.
	Seed uint64
	// Resamples is the number of bootstrap resamples; 0 means
	// DefaultResamples.
	Resamples int
	// Level is the interval coverage in (0, 1); 0 means 0.95.
	Level float64
}

// Side describes one of the two compared arms, over the pairs used.
type Side struct {
	RunID, Persuader, Persuadee string
	// Episodes counts the episodes given for this side, failed included.
	Episodes int
	// Accepted counts the pairs in which this side reached full acceptance.
	Accepted int
	// AcceptRate is Accepted / Comparison.N, in [0, 1].
	AcceptRate float64
	// MeanRGoal is the mean R_goal over the pairs, in [-3, 3] with the
	// default goal rewards.
	MeanRGoal float64
}

// PairOutcome is one paired (scenario, rollout).
type PairOutcome struct {
	ScenarioID       string
	Rollout          int
	AcceptA, AcceptB bool
	RGoalA, RGoalB   float64
}

// Comparison is the paired comparison of two arms on the same scenarios
// (the Probe-RPO paper's Table 5 paired columns): Δ full acceptance in
// percentage points, win/loss, McNemar's exact test, the Wilcoxon
// signed-rank test on R_goal differences, and paired bootstrap intervals.
type Comparison struct {
	A, B Side
	// N is the number of pairs compared.
	N int
	// DroppedFailed counts pairs left out because a side failed.
	DroppedFailed int
	// OnlyA and OnlyB count (scenario, rollout) keys held by one side only;
	// non-zero only under CompareOptions.Intersection.
	OnlyA, OnlyB int
	// DeltaPP is 100 (A.AcceptRate - B.AcceptRate), percentage points.
	DeltaPP float64
	// DeltaCI is the paired bootstrap interval of DeltaPP (pp).
	DeltaCI stats.CI
	// Wins counts pairs where only A reached full acceptance, Losses those
	// where only B did (the Probe-RPO paper's Table 5 "win/loss").
	Wins, Losses int
	// McNemarP is McNemar's exact two-sided p on (Wins, Losses).
	McNemarP float64
	// MeanRGoalDiff is mean(R_goal A - R_goal B) over pairs.
	MeanRGoalDiff float64
	// RGoalDiffCI is the paired bootstrap interval of MeanRGoalDiff.
	RGoalDiffCI stats.CI
	// Wilcoxon is the two-sided signed-rank test on the R_goal differences
	// (zero method "wilcox"; exact when applicable, else the normal
	// approximation with continuity correction; Method says which). When
	// every difference is zero it holds P = 1, N = 0, Method "none".
	Wilcoxon stats.WilcoxonResult
	// Seed is the bootstrap seed used.
	Seed uint64
	// Pairs lists every compared pair, sorted by scenario id then rollout.
	Pairs []PairOutcome
}

// SetMismatchError is Compare's refusal when the two sides do not hold the
// same (scenario, rollout) keys and CompareOptions.Intersection is off.
type SetMismatchError struct {
	// Common, OnlyA and OnlyB count keys in both, only in A, only in B.
	Common, OnlyA, OnlyB int
	// ExamplesA and ExamplesB show up to three keys of each side only,
	// as "scenario#rollout".
	ExamplesA, ExamplesB []string
}

// Error lists the counts and examples and points to --intersection.
func (e *SetMismatchError) Error() string {
	ex := func(xs []string) string {
		if len(xs) == 0 {
			return ""
		}
		return " (e.g. " + strings.Join(xs, ", ") + ")"
	}
	return fmt.Sprintf("the two sides hold different scenario sets: %d (scenario, rollout) keys in both, %d only in A%s, %d only in B%s; use --intersection to compare on the %d shared keys",
		e.Common, e.OnlyA, ex(e.ExamplesA), e.OnlyB, ex(e.ExamplesB), e.Common)
}

// PairKey is what the episodes of two arms are paired on (Probe-RPO
// paper, Table 5): the scenario id and the rollout.
type PairKey struct {
	ScenarioID string
	Rollout    int
}

// String formats k as "scenario#rollout".
func (k PairKey) String() string { return k.ScenarioID + "#" + strconv.Itoa(k.Rollout) }

// Pairing is the outcomes of two arms matched on PairKey.
type Pairing struct {
	// ArmA and ArmB are the sides' arms (zero for an empty side); A and B
	// their outcomes by key.
	ArmA, ArmB Arm
	A, B       map[PairKey]*episode.Outcome
	// Common holds the keys on both sides, OnlyA and OnlyB those on one,
	// each sorted by scenario id, then rollout.
	Common, OnlyA, OnlyB []PairKey
}

// Pair matches the outcomes a and b, each of one arm (one persuader, one
// persuadee) with at most one outcome per key; either may be empty. The
// viewer's comparison page and CompareOutcomes pair through it. Errors: a
// side mixing arms or holding a key twice.
func Pair(a, b []episode.Outcome) (Pairing, error) { return pair(a, b, false) }

// pair is Pair; with needBoth an empty side is an error too, each side's
// problems reported in the order A, then B.
func pair(a, b []episode.Outcome, needBoth bool) (Pairing, error) {
	var p Pairing
	var err error
	if p.ArmA, p.A, err = index("A", a, needBoth); err != nil {
		return Pairing{}, err
	}
	if p.ArmB, p.B, err = index("B", b, needBoth); err != nil {
		return Pairing{}, err
	}
	for k := range p.A {
		if p.B[k] != nil {
			p.Common = append(p.Common, k)
		} else {
			p.OnlyA = append(p.OnlyA, k)
		}
	}
	for k := range p.B {
		if p.A[k] == nil {
			p.OnlyB = append(p.OnlyB, k)
		}
	}
	byKey := func(x, y PairKey) int {
		return cmp.Or(cmp.Compare(x.ScenarioID, y.ScenarioID), cmp.Compare(x.Rollout, y.Rollout))
	}
	for _, ks := range [][]PairKey{p.Common, p.OnlyA, p.OnlyB} {
		slices.SortFunc(ks, byKey)
	}
	return p, nil
}

// index keys one side's outcomes, checking it is one arm with one
// episode per key; an empty side is an error when needed.
func index(side string, os []episode.Outcome, needed bool) (Arm, map[PairKey]*episode.Outcome, error) {
	m := make(map[PairKey]*episode.Outcome, len(os))
	if len(os) == 0 {
		if needed {
			return Arm{}, nil, fmt.Errorf("compare: side %s has no episodes", side)
		}
		return Arm{}, m, nil
	}
	arm := Arm{os[0].Persuader, os[0].Persuadee}
	for i := range os {
		o := &os[i]
		if a := (Arm{o.Persuader, o.Persuadee}); a != arm {
			return Arm{}, nil, fmt.Errorf("compare: side %s mixes arms (%s and %s): select one persuader and persuadee", side, arm, a)
		}
		k := PairKey{o.ScenarioID, o.Rollout}
		if m[k] != nil {
			return Arm{}, nil, fmt.Errorf("compare: side %s holds scenario %s twice", side, k)
		}
		m[k] = o
	}
	return arm, m, nil
}

// Compare pairs the episodes of two arms on (scenario id, rollout) and
// tests their difference (Probe-RPO paper, Table 5): a and b must each
// hold one arm (see Pick) and at most one episode per key. A pair with a
// failed side is dropped and counted. Win/loss counts pairs, which are
// scenarios when each scenario has one rollout.
//
// Errors: an empty side, a side mixing arms or repeating a key; a
// *SetMismatchError when the key sets differ and o.Intersection is off; no
// pair left to compare; invalid bootstrap options.
func Compare(a, b []*episode.Episode, o CompareOptions) (Comparison, error) {
	outcomes := func(eps []*episode.Episode) (string, []episode.Outcome) {
		if len(eps) == 0 {
			return "", nil
		}
		os := make([]episode.Outcome, len(eps))
		for i, ep := range eps {
			os[i] = ep.Outcome()
		}
		return eps[0].RunID, os
	}
	runA, oa := outcomes(a)
	runB, ob := outcomes(b)
	return CompareOutcomes(runA, oa, runB, ob, o)
}

// CompareOutcomes is Compare on the outcomes of the two arms (only their
// arm, key, terminal state and R_goal are read), as store.DB.EachOutcome
// streams them: no turns are needed, so a comparison of two 44k-episode
// arms holds a few MB instead of every transcript. runA and runB label the
// sides. Errors are Compare's.
func CompareOutcomes(runA string, a []episode.Outcome, runB string, b []episode.Outcome, o CompareOptions) (Comparison, error) {
	p, err := pair(a, b, true)
	if err != nil {
		return Comparison{}, err
	}
	return ComparePairing(runA, runB, p, o)
}

// ComparePairing is CompareOutcomes on outcomes already paired (Pair):
// the viewer pairs once for its table and its statistics. Errors are
// Compare's.
func ComparePairing(runA, runB string, pg Pairing, o CompareOptions) (Comparison, error) {
	c := Comparison{Seed: o.Seed}
	c.A = Side{RunID: runA, Persuader: pg.ArmA.Persuader, Persuadee: pg.ArmA.Persuadee, Episodes: len(pg.A)}
	c.B = Side{RunID: runB, Persuader: pg.ArmB.Persuader, Persuadee: pg.ArmB.Persuadee, Episodes: len(pg.B)}
	common, onlyA, onlyB, ia, ib := pg.Common, pg.OnlyA, pg.OnlyB, pg.A, pg.B
	if (len(onlyA) > 0 || len(onlyB) > 0) && !o.Intersection {
		e := &SetMismatchError{Common: len(common), OnlyA: len(onlyA), OnlyB: len(onlyB)}
		for i := 0; i < 3 && i < len(onlyA); i++ {
			e.ExamplesA = append(e.ExamplesA, onlyA[i].String())
		}
		for i := 0; i < 3 && i < len(onlyB); i++ {
			e.ExamplesB = append(e.ExamplesB, onlyB[i].String())
		}
		return Comparison{}, e
	}
	c.OnlyA, c.OnlyB = len(onlyA), len(onlyB)
	var accA, accB, rgA, rgB, d []float64
	for _, k := range common {
		ea, eb := ia[k], ib[k]
		if ea.Terminal == decision.TermFailed || eb.Terminal == decision.TermFailed {
			c.DroppedFailed++
			continue
		}
		p := PairOutcome{ScenarioID: k.ScenarioID, Rollout: k.Rollout, AcceptA: ea.Terminal == decision.TermAccept,
			AcceptB: eb.Terminal == decision.TermAccept, RGoalA: ea.RGoal, RGoalB: eb.RGoal}
		c.Pairs = append(c.Pairs, p)
		accA, accB = append(accA, 100*b2f(p.AcceptA)), append(accB, 100*b2f(p.AcceptB))
		rgA, rgB = append(rgA, p.RGoalA), append(rgB, p.RGoalB)
		d = append(d, p.RGoalA-p.RGoalB)
		switch {
		case p.AcceptA && !p.AcceptB:
			c.Wins++
		case p.AcceptB && !p.AcceptA:
			c.Losses++
		}
		if p.AcceptA {
			c.A.Accepted++
		}
		if p.AcceptB {
			c.B.Accepted++
		}
		c.A.MeanRGoal += p.RGoalA
		c.B.MeanRGoal += p.RGoalB
	}
	c.N = len(c.Pairs)
	if c.N == 0 {
		return Comparison{}, fmt.Errorf("compare: no pair left to compare (%d shared keys, %d dropped for a failed side)", len(common), c.DroppedFailed)
	}
	n := float64(c.N)
	c.A.AcceptRate, c.B.AcceptRate = float64(c.A.Accepted)/n, float64(c.B.Accepted)/n
	c.A.MeanRGoal /= n
	c.B.MeanRGoal /= n
	c.DeltaPP = 100 * (c.A.AcceptRate - c.B.AcceptRate)
	c.MeanRGoalDiff = c.A.MeanRGoal - c.B.MeanRGoal
	c.McNemarP = stats.McNemarExact(c.Wins, c.Losses)
	var err error
	c.Wilcoxon, err = stats.Wilcoxon(d, stats.WilcoxonOptions{ZeroMethod: "wilcox", Alternative: "two-sided", Correction: true, Method: "auto"})
	if errors.Is(err, stats.ErrNoDifferences) {
		c.Wilcoxon, err = stats.WilcoxonResult{Statistic: math.NaN(), P: 1, Z: math.NaN(), Method: "none"}, nil
	}
	if err != nil {
		return Comparison{}, fmt.Errorf("compare: %w", err)
	}
	bo := stats.BootstrapOptions{Resamples: o.Resamples, Level: o.Level, Seed: o.Seed}
	if bo.Resamples == 0 {
		bo.Resamples = DefaultResamples
	}
	// Choice: both intervals use the same seed, hence the same resampled
	// pairs, so they describe one bootstrap world.
	// PairedDiffCIs draws them once for both (equal to two PairedDiffCI
	// calls, at half the cost).
	cis, err := stats.PairedDiffCIs([][]float64{accA, rgA}, [][]float64{accB, rgB}, bo)
	if err != nil {
		return Comparison{}, fmt.Errorf("compare: Δ full acceptance and R_goal difference intervals: %w", err)
	}
	c.DeltaCI, c.RGoalDiffCI = cis[0], cis[1]
	return c, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// WilcoxonMethod describes in words how the Wilcoxon p-value was computed.
func (c Comparison) WilcoxonMethod() string {
	switch c.Wilcoxon.Method {
	case "exact":
		return fmt.Sprintf("exact null distribution, %d nonzero differences", c.Wilcoxon.N)
	case "approx":
		return fmt.Sprintf("normal approximation with continuity correction and tie correction, %d nonzero differences", c.Wilcoxon.N)
	case "none":
		return "every R_goal difference is zero: no test, p = 1"
	}
	return c.Wilcoxon.Method
}

// Table renders the comparison as a two-column "measure / value" table.
func (c Comparison) Table() Table {
	level := strconv.FormatFloat(100*c.DeltaCI.Level, 'g', -1, 64) + "%"
	side := func(s Side) string {
		return fmt.Sprintf("run %s, %s vs %s (%d episodes)", s.RunID, s.Persuader, s.Persuadee, s.Episodes)
	}
	pairs := strconv.Itoa(c.N) + " paired on (scenario, rollout)"
	if c.DroppedFailed > 0 {
		pairs += fmt.Sprintf("; %d dropped for a failed side", c.DroppedFailed)
	}
	if c.OnlyA+c.OnlyB > 0 {
		pairs += fmt.Sprintf("; intersection: %d only in A and %d only in B left out", c.OnlyA, c.OnlyB)
	}
	t := Table{Title: "Paired comparison, A − B (Probe-RPO paper, Table 5)", Header: []string{"measure", "value"},
		Rows: [][]string{
			{"A", side(c.A)},
			{"B", side(c.B)},
			{"pairs", pairs},
			{"full acceptance A", pct(c.A.AcceptRate) + "%"},
			{"full acceptance B", pct(c.B.AcceptRate) + "%"},
			{"Δ full acceptance", fmt.Sprintf("%s pp, %s CI %s", num(c.DeltaPP, 1, true), level, tablefmt.Interval(c.DeltaCI.Lo, c.DeltaCI.Hi, 1))},
			{"win / loss", fmt.Sprintf("%d / %d", c.Wins, c.Losses)},
			{"McNemar exact p", pval(c.McNemarP)},
			{"mean R_goal A", num(c.A.MeanRGoal, 2, true)},
			{"mean R_goal B", num(c.B.MeanRGoal, 2, true)},
			{"mean R_goal difference", fmt.Sprintf("%s, %s CI %s", num(c.MeanRGoalDiff, 2, true), level, tablefmt.Interval(c.RGoalDiffCI.Lo, c.RGoalDiffCI.Hi, 2))},
			{"Wilcoxon signed-rank p", fmt.Sprintf("%s (%s)", pval(c.Wilcoxon.P), c.WilcoxonMethod())},
		},
		Notes: []string{fmt.Sprintf("intervals: paired %s bootstrap over pairs, %d resamples, seed %d", c.DeltaCI.Method, c.DeltaCI.Resamples, c.Seed),
			"win / loss: pairs where only A / only B reached full acceptance; McNemar is exact two-sided on them"},
	}
	return t
}

// MarshalJSON encodes c with snake_case keys, NaN values as null, and the
// pairs omitted (they are in the run database).
func (c Comparison) MarshalJSON() ([]byte, error) {
	side := func(s Side) map[string]any {
		return map[string]any{"run_id": s.RunID, "persuader": s.Persuader, "persuadee": s.Persuadee,
			"episodes": s.Episodes, "accepted": s.Accepted, "accept_rate": tablefmt.JSONFloat(s.AcceptRate), "mean_r_goal": tablefmt.JSONFloat(s.MeanRGoal)}
	}
	ci := func(x stats.CI) map[string]any {
		return map[string]any{"estimate": tablefmt.JSONFloat(x.Estimate), "lo": tablefmt.JSONFloat(x.Lo), "hi": tablefmt.JSONFloat(x.Hi), "method": x.Method,
			"level": x.Level, "resamples": x.Resamples}
	}
	return json.Marshal(map[string]any{
		"a": side(c.A), "b": side(c.B), "pairs": c.N, "dropped_failed": c.DroppedFailed,
		"only_a": c.OnlyA, "only_b": c.OnlyB,
		"delta_pp": tablefmt.JSONFloat(c.DeltaPP), "delta_pp_ci": ci(c.DeltaCI),
		"wins": c.Wins, "losses": c.Losses, "mcnemar_exact_p": tablefmt.JSONFloat(c.McNemarP),
		"mean_r_goal_diff": tablefmt.JSONFloat(c.MeanRGoalDiff), "mean_r_goal_diff_ci": ci(c.RGoalDiffCI),
		"wilcoxon": map[string]any{"statistic": tablefmt.JSONFloat(c.Wilcoxon.Statistic), "p": tablefmt.JSONFloat(c.Wilcoxon.P), "z": tablefmt.JSONFloat(c.Wilcoxon.Z),
			"n": c.Wilcoxon.N, "method": c.Wilcoxon.Method, "description": c.WilcoxonMethod(),
			"zero_method": "wilcox", "alternative": "two-sided", "correction": true},
		"seed": c.Seed,
	})
}
