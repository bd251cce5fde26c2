package masp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

// mturns builds an episode whose turns say the given lines; the last turn
// carries d, the others continue.
func mturns(per, sc string, d decision.Decision, lines ...string) *episode.Episode {
	ep := &episode.Episode{RunID: "r", ScenarioID: sc, Persuader: per, Persuadee: "sim", Terminal: decision.TermPending}
	for i, l := range lines {
		t := episode.Turn{T: i + 1, Persuader: l, Persuadee: "ok", Decision: decision.Continue}
		if i == len(lines)-1 {
			t.Decision = d
		}
		ep.Turns = append(ep.Turns, t)
	}
	switch d {
	case decision.Accept:
		ep.Terminal, ep.RGoal = decision.TermAccept, 3
	case decision.Conditional:
		ep.Terminal, ep.RGoal = decision.TermConditional, 1
	case decision.Reject:
		ep.Terminal, ep.RGoal = decision.TermReject, -3
	}
	return ep
}

func rep(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// Four hand-built pairs: A succeeds on s1 (turn 2) and s2 (turn 1, under
// pressure: q = -1), not on s3 (reject) or s4 (turn 9); B only on s3 (turn
// 3). SR 0.5 vs 0.25, RCSR 0.25 vs 0.25, AT (2+1+8+8)/4 = 4.75 vs
// (8+8+3+8)/4 = 6.75.
func TestCompareHand(t *testing.T) {
	const ask, press = "What worries you most about it?", "You need to decide right now, there's no time to waste!"
	a := []*episode.Episode{
		mturns("a", "s1", decision.Accept, ask, ask),
		mturns("a", "s2", decision.Accept, press),
		mturns("a", "s3", decision.Reject, ask),
		mturns("a", "s4", decision.Accept, rep(9, ask)...),
	}
	b := []*episode.Episode{
		mturns("b", "s1", decision.Reject, ask),
		mturns("b", "s2", decision.Continue, rep(8, ask)...),
		mturns("b", "s3", decision.Accept, ask, ask, ask),
		mturns("b", "s4", decision.Conditional, ask),
	}
	c, err := analysis.Compare(a, b, analysis.CompareOptions{Seed: 1, Resamples: 2000})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compare(context.Background(), a, b, c, CompareOptions{Seed: 1, Resamples: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if m.T != 8 || m.N != 4 || m.SRA != 0.5 || m.SRB != 0.25 || m.RCSRA != 0.25 || m.RCSRB != 0.25 || m.ATA != 4.75 || m.ATB != 6.75 {
		t.Fatalf("figures %+v", m)
	}
	if m.DSR.Estimate != 0.25 || m.DRCSR.Estimate != 0 || m.DAT.Estimate != -2 || m.DSR.Lo > m.DSR.Estimate || m.DSR.Hi < m.DSR.Estimate || m.DSR.Resamples != 2000 {
		t.Fatalf("differences %+v %+v %+v", m.DSR, m.DRCSR, m.DAT)
	}
	var sb strings.Builder
	if err := m.Table().WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"SR@8 A / B", "0.500 / 0.250", "ΔSR@8", "+0.250, 95% CI", "4.75 / 6.75", "-2.00, 95% CI"} {
		if !strings.Contains(sb.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, sb.String())
		}
	}
	js, _ := json.Marshal(m)
	if !strings.Contains(string(js), `"sr_a":0.5`) || !strings.Contains(string(js), `"delta_at":{"estimate":-2`) {
		t.Errorf("json %s", js)
	}
	// With T = 9, A's turn-9 acceptance counts too.
	m9, _ := Compare(context.Background(), a, b, c, CompareOptions{T: 9, Resamples: 100})
	if m9.SRA != 0.75 {
		t.Errorf("SR@9 A = %v, want 0.75", m9.SRA)
	}
}
