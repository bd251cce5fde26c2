package study

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/internal/atomicfile"
	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/stats"
	"github.com/persuarena/persuarena/train"
)

// Result is a finished λ study: every cell, and the settings that made it.
type Result struct {
	Arms      []Arm
	Seeds     []uint64
	Sets      []string
	Rollouts  int
	EvalSeed  uint64
	Train     train.Config
	Resamples int
	Cells     []Cell
	// Seconds is the wall time of this call (cached cells cost ~0).
	Seconds float64
}

// All names the union of the held-out sets in Figures and Compare.
const All = "all"

// Figures are the Probe-RPO paper's Table 5 and Table 9 columns of one arm
// on one set (or All), over every seed's held-out episodes. Shares are in
// [0, 1]; NaN when undefined.
type Figures struct {
	N                                    int
	Accept, Conditional, Pending, Reject float64
	Turns, BT, Moved, ClosedGivenMoved   float64
}

// cell returns the cell of arm at seed (nil when absent).
func (r *Result) cell(arm string, seed uint64) *Cell {
	for i := range r.Cells {
		if r.Cells[i].Arm == arm && r.Cells[i].Seed == seed {
			return &r.Cells[i]
		}
	}
	return nil
}

func inSet(o Outcome, set string) bool { return set == All || o.Set == set }

// Figures summarises arm on set over the given seeds (all seeds when
// none are given).
func (r *Result) Figures(arm, set string, seeds ...uint64) Figures {
	if len(seeds) == 0 {
		seeds = r.Seeds
	}
	var f Figures
	var nb, moved, closed int
	for _, s := range seeds {
		c := r.cell(arm, s)
		if c == nil {
			continue
		}
		for _, o := range c.Outcomes {
			if !inSet(o, set) || o.Terminal == decision.TermFailed {
				continue
			}
			f.N++
			switch o.Terminal {
			case decision.TermAccept:
				f.Accept++
			case decision.TermConditional:
				f.Conditional++
			case decision.TermReject:
				f.Reject++
			default:
				f.Pending++
			}
			f.Turns += float64(o.Turns)
			if o.BT != nil {
				nb++
				f.BT += *o.BT
				if *o.BT > 0.5 {
					moved++
					if o.Terminal == decision.TermAccept {
						closed++
					}
				}
			}
		}
	}
	n := float64(f.N)
	f.Accept, f.Conditional, f.Pending, f.Reject, f.Turns = f.Accept/n, f.Conditional/n, f.Pending/n, f.Reject/n, f.Turns/n
	f.BT, f.Moved = f.BT/float64(nb), float64(moved)/float64(nb)
	f.ClosedGivenMoved = float64(closed) / float64(moved)
	return f
}

// SeedComparison is one seed's paired comparison of two arms on full
// acceptance.
type SeedComparison struct {
	Seed uint64
	// AccA and AccB are full-acceptance shares in [0, 1]; DeltaPP is
	// their difference in percentage points.
	AccA, AccB, DeltaPP float64
	// Wins counts episodes only A fully converts, Losses only B.
	Wins, Losses int
	// McNemarP is the exact two-sided McNemar p-value (stats.McNemarExact).
	McNemarP float64
}

// Comparison is the paired comparison of arm A with arm B on full
// acceptance over the same held-out episodes (same scenario, rollout and
// episode seed for both checkpoints of a training seed).
type Comparison struct {
	A, B, Set string
	PerSeed   []SeedComparison
	// Crossed is the pigeonhole bootstrap of the difference in percentage
	// points, resampling training seeds and scenarios (stats.
	// PigeonholeBootstrap; rows are seeds, columns scenarios, each cell
	// the mean over rollouts of acceptA - acceptB).
	Crossed stats.Crossed
	// SeedsAhead counts the seeds with DeltaPP > 0.
	SeedsAhead int
}

