package analysis

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/probe"
)

// Table 6 on the hand-built run (failed e9 excluded):
//
//	          alpha            beta
//	all       e1,e3 of 4 = 50  e6 of 4 = 25
//	EB        e1 of e1,e2 = 50 e6 of e5,e6 = 50
//	IT        e3 of e3,e4 = 50 none of e7,e8 = 0
//	hc        e1,e3 = 2/2 100  none of e5,e7 = 0
//	education 0/2 = 0          e6 of e6,e8 = 50
//
// Wilson 95% (z = 1.96): 1/2 -> [0.0945, 0.9055]; 2/4 -> [0.1500, 0.8500];
// 1/4 -> [0.0456, 0.6994]; 2/2 -> [0.3424, 1]; 0/2 -> [0, 0.6576]
// (centre (p + z²/2n)/(1 + z²/n), half-width z/(1 + z²/n) sqrt(p(1-p)/n + z²/4n²)).
func TestAcceptanceByProfile(t *testing.T) {
	p := AcceptanceByProfile(handBuilt())
	if p.Failed != 1 {
		t.Errorf("Failed = %d, want 1", p.Failed)
	}
	if !reflect.DeepEqual(p.Labels, []string{"alpha", "beta"}) {
		t.Fatalf("labels %v", p.Labels)
	}
	type cell struct{ k, n int }
	want := []struct {
		dim, val    string
		alpha, beta cell
	}{
		{"all", "all", cell{2, 4}, cell{1, 4}},
		{"resistance", "EB", cell{1, 2}, cell{1, 2}},
		{"resistance", "IT", cell{1, 2}, cell{0, 2}},
		{"family", "healthcare", cell{2, 2}, cell{0, 2}},
		{"family", "education", cell{0, 2}, cell{1, 2}},
	}
	if len(p.Rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(p.Rows), len(want), p.Rows)
	}
	for i, w := range want {
		r := p.Rows[i]
		if r.Dimension != w.dim || r.Value != w.val {
			t.Errorf("row %d = %s/%s, want %s/%s", i, r.Dimension, r.Value, w.dim, w.val)
		}
		for j, c := range []cell{w.alpha, w.beta} {
			got := r.Cells[j]
			if got.Accepted != c.k || got.N != c.n || !near(got.Rate, float64(c.k)/float64(c.n), 1e-12) {
				t.Errorf("row %s col %d = %d/%d (%v), want %d/%d", w.val, j, got.Accepted, got.N, got.Rate, c.k, c.n)
			}
		}
	}
	ci := []struct {
		r      Rate
		lo, hi float64
	}{
		{p.Rows[1].Cells[0], 0.0945, 0.9055}, {p.Rows[0].Cells[0], 0.1500, 0.8500},
		{p.Rows[0].Cells[1], 0.0456, 0.6994}, {p.Rows[3].Cells[0], 0.3424, 1}, {p.Rows[3].Cells[1], 0, 0.6576},
	}
	for _, c := range ci {
		if !near(c.r.Lo, c.lo, 1e-4) || !near(c.r.Hi, c.hi, 1e-4) {
			t.Errorf("Wilson %d/%d = [%.4f, %.4f], want [%.4f, %.4f]", c.r.Accepted, c.r.N, c.r.Lo, c.r.Hi, c.lo, c.hi)
		}
	}
	var b bytes.Buffer
	p.Table().WriteText(&b)
	for _, line := range []string{
		"dimension   value       alpha acc%  alpha n  beta acc%  beta n",
		"all         all               50.0        4       25.0       4",
		"resistance  IT                50.0        2        0.0       2",
		"family      healthcare       100.0        2        0.0       2",
		"note: 1 failed episode(s) excluded",
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("Table 6 text lacks %q:\n%s", line, b.String())
		}
	}
}

