package masp

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) != math.IsNaN(want) {
		t.Errorf("%s = %.12g, want %.12g", name, got, want)
	}
}

// Eq. 15-16 and 5 with the released weights, by hand.
func TestRewardsHand(t *testing.T) {
	w := DefaultWeights
	if w != (Weights{Prog: 1, Inf: 0.25, Rat: 0.5, Gamma: 0.97, KL: 0.05}) {
		t.Fatalf("defaults %+v", w)
	}
	z := []float64{0, 0, 0, 0, 0, 0}
	zHat := []float64{3, 0, 0, 1, 0, 0} // ||.||_A^2 = 9/3 + 1 = 4 (d = 1)
	near(t, "r_S", SystemReward(0.2, zHat, z, 1, w), 0.2-0.25*4, 1e-15)
	near(t, "r_S without student", SystemReward(0.2, nil, z, 1, w), 0.2, 0)
	near(t, "r_U rational", UserReward(0.2, Rational, w), -0.2+0.5, 1e-15)
	near(t, "r_U not rational", UserReward(-0.1, NotRational, w), 0.1-0.5, 1e-15)
	near(t, "r_U unjudged", UserReward(0.3, Unjudged, w), -0.3, 0)
	near(t, "J", Discounted([]float64{1, 1, 1}, 0.97), 1+0.97+0.9409, 1e-12)
}

func TestParseRationality(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"RATIONAL", 1},
		{"NOT_RATIONAL", -1},
		{"not rational", -1},
		{"Not-Rational.", -1},
		{"  rational\n", 1},
		{"Answer: RATIONAL", 1},
		{`{"label": "NOT_RATIONAL"}`, -1},
		{"<think>The user caved, so NOT_RATIONAL? No wait.</think>RATIONAL", 1},
		{"RATIONAL or NOT_RATIONAL: NOT_RATIONAL", -1},
		{"RATIONAL/NOT_RATIONAL -> RATIONAL", 1},
		{"The reply was irrational.", -1},
		{"RATIONAL. A NOT_RATIONAL reply would have conceded.", 1},
		{"The user's rationality is fine", 0},
		{"", 0},
		{"I cannot judge this.", 0},
		{"UNCLEAR", 0},
	} {
		if got := ParseRationality(c.in); got != c.want {
			t.Errorf("ParseRationality(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestParseP4GLabel(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"The persuadee has explicitly refused.", "refused"},
		{"The persuadee remains neutral about donating.", "neutral"},
		{"The persuadee has a positive attitude towards donating but hasn't decided yet.", "positive"},
		{"The persuadee has a positive attitude towards donating but hasn’t decided yet.", "positive"},
		{"The persuadee has decided to donate.", "agree"},
		{"agree", "agree"},
		{"Agree.", "agree"},
		{"REFUSED", "refused"},
		{"- The persuadee has decided to donate", "agree"},
		{`{"label":"positive"}`, "positive"},
		{"<think>they said no at first, refused?</think>\nThe persuadee has decided to donate.", "agree"},
		{"The persuadee has not decided to donate yet.", "neutral"},
		{"The persuadee declined to give anything.", "refused"},
		{"The persuadee hasn't refused, but remains neutral.", "neutral"},
		{"They will donate $1.", "agree"},
		{"I don't agree with this conversation.", ""},
		{"Hmm.", ""},
	} {
		got, ok := ParseP4GLabel(c.in)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("ParseP4GLabel(%q) = %q %v, want %q", c.in, got, ok, c.want)
		}
	}
}

func TestParseESConvLabel(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"No, the Patient feels worse.", "worse"},
		{"No, the Patient feels the same.", "same"},
		{"No, but the Patient feels better.", "somewhat_better"},
		{"Yes, the Patient's issue has been solved.", "resolved"},
		{"Yes, the Patient’s issue has been solved.", "resolved"},
		{"somewhat_better", "somewhat_better"},
		{"somewhat-better", "somewhat_better"},
		{"RESOLVED", "resolved"},
		{"same", "same"},
		{"The patient's issue has not been solved, but they feel better.", "somewhat_better"},
		{"The issue hasn't been resolved; the patient feels no better.", "same"},
		{"The patient is not worse, just unchanged.", "same"},
		{`{"label": "worse"}`, "worse"},
		{"The patient's issue has not been solved.", ""},
		{"I don't know.", ""},
	} {
		got, ok := ParseESConvLabel(c.in)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("ParseESConvLabel(%q) = %q %v, want %q", c.in, got, ok, c.want)
		}
	}
}

