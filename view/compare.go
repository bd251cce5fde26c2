package view

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/store"
)

// compareForm is the compare page's choice: runs A and B, one persuader
// per side, the persuadee and whether only changed pairs are listed.
type compareForm struct {
	A, B, PA, PB, Persuadee string
	Changed                 bool
}

// parseCompareForm reads the form from a query string (kv's names).
func parseCompareForm(q url.Values) compareForm {
	return compareForm{A: q.Get("a"), B: q.Get("b"), PA: q.Get("pa"), PB: q.Get("pb"), Persuadee: q.Get("persuadee"), Changed: q.Get("changed") != ""}
}

func (f compareForm) kv() []string {
	ch := ""
	if f.Changed {
		ch = "1"
	}
	return []string{"a", f.A, "b", f.B, "pa", f.PA, "pb", f.PB, "persuadee", f.Persuadee, "changed", ch}
}

// pairRow is one (scenario, rollout, persuadee) pair of two runs.
type pairRow struct {
	ScenarioID     string
	Rollout        int
	A, B           decision.Terminal
	RGoalA, RGoalB float64
	Changed        bool
	URL            string
}

// transitionRow is one row of the transition table: the pairs whose A
// side ended in From, counted by B's terminal state (transitionCols).
type transitionRow struct {
	From   decision.Terminal
	Counts []int
	Total  int
}

// transitionCols order the transition table's rows and columns.
var transitionCols = append(slices.Clone(outcomeCols), decision.TermFailed)

type comparePage struct {
	head
	Form                   compareForm
	Runs                   []string
	PersuadersA            []string
	PersuadersB            []string
	Persuadees             []string
	Ready                  bool
	Cols                   []decision.Terminal
	Transitions            []transitionRow
	Paired, Changed        int
	OnlyA, OnlyB           int
	AcceptA, AcceptB       share
	Stats                  string
	Pairs                  []pairRow
	From, To, Shown        int
	Prev, Next             string
	RunAURL, RunBURL       string
	ChangedURL, AllURL     string
	StatsNote              string
	ShowStats              bool
	DeltaPP, DeltaCI, PVal string
	Wins, Losses           int
}

// maxStatsPairs bounds the pairs the page bootstraps (analysis.CompareOutcomes
// with statsResamples resamples); larger comparisons point to persuarena
// compare instead, to keep the page fast.
const (
	maxStatsPairs  = 20000
	statsResamples = 2000
)

// armsOf returns the run's persuaders and persuadees, sorted.
func (s *Server) armsOf(ctx context.Context, runID string) (pers, pees []string, err error) {
	arms, err := s.st.Arms(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range arms {
		if !slices.Contains(pers, a.Persuader) {
			pers = append(pers, a.Persuader)
		}
		if !slices.Contains(pees, a.Persuadee) {
			pees = append(pees, a.Persuadee)
		}
	}
	slices.Sort(pees)
	return pers, pees, nil
}

// outcomes reads one side's outcomes.
func (s *Server) outcomes(ctx context.Context, runID, per, pee string) ([]episode.Outcome, error) {
	var list []episode.Outcome
	err := s.st.EachOutcome(ctx, runID, func(o episode.Outcome) error {
		list = append(list, o)
		return nil
	}, store.Filter{Persuader: per, Persuadee: pee})
	return list, err
}

// handleCompare serves /compare: the choice of two runs and their arms,
// and once chosen, their paired outcomes (transitions, acceptance, the
// paired statistics, the pairs a page at a time).
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	f := parseCompareForm(q)
	p := comparePage{head: head{Title: "Compare runs", DB: s.dbPath}, Cols: transitionCols}
	rs, err := s.st.ListRuns(ctx)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	for _, run := range rs {
		p.Runs = append(p.Runs, run.ID)
	}
	if f.A == "" || f.B == "" {
		p.Form = f
		s.render(w, http.StatusOK, "compare", p)
		return
	}
	if err := s.chooseArms(ctx, &p, &f); err != nil {
		s.storeError(w, err)
		return
	}
	if f.PA == "" || f.PB == "" || f.Persuadee == "" {
		s.render(w, http.StatusOK, "compare", p)
		return
	}
	page := 1
	if v := q.Get("page"); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 1 || page > maxPage {
			s.fail(w, http.StatusBadRequest, "page %q: want a number in [1, %d]", v, maxPage)
			return
		}
	}
	la, err := s.outcomes(ctx, f.A, f.PA, f.Persuadee)
	if err != nil {
		s.storeError(w, err)
		return
	}
	lb, err := s.outcomes(ctx, f.B, f.PB, f.Persuadee)
	if err != nil {
		s.storeError(w, err)
		return
	}
	pg, err := analysis.Pair(la, lb)
	if err != nil { // one arm per side by the filter; a repeated key is a store fault
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	p.Ready = true
	all := p.tally(pg, f)
	p.paginate(all, page, f)
	s.render(w, http.StatusOK, "compare", p)
}