// Table 7: with one more episode (alpha vs "llm" on s1, accepted) the grid
// is alpha: sim 2/4 = 50.0, llm 1/1 = 100.0; beta: sim 1/4 = 25.0, llm not
// played ("-", n 0). Table 6's columns then name both roles.
func TestAcceptanceGrid(t *testing.T) {
	eps := append(handBuilt(), mk("alpha", "llm", "s1", 0, EB, hc, decision.TermAccept, same(0.5), tt(same(0.9))))
	g := AcceptanceGrid(eps)
	if !reflect.DeepEqual(g.Persuaders, []string{"alpha", "beta"}) || !reflect.DeepEqual(g.Persuadees, []string{"sim", "llm"}) {
		t.Fatalf("grid axes %v × %v", g.Persuaders, g.Persuadees)
	}
	want := [2][2][2]int{{{2, 4}, {1, 1}}, {{1, 4}, {0, 0}}}
	for i := range 2 {
		for j := range 2 {
			c := g.Cells[i][j]
			if c.Accepted != want[i][j][0] || c.N != want[i][j][1] {
				t.Errorf("cell %d,%d = %d/%d, want %d/%d", i, j, c.Accepted, c.N, want[i][j][0], want[i][j][1])
			}
		}
	}
	if !math.IsNaN(g.Cells[1][1].Rate) {
		t.Errorf("unplayed cell rate %v, want NaN", g.Cells[1][1].Rate)
	}
	var b bytes.Buffer
	g.Table().WriteText(&b)
	for _, line := range []string{"persuader  sim acc%  sim n  llm acc%  llm n", "alpha          50.0      4     100.0      1", "beta           25.0      4         -      0"} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("Table 7 text lacks %q:\n%s", line, b.String())
		}
	}
	if _, labels := Arms(eps); labels[0] != "alpha vs sim" || labels[2] != "alpha vs llm" {
		t.Errorf("labels with two persuadees: %v", labels)
	}
}

// Table 9 via eval.Summarize:
//
//	alpha: acc e1,e3 = 50, rej e2 = 25, pend e4 = 25; turns (2+1+1+3)/4 =
//	1.75; B_T .9 .2 .9 .6 -> mean .65; moved e1,e3,e4 = 75%; closed|moved
//	2/3 = 66.7%.
//	beta: acc/cond/pend/rej 25 each; turns 1.75; B_T .7 1 .1 (e8's last
//	read-out is unreadable: no B_T, never its earlier .5) -> mean .6;
//	moved e5,e6 = 2/3; closed|moved 1/2; failed 1.
func TestConversion(t *testing.T) {
	c := ConversionOf(handBuilt())
	if len(c.Rows) != 2 {
		t.Fatalf("%d rows", len(c.Rows))
	}
	a, b := c.Rows[0], c.Rows[1]
	checks := []struct {
		name      string
		got, want float64
	}{
		{"alpha acc", a.Accept, 0.5}, {"alpha rej", a.Reject, 0.25}, {"alpha pend", a.Pending, 0.25},
		{"alpha turns", a.MeanTurns, 1.75}, {"alpha B_T", a.MeanBT, 0.65}, {"alpha moved", a.Moved, 0.75},
		{"alpha closed|moved", a.ClosedGivenMoved, 2.0 / 3}, {"beta acc", b.Accept, 0.25}, {"beta cond", b.Conditional, 0.25},
		{"beta B_T", b.MeanBT, 0.6}, {"beta moved", b.Moved, 2.0 / 3}, {"beta closed|moved", b.ClosedGivenMoved, 0.5},
	}
	for _, x := range checks {
		if !near(x.got, x.want, 1e-12) {
			t.Errorf("%s = %v, want %v", x.name, x.got, x.want)
		}
	}
	if b.Failed != 1 || b.N != 4 {
		t.Errorf("beta N/failed = %d/%d, want 4/1", b.N, b.Failed)
	}
	var buf bytes.Buffer
	c.Table().WriteText(&buf)
	if !strings.Contains(buf.String(), "alpha      sim        4  50.0    0.0   25.0  25.0    1.8  +0.65    75.0           66.7       0\n") {
		t.Errorf("Table 9 text:\n%s", buf.String())
	}
}

