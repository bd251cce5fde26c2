package reporeward

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

// Every curated bad case breaks exactly the rules it lists, under the
// built-in spec's rule functions; the suite has at least 40 cases in four
// categories.
func TestBadCasesBreakTheirRules(t *testing.T) {
	r, err := RulesOnly("repo:negotiation")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := BadCases()
	if err != nil {
		t.Fatal(err)
	}
	cats := map[string]int{}
	for _, c := range cases {
		cats[c.Category]++
		got := r.Problems(c.Scenario, c.Context, c.Response)
		for _, p := range c.Problems {
			if !slices.Contains(got, p) {
				t.Errorf("%s: %q does not break %s (breaks %v)", c.ID, c.Response, p, got)
			}
		}
		// the shared context itself is clean
		if len(c.Context) > 0 {
			if got := r.Problems(c.Scenario, nil, c.Context[0].Text); len(got) > 0 {
				t.Errorf("%s: context breaks %v", c.ID, got)
			}
		}
	}
	if len(cases) < 40 || len(cats) != 4 {
		t.Fatalf("%d cases, categories %v", len(cases), cats)
	}
}

// The script persuader fixes every over-promise, figure and pressure case
// (its templates state no figures and apply no pressure) but none of the
// SOP cases (it opens without rapport): 33/44, all clean.
func TestFixRatesScript(t *testing.T) {
	r, err := RulesOnly("negotiation")
	if err != nil {
		t.Fatal(err)
	}
	cases, _ := BadCases()
	per, err := baseline.New("script")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.FixRates(context.Background(), per, cases, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != 44 || rep.Fixed != 33 || rep.Clean != 33 || rep.ByCategory["skipped SOP stage"] != [3]int{11, 0, 0} {
		t.Fatalf("report n %d fixed %d clean %d by %v", rep.N, rep.Fixed, rep.Clean, rep.ByCategory)
	}
}

func TestABHandComputed(t *testing.T) {
	mk := func(term decision.Terminal, turns int) *episode.Episode {
		return &episode.Episode{Terminal: term, Turns: make([]episode.Turn, turns)}
	}
	// A: 4 scored, responded 2 (2 turns; accept after 1), success 1; a failed one left out
	a := []*episode.Episode{mk(decision.TermReject, 1), mk(decision.TermReject, 1), mk(decision.TermPending, 3), mk(decision.TermAccept, 1), mk(decision.TermFailed, 0)}
	// B: 4 scored, responded 4, success 3
	b := []*episode.Episode{mk(decision.TermAccept, 2), mk(decision.TermConditional, 4), mk(decision.TermReject, 2), mk(decision.TermAccept, 1)}
	rows := AB(a, b)
	if rows[0].XA != 2 || rows[0].NA != 4 || rows[0].XB != 4 || rows[0].NB != 4 {
		t.Fatalf("response rate counts %+v", rows[0])
	}
	if rows[1].XA != 1 || rows[1].XB != 3 || math.Abs(rows[1].Test.Diff-0.5) > 1e-12 {
		t.Fatalf("task success %+v", rows[1])
	}
	// pooled p = 6/8, se = sqrt(0.75·0.25·0.5) = 0.30619, z = 0.5/0.30619 = 1.63299
	if math.Abs(rows[0].Test.Z-1.632993) > 1e-5 {
		t.Errorf("z = %v, want 1.632993", rows[0].Test.Z)
	}
}

func TestRatingsExcellentShare(t *testing.T) {
	p, _ := LoadPack("negotiation")
	sc := p.Scenarios[0]
	ep := func(texts ...string) *episode.Episode {
		e := &episode.Episode{ScenarioID: sc.ID, Terminal: decision.TermPending}
		for i, x := range texts {
			e.Turns = append(e.Turns, episode.Turn{T: i + 1, Persuader: x, Persuadee: "ok"})
		}
		return e
	}
	// the stub rates every response 5 when it says "EXCELLENT", else 3; the
	// dialogue prompt contains both, so it gets 5 when any response does
	judge := raterFunc(func(user string) float64 {
		if strings.Contains(user, "to rate:\nAgent: EXCELLENT") || (strings.Contains(user, "whole conversation") && strings.Contains(user, "EXCELLENT")) {
			return 5
		}
		return 3
	})
	rep, err := Ratings(context.Background(), judge, p.Scenarios, []*episode.Episode{ep("plain", "EXCELLENT"), ep("plain"), ep("plain", "plain")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != 3 || rep.Excellent != 1 || math.Abs(rep.Mean-11.0/3) > 1e-12 || rep.Usage.Requests != 3+5 {
		t.Fatalf("%+v", rep)
	}
}

type raterFunc func(user string) float64

func (f raterFunc) Rate(_ context.Context, _, user string, _, _ float64) (float64, episode.Usage, error) {
	return f(user), episode.Usage{Requests: 1}, nil
}