// chooseArms fills p's persuader and persuadee choices from runs f.A and
// f.B and settles f's choices: one a (newly chosen) run does not hold
// falls back to the default, A's first persuader; on B the same persuader
// when B has it, else B's first; the first persuadee both runs hold.
// Errors: the store's.
func (s *Server) chooseArms(ctx context.Context, p *comparePage, f *compareForm) error {
	var peesA, peesB []string
	var err error
	if p.PersuadersA, peesA, err = s.armsOf(ctx, f.A); err != nil {
		return err
	}
	if p.PersuadersB, peesB, err = s.armsOf(ctx, f.B); err != nil {
		return err
	}
	for _, pee := range peesA {
		if slices.Contains(peesB, pee) {
			p.Persuadees = append(p.Persuadees, pee)
		}
	}
	if !slices.Contains(p.PersuadersA, f.PA) {
		f.PA = ""
	}
	if !slices.Contains(p.PersuadersB, f.PB) {
		f.PB = ""
	}
	if !slices.Contains(p.Persuadees, f.Persuadee) {
		f.Persuadee = ""
	}
	if f.PA == "" && len(p.PersuadersA) > 0 {
		f.PA = p.PersuadersA[0]
	}
	if f.PB == "" && len(p.PersuadersB) > 0 {
		f.PB = p.PersuadersB[0]
		if slices.Contains(p.PersuadersB, f.PA) {
			f.PB = f.PA
		}
	}
	if f.Persuadee == "" && len(p.Persuadees) > 0 {
		f.Persuadee = p.Persuadees[0]
	}
	p.Form = *f
	p.RunAURL, p.RunBURL = "/runs/"+f.A, "/runs/"+f.B
	return nil
}

// tally fills p's transition table, counts and acceptance shares from the
// pairing pg and the paired statistics (up to maxStatsPairs scored
// pairs), and returns every pair's row in Pair's order (scenario id, then
// rollout).
func (p *comparePage) tally(pg analysis.Pairing, f compareForm) []pairRow {
	idx := map[decision.Terminal]int{}
	for i, t := range transitionCols {
		idx[t] = i
		p.Transitions = append(p.Transitions, transitionRow{From: t, Counts: make([]int, len(transitionCols))})
	}
	var all []pairRow
	var accA, accB, scored int
	for _, k := range pg.Common {
		oa, ob := pg.A[k], pg.B[k]
		pr := pairRow{ScenarioID: k.ScenarioID, Rollout: k.Rollout, A: oa.Terminal, B: ob.Terminal,
			RGoalA: oa.RGoal, RGoalB: ob.RGoal, Changed: oa.Terminal != ob.Terminal}
		pr.URL = query("/compare/episode", append(f.kv(), "scenario", k.ScenarioID, "rollout", strconv.Itoa(k.Rollout))...)
		all = append(all, pr)
		if i, ok := idx[oa.Terminal]; ok {
			if j, ok := idx[ob.Terminal]; ok {
				p.Transitions[i].Counts[j]++
				p.Transitions[i].Total++
			}
		}
		if pr.Changed {
			p.Changed++
		}
		if oa.Terminal != decision.TermFailed && ob.Terminal != decision.TermFailed {
			scored++
			if oa.Terminal == decision.TermAccept {
				accA++
			}
			if ob.Terminal == decision.TermAccept {
				accB++
			}
		}
	}
	p.OnlyA, p.OnlyB = len(pg.OnlyA), len(pg.OnlyB)
	p.Paired = len(all)
	p.AcceptA, p.AcceptB = newShare(accA, scored), newShare(accB, scored)
	switch {
	case scored == 0:
		p.StatsNote = "no pair with both sides scored"
	case scored > maxStatsPairs:
		p.StatsNote = fmt.Sprintf("%d pairs: run persuarena compare for the paired statistics", scored)
	default:
		c, err := analysis.ComparePairing(f.A, f.B, pg, analysis.CompareOptions{Intersection: true, Seed: 1, Resamples: statsResamples})
		if err != nil {
			p.StatsNote = err.Error()
			break
		}
		p.ShowStats = true
		p.DeltaPP = fmt.Sprintf("%+.1f pp", c.DeltaPP)
		p.DeltaCI = fmt.Sprintf("[%+.1f, %+.1f]", c.DeltaCI.Lo, c.DeltaCI.Hi)
		p.PVal = fmt.Sprintf("%.3g", c.McNemarP)
		p.Wins, p.Losses = c.Wins, c.Losses
	}
	return all
}