// Figure 5 acts by turn:
//
//	alpha t1: e1 diag, e2 commit, e3 evid+auton, e4 diag -> n 4: diag 50,
//	  evid 25, plan 0, commit 25, auton 25
//	alpha t2: e1 plan+commit, e4 none -> n 2: plan 50, commit 50
//	alpha t3: e4 diag+evid -> n 1: diag 100, evid 100
//	beta t1: e5 commit, e6 evid, e7 commit, e8 none -> n 4: evid 25, commit 50
//	beta t2: e5 commit+plan, e8 none -> n 2: plan 50, commit 50
//	beta t3: e8 none -> n 1: all 0          (failed e9 excluded)
func TestActsByTurn(t *testing.T) {
	c := ActsByTurn(handBuilt())
	if !reflect.DeepEqual(c.Acts, []string{"diagnostic", "evidence", "plan", "commitment", "autonomy"}) {
		t.Fatalf("acts %v", c.Acts)
	}
	want := map[string][][6]float64{ // n, then shares in act order
		"alpha": {{4, .5, .25, 0, .25, .25}, {2, 0, 0, .5, .5, 0}, {1, 1, 1, 0, 0, 0}},
		"beta":  {{4, 0, .25, 0, .5, 0}, {2, 0, 0, .5, .5, 0}, {1, 0, 0, 0, 0, 0}},
	}
	if len(c.Series) != 2 || c.Failed != 1 {
		t.Fatalf("%d series, failed %d", len(c.Series), c.Failed)
	}
	for _, s := range c.Series {
		w := want[s.Label]
		if len(s.Points) != len(w) {
			t.Fatalf("%s: %d points, want %d", s.Label, len(s.Points), len(w))
		}
		for i, p := range s.Points {
			if p.T != i+1 || p.N != int(w[i][0]) {
				t.Errorf("%s point %d: t %d n %d, want t %d n %v", s.Label, i, p.T, p.N, i+1, w[i][0])
			}
			for k, sh := range p.Share {
				if !near(sh, w[i][k+1], 1e-12) {
					t.Errorf("%s t%d %s = %v, want %v", s.Label, p.T, c.Acts[k], sh, w[i][k+1])
				}
			}
		}
	}
}

// Figure 6 trajectories (s = 2p - 1):
//
//	accept (e1, e3, e6): t0 ca (0 - .2 + 0)/3 = -.0667 (same for pe, ac),
//	  B (.5+.4+.5)/3 = .4667; t1 ca (.4+.8+1)/3 = .7333, pe (0+.8+1)/3 = .6,
//	  ac (.2+.8+1)/3 = .6667, B (.6+.9+1)/3 = .8333; t2 (e1 only, n 1)
//	  ca .8 pe .6 ac 1, B .9.
//	pending (e4, e8): t0 ca 0 (2 readings), pe 0 (1: e4's pe unreadable),
//	  B .5; t3 only e4 readable: ca .2 (1 reading), B .6 (1), n 2.
//	alpha (all terminals): t0 pe over e1,e2,e3 = (0+0-.2)/3 = -.0667 (3
//	  readings), ca over all four = -.05, B (.5+.5+.4+.5)/4 = .475.
func TestBeliefTrajectories(t *testing.T) {
	tr := BeliefTrajectories(handBuilt())
	if !reflect.DeepEqual(tr.Probes, []string{"ca", "pe", "ac"}) {
		t.Fatalf("probes %v", tr.Probes)
	}
	var labels []string
	for _, c := range tr.ByTerminal {
		labels = append(labels, c.Label)
	}
	if !reflect.DeepEqual(labels, []string{"accept", "conditional", "pending", "reject"}) {
		t.Fatalf("terminal groups %v", labels)
	}
	acc, pend := tr.ByTerminal[0], tr.ByTerminal[2]
	if acc.Episodes != 3 || len(acc.Points) != 3 {
		t.Fatalf("accept: %d episodes, %d points", acc.Episodes, len(acc.Points))
	}
	type pt struct {
		c      Trajectory
		t      int
		n      int
		states [3]float64
		statN  [3]int
		b      float64
		bn     int
	}
	third := 1.0 / 3
	for _, w := range []pt{
		{acc, 0, 3, [3]float64{-0.2 * third, -0.2 * third, -0.2 * third}, [3]int{3, 3, 3}, 1.4 * third, 3},
		{acc, 1, 3, [3]float64{2.2 * third, 0.6, 2.0 * third}, [3]int{3, 3, 3}, 2.5 * third, 3},
		{acc, 2, 1, [3]float64{0.8, 0.6, 1}, [3]int{1, 1, 1}, 0.9, 1},
		{pend, 0, 2, [3]float64{0, 0, 0}, [3]int{2, 1, 2}, 0.5, 2},
		{pend, 3, 2, [3]float64{0.2, 0.2, 0.2}, [3]int{1, 1, 1}, 0.6, 1},
		{tr.ByArm[0], 0, 4, [3]float64{-0.05, -0.2 * third, -0.05}, [3]int{4, 3, 4}, 0.475, 4},
	} {
		p := w.c.Points[w.t]
		if p.T != w.t || p.N != w.n || p.BeliefN != w.bn || !near(p.Belief, w.b, 1e-12) {
			t.Errorf("%s t%d: n %d B %v (%d), want n %d B %v (%d)", w.c.Label, w.t, p.N, p.Belief, p.BeliefN, w.n, w.b, w.bn)
		}
		for k := range 3 {
			if !near(p.States[k], w.states[k], 1e-12) || p.StateN[k] != w.statN[k] {
				t.Errorf("%s t%d %s = %v (%d), want %v (%d)", w.c.Label, w.t, tr.Probes[k], p.States[k], p.StateN[k], w.states[k], w.statN[k])
			}
		}
	}
}

