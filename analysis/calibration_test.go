package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
)

// The hand-built run holds five commitment asks (e9 is failed):
// e1 t2 after B_1 = 0.6, accepted; e2 t1 after 0.5, rejected; e5 t1 after
// 0.5, continue; e5 t2 after 0.3, conditional (not a full accept); e7 t1
// after 0.4, rejected. Two bins: [0, 0.5) holds 0.3, 0.4 (mean 0.35, 0 %
// accepted); [0.5, 1] holds 0.6, 0.5, 0.5 (mean 0.5333, 1/3 accepted).
// ECE = 2/5 * 0.35 + 3/5 * 0.2 = 0.26; Brier = (0.16 + 0.25 + 0.25 + 0.09 +
// 0.16) / 5 = 0.182.
func TestAskReliability(t *testing.T) {
	r, err := AskReliabilityOf(handBuilt(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 5 || r.Failed != 1 || r.Unread != 0 {
		t.Fatalf("N %d failed %d unread %d, want 5 1 0", r.N, r.Failed, r.Unread)
	}
	want := []ReliabilityBin{{0, 0.5, 2, 0.35, 0}, {0.5, 1, 3, 1.6 / 3, 1.0 / 3}}
	for k, w := range want {
		g := r.Bins[k]
		if g.N != w.N || !near(g.Lo, w.Lo, 1e-12) || !near(g.Hi, w.Hi, 1e-12) ||
			!near(g.MeanBelief, w.MeanBelief, 1e-12) || !near(g.AcceptRate, w.AcceptRate, 1e-12) {
			t.Errorf("bin %d = %+v, want %+v", k, g, w)
		}
	}
	if !near(r.ECE, 0.26, 1e-12) || !near(r.Brier, 0.182, 1e-12) {
		t.Errorf("ECE %g Brier %g, want 0.26 0.182", r.ECE, r.Brier)
	}
	var b strings.Builder
	if err := r.Table().WriteText(&b); err != nil || !strings.Contains(b.String(), "ECE 0.260") {
		t.Errorf("table %q (err %v) lacks the ECE", b.String(), err)
	}

	// ten bins: empty bins are NaN and weigh nothing
	r10, _ := AskReliabilityOf(handBuilt(), 10)
	if !math.IsNaN(r10.Bins[0].MeanBelief) || r10.Bins[5].N != 2 || r10.Bins[6].N != 1 || r10.Bins[6].AcceptRate != 1 {
		t.Errorf("ten bins: %+v", r10.Bins)
	}
	// |0.3-0|*1 + |0.4-0|*1 + |0.5-0|*2 + |0.6-1|*1, over 5
	if !near(r10.ECE, (0.3+0.4+1.0+0.4)/5, 1e-12) {
		t.Errorf("ten-bin ECE %g", r10.ECE)
	}

	// an ask after an unreadable belief is counted apart
	eps := handBuilt()
	e8 := eps[7] // beta s4: t3 unreadable
	e8.Turns = append(e8.Turns, e8.Turns[0])
	e8.Turns[3].T, e8.Turns[3].Acts, e8.Turns[3].Decision = 4, []string{"commitment"}, decision.Continue
	if r, _ := AskReliabilityOf(eps, 2); r.Unread != 1 || r.N != 5 {
		t.Errorf("unread %d N %d, want 1 5", r.Unread, r.N)
	}
	if _, err := AskReliabilityOf(eps, 0); err == nil {
		t.Error("zero bins accepted")
	}
	if r, _ := AskReliabilityOf(nil, 3); r.N != 0 || !math.IsNaN(r.ECE) {
		t.Errorf("empty: %+v", r)
	}
}
