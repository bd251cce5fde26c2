package probe

import (
	"math"
	"strings"
	"testing"
)

// A top-k answer that shows one side only is bounded by the list's floor
// and never read as p = 1 or 0 (issue 47 item 3: on llama-server the
// pinned "Yes" is always reported, so a No that fell below the top 20
// read as P = 1.0 for a true 0.6).
func TestOneSidedTopK(t *testing.T) {
	ln := math.Log
	crowd := func(n int, p float64) []TokenLogprob {
		out := make([]TokenLogprob, n)
		for i := range out {
			out[i] = TokenLogprob{Token: "w", ID: 100 + i, Logprob: ln(p)}
		}
		return out
	}
	// The llama-server case: 20 other tokens at 0.048 fill the top 20,
	// the pinned Yes (0.024) is appended as the sampled token, No (0.016)
	// is not listed: p lies in [0.024/0.072, 1], far too wide.
	a := Answer{TopK: true, Top: append(crowd(20, 0.048), TokenLogprob{Token: "Yes", ID: 9454, Logprob: ln(0.024), Extra: true})}
	if r := Read("ac", a); r.OK || !strings.Contains(r.Reason, "only Yes") || !strings.Contains(r.Reason, "[0.333, 1.000]") {
		t.Errorf("pinned Yes over a crowd: %+v, want unreadable with the interval", r)
	}
	// A confident Yes: the floor 1e-5 leaves p in [0.99999, 1], read at
	// its midpoint; with No alone, mirrored.
	a = Answer{TopK: true, Top: append(crowd(19, 1e-5), TokenLogprob{Token: "Yes", ID: 1, Logprob: ln(0.99)})}
	w := 1e-5 / (0.99 + 1e-5)
	if r := Read("ac", a); !r.OK || math.Abs(r.P-(1-w/2)) > 1e-15 || r.P == 1 {
		t.Errorf("confident Yes: %+v, want p = %v", r, 1-w/2)
	}
	a.Top[19] = TokenLogprob{Token: " No", ID: 2, Logprob: ln(0.99)}
	if r := Read("ac", a); !r.OK || math.Abs(r.P-w/2) > 1e-15 {
		t.Errorf("confident No: %+v, want p = %v", r, w/2)
	}
	// A floor far below the visible side still never reads 1.
	a = Answer{TopK: true, Top: []TokenLogprob{{Token: "Yes", ID: 1, Logprob: 0}, {Token: "w", ID: 3, Logprob: -40}}}
	if r := Read("ac", a); !r.OK || r.P >= 1 || r.P != 1-1e-12 {
		t.Errorf("floor e^-40: %+v, want p = 1 - 1e-12", r)
	}
	// Called with both sides visible, it is the plain share.
	if r := OneSided("ca", Answer{TopK: true}, 0.3, 0.1); !r.OK || math.Abs(r.P-0.75) > 1e-12 {
		t.Errorf("OneSided(0.3, 0.1) = %+v, want 0.75", r)
	}
	// Just over and just under the tolerance (width 0.02).
	for _, tc := range []struct {
		floor float64
		ok    bool
	}{{0.0203, false}, {0.0202, true}} {
		a = Answer{TopK: true, Top: []TokenLogprob{{Token: "Yes", ID: 1, Logprob: ln(0.99)}, {Token: "w", ID: 3, Logprob: ln(tc.floor)}}}
		if r := Read("ca", a); r.OK != tc.ok {
			t.Errorf("floor %v: %+v, want ok %v", tc.floor, r, tc.ok)
		}
	}
	// A "below top-k" sentinel on No is no read of No: still one-sided;
	// the sentinel does not set the floor either.
	a = Answer{TopK: true, Top: []TokenLogprob{{Token: "Yes", ID: 1, Logprob: ln(0.5)}, {Token: "No", ID: 2, Logprob: -9999}}}
	if r := Read("ca", a); r.OK {
		t.Errorf("sentinel No: %+v, want unreadable (no listed floor)", r)
	}
	// An exact read (not TopK) lists every variant: a missing No is no mass.
	if r := Read("ca", Answer{Top: []TokenLogprob{{Token: "Yes", ID: 1, Logprob: ln(0.5)}}}); !r.OK || r.P != 1 {
		t.Errorf("exact read: %+v, want p = 1", r)
	}
	// Both sides listed: the plain share, floor or not.
	a = Answer{TopK: true, Top: []TokenLogprob{{Token: "Yes", ID: 1, Logprob: ln(0.3)}, {Token: "No", ID: 2, Logprob: ln(0.1)}}}
	if r := Read("ca", a); !r.OK || math.Abs(r.P-0.75) > 1e-12 {
		t.Errorf("two-sided: %+v", r)
	}
}

// Common compares the probes readable in both read-outs, by id, and is
// Belief itself when every probe is readable in both.
func TestCommon(t *testing.T) {
	rd := func(id string, p float64, ok bool) Reading { return Reading{Probe: id, P: p, OK: ok} }
	prev := []Reading{rd("ca", .2, true), rd("pe", .8, true), rd("ac", .5, true)}
	cur := []Reading{rd("ca", .3, true), rd("pe", 0, false), rd("ac", .5, true)}
	if bp, bc, n := Common(prev, cur); n != 2 || math.Abs(bp-0.35) > 1e-15 || math.Abs(bc-0.4) > 1e-15 {
		t.Errorf("Common = %v, %v, %d; want 0.35, 0.4, 2", bp, bc, n)
	}
	if _, _, n := Common(nil, cur); n != 0 {
		t.Errorf("no previous read-out: n = %d", n)
	}
	cur[1] = rd("pe", .6, true)
	bp, bc, n := Common(prev, cur)
	b0, _ := Belief(prev)
	b1, _ := Belief(cur)
	if n != 3 || bp != b0 || bc != b1 {
		t.Errorf("all readable: %v, %v, %d; want Belief's %v, %v", bp, bc, n, b0, b1)
	}
}
