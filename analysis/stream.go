package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/reward"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// StreamOptions configures a Stream.
type StreamOptions struct {
	// Groups forms Figure 7's groups (GroupOptions, as DeadGroups takes
	// it).
	Groups GroupOptions
	// TraceScenario, when not empty, makes the Stream look for the episode
	// of that scenario id and TraceRollout for FindEpisode.
	TraceScenario string
	TraceRollout  int
	// Group, when set, is called with every Figure 7 group as it closes
	// (singletons included): its arm, step and scored rollouts in input
	// order, groups in order of first appearance (a report computes
	// Figure 7(c) from them). It must not keep the slice.
	Group func(arm Arm, step int, rollouts []*episode.Episode)
	// Ungrouped accepts a Figure 7 group's rollouts apart (any order, as
	// DeadGroups does): every group is then held until DeadGroups or
	// Flush, so memory holds every scored episode. For slices already in
	// memory.
	Ungrouped bool
}

// Stream computes Tables 6, 7 and 9, Figures 5, 6 and 7 and Table 8's
// episode choice from episodes given one at a time (Add), keeping counts
// and sums instead of the episodes: its memory grows with the number of
// arms, probes, turns per episode and Figure 7 groups, not with the number
// of episodes (it keeps one Figure 7 group's rollouts at a time, the Table
// 8 candidate, and one key per closed group to detect misordered input).
//
// The slice functions (AcceptanceByProfile, AcceptanceGrid, ConversionOf,
// ActsByTurn, BeliefTrajectories, DeadGroups) are one Stream over the
// slice, so each analysis has one implementation; the tests hold it to the
// earlier in-memory implementations exactly, floating-point sums included
// (every sum is taken in the same order), as they do LargestDenseAccepted
// and FindEpisode. DeadGroups additionally needs each group's
// rollouts together: Add returns an error when a group (arm, step,
// scenario) reappears after another group started; store.DB.EachEpisode's
// order (persuader, persuadee, scenario, rollout) satisfies this for eval
// runs and for train runs whose step grows with the rollout.
//
// The zero value is not ready: use NewStream.
type Stream struct {
	o       StreamOptions
	step    func(*episode.Episode) int
	outcome func(*episode.Episode) float64
	cfg     grpo.Config

	failed int
	// all-episode arms (Table 9).
	convArms []Arm
	conv     map[Arm]*eval.Accumulator
	// scored arms, first appearance, and the persuadees seen (labels).
	arms   []Arm
	armIdx map[Arm]int
	pees   map[string]bool

	// Table 6: per dimension value, per arm index, accepted and n.
	profile map[string]map[string][]acceptCount
	// Table 7.
	gridPers, gridPees []string
	grid               map[Arm]*acceptCount

	// Figure 5, per scored arm.
	acts []*actAcc
	// Figure 6.
	probes     []string
	byTerminal map[decision.Terminal]*trajAcc
	byArm      []*trajAcc

	// Figure 7.
	open       grpo.Groups[*episode.Episode] // Ungrouped: every group
	dead       []*deadArm
	block      []*episode.Episode
	blockKey   grpo.Key
	closed     map[grpo.Key]bool
	singletons int

	// Table 8.
	best     *episode.Episode
	bestSum  float64
	found    []*episode.Episode
	episodes int
}

type acceptCount struct{ k, n int }

type actAcc struct {
	byT  map[int]*ActPoint
	tmax int
}

type trajPoint struct {
	n       int
	sum     []float64
	sumN    []int
	bsum    float64
	beliefN int
}

type trajAcc struct {
	episodes int
	points   []trajPoint // index t
}

type deadArm struct {
	points map[int]*grpo.DeadTally
}

// NewStream returns an empty Stream.
func NewStream(o StreamOptions) *Stream {
	s := &Stream{o: o, step: o.Groups.Step, outcome: o.Groups.Outcome, cfg: grpo.DefaultConfig(),
		conv: map[Arm]*eval.Accumulator{}, armIdx: map[Arm]int{}, pees: map[string]bool{},
		profile: map[string]map[string][]acceptCount{"all": {}, "resistance": {}, "family": {}}, grid: map[Arm]*acceptCount{},
		byTerminal: map[decision.Terminal]*trajAcc{}, closed: map[grpo.Key]bool{}, bestSum: -1}
	if s.step == nil {
		s.step = func(*episode.Episode) int { return 0 }
	}
	if s.outcome == nil {
		s.outcome = func(ep *episode.Episode) float64 { return ep.OutcomeReward(reward.DefaultStrategyWeight) }
	}
	if o.Groups.Config != nil {
		s.cfg = *o.Groups.Config
	}
	return s
}

