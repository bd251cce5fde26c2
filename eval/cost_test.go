package eval

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

func TestCostTable(t *testing.T) {
	u := func(req, p, c, d int) episode.Usage {
		return episode.Usage{Requests: req, PromptTokens: p, CachedTokens: c, CompletionTokens: d}
	}
	eps := []*episode.Episode{
		{Persuader: "script", Persuadee: "llm:q", Turns: []episode.Turn{
			{PersuadeeUsage: u(1, 1000, 800, 60), ProbeUsage: u(1, 3300, 3000, 3), PersuadeeMS: 100, ProbeMS: 30, PersuaderMS: 0.1},
			{PersuadeeUsage: u(2, 1400, 1000, 100), ProbeUsage: u(1, 3900, 3600, 3), PersuadeeMS: 300, ProbeMS: 50},
		}},
		{Persuader: "script", Persuadee: "sim", Turns: []episode.Turn{{}}},
	}
	rows := CostTable(eps)
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want reply and probes of llm:q only: %+v", len(rows), rows)
	}
	r := rows[0]
	if r.Role != CostReply || r.Turns != 2 || r.Requests != 1.5 || r.PromptTokens != 1200 || r.CachedTokens != 900 ||
		r.PromptOnce != nil || r.DecodedTokens != 80 || r.LatencyMS != 200 {
		t.Errorf("reply row %+v", r)
	}
	p := rows[1]
	if p.Role != CostProbes || p.Requests != 1 || p.PromptTokens != 3600 || p.CachedTokens != 3300 || p.DecodedTokens != 3 || p.LatencyMS != 40 {
		t.Errorf("probe row %+v", p)
	}
	if p.PromptOnce != nil {
		t.Errorf("probe row's prefix-once count %v, want unknown: no read-out reported one", *p.PromptOnce)
	}
	var b bytes.Buffer
	if err := WriteCostTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "probes") || !strings.Contains(b.String(), "3600") {
		t.Errorf("table:\n%s", b.String())
	}
	if CostTable(eps[1:]) != nil {
		t.Error("cost rows for a run without engine roles")
	}
}

// The t = 0 read-out and the judge, paid once per episode, are spread over
// the pair's turns, so a pair's rows add up to its cost per turn.
func TestCostTableInitialAndJudge(t *testing.T) {
	u := func(req, p, c, d int) episode.Usage {
		return episode.Usage{Requests: req, PromptTokens: p, CachedTokens: c, CompletionTokens: d}
	}
	eps := []*episode.Episode{
		{Persuader: "script", Persuadee: "llm:q", InitialProbeUsage: u(1, 2000, 0, 3), InitialProbeMS: 60,
			JudgeUsage: u(1, 1435, 0, 8), JudgeMS: 300, Turns: []episode.Turn{
				{PersuadeeUsage: u(1, 1000, 800, 60), ProbeUsage: u(1, 3300, 3000, 3)},
				{PersuadeeUsage: u(1, 1400, 1000, 100), ProbeUsage: u(1, 3900, 3600, 3)},
			}},
		{Persuader: "script", Persuadee: "llm:q", InitialProbeUsage: u(1, 2000, 1984, 3), InitialProbeMS: 20,
			JudgeUsage: u(2, 3000, 1000, 20), JudgeMS: 500, Turns: []episode.Turn{
				{PersuadeeUsage: u(1, 1000, 800, 60), ProbeUsage: u(1, 3300, 3000, 3)},
			}},
		// A judge on the simulator: only the judge row.
		{Persuader: "script", Persuadee: "sim", JudgeUsage: u(1, 500, 0, 10), JudgeMS: 90, Turns: []episode.Turn{{}, {}}},
	}
	rows := CostTable(eps)
	roles := []string{}
	for _, r := range rows {
		roles = append(roles, r.Persuadee+"/"+r.Role)
	}
	if got := strings.Join(roles, ","); got != "llm:q/reply,llm:q/probes,llm:q/probes t=0,llm:q/judge,sim/judge" {
		t.Fatalf("rows %s", got)
	}
	// t = 0: 2 read-outs over 3 turns: 2/3 requests, (2000+2000)/3 prompt,
	// 1984/3 cached, 6/3 decoded, 80/3 ms.
	i := rows[2]
	if i.Turns != 3 || math.Abs(i.Requests-2.0/3) > 1e-12 || math.Abs(i.PromptTokens-4000.0/3) > 1e-9 ||
		math.Abs(i.CachedTokens-1984.0/3) > 1e-9 || i.DecodedTokens != 2 || math.Abs(i.LatencyMS-80.0/3) > 1e-9 {
		t.Errorf("t = 0 row %+v", i)
	}
	// judge: 3 requests, 4435 prompt, 1000 cached, 28 decoded, 800 ms over 3 turns.
	j := rows[3]
	if j.Turns != 3 || j.Requests != 1 || math.Abs(j.PromptTokens-4435.0/3) > 1e-9 || math.Abs(j.CachedTokens-1000.0/3) > 1e-9 ||
		math.Abs(j.DecodedTokens-28.0/3) > 1e-9 || math.Abs(j.LatencyMS-800.0/3) > 1e-9 {
		t.Errorf("judge row %+v", j)
	}
	if s := rows[4]; s.Turns != 2 || s.Requests != 0.5 || s.PromptTokens != 250 || s.DecodedTokens != 5 || s.LatencyMS != 45 {
		t.Errorf("sim judge row %+v", s)
	}
	var b bytes.Buffer
	if err := WriteCostTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "probes t=0") || !strings.Contains(b.String(), "judge") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestCrossGrid(t *testing.T) {
	ep := func(per, pee string, term decision.Terminal) *episode.Episode {
		return &episode.Episode{Persuader: per, Persuadee: pee, Terminal: term}
	}
	eps := []*episode.Episode{
		ep("a", "x", decision.TermAccept), ep("a", "x", decision.TermReject), ep("a", "x", decision.TermFailed),
		ep("a", "y", decision.TermAccept), ep("b", "x", decision.TermPending), ep("b", "x", decision.TermConditional),
		ep("c", "x", decision.TermAccept), // not in the grid
	}
	g := CrossGrid(eps, []string{"a", "b"}, []string{"x", "y"})
	if g.Accept[0][0] != 0.5 || g.N[0][0] != 2 || g.Accept[0][1] != 1 || g.Accept[1][0] != 0 || !math.IsNaN(g.Accept[1][1]) {
		t.Errorf("grid %+v", g)
	}
	var b bytes.Buffer
	WriteGrid(&b, g)
	for _, want := range []string{"50.0 (n=2)", "100.0 (n=1)", "- (n=0)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("grid table lacks %q:\n%s", want, b.String())
		}
	}
}

