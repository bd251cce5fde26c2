package eval

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/tablefmt"
	"github.com/persuarena/persuarena/reward"
	"github.com/persuarena/persuarena/stats"
)

// pct and num are the tables' number formats (package tablefmt, shared by
// eval, analysis and report).
var pct, num = tablefmt.Pct, tablefmt.Num

// MovedThreshold is the final-belief threshold of the Probe-RPO paper's Table 9
// "moved" column: B_T > 0.5.
const MovedThreshold = 0.5

// Summary holds the Probe-RPO paper's Table 5 and Table 9 columns for one group of
// episodes. Shares are fractions in [0, 1] (printed as %); failed episodes
// are counted in Failed and excluded from every other column.
type Summary struct {
	Persuader string
	Persuadee string
	Set       string
	// N is the number of scored (non-failed) episodes.
	N      int
	Failed int
	// Terminal shares over N (Table 5 Acc./Cond./Pend./Rej.). Truncated
	// episodes (context window exceeded) are counted separately.
	Accept      float64
	Conditional float64
	Pending     float64
	Reject      float64
	Truncated   float64
	// MeanRGoal is mean R_goal (Table 5).
	MeanRGoal float64
	// MeanTurns is the mean number of persuader turns (Table 5 "Turns").
	MeanTurns float64
	// MeanBT is the mean final belief B_T over episodes with a readable
	// belief (Table 9); NaN when none.
	MeanBT float64
	// NoBT counts the scored episodes left out of MeanBT, Moved and
	// ClosedGivenMoved because their B_T is missing (the read-out after
	// their last turn was unreadable, they had no turn, or --probes none
	// read no belief at all): never replaced by an earlier belief.
	NoBT int
	// Moved is the share of episodes with B_T > 0.5 (Table 9), over
	// episodes with a readable belief.
	Moved float64
	// ClosedGivenMoved is the share of moved episodes ending in Accept
	// (Table 9 "closed | moved"); NaN when none moved.
	ClosedGivenMoved float64
	// Judged counts the scored episodes a strategy judge was asked about
	// (rated, or with a judge error); 0 when no judge ran. Tables show the
	// R_strategy and R_out columns only when some summary has Judged > 0.
	Judged int
	// MeanRStrategy is the mean judge rating R_strategy in [-1, 1] (Probe-RPO
	// paper) over the scored episodes that have one; NaN when none.
	MeanRStrategy float64
	// MeanROut is the mean outcome reward R_out = R_goal + w·R_strategy
	// over the N scored episodes (Episode.OutcomeReward with w =
	// reward.DefaultStrategyWeight; R_goal where there is no rating); NaN
	// when N is 0.
	MeanROut float64
}

// Summarize computes the Table 5/9 columns over eps (Probe-RPO paper).
func Summarize(persuader, persuadee, set string, eps []*episode.Episode) Summary {
	var a Accumulator
	for _, ep := range eps {
		a.Add(ep.Outcome())
	}
	return a.Summary(persuader, persuadee, set)
}

// Accumulator gathers the Table 5/9 columns one episode outcome at a time,
// so a run's summary needs memory for its groups, not its episodes. The
// zero value is ready; Summary may be called at any point.
//
// Choice: the means are exact sums rounded once (stats.Sum), so a run's
// table is the same to the last bit whatever order its episodes finished
// in (several workers store them in varying orders).
type Accumulator struct {
	failed, n, judged, turns int // turn counts sum exactly as integers
	rg, ro, rs, bt           stats.Sum
	nb, nrs, moved, closed   int
	terminals                map[decision.Terminal]int
}