// Seed 000 Table 8's trace (probe states per turn, B_0 from all probes at
// -1): turns 3 and 4 carry 95.9% of sum |r_dense| in the paper. From the
// printed two-decimal states, B_t = (1 + mean_k s)/2 is 0, 0, .01, .725,
// .97, 1, so r = 0, .01, .715, .245, .03 (sum 1) and the share is
// (.715 + .245)/1 = 96.0%, within the ±0.003 of the Probe-RPO paper.
func TestTraceTable8(t *testing.T) {
	rows := [][3]float64{{-1, -1, -1}, {-0.98, -1, -0.96}, {0.99, -0.64, 1}, {0.91, 0.91, 1}, {1, 1, 1}}
	p := func(s [3]float64) [3]float64 { return [3]float64{(1 + s[0]) / 2, (1 + s[1]) / 2, (1 + s[2]) / 2} }
	var turns []turnSpec
	for _, r := range rows {
		turns = append(turns, tt(p(r)))
	}
	ep := mk("probe-rpo", "qwen3-14b", "112", 0, IT, hc, decision.TermAccept, p([3]float64{-1, -1, -1}), turns...)
	tr := TraceOf(ep)
	if math.Abs(tr.TopTwoShare-0.959) > 0.003 {
		t.Errorf("top-two share %.4f, Table 8 says 0.959", tr.TopTwoShare)
	}
	if !reflect.DeepEqual(tr.TopTurns, []int{3, 4}) {
		t.Errorf("top turns %v, want [3 4]", tr.TopTurns)
	}
	if len(tr.Rows) != 6 || !math.IsNaN(tr.Rows[0].Dense) || !near(tr.Rows[0].Belief, 0, 1e-12) {
		t.Fatalf("rows %+v", tr.Rows)
	}
	for i, r := range rows {
		for k := range 3 {
			if !near(tr.Rows[i+1].States[k], r[k], 1e-12) {
				t.Errorf("t%d state %d = %v, want %v", i+1, k, tr.Rows[i+1].States[k], r[k])
			}
		}
	}
	// r_3 = (0.99 - 0.64 + 1 - (-0.98 - 1 - 0.96)) / 6 = 0.71667.
	if !near(tr.Rows[3].Dense, (0.99-0.64+1+0.98+1+0.96)/6, 1e-12) {
		t.Errorf("r_3 = %v", tr.Rows[3].Dense)
	}
	var b bytes.Buffer
	tr.Table().WriteText(&b)
	for _, s := range []string{"3  -     +0.99  -0.64  +1.00  0.725   +0.715  continue", "note: turns 3 and 4 carry 96.0% of sum |r_dense| = 1.000"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("Table 8 text lacks %q:\n%s", s, b.String())
		}
	}
}