// Add counts one episode. s may keep ep (as the Table 8 candidate or in
// the current Figure 7 group): the caller must not change it afterwards.
//
// Errors: ep's Figure 7 group was already closed (the input is not
// grouped; see Stream). The episode is counted by every other analysis
// all the same.
func (s *Stream) Add(ep *episode.Episode) error {
	s.episodes++
	a := ArmOf(ep)
	if s.conv[a] == nil {
		s.conv[a] = &eval.Accumulator{}
		s.convArms = append(s.convArms, a)
	}
	s.conv[a].Add(ep.Outcome())
	if ep.Terminal == decision.TermAccept {
		if sum := sumAbsDense(ep); sum > s.bestSum {
			s.best, s.bestSum = ep, sum
		}
	}
	if s.o.TraceScenario != "" && ep.ScenarioID == s.o.TraceScenario && ep.Rollout == s.o.TraceRollout {
		s.found = append(s.found, ep)
	}
	if ep.Terminal == decision.TermFailed {
		s.failed++
		return nil
	}
	i, ok := s.armIdx[a]
	if !ok {
		i = len(s.arms)
		s.armIdx[a] = i
		s.arms = append(s.arms, a)
		s.pees[a.Persuadee] = true
		s.acts = append(s.acts, &actAcc{byT: map[int]*ActPoint{}})
		s.byArm = append(s.byArm, &trajAcc{})
	}
	accepted := 0
	if ep.Terminal == decision.TermAccept {
		accepted = 1
	}

	// Table 6.
	for _, d := range []struct{ dim, v string }{{"all", "all"}, {"resistance", label(string(ep.Resistance))}, {"family", label(string(ep.Family))}} {
		cells := s.profile[d.dim][d.v]
		for len(cells) <= i {
			cells = append(cells, acceptCount{})
		}
		cells[i].k += accepted
		cells[i].n++
		s.profile[d.dim][d.v] = cells
	}
	// Table 7.
	if !slices.Contains(s.gridPers, a.Persuader) {
		s.gridPers = append(s.gridPers, a.Persuader)
	}
	if !slices.Contains(s.gridPees, a.Persuadee) {
		s.gridPees = append(s.gridPees, a.Persuadee)
	}
	if s.grid[a] == nil {
		s.grid[a] = &acceptCount{}
	}
	s.grid[a].k += accepted
	s.grid[a].n++

	s.addActs(s.acts[i], ep)
	s.addTrajectory(ep, i)
	return s.addGroup(ep, a)
}