func TestParseCBLabelAndPrice(t *testing.T) {
	for _, c := range []struct {
		in       string
		label    string
		price    float64
		hasPrice bool
	}{
		{"They have reached a deal at $1,200.", Deal, 1200, true},
		{"They have reached a deal at 150.", Deal, 150, true},
		{"They have not reached a deal.", NoDeal, 0, false},
		{"They haven't reached a deal yet.", NoDeal, 0, false},
		{"No deal.", NoDeal, 0, false},
		{"They have reached a deal.", Deal, 0, false},
		{"The seller came down from $200 and they reached a deal at $150.", Deal, 150, true},
		{"They have reached a deal at $150 after the seller asked $200.", Deal, 150, true},
		{"They agreed on 1.2k for the bike.", Deal, 1200, true},
		{"They have reached a deal at a price of $95.50.", Deal, 95.5, true},
		{"<think>not reached? they said ok</think>They have reached a deal at $40.", Deal, 40, true},
		{"Unclear.", "", 0, false},
	} {
		l, p, hp, ok := ParseCBLabel(c.in)
		if l != c.label || ok != (c.label != "") || hp != c.hasPrice || p != c.price {
			t.Errorf("ParseCBLabel(%q) = %q %v %v %v, want %q %v %v", c.in, l, p, hp, ok, c.label, c.price, c.hasPrice)
		}
	}
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"I can do $4500 cash, final offer.", 4500, true},
		{"Would you take 40? I paid $60 for it.", 60, true}, // last $ amount
		{"maybe 35 or 40", 40, true},                        // last number
		{"sold for $1,000,000", 1000000, true},
		{"no numbers here", 0, false},
	} {
		got, ok := ExtractPrice(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ExtractPrice(%q) = %v %v, want %v %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// Buyer utility (p_deal - p_seller) / (p_buyer - p_seller), seller lists
// 100 and the buyer wants 60.
func TestBuyerUtilityHand(t *testing.T) {
	for _, c := range []struct{ deal, want float64 }{{80, 0.5}, {110, -0.25}, {100, 0}, {60, 1}, {50, 1.25}} {
		u, err := BuyerUtility(c.deal, 60, 100)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "utility", u, c.want, 1e-15)
	}
	if _, err := BuyerUtility(50, 70, 70); err == nil {
		t.Error("equal prices accepted")
	}
}

func TestAggregate(t *testing.T) {
	r := DefaultSuccessRule
	strict := r
	strict.StrictP4G, strict.StrictESConv = true, true
	agree8ref2 := append(strings.Split(strings.Repeat("agree,", 8), ",")[:8], "refused", "refused")
	for _, c := range []struct {
		name    string
		rule    SuccessRule
		task    bdi.Task
		samples []string
		score   float64
		success bool
	}{
		// Appendix C.3's examples: two agree + positive pass, two agree +
		// neutral (or refused) do not.
		{"2 agree + positive", r, bdi.P4G, []string{"agree", "The persuadee has decided to donate.", "positive"}, 2.1 / 3, true},
		{"2 agree + neutral", r, bdi.P4G, []string{"agree", "agree", "neutral"}, 0.5, false},
		{"2 agree + refused", r, bdi.P4G, []string{"agree", "agree", "refused"}, 1.0 / 3, false},
		{"mean exactly 0.6, paper", r, bdi.P4G, agree8ref2, 0.6, true},
		{"mean exactly 0.6, strict", strict, bdi.P4G, agree8ref2, 0.6, false},
		{"unreadable skipped", r, bdi.P4G, []string{"agree", "???", "agree"}, 1, true},
		{"all unreadable", r, bdi.P4G, []string{"??", ""}, 0, false},
		{"somewhat_better, paper", r, bdi.ESConv, []string{"No, but the Patient feels better."}, 0.5, true},
		{"somewhat_better, strict", strict, bdi.ESConv, []string{"somewhat_better"}, 0.5, false},
		{"esconv mixed", r, bdi.ESConv, []string{"resolved", "same", "worse"}, -0.5 / 3, false},
	} {
		v := c.rule.Aggregate(c.task, c.samples, nil)
		near(t, c.name+" score", v.Score, c.score, 1e-12)
		if v.Success != c.success || len(v.Labels) != len(c.samples) {
			t.Errorf("%s: success %v labels %v", c.name, v.Success, v.Labels)
		}
	}
	cb := &Case{Task: bdi.CB, BuyerPrice: 60, SellerPrice: 100}
	v := r.Aggregate(bdi.CB, []string{"They have reached a deal at $80.", "They have reached a deal at 90.", "They have reached a deal at $80."}, cb)
	if !v.Deal || v.Price != 80 || !v.Success {
		t.Errorf("modal deal %+v", v)
	}
	near(t, "cb utility", v.Score, 0.5, 1e-15)
	v = r.Aggregate(bdi.CB, []string{"They have reached a deal at $90.", "They have reached a deal at $80."}, cb)
	if v.Price != 90 {
		t.Errorf("tie: price %v, want the earliest 90", v.Price)
	}
	v = r.Aggregate(bdi.CB, []string{"They have reached a deal at $80.", "They have not reached a deal."}, cb)
	if v.Deal || v.Success || v.Score != CBNoDealScore {
		t.Errorf("veto %+v", v)
	}
	v = r.Aggregate(bdi.CB, []string{"They have reached a deal at $120."}, cb)
	if v.Success || math.Abs(v.Score+0.5) > 1e-15 {
		t.Errorf("above listing %+v", v)
	}
	v = r.Aggregate(bdi.CB, []string{"They have reached a deal."}, cb)
	if !v.Deal || v.HasPrice || v.Success {
		t.Errorf("deal without price %+v", v)
	}
}

func lat(o, o0 float64, addressed, addrNow int) *sim.Latent {
	l := &sim.Latent{Openness: o, Openness0: o0, AddressedNow: addrNow}
	for i := range 3 {
		st := sim.ConcernVoiced
		if i < addressed {
			st = sim.ConcernAddressed
		}
		l.Concerns = append(l.Concerns, sim.LatentConcern{ID: "c", State: st})
	}
	return l
}

func TestSimRationalityRules(t *testing.T) {
	ev := tagger.Tags{Acts: tagger.ActSet(0).With(tagger.Evidence)}
	ask := tagger.Tags{Acts: tagger.ActSet(0).With(tagger.Commitment)}
	pushy := tagger.Tags{Acts: ask.Acts, Pressure: 1}
	for _, c := range []struct {
		name          string
		tags          tagger.Tags
		d             decision.Decision
		before, after *sim.Latent
		want          int
	}{
		{"accept after reasons", ask, decision.Accept, lat(0.2, -0.4, 1, 0), lat(0.35, -0.4, 1, 0), Rational},
		{"accept under pressure", pushy, decision.Accept, lat(0.2, -0.4, 1, 0), lat(0.35, -0.4, 1, 0), NotRational},
		{"accept with nothing answered", ask, decision.Accept, lat(0.2, -0.4, 0, 0), lat(0.35, -0.4, 0, 0), NotRational},
		{"accept, already in favour", ask, decision.Conditional, lat(0.4, 0.3, 0, 0), lat(0.4, 0.3, 0, 0), Rational},
		{"reject a pushy ask", pushy, decision.Reject, lat(-0.5, -0.4, 0, 0), lat(-0.6, -0.4, 0, 0), Rational},
		{"reject right after an answer", ev, decision.Reject, lat(0, -0.4, 0, 0), lat(0.1, -0.4, 1, 1), NotRational},
		{"move away after an answer", ev, decision.Continue, lat(0, -0.4, 0, 0), lat(-0.15, -0.4, 1, 1), NotRational},
		{"warm up under pressure", pushy, decision.Continue, lat(0, -0.4, 0, 0), lat(0.15, -0.4, 0, 0), NotRational},
		{"small noise is fine", ev, decision.Continue, lat(0, -0.4, 0, 0), lat(-0.05, -0.4, 1, 1), Rational},
		{"hold without a reason", ask, decision.Continue, lat(0, -0.4, 0, 0), lat(-0.3, -0.4, 0, 0), Rational},
	} {
		ex := &Exchange{Tags: c.tags, Reply: episode.Reply{Decision: c.d}, Before: c.before, After: c.after}
		if q, raw := (SimRationalityJudge{}).Rationality(context.Background(), ex); q != c.want {
			t.Errorf("%s: q = %d (%s), want %d", c.name, q, raw, c.want)
		}
	}
	if q, _ := (SimRationalityJudge{}).Rationality(context.Background(), &Exchange{}); q != Unjudged {
		t.Errorf("no latent: q = %d", q)
	}
}