// Compare pairs arms a and b on set (or All). Errors: a missing cell,
// cells whose outcomes do not pair, or a bootstrap error.
func (r *Result) Compare(a, b, set string) (Comparison, error) {
	cmp := Comparison{A: a, B: b, Set: set}
	var matrix [][]float64
	for _, s := range r.Seeds {
		ca, cb := r.cell(a, s), r.cell(b, s)
		if ca == nil || cb == nil {
			return cmp, fmt.Errorf("study: no cell for %s or %s at seed %d", a, b, s)
		}
		if len(ca.Outcomes) != len(cb.Outcomes) {
			return cmp, fmt.Errorf("study: %s and %s have %d and %d outcomes at seed %d", a, b, len(ca.Outcomes), len(cb.Outcomes), s)
		}
		sc := SeedComparison{Seed: s}
		var row []float64
		var scen string
		n, k := 0, 0
		for i, oa := range ca.Outcomes {
			ob := cb.Outcomes[i]
			if oa.Scenario != ob.Scenario || oa.Rollout != ob.Rollout {
				return cmp, fmt.Errorf("study: outcome %d of %s and %s differ (%s/%d vs %s/%d)", i, a, b, oa.Scenario, oa.Rollout, ob.Scenario, ob.Rollout)
			}
			if !inSet(oa, set) {
				continue
			}
			xa, xb := oa.Terminal == decision.TermAccept, ob.Terminal == decision.TermAccept
			n++
			if xa {
				sc.AccA++
			}
			if xb {
				sc.AccB++
			}
			if xa && !xb {
				sc.Wins++
			}
			if xb && !xa {
				sc.Losses++
			}
			d := 0.0
			if xa != xb {
				d = 100
				if xb {
					d = -100
				}
			}
			if oa.Scenario != scen {
				if k > 0 {
					row[len(row)-1] /= float64(k)
				}
				row, scen, k = append(row, 0), oa.Scenario, 0
			}
			row[len(row)-1] += d
			k++
		}
		if k > 0 {
			row[len(row)-1] /= float64(k)
		}
		if n == 0 {
			return cmp, fmt.Errorf("study: no outcome of set %q", set)
		}
		sc.AccA /= float64(n)
		sc.AccB /= float64(n)
		sc.DeltaPP = 100 * (sc.AccA - sc.AccB)
		sc.McNemarP = stats.McNemarExact(sc.Wins, sc.Losses)
		if sc.DeltaPP > 0 {
			cmp.SeedsAhead++
		}
		cmp.PerSeed = append(cmp.PerSeed, sc)
		matrix = append(matrix, row)
	}
	var err error
	cmp.Crossed, err = stats.PigeonholeBootstrap(matrix, r.Resamples, 0.95, 1)
	return cmp, err
}

// Verdict applies the rule written before the study was run
// (docs/results.md): the Probe-RPO paper's claim that the dense term
// helps is "reproduced" only if the Treatment arm beats every Comparator
// on full acceptance over both held-out sets together, with the 95%
// pigeonhole interval of the difference above 0 and a positive
// difference in every seed. Reasons lists each comparison's outcome.
func (r *Result) Verdict() (reproduced bool, reasons []string, err error) {
	reproduced = true
	for _, b := range Comparators {
		c, err := r.Compare(Treatment, b, All)
		if err != nil {
			return false, nil, err
		}
		ok := c.Crossed.Lo > 0 && c.SeedsAhead == len(c.PerSeed)
		reproduced = reproduced && ok
		word := "beats"
		if !ok {
			word = "does not beat"
		}
		reasons = append(reasons, fmt.Sprintf("%s %s %s: %+.1f pp [%+.1f, %+.1f], ahead in %d of %d seeds",
			Treatment, word, b, c.Crossed.Estimate, c.Crossed.Lo, c.Crossed.Hi, c.SeedsAhead, len(c.PerSeed)))
	}
	return reproduced, reasons, nil
}

// canJudge reports whether the result holds the Treatment and every
// Comparator (a study run with fewer arms has no verdict).
func (r *Result) canJudge() bool {
	for _, id := range append([]string{Treatment}, Comparators...) {
		if !slices.ContainsFunc(r.Arms, func(a Arm) bool { return a.ID == id }) {
			return false
		}
	}
	return true
}