// Add counts one episode outcome.
func (a *Accumulator) Add(o episode.Outcome) {
	if o.Terminal == decision.TermFailed {
		a.failed++
		return
	}
	a.n++
	a.count(o.Terminal)
	a.rg.Add(o.RGoal)
	a.ro.Add(o.OutcomeReward(reward.DefaultStrategyWeight))
	if o.RStrategy != nil {
		a.nrs++
		a.rs.Add(*o.RStrategy)
	}
	if o.RStrategy != nil || o.JudgeError != "" {
		a.judged++
	}
	a.turns += o.Turns
	if o.BFinal != nil {
		b := *o.BFinal
		a.nb++
		a.bt.Add(b)
		if b > MovedThreshold {
			a.moved++
			if o.Terminal == decision.TermAccept {
				a.closed++
			}
		}
	}
}

func (a *Accumulator) count(t decision.Terminal) {
	if a.terminals == nil {
		a.terminals = map[decision.Terminal]int{}
	}
	a.terminals[t]++
}

// Summary returns the columns of everything added so far.
func (a *Accumulator) Summary(persuader, persuadee, set string) Summary {
	s := Summary{Persuader: persuader, Persuadee: persuadee, Set: set, N: a.n, Failed: a.failed, Judged: a.judged}
	share := func(k int, n int) float64 {
		if n == 0 {
			return math.NaN()
		}
		return float64(k) / float64(n)
	}
	s.Accept = share(a.terminals[decision.TermAccept], s.N)
	s.Conditional = share(a.terminals[decision.TermConditional], s.N)
	s.Pending = share(a.terminals[decision.TermPending], s.N)
	s.Reject = share(a.terminals[decision.TermReject], s.N)
	s.Truncated = share(a.terminals[decision.TermTruncated], s.N)
	s.MeanRGoal = share(0, s.N)
	s.MeanTurns = share(0, s.N)
	s.MeanROut = share(0, s.N)
	if s.N > 0 {
		s.MeanRGoal = a.rg.Value() / float64(s.N)
		s.MeanTurns = float64(a.turns) / float64(s.N)
		s.MeanROut = a.ro.Value() / float64(s.N)
	}
	s.MeanRStrategy = math.NaN()
	if a.nrs > 0 {
		s.MeanRStrategy = a.rs.Value() / float64(a.nrs)
	}
	s.NoBT = a.n - a.nb
	s.MeanBT = math.NaN()
	if a.nb > 0 {
		s.MeanBT = a.bt.Value() / float64(a.nb)
	}
	s.Moved = share(a.moved, a.nb)
	s.ClosedGivenMoved = share(a.closed, a.moved)
	return s
}

// GroupKey is a (persuader, persuadee, set) triple.
type GroupKey struct{ Persuader, Persuadee, Set string }

// Group splits episodes by (persuader, persuadee, set), where setOf maps a
// scenario id to its set name. Callers iterate groups in their own planned
// order for stable tables.
func Group(eps []*episode.Episode, setOf func(scenarioID string) string) map[GroupKey][]*episode.Episode {
	out := map[GroupKey][]*episode.Episode{}
	for _, ep := range eps {
		k := GroupKey{ep.Persuader, ep.Persuadee, setOf(ep.ScenarioID)}
		out[k] = append(out[k], ep)
	}
	return out
}

var header = []string{"persuader", "persuadee", "set", "n", "acc%", "cond%", "pend%", "rej%", "trunc%", "R_goal", "turns", "B_T", "moved%", "closed|moved%", "failed"}

// noBTHeader is the column added after closed|moved% when some group has
// scored episodes without a readable B_T.
const noBTHeader = "no B_T"

// judgeHeader are the columns added after R_goal when a judge ran.
var judgeHeader = []string{"R_strategy", "R_out"}

// judged reports whether any summary had a strategy judge.
func judged(ss []Summary) bool {
	for _, s := range ss {
		if s.Judged > 0 {
			return true
		}
	}
	return false
}

// missingBT reports whether any summary left episodes out of its B_T
// columns.
func missingBT(ss []Summary) bool {
	for _, s := range ss {
		if s.NoBT > 0 {
			return true
		}
	}
	return false
}