// Automatic selection: accepted episodes e1 (|r| .1 + .3 = .4), e3 (.9 -
// .4, which is 0.49999999999999994 in float) and e6 (1 - .5 = .5 exactly):
// e6 overall, e3 for alpha. Ties go to the first episode. A missing state
// prints as "-".
func TestTraceSelection(t *testing.T) {
	eps := handBuilt()
	ep, err := LargestDenseAccepted(eps, "")
	if err != nil || ep != eps[5] {
		t.Fatalf("auto pick = %v, %v; want e6", ep, err)
	}
	if ep, _ := LargestDenseAccepted(eps, "alpha"); ep != eps[2] {
		t.Errorf("alpha pick = %+v, want e3", ep)
	}
	twin := *eps[5]
	if ep, _ := LargestDenseAccepted([]*episode.Episode{eps[0], eps[5], &twin}, ""); ep != eps[5] {
		t.Errorf("tie: picked %p, want the first (%p)", ep, eps[5])
	}
	if _, err := LargestDenseAccepted(eps[1:2], ""); err == nil {
		t.Error("no accepted episode: want an error")
	}
	if _, err := FindEpisode(eps, "", "s4", 0); err == nil || !strings.Contains(err.Error(), "alpha vs sim; beta vs sim") {
		t.Errorf("ambiguous find: %v", err)
	}
	ep, err = FindEpisode(eps, "alpha", "s4", 0)
	if err != nil || ep != eps[3] {
		t.Fatalf("find alpha s4 = %v", err)
	}
	// e4: r = 0, -.1, +.2: turns 3 and 2 carry all of sum |r| = .3.
	tr := TraceOf(ep)
	if !math.IsNaN(tr.Rows[0].States[1]) || !near(tr.TopTwoShare, 1, 1e-12) || !reflect.DeepEqual(tr.TopTurns, []int{3, 2}) {
		t.Errorf("e4 trace: pe0 %v, share %v, top %v", tr.Rows[0].States[1], tr.TopTwoShare, tr.TopTurns)
	}
	var b bytes.Buffer
	tr.Table().WriteText(&b)
	if !strings.Contains(b.String(), "\n0                       +0.00      -  +0.00  0.500        -\n") {
		t.Errorf("missing state not shown as '-':\n%s", b.String())
	}
}