// The probes' prefix-once count (Table 4 "with cache"): the read-outs'
// PromptOnceTokens per turn, known only when every read-out had one. Two
// read-outs of K = 3 forks, each fork 1100 then 1300 tokens of which
// 1000 then 1200 are the shared context: 3300 and 3900 prompt tokens,
// 1300 and 1500 with the context once; the engine's cached count (3000,
// 3600: the context of every fork, the first served from the previous
// turn) counts it zero times and is reported beside it.
func TestCostTablePromptOnce(t *testing.T) {
	probes := func(p, c, once int) episode.Usage {
		return episode.Usage{Requests: 1, PromptTokens: p, CachedTokens: c, PromptOnceTokens: once, CompletionTokens: 3}
	}
	ep := &episode.Episode{Persuader: "script", Persuadee: "llm:q", InitialProbeUsage: probes(900, 0, 500),
		Turns: []episode.Turn{{ProbeUsage: probes(3300, 3000, 1300)}, {ProbeUsage: probes(3900, 3600, 1500)}}}
	rows := CostTable([]*episode.Episode{ep})
	if len(rows) != 2 || rows[0].Role != CostProbes || rows[0].PromptOnce == nil || *rows[0].PromptOnce != 1400 ||
		rows[0].PromptTokens != 3600 || rows[0].CachedTokens != 3300 {
		t.Fatalf("rows %+v", rows)
	}
	if i := rows[1]; i.Role != CostInitialProbes || i.PromptOnce == nil || *i.PromptOnce != 250 {
		t.Errorf("t = 0 row %+v", i)
	}
	var b bytes.Buffer
	if err := WriteCostTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "prefix-once tok") || !strings.Contains(b.String(), " 1400 ") {
		t.Errorf("table:\n%s", b.String())
	}
	// A read-out without the figure (a retried request): the mean of the
	// two that have it, (1300 + 1500) / 2, times the 3 read-outs that sent
	// a prompt, over the 4 turns; the table says from how many. A refused one (no prompt
	// tokens) counts in neither.
	ep.Turns = append(ep.Turns, episode.Turn{ProbeUsage: probes(4000, 0, 0)}, episode.Turn{ProbeUsage: episode.Usage{Requests: 1}})
	r := CostTable([]*episode.Episode{ep})[0]
	if r.PromptOnce == nil || math.Abs(*r.PromptOnce-1400*3/4.0) > 1e-9 || r.OnceKnown != 2 || r.Readouts != 3 {
		t.Errorf("mixed row %+v", r)
	}
	b.Reset()
	if err := WriteCostTable(&b, []CostRow{r}); err != nil || !strings.Contains(b.String(), "1050 (2 of 3)") {
		t.Errorf("mixed table %v:\n%s", err, b.String())
	}
	// None with the figure: unknown.
	ep.Turns, ep.InitialProbeUsage = ep.Turns[2:], episode.Usage{}
	if r := CostTable([]*episode.Episode{ep})[0]; r.PromptOnce != nil || r.OnceKnown != 0 || r.Readouts != 1 {
		t.Errorf("unknown row %+v", r)
	}
}