func headerOf(judge, noBT bool) []string {
	h := slices.Clone(header[:10])
	if judge {
		h = append(h, judgeHeader...)
	}
	h = append(h, header[10:14]...)
	if noBT {
		h = append(h, noBTHeader)
	}
	return append(h, header[14:]...)
}

func (s Summary) row(judge, noBT bool) []string {
	r := []string{s.Persuader, s.Persuadee, s.Set, strconv.Itoa(s.N), pct(s.Accept), pct(s.Conditional),
		pct(s.Pending), pct(s.Reject), pct(s.Truncated), num(s.MeanRGoal, 2, true)}
	if judge {
		r = append(r, num(s.MeanRStrategy, 2, true), num(s.MeanROut, 2, true))
	}
	r = append(r, num(s.MeanTurns, 1, false), num(s.MeanBT, 2, false), pct(s.Moved), pct(s.ClosedGivenMoved))
	if noBT {
		r = append(r, strconv.Itoa(s.NoBT))
	}
	return append(r, strconv.Itoa(s.Failed))
}

// WriteTable writes summaries as an aligned text table (percentages with one
// decimal, as in the Probe-RPO paper's Table 5). When a judge ran (some
// Judged > 0) the columns R_strategy and R_out follow R_goal; when some
// scored episodes have no readable B_T (NoBT > 0) the column "no B_T"
// counts them after closed|moved%, the columns they are left out of.
// Otherwise the table is exactly the plain one.
func WriteTable(w io.Writer, ss []Summary) error {
	judge, noBT := judged(ss), missingBT(ss)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	write := func(cells []string) {
		for _, c := range cells {
			fmt.Fprint(tw, c, "\t")
		}
		fmt.Fprintln(tw)
	}
	write(headerOf(judge, noBT))
	for _, s := range ss {
		write(s.row(judge, noBT))
	}
	return tw.Flush()
}

// WriteCSV writes summaries as CSV with the table's header (and its judge
// and "no B_T" columns when the table has them).
func WriteCSV(w io.Writer, ss []Summary) error {
	judge, noBT := judged(ss), missingBT(ss)
	cw := csv.NewWriter(w)
	cw.Write(headerOf(judge, noBT))
	for _, s := range ss {
		cw.Write(s.row(judge, noBT))
	}
	cw.Flush()
	return cw.Error()
}

// MarshalJSON encodes s with NaN values (empty groups) as null; the keys
// judged, mean_r_strategy and mean_r_out appear only when Judged > 0, and
// no_bt only when NoBT > 0.
func (s Summary) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"persuader": s.Persuader, "persuadee": s.Persuadee, "set": s.Set, "n": s.N, "failed": s.Failed,
		"accept": tablefmt.JSONFloat(s.Accept), "conditional": tablefmt.JSONFloat(s.Conditional), "pending": tablefmt.JSONFloat(s.Pending),
		"reject": tablefmt.JSONFloat(s.Reject), "truncated": tablefmt.JSONFloat(s.Truncated), "mean_r_goal": tablefmt.JSONFloat(s.MeanRGoal),
		"mean_turns": tablefmt.JSONFloat(s.MeanTurns), "mean_bt": tablefmt.JSONFloat(s.MeanBT), "moved": tablefmt.JSONFloat(s.Moved),
		"closed_given_moved": tablefmt.JSONFloat(s.ClosedGivenMoved),
	}
	if s.Judged > 0 {
		m["judged"], m["mean_r_strategy"], m["mean_r_out"] = s.Judged, tablefmt.JSONFloat(s.MeanRStrategy), tablefmt.JSONFloat(s.MeanROut)
	}
	if s.NoBT > 0 {
		m["no_bt"] = s.NoBT
	}
	return json.Marshal(m)
}

// WriteJSON writes summaries as an indented JSON array.
func WriteJSON(w io.Writer, ss []Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ss)
}