// Figure 7 dead groups, arm alpha with two rollouts per scenario:
//
//	step 0: x  accept/accept, dense sums .3 vs .1   -> dead, separated
//	        y  accept/reject                        -> alive
//	step 1: z  pending/pending, dense .1+.2 vs .3   -> dead, separated: the
//	           group-normalised rewards are -1, 0 | +1, so the per-turn
//	           dense advantages (reward-to-go) are -1, 0 | +1 (grpo)
//	        u  pending/pending, dense .2 vs .2      -> dead, not separated
//	        w  one rollout; v one scored + one failed -> singletons (2)
//
// step 0: 2 groups, 1 dead (50%), 1 separated (100%). step 1: 2 groups, 2
// dead, none separated under the default (scaled) dense mode: z's two
// rollouts both gained 0.3 of belief, so their turn-1 advantages are equal;
// only the length-biased pooled mode tells them apart (by length: the
// 1-turn rollout on top, correlation -1 with length). Overall 4 groups, 3
// dead (75%), 1 separated (33.3%).
func TestDeadGroups(t *testing.T) {
	h := same(0.5)
	e := func(sc string, r int, term decision.Terminal, step uint64, ps ...float64) *episode.Episode {
		var ts []turnSpec
		for _, p := range ps {
			ts = append(ts, tt(same(p)))
		}
		ep := mk("alpha", "sim", sc, r, EB, hc, term, h, ts...)
		ep.Seed = step
		return ep
	}
	eps := []*episode.Episode{
		e("x", 0, decision.TermAccept, 0, 0.8), e("x", 1, decision.TermAccept, 0, 0.6),
		e("y", 0, decision.TermAccept, 0, 0.8), e("y", 1, decision.TermReject, 0, 0.2),
		e("z", 0, decision.TermPending, 1, 0.6, 0.8), e("z", 1, decision.TermPending, 1, 0.8),
		e("u", 0, decision.TermPending, 1, 0.7), e("u", 1, decision.TermPending, 1, 0.7),
		e("w", 0, decision.TermPending, 1, 0.6),
		e("v", 0, decision.TermPending, 1, 0.6), e("v", 1, decision.TermFailed, 1, 0.6),
	}
	// z's rollouts: dense 0.1, 0.2 (two turns) against 0.3 (one turn): equal
	// sums, different per-turn credit. u's rollouts: 0.2 and 0.2.
	r1, r2, r3, r4 := 0.1, 0.2, 0.3, 0.2
	eps[4].Turns[0].Dense, eps[4].Turns[1].Dense, eps[5].Turns[0].Dense = &r1, &r2, &r3
	eps[6].Turns[0].Dense, eps[7].Turns[0].Dense = &r4, &r4
	st := DeadGroups(eps, GroupOptions{Step: func(ep *episode.Episode) int { return int(ep.Seed) }})
	if st.Singletons != 2 || st.Failed != 1 {
		t.Errorf("singletons %d failed %d, want 2 and 1", st.Singletons, st.Failed)
	}
	want := []DeadGroupPoint{
		{Step: 0, Groups: 2, Dead: 1, Separated: 1, DeadShare: 0.5, SeparatedShare: 1},
		{Step: 1, Groups: 2, Dead: 2, Separated: 0, DeadShare: 1, SeparatedShare: 0},
	}
	if len(st.Points) != 2 {
		t.Fatalf("points %+v", st.Points)
	}
	for i, w := range want {
		p := st.Points[i]
		if p.Step != w.Step || p.Groups != w.Groups || p.Dead != w.Dead || p.Separated != w.Separated ||
			p.DeadShare != w.DeadShare || p.SeparatedShare != w.SeparatedShare {
			t.Errorf("point %d = %+v, want %+v", i, p, w)
		}
	}
	o := st.Overall[0]
	if o.Groups != 4 || o.Dead != 3 || o.Separated != 1 || o.DeadShare != 0.75 || !near(o.SeparatedShare, 1.0/3, 1e-12) ||
		o.Mixed != 1 || o.ShortestTop != 0 || !math.IsNaN(o.LengthCorr) {
		t.Errorf("overall %+v", o)
	}
	// The pooled (DeepSeekMath) mode separates z by length alone.
	pooled := grpo.DefaultConfig()
	pooled.DenseMode = grpo.DensePooled
	pst := DeadGroups(eps, GroupOptions{Step: func(ep *episode.Episode) int { return int(ep.Seed) }, Config: &pooled})
	if p := pst.Points[1]; p.Separated != 1 || p.Mixed != 1 || p.ShortestTop != 1 || p.ShortestTopShare != 1 || !near(p.LengthCorr, -1, 1e-12) {
		t.Errorf("pooled step 1: %+v", p)
	}
	// An eval run (nil step) puts everything at step 0.
	if st := DeadGroups(eps, GroupOptions{}); len(st.Points) != 1 || st.Points[0].Groups != 4 {
		t.Errorf("nil step: %+v", st.Points)
	}
	// The default outcome is R_out = R_goal + R_strategy: rating x's two
	// accepted rollouts differently revives group x (step 0: 0 dead).
	eps[0].RStrategy, eps[1].RStrategy = fp(0.5), fp(0)
	if p := DeadGroups(eps, GroupOptions{Step: func(ep *episode.Episode) int { return int(ep.Seed) }}).Points[0]; p.Dead != 0 || p.Groups != 2 {
		t.Errorf("judged step 0: %+v", p)
	}
	eps[0].RStrategy, eps[1].RStrategy = nil, nil
	var b bytes.Buffer
	st.Table().WriteText(&b)
	if !strings.Contains(b.String(), "alpha      all        4     3   75.0          1             33.3  -                                            0.0\n") {
		t.Errorf("Figure 7 text:\n%s", b.String())
	}
}

// Several runs: a persuader name in two runs is prefixed by run id; others
// keep their names; inputs are not modified.
func TestConcat(t *testing.T) {
	a := []*episode.Episode{{Persuader: "script"}, {Persuader: "pushy"}}
	b := []*episode.Episode{{Persuader: "script"}, {Persuader: "informer"}}
	out := Concat([]RunEpisodes{{"r1", a}, {"r2", b}})
	var names []string
	for _, ep := range out {
		names = append(names, ep.Persuader)
	}
	if !reflect.DeepEqual(names, []string{"r1:script", "pushy", "r2:script", "informer"}) {
		t.Errorf("names %v", names)
	}
	if a[0].Persuader != "script" {
		t.Error("Concat modified its input")
	}
}