func (s *Stream) addActs(c *actAcc, ep *episode.Episode) {
	for _, t := range ep.Turns {
		p := c.byT[t.T]
		if p == nil {
			p = &ActPoint{T: t.T, Count: make([]int, len(tagger.Acts))}
			c.byT[t.T] = p
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
		c.tmax = max(c.tmax, t.T)
	}
}

func (s *Stream) addTrajectory(ep *episode.Episode, arm int) {
	for _, id := range probeIDs(ep) {
		if !slices.Contains(s.probes, id) {
			s.probes = append(s.probes, id)
		}
	}
	var groups []*trajAcc
	if term := ep.Terminal; slices.Contains(decision.Terminals, term) || term == decision.TermTruncated {
		if s.byTerminal[term] == nil {
			s.byTerminal[term] = &trajAcc{}
		}
		groups = append(groups, s.byTerminal[term])
	}
	groups = append(groups, s.byArm[arm])
	tmax := 0
	for _, t := range ep.Turns {
		tmax = max(tmax, t.T)
	}
	// The read-outs this episode gives at t = 0..tmax (readoutAt: the
	// initial one, then the first turn of each T).
	type readout struct {
		t      int
		states []float64
		b      *float64
	}
	outs := []readout{{0, states(ep.Initial, s.probes), ep.B0}}
	for i, tu := range ep.Turns {
		if tu.T < 1 || slices.ContainsFunc(ep.Turns[:i], func(x episode.Turn) bool { return x.T == tu.T }) {
			continue
		}
		outs = append(outs, readout{tu.T, states(tu.Probes, s.probes), tu.Belief})
	}
	for _, g := range groups {
		g.episodes++
		for len(g.points) <= tmax {
			g.points = append(g.points, trajPoint{})
		}
		for _, r := range outs {
			p := &g.points[r.t]
			p.n++
			for len(p.sum) < len(r.states) {
				p.sum = append(p.sum, 0)
				p.sumN = append(p.sumN, 0)
			}
			for k, x := range r.states {
				if !math.IsNaN(x) {
					p.sum[k] += x
					p.sumN[k]++
				}
			}
			if r.b != nil {
				p.bsum += *r.b
				p.beliefN++
			}
		}
	}
}

// addGroup files ep into the current Figure 7 group, closing the previous
// one when ep starts another.
func (s *Stream) addGroup(ep *episode.Episode, a Arm) error {
	k := grpo.KeyOf(ep, s.step(ep))
	if s.o.Ungrouped {
		s.open.Add(k, ep)
		return nil
	}
	if len(s.block) > 0 && k != s.blockKey {
		s.closeGroup()
	}
	if len(s.block) == 0 {
		if s.closed[k] {
			return fmt.Errorf("analysis: episode %s/%s rollout %d of %s at step %d comes after its Figure 7 group was closed (episodes not grouped by arm, step and scenario)",
				ep.ScenarioID, a.Persuader, ep.Rollout, a.Persuadee, k.Step)
		}
		s.blockKey = k
	}
	s.block = append(s.block, ep)
	return nil
}

func (s *Stream) closeGroup() {
	if s.o.Ungrouped {
		open := s.open
		s.open.Reset()
		for _, k := range open.Keys() {
			s.block, s.blockKey = open.Members(k), k
			s.closeBlock()
		}
		return
	}
	s.closeBlock()
}

// closeBlock closes the group held in block.
func (s *Stream) closeBlock() {
	g, k := s.block, s.blockKey
	s.block = nil
	if len(g) == 0 {
		return
	}
	s.closed[k] = true
	arm := Arm{k.Persuader, k.Persuadee}
	if s.o.Group != nil {
		s.o.Group(arm, k.Step, g)
	}
	i := s.armIdx[arm]
	for len(s.dead) <= i {
		s.dead = append(s.dead, &deadArm{points: map[int]*grpo.DeadTally{}})
	}
	p := s.dead[i].points[k.Step]
	if p == nil {
		p = &grpo.DeadTally{}
		s.dead[i].points[k.Step] = p
	}
	if len(g) < 2 {
		s.singletons++
		return
	}
	p.Add(groupStats(g, s.outcome, s.cfg), 0)
}

// labels are the scored arms' labels (Arms).
func (s *Stream) labels() []string {
	var out []string
	for _, a := range s.arms {
		if len(s.pees) > 1 {
			out = append(out, a.String())
		} else {
			out = append(out, a.Persuader)
		}
	}
	return out
}

// Arms returns the arms of the scored episodes added so far, in order of
// first appearance, and their labels, as Arms gives them for the scored
// episodes of a slice.
func (s *Stream) Arms() ([]Arm, []string) { return slices.Clone(s.arms), s.labels() }

// Flush closes the Figure 7 group in progress (calling Group for it):
// call it after the last Add when using Group without DeadGroups.
func (s *Stream) Flush() { s.closeGroup() }

// Episodes counts the episodes added, failed ones included.
func (s *Stream) Episodes() int { return s.episodes }

// Failed counts the failed episodes added.
func (s *Stream) Failed() int { return s.failed }

// AcceptanceByProfile returns Table 6 of the episodes added so far.
func (s *Stream) AcceptanceByProfile() ProfileAcceptance {
	out := ProfileAcceptance{Arms: slices.Clone(s.arms), Labels: s.labels(), Failed: s.failed}
	for _, d := range []struct {
		name  string
		known []string
	}{{"all", []string{"all"}}, {"resistance", strs(scenario.Resistances)}, {"family", strs(scenario.Families)}} {
		present := map[string]bool{}
		for v := range s.profile[d.name] {
			present[v] = true
		}
		var values []string
		for _, v := range d.known {
			if present[v] || d.name == "all" { // Table 6 always has its "all" row
				values = append(values, v)
				delete(present, v)
			}
		}
		var rest []string
		for v := range present {
			rest = append(rest, v)
		}
		slices.Sort(rest)
		for _, v := range append(values, rest...) {
			row := ProfileRow{Dimension: d.name, Value: v}
			cells := s.profile[d.name][v]
			for i := range s.arms {
				c := acceptCount{}
				if i < len(cells) {
					c = cells[i]
				}
				row.Cells = append(row.Cells, NewRate(c.k, c.n))
			}
			out.Rows = append(out.Rows, row)
		}
	}
	return out
}

// AcceptanceGrid returns Table 7 of the episodes added so far.
func (s *Stream) AcceptanceGrid() Grid {
	g := Grid{Persuaders: slices.Clone(s.gridPers), Persuadees: slices.Clone(s.gridPees), Failed: s.failed}
	g.Cells = make([][]Rate, len(g.Persuaders))
	for i, per := range g.Persuaders {
		for _, pee := range g.Persuadees {
			c := acceptCount{}
			if p := s.grid[Arm{per, pee}]; p != nil {
				c = *p
			}
			g.Cells[i] = append(g.Cells[i], NewRate(c.k, c.n))
		}
	}
	return g
}

// ConversionOf returns Table 9 of the episodes added so far.
func (s *Stream) ConversionOf() Conversion {
	c := Conversion{Arms: slices.Clone(s.convArms)}
	for _, a := range s.convArms {
		c.Rows = append(c.Rows, s.conv[a].Summary(a.Persuader, a.Persuadee, ""))
	}
	return c
}

// ActsByTurn returns Figure 5's data of the episodes added so far.
func (s *Stream) ActsByTurn() ActCurves {
	c := ActCurves{Failed: s.failed}
	for _, a := range tagger.Acts {
		c.Acts = append(c.Acts, a.String())
	}
	labels := s.labels()
	for i, a := range s.arms {
		ser := ActSeries{Arm: a, Label: labels[i]}
		acc := s.acts[i]
		for t := 1; t <= acc.tmax; t++ {
			if p := acc.byT[t]; p != nil {
				q := ActPoint{T: p.T, N: p.N, Count: slices.Clone(p.Count), Share: make([]float64, len(p.Count))}
				for k, n := range q.Count {
					q.Share[k] = float64(n) / float64(q.N)
				}
				ser.Points = append(ser.Points, q)
			}
		}
		c.Series = append(c.Series, ser)
	}
	return c
}

// BeliefTrajectories returns Figure 6's data of the episodes added so far.
func (s *Stream) BeliefTrajectories() Trajectories {
	tr := Trajectories{Probes: slices.Clone(s.probes), Failed: s.failed}
	for _, term := range append(slices.Clone(decision.Terminals), decision.TermTruncated) {
		if g := s.byTerminal[term]; g != nil {
			c := g.trajectory(string(term), len(s.probes))
			c.Terminal = term
			tr.ByTerminal = append(tr.ByTerminal, c)
		}
	}
	labels := s.labels()
	for i, a := range s.arms {
		c := s.byArm[i].trajectory(labels[i], len(s.probes))
		c.Arm = a
		tr.ByArm = append(tr.ByArm, c)
	}
	return tr
}

func (g *trajAcc) trajectory(label string, probes int) Trajectory {
	c := Trajectory{Label: label, Episodes: g.episodes}
	for t, q := range g.points {
		p := TrajectoryPoint{T: t, N: q.n, States: make([]float64, probes), StateN: make([]int, probes)}
		for k := range p.States {
			sum, n := 0.0, 0
			if k < len(q.sum) {
				sum, n = q.sum[k], q.sumN[k]
			}
			p.States[k], p.StateN[k] = mean(sum, n), n
		}
		p.Belief, p.BeliefN = mean(q.bsum, q.beliefN), q.beliefN
		c.Points = append(c.Points, p)
	}
	return c
}

// DeadGroups returns Figure 7's data of the episodes added so far (it
// closes the group in progress: add no episode of it afterwards).
func (s *Stream) DeadGroups() DeadGroupStats {
	s.closeGroup()
	st := DeadGroupStats{Singletons: s.singletons, Failed: s.failed}
	labels := s.labels()
	for i, a := range s.arms {
		var all grpo.DeadTally
		if i < len(s.dead) {
			var steps []int
			for step := range s.dead[i].points {
				steps = append(steps, step)
			}
			slices.Sort(steps)
			for _, step := range steps {
				p := *s.dead[i].points[step]
				all.Merge(p)
				st.Points = append(st.Points, deadPoint(a, labels[i], step, p))
			}
		}
		st.Overall = append(st.Overall, deadPoint(a, labels[i], -1, all))
	}
	return st
}

// LargestDenseAccepted is LargestDenseAccepted(eps, "") over the episodes
// added so far, with its error.
func (s *Stream) LargestDenseAccepted() (*episode.Episode, error) {
	if s.best == nil {
		return nil, fmt.Errorf("no fully accepted episode to trace; choose one with --scenario and --rollout")
	}
	return s.best, nil
}

// FindEpisode is FindEpisode(eps, "", TraceScenario, TraceRollout) over the
// episodes added so far, with its errors.
func (s *Stream) FindEpisode() (*episode.Episode, error) {
	return FindEpisode(s.found, "", s.o.TraceScenario, s.o.TraceRollout)
}

// sliceStream feeds eps, in order, to a new Stream with options o; the
// slice functions (AcceptanceByProfile, DeadGroups, ...) are this Stream's
// results, so each analysis has one implementation. o.Ungrouped must be
// set, since a slice's Figure 7 groups need not be contiguous; Add then
// never fails.
func sliceStream(eps []*episode.Episode, o StreamOptions) *Stream {
	s := NewStream(o)
	for _, ep := range eps {
		_ = s.Add(ep) // Ungrouped: no grouping error to report
	}
	s.Flush()
	return s
}