// VerdictRule is the verdict rule in words, printed with every result.
const VerdictRule = `Verdict rule (fixed before the study was run): the Probe-RPO paper's claim that the dense
term improves full acceptance is "reproduced" only if λ = 0.5 with the default (scaled) dense
term beats λ = 0 AND both controls (length-only term; belief-shuffled term), each on full
acceptance over both held-out sets together, with the 95% pigeonhole-bootstrap interval of
the paired difference (seeds and scenarios resampled) above 0 AND a positive difference in
every seed. Anything else is "not reproduced".`

// pairs are the comparisons Markdown prints: the treatment against every
// other arm, then each non-zero λ and the pooled form against λ = 0.
func (r *Result) pairs() [][2]string {
	var out [][2]string
	has := func(id string) bool {
		return slices.ContainsFunc(r.Arms, func(a Arm) bool { return a.ID == id })
	}
	if has(Treatment) {
		for _, a := range r.Arms {
			if a.ID != Treatment {
				out = append(out, [2]string{Treatment, a.ID})
			}
		}
	}
	if has("lambda0") {
		for _, a := range r.Arms {
			if a.ID != "lambda0" && a.ID != Treatment {
				out = append(out, [2]string{a.ID, "lambda0"})
			}
		}
	}
	return out
}

// Markdown writes the study's tables (the content docs/results.md
// records): settings, verdict, held-out figures per arm, per-seed full
// acceptance, paired comparisons and the dead-group figures of training.
// command is printed as the command that produced it.
func (r *Result) Markdown(w io.Writer, command string) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	g := r.Train.GRPO
	steps := 0
	if len(r.Cells) > 0 {
		steps = r.Cells[0].Steps
	}
	p("Command: `%s`\n\n", command)
	p("Settings: %d arms × %d seeds (%v); each run %d steps (G %d, %d scenarios a step, lr %g, KL %g, entropy %g, Tmax %d); held-out sets %s, %d rollouts per scenario, eval seed %d; persuadee as trained; %d bootstrap replicates.\n\n",
		len(r.Arms), len(r.Seeds), r.Seeds, steps, g.G, g.ScenariosPerStep, g.LearningRate, g.KLBeta, g.EntropyCoef, r.Train.Tmax,
		strings.Join(r.Sets, " + "), r.Rollouts, r.EvalSeed, resamples(r.Resamples))
	p("%s\n\n", VerdictRule)
	if r.canJudge() {
		ok, reasons, err := r.Verdict()
		if err != nil {
			return err
		}
		word := "not reproduced"
		if ok {
			word = "reproduced"
		}
		p("**Verdict: %s.**\n\n", word)
		for _, s := range reasons {
			p("- %s\n", s)
		}
		p("\n")
	}
	p("### Held-out results, all seeds pooled (%%; B_T, moved, closed|moved as in the Probe-RPO paper's Table 9)\n\n")
	p("| arm | λ | dense mode | what | set | n | Acc. | Cond. | Pend. | Rej. | turns | B_T | moved | closed\\|moved |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, a := range r.Arms {
		mode := string(a.Mode)
		if a.Shuffle {
			mode += " (shuffled)"
		}
		for _, set := range append(slices.Clone(r.Sets), All) {
			f := r.Figures(a.ID, set)
			p("| %s | %g | %s | %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.1f | %.1f |\n", a.ID, a.Lambda, mode, a.Note, set, f.N,
				100*f.Accept, 100*f.Conditional, 100*f.Pending, 100*f.Reject, f.Turns, f.BT, 100*f.Moved, 100*f.ClosedGivenMoved)
		}
	}
	p("\n### Full acceptance per seed (%%, both held-out sets)\n\n| arm |")
	for _, s := range r.Seeds {
		p(" seed %d |", s)
	}
	p(" mean |\n|---|")
	for range r.Seeds {
		p("---|")
	}
	p("---|\n")
	for _, a := range r.Arms {
		p("| %s |", a.ID)
		for _, s := range r.Seeds {
			p(" %.1f |", 100*r.Figures(a.ID, All, s).Accept)
		}
		p(" %.1f |\n", 100*r.Figures(a.ID, All).Accept)
	}
	p("\n### Paired comparisons on full acceptance (same held-out episodes)\n\n")
	p("Δ is A − B in percentage points; the interval and p come from the pigeonhole bootstrap over seeds and scenarios; per-seed Δ and exact McNemar p are listed in seed order.\n\n")
	p("| A | B | set | Δ pp [95%% CI] | p | seeds A > B | per-seed Δ pp | per-seed McNemar p |\n|---|---|---|---|---|---|---|---|\n")
	for _, pr := range r.pairs() {
		for _, set := range append(slices.Clone(r.Sets), All) {
			c, err := r.Compare(pr[0], pr[1], set)
			if err != nil {
				return err
			}
			var ds, ps []string
			for _, sc := range c.PerSeed {
				ds = append(ds, fmt.Sprintf("%+.1f", sc.DeltaPP))
				ps = append(ps, pval(sc.McNemarP))
			}
			p("| %s | %s | %s | %+.1f [%+.1f, %+.1f] | %s | %d / %d | %s | %s |\n", pr[0], pr[1], set, c.Crossed.Estimate, c.Crossed.Lo, c.Crossed.Hi,
				pval(c.Crossed.P), c.SeedsAhead, len(c.PerSeed), strings.Join(ds, ", "), strings.Join(ps, ", "))
		}
	}
	p("\n### Training: dead groups (Probe-RPO paper's Figure 7), means over steps and seeds\n\n")
	p("separated: λ·A_dense at turn 1 differs by more than %g within a dead group; corr: correlation of the turn-1 dense advantage with episode length inside dead groups; shortest-top: share of mixed-length dead groups whose shortest rollout gets the top dense advantage (separation by length, not belief).\n\n", g.SeparateThreshold)
	p("| arm | dead %% | separated\\|dead %% | corr(A_dense, length)\\|dead | shortest-top\\|mixed dead %% | training turns | seconds per run |\n|---|---|---|---|---|---|---|\n")
	for _, a := range r.Arms {
		var dead, sep, turns, secs, corr, top float64
		nc, nt, n := 0, 0, 0
		for _, s := range r.Seeds {
			c := r.cell(a.ID, s)
			if c == nil {
				continue
			}
			n++
			dead += c.DeadShare
			sep += c.SeparatedShare
			turns += c.TrainTurns
			secs += c.Seconds
			if c.DeadLenCorr != nil {
				corr += *c.DeadLenCorr
				nc++
			}
			if c.ShortestTop != nil {
				top += *c.ShortestTop
				nt++
			}
		}
		fn := float64(n)
		p("| %s | %.1f | %.1f | %s | %s | %.2f | %.0f |\n", a.ID, 100*dead/fn, 100*sep/fn, opt(corr, nc, 1, "%+.2f"), opt(top, nt, 100, "%.1f"), turns/fn, secs/fn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func resamples(n int) int {
	if n <= 0 {
		return 10000
	}
	return n
}

// opt formats sum/n·scale, or "-" when n is 0.
func opt(sum float64, n int, scale float64, format string) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf(format, scale*sum/float64(n))
}

func pval(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p < 1e-3:
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.2g", p)
}

// UpdateDoc replaces the section named name in the Markdown file at path
// (the lines between "<!-- BEGIN study NAME -->" and "<!-- END study
// NAME -->") with body, or appends the marked section when the file has
// none; the file is written atomically. Errors: I/O, or a BEGIN marker
// without its END.
func UpdateDoc(path, name, body string) error {
	raw, err := filelimit.ReadFile(path, filelimit.Data)
	if err != nil {
		return err
	}
	begin, end := "<!-- BEGIN study "+name+" -->", "<!-- END study "+name+" -->"
	doc := string(raw)
	block := begin + "\n" + strings.TrimRight(body, "\n") + "\n" + end
	i := strings.Index(doc, begin)
	switch {
	case i < 0:
		doc = strings.TrimRight(doc, "\n") + "\n\n" + block + "\n"
	default:
		j := strings.Index(doc[i:], end)
		if j < 0 {
			return fmt.Errorf("%s: %q has no %q", path, begin, end)
		}
		doc = doc[:i] + block + doc[i+j+len(end):]
	}
	return atomicfile.Write(path, []byte(doc))
}