func TestPick(t *testing.T) {
	eps := handBuilt()
	if _, err := Pick("r1", eps, "", ""); err == nil || !strings.Contains(err.Error(), "several persuaders (alpha, beta)") ||
		!strings.Contains(err.Error(), "r1:PERSUADER:PERSUADEE") {
		t.Errorf("Pick without persuader: %v", err)
	}
	if _, err := Pick("r1", eps, "gamma", ""); err == nil || !strings.Contains(err.Error(), `no persuader "gamma" (it holds alpha, beta)`) {
		t.Errorf("Pick unknown: %v", err)
	}
	got, err := Pick("r1", eps, "beta", "")
	if err != nil || len(got) != 5 {
		t.Errorf("Pick beta: %d, %v", len(got), err)
	}
}

func TestTableFormats(t *testing.T) {
	tb := Table{Title: "T", Header: []string{"name", "x"}, Rows: [][]string{{"a|b", "1.5"}, {"c", "-"}}, Notes: []string{"n1"}}
	var b bytes.Buffer
	tb.WriteText(&b)
	if want := "T\nname    x\na|b   1.5\nc       -\nnote: n1\n"; b.String() != want {
		t.Errorf("text:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	tb.WriteMarkdown(&b)
	if want := "**T**\n\n| name | x |\n|---|---:|\n| a\\|b | 1.5 |\n| c | - |\n\n- n1\n"; b.String() != want {
		t.Errorf("markdown:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	tb.WriteCSV(&b)
	if want := "name,x\na|b,1.5\nc,-\n"; b.String() != want {
		t.Errorf("csv:\n%q", b.String())
	}
	if err := tb.Write(&b, "xml"); err == nil {
		t.Error("unknown format: want an error")
	}
}

// probe.State and the fixture agree: a sanity check that the fixture builds
// beliefs as episode.Run does.
func TestFixtureBeliefs(t *testing.T) {
	e1 := handBuilt()[0]
	if b := *e1.Turns[1].Belief; !near(b, 0.9, 1e-12) || !near(*e1.Turns[1].Dense, 0.3, 1e-12) {
		t.Errorf("e1 t2 B %v r %v", b, *e1.Turns[1].Dense)
	}
	if s := probe.State(0.9); !near(s, 0.8, 1e-12) {
		t.Errorf("State(.9) = %v", s)
	}
}

func TestOrder(t *testing.T) {
	eps := []*episode.Episode{{Persuader: "b", Persuadee: "y"}, {Persuader: "z"}, {Persuader: "a", Persuadee: "y"}, {Persuader: "b", Persuadee: "x"}, {Persuader: "a", Persuadee: "x"}}
	var got []string
	for _, ep := range Order(eps, []string{"b", "a"}, []string{"x", "y"}) {
		got = append(got, ep.Persuader+ep.Persuadee)
	}
	if !reflect.DeepEqual(got, []string{"bx", "by", "ax", "ay", "z"}) {
		t.Errorf("order %v", got)
	}
	if eps[0].Persuader != "b" || eps[1].Persuader != "z" {
		t.Error("Order modified its input")
	}
}

func fp(v float64) *float64 { return &v }

func TestSplitArmWithColonNames(t *testing.T) {
	eps := []*episode.Episode{
		{Persuader: "planner:out/l0.json", Persuadee: "sim"},
		{Persuader: "script", Persuadee: "llm:q"},
	}
	for _, tc := range []struct{ ref, per, pee string }{
		{"", "", ""},
		{"script", "script", ""},
		{"planner:out/l0.json", "planner:out/l0.json", ""},
		{"planner:out/l0.json:sim", "planner:out/l0.json", "sim"},
		{"script:llm:q", "script", "llm:q"},
		{"nosuch:sim", "nosuch", "sim"},
	} {
		per, pee := SplitArm(tc.ref, eps)
		if per != tc.per || pee != tc.pee {
			t.Errorf("SplitArm(%q) = %q, %q; want %q, %q", tc.ref, per, pee, tc.per, tc.pee)
		}
	}
}