// paginate shows page (1-based, pageSize pairs) of all, or of the changed
// pairs only when f.Changed, with the links to the neighbouring pages and
// to the two filters.
func (p *comparePage) paginate(all []pairRow, page int, f compareForm) {
	list := all
	if f.Changed {
		list = slices.DeleteFunc(slices.Clone(all), func(pr pairRow) bool { return !pr.Changed })
	}
	p.Shown = len(list)
	lo := min((page-1)*pageSize, len(list))
	hi := min(lo+pageSize, len(list))
	p.Pairs = list[lo:hi]
	if hi > lo {
		p.From, p.To = lo+1, hi
	}
	if page > 1 {
		p.Prev = query("/compare", append(f.kv(), "page", strconv.Itoa(page-1))...)
	}
	if hi < len(list) {
		p.Next = query("/compare", append(f.kv(), "page", strconv.Itoa(page+1))...)
	}
	fc := f
	fc.Changed = true
	p.ChangedURL = query("/compare", fc.kv()...)
	fc.Changed = false
	p.AllURL = query("/compare", fc.kv()...)
}

type pairPage struct {
	head
	Form       compareForm
	BackURL    string
	ScenarioID string
	Rollout    int
	A, B       episodeView
	RunAURL    string
	RunBURL    string
}

func (s *Server) handleCompareEpisode(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	f := parseCompareForm(q)
	sc := q.Get("scenario")
	roll, err := strconv.Atoi(q.Get("rollout"))
	if f.A == "" || f.B == "" || f.PA == "" || f.PB == "" || f.Persuadee == "" || sc == "" || err != nil || roll < 0 {
		s.fail(w, http.StatusBadRequest, "want a, b, pa, pb, persuadee, scenario and rollout (a number >= 0)")
		return
	}
	ea, err := s.loadEpisode(ctx, f.A, episode.Key{Persuader: f.PA, Persuadee: f.Persuadee, ScenarioID: sc, Rollout: roll})
	if err != nil {
		s.storeError(w, err)
		return
	}
	eb, err := s.loadEpisode(ctx, f.B, episode.Key{Persuader: f.PB, Persuadee: f.Persuadee, ScenarioID: sc, Rollout: roll})
	if err != nil {
		s.storeError(w, err)
		return
	}
	p := pairPage{head: head{Title: fmt.Sprintf("Pair %s#%d", sc, roll), DB: s.dbPath}, Form: f,
		BackURL: query("/compare", f.kv()...), ScenarioID: sc, Rollout: roll,
		A: newEpisodeView(ea), B: newEpisodeView(eb),
		RunAURL: episodeURL(f.A, episode.KeyOf(ea)), RunBURL: episodeURL(f.B, episode.KeyOf(eb))}
	s.render(w, http.StatusOK, "pair", p)
}
