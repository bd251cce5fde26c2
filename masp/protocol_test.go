package masp

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/stats"
)

// lines is a persuader that says its lines in order (the last repeats).
type lines []string

func (l lines) Name() string { return "lines" }
func (l lines) Start(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) {
	return &linesSession{l: l}, nil
}

type linesSession struct {
	l    lines
	i    int
	seen [][]episode.Message
}

func (s *linesSession) Say(_ context.Context, tr []episode.Message) (episode.Utterance, error) {
	s.seen = append(s.seen, tr)
	u := s.l[min(s.i, len(s.l)-1)]
	s.i++
	return episode.Utterance{Text: u}, nil
}

// scripted is a persuadee replying from a script; a reply with Err set
// fails that turn.
type scripted struct {
	name    string
	replies []scriptReply
}

type scriptReply struct {
	text string
	d    decision.Decision
	err  error
}

func (s *scripted) Name() string { return s.name }
func (s *scripted) Start(context.Context, *scenario.Scenario, uint64) (episode.PersuadeeSession, error) {
	return &scriptedSession{s: s}, nil
}

type scriptedSession struct {
	s *scripted
	i int
}

func (s *scriptedSession) Reply(_ context.Context, tr []episode.Message) (episode.Reply, error) {
	if tr[len(tr)-1].Speaker != episode.PersuaderSpeaker {
		return episode.Reply{}, errors.New("transcript does not end with the persuader")
	}
	r := s.s.replies[min(s.i, len(s.s.replies)-1)]
	s.i++
	if r.err != nil {
		return episode.Reply{}, r.err
	}
	return episode.Reply{Text: r.text, Decision: r.d}, nil
}

func cont(text string) scriptReply { return scriptReply{text: text, d: decision.Continue} }

var testScenario = &scenario.Scenario{ID: "t1", Proposal: "Donate $1 to Save the Children.", Split: scenario.Heldout}

// fixedQ returns q from a list, per turn.
type fixedQ []int

func (f fixedQ) Rationality(_ context.Context, ex *Exchange) (int, string) {
	return f[min(ex.Turn-1, len(f)-1)], "fixed"
}

func TestPlayStopsAtSuccessTerminalAndT(t *testing.T) {
	ctx := context.Background()
	c := &Case{Task: bdi.P4G, Scenario: testScenario}
	cfg := Config{Success: SimSuccessJudge{}, Rationality: fixedQ{1, 0, 1}}
	per := lines{"Hi!", "Here is how the money is used.", "Would you give $1?"}
	user := &scripted{name: "u", replies: []scriptReply{cont("Hello."), cont("I see."), {text: "Okay, $1.", d: decision.Accept}}}
	d, err := Play(ctx, cfg, c, per, user, 7)
	if err != nil {
		t.Fatal(err)
	}
	if d.SuccessTurn != 3 || len(d.Turns) != 3 || d.Case != "t1" || d.Turns[2].Labels[0] != "agree" || d.Turns[1].Labels[0] != "neutral" {
		t.Fatalf("dialogue %+v", d)
	}
	tr := d.Trace()
	if !reflect.DeepEqual(tr.Q, []int{1, 0, 1}) || tr.RCSuccess(8, DefaultTauQ) {
		t.Errorf("trace %+v: q-bar 2/3 must fail RCSR", tr)
	}
	// A conditional ends the dialogue without P4G success.
	user = &scripted{name: "u", replies: []scriptReply{cont("Hm."), {text: "Only if it is tax-deductible.", d: decision.Conditional}, cont("never reached")}}
	d, _ = Play(ctx, cfg, c, per, user, 7)
	if d.SuccessTurn != 0 || len(d.Turns) != 2 || d.Turns[1].Labels[0] != "positive" {
		t.Fatalf("conditional: %+v", d)
	}
	// The budget: T turns, then stop.
	user = &scripted{name: "u", replies: []scriptReply{cont("No.")}}
	d, _ = Play(ctx, Config{Success: SimSuccessJudge{}, T: 5}, c, per, user, 7)
	if len(d.Turns) != 5 || d.SuccessTurn != 0 || d.Turns[4].QRaw != "no judge" {
		t.Fatalf("budget: %d turns", len(d.Turns))
	}
	// A role error ends the dialogue as a recorded failure.
	user = &scripted{name: "u", replies: []scriptReply{cont("Hm."), {err: errors.New("engine down")}}}
	d, err = Play(ctx, cfg, c, per, user, 7)
	if err != nil || len(d.Turns) != 1 || !strings.Contains(d.Error, "turn 2 user: engine down") {
		t.Fatalf("role error: %v %+v", err, d)
	}
	if _, err := Play(ctx, Config{}, c, per, user, 7); err == nil {
		t.Error("missing success judge accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Play(cctx, cfg, c, per, &scripted{name: "u", replies: []scriptReply{cont("x")}}, 7); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// ESConv end to end against a fake persuadee: the opening is the
// help-seeker's situation, and a conditional (somewhat_better, 0.5)
// succeeds under the paper's >= 0.5.
func TestPlayESConv(t *testing.T) {
	c := &Case{Task: bdi.ESConv, ID: "esc-1", Scenario: testScenario, Emotion: "anxiety", Problem: "job crisis",
		Opening: []episode.Message{{Speaker: episode.PersuadeeSpeaker, Text: "I lost my job and can't sleep."}}}
	per := lines{"That sounds really hard.", "Could you try writing down one small step for tomorrow?"}
	sess := &linesSession{l: per}
	wrap := sessPersuader{sess}
	user := &scripted{name: "u", replies: []scriptReply{cont("Yes, it is."), {text: "I could try that.", d: decision.Conditional}}}
	d, err := Play(context.Background(), Config{Success: SimSuccessJudge{}}, c, wrap, user, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.SuccessTurn != 2 || d.Turns[1].Labels[0] != "somewhat_better" {
		t.Fatalf("%+v", d)
	}
	if len(sess.seen[0]) != 1 || sess.seen[0][0].Text != "I lost my job and can't sleep." {
		t.Errorf("first turn saw %+v, want the opening", sess.seen[0])
	}
	strict := DefaultSuccessRule
	strict.StrictESConv = true
	d, _ = Play(context.Background(), Config{Success: SimSuccessJudge{Rule: strict}}, c, per, user, 1)
	if d.SuccessTurn != 0 {
		t.Errorf("strict ESConv succeeded at %d", d.SuccessTurn)
	}
}

type sessPersuader struct{ s *linesSession }

func (p sessPersuader) Name() string { return "lines" }
func (p sessPersuader) Start(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) {
	return p.s, nil
}

// fakeChat answers with a function of the prompt.
type fakeChat struct {
	answer func(prompt string, n int) (string, error)
	n      int
	last   []string
}

func (f *fakeChat) Chat(_ context.Context, r llm.ChatRequest) (*llm.ChatResponse, error) {
	f.n++
	p := r.Messages[len(r.Messages)-1].Content
	f.last = append(f.last, p)
	s, err := f.answer(p, f.n)
	if err != nil {
		return nil, err
	}
	return &llm.ChatResponse{Content: s}, nil
}

// CraigslistBargain end to end: the seller (fake persuadee) accepts the
// buyer's $4,500 at turn 2; both the rule-based judge and an LLM judge on
// a fake engine read the deal, and the buyer utility is
// (4500 - 6200) / (3100 - 6200).
func TestPlayCB(t *testing.T) {
	c := &Case{Task: bdi.CB, ID: "cb-1", Scenario: testScenario, BuyerPrice: 3100, SellerPrice: 6200,
		Opening: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Hi, how much is the car?"}, {Speaker: episode.PersuadeeSpeaker, Text: "It is $6200."}}}
	per := lines{"Would you take $3,500?", "Okay, how about $4,500 cash today?"}
	user := &scripted{name: "seller", replies: []scriptReply{cont("Too low. I could do $5,800."), {text: "Deal, $4,500 it is.", d: decision.Accept}}}
	want := (4500.0 - 6200) / (3100 - 6200)
	d, err := Play(context.Background(), Config{Success: SimSuccessJudge{}}, c, per, user, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.SuccessTurn != 2 || d.Turns[1].Price == nil || *d.Turns[1].Price != 4500 || d.Turns[0].Labels[0] != NoDeal {
		t.Fatalf("rule judge: %+v", d)
	}
	near(t, "utility", d.Turns[1].Score, want, 1e-12)
	eng := &fakeChat{answer: func(p string, _ int) (string, error) {
		if strings.Contains(p, "Seller: Deal, $4,500 it is.") {
			return "They have reached a deal at $4,500.", nil
		}
		return "They have not reached a deal.", nil
	}}
	d, err = Play(context.Background(), Config{Success: &LLMSuccessJudge{Engine: eng}}, c, per, user, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.SuccessTurn != 2 || eng.n != 6 {
		t.Fatalf("LLM judge: success turn %d after %d calls", d.SuccessTurn, eng.n)
	}
	near(t, "LLM utility", d.Turns[1].Score, want, 1e-12)
	p := eng.last[len(eng.last)-1]
	for _, s := range []string{"Buyer: Hi, how much is the car?", "Seller: It is $6200.", "Buyer: Okay, how about $4,500 cash today?", "They have reached a deal at [price]"} {
		if !strings.Contains(p, s) {
			t.Errorf("prompt lacks %q:\n%s", s, p)
		}
	}
	// Every sample failing is a judge error: the turn is not a success.
	bad := &fakeChat{answer: func(string, int) (string, error) { return "", errors.New("timeout") }}
	d, _ = Play(context.Background(), Config{Success: &LLMSuccessJudge{Engine: bad, Samples: 2}, T: 1}, c, per, user, 1)
	if d.Turns[0].JudgeError != "timeout" || d.Turns[0].Success {
		t.Errorf("judge error: %+v", d.Turns[0])
	}
}

func TestLLMRationalityJudge(t *testing.T) {
	eng := &fakeChat{answer: func(p string, n int) (string, error) {
		switch n {
		case 1:
			return "NOT_RATIONAL", nil
		case 2:
			return "Sure, here's my view: it depends", nil
		}
		return "", errors.New("down")
	}}
	j := &LLMRationalityJudge{Engine: eng}
	st := bdi.State{Belief: "The user distrusts charities.", Desire: "d", Intention: "i", Receptivity: 0.2, Confidence: 0.7, Valence: -0.3}
	ex := &Exchange{Case: &Case{Task: bdi.P4G}, Utterance: "Give now!", Reply: episode.Reply{Text: "Okay fine."}, State: &st}
	for _, want := range []int{NotRational, Unjudged, Unjudged} {
		if q, raw := j.Rationality(context.Background(), ex); q != want {
			t.Errorf("q = %d (%s), want %d", q, raw, want)
		}
	}
	for _, s := range []string{"Belief: The user distrusts charities.", "Assistant: Give now!", "User: Okay fine.", "RATIONAL or NOT_RATIONAL"} {
		if !strings.Contains(eng.last[0], s) {
			t.Errorf("prompt lacks %q", s)
		}
	}
}

// p4gHeldout loads the built-in set once (schema validation of ~1,000
// scenarios is the slowest part of these tests).
var p4gHeldout = sync.OnceValues(func() ([]scenario.Scenario, error) {
	ss, err := scenario.Resolve("p4g")
	return scenario.Filter(ss, scenario.Heldout), err
})

func heldout(t *testing.T, n int) []*Case {
	t.Helper()
	ss, err := p4gHeldout()
	if err != nil {
		t.Fatal(err)
	}
	return ScenarioCases(append([]scenario.Scenario(nil), ss[:n]...))
}

// With the simulator, the teacher reads its latent state: progress starts
// at 0, the increments telescope to the final progress, and the rewards
// follow Eq. 15-16 (no student: r_S = Delta s).
func TestPlayMindWithSim(t *testing.T) {
	per, _ := baseline.New("script")
	c := heldout(t, 3)
	for _, cs := range c {
		d, err := Play(context.Background(), Config{Success: SimSuccessJudge{}, Rationality: SimRationalityJudge{}, Mind: &Mind{}}, cs, per, sim.New(sim.Soft()), 11)
		if err != nil {
			t.Fatal(err)
		}
		if d.Initial == nil || d.Error != "" {
			t.Fatalf("%s: %+v", cs.ID, d)
		}
		sum := 0.0
		for _, tr := range d.Turns {
			if tr.State == nil || tr.Progress == nil || tr.DeltaS == nil || tr.RS == nil || tr.RU == nil {
				t.Fatalf("%s turn %d: missing BDI fields", cs.ID, tr.T)
			}
			sum += *tr.DeltaS
			near(t, "r_S", *tr.RS, *tr.DeltaS, 1e-15)
			near(t, "r_U", *tr.RU, -*tr.DeltaS+0.5*float64(tr.Q), 1e-15)
			if tr.Q == Unjudged {
				t.Errorf("sim judge left q = 0 at turn %d", tr.T)
			}
		}
		near(t, "telescoping", sum, *d.Turns[len(d.Turns)-1].Progress, 1e-12)
	}
}

// Evaluate is deterministic and independent of the number of workers, and
// the report's rows are the metrics of its traces.
func TestEvaluateDeterministic(t *testing.T) {
	cases := heldout(t, 12)
	var pers []episode.Persuader
	for _, n := range []string{"script", "random"} {
		p, _ := baseline.New(n)
		pers = append(pers, p)
	}
	users := []User{
		{Name: "sim-soft", Persuadee: sim.New(sim.Soft()), Success: SimSuccessJudge{}, Rationality: SimRationalityJudge{}},
		{Name: "sim-hard", Persuadee: sim.New(sim.Hard()), Success: SimSuccessJudge{}, Rationality: SimRationalityJudge{}},
	}
	cfg := EvalConfig{Seed: 5, Workers: 1, Bootstrap: stats.BootstrapOptions{Resamples: 500, Seed: 5}}
	a, err := Evaluate(context.Background(), cfg, cases, pers, users, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workers = 4
	calls := 0
	b, err := Evaluate(context.Background(), cfg, cases, pers, users, func(done, total int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2*2*12 {
		t.Errorf("progress called %d times", calls)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("results differ between 1 and 4 workers")
	}
	rep, err := a.Report(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 4 || len(rep.Worst) != 2 || len(rep.Diffs) != 2 {
		t.Fatalf("report shape %d %d %d", len(rep.Rows), len(rep.Worst), len(rep.Diffs))
	}
	for k, row := range rep.Rows {
		trs := a.Traces(k/2, k%2)
		if row.SR.Estimate != SR(trs, 8) || row.AT.Estimate != AT(trs, 8) || row.RCSR.Estimate != RCSR(trs, 8, DefaultTauQ) {
			t.Errorf("row %d: %+v", k, row)
		}
	}
	w, _ := WorstSR([][]Trace{a.Traces(0, 0), a.Traces(0, 1)}, 8)
	if rep.Worst[0].SR.Estimate != w {
		t.Errorf("worst %v, want %v", rep.Worst[0].SR.Estimate, w)
	}
	var sb strings.Builder
	if err := rep.WriteText(&sb, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"SR@8", "WorstRCSR@8", "Paired differences against script", "t=8"} {
		if !strings.Contains(sb.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if _, err := Evaluate(context.Background(), cfg, cases, pers, append(users, users[0]), nil); err == nil {
		t.Error("duplicate user accepted")
	}
}

// Played dialogues become a BDI cache whose turn records hold the history
// prefix h_{t+1}; a student fitted on it predicts better than the mean
// (the mean predictor is a student with a huge penalty).
func TestCacheRecordsAndStudent(t *testing.T) {
	cases := heldout(t, 20)
	per, _ := baseline.New("script")
	rnd, _ := baseline.New("random")
	users := []User{{Name: "sim", Persuadee: sim.New(sim.DefaultConfig()), Success: SimSuccessJudge{}}}
	enc := embed.NewMemo(embed.NewHashedTFIDF(32))
	res, err := Evaluate(context.Background(), EvalConfig{Seed: 2, Workers: 2, Mind: &Mind{Encoder: enc}}, cases, []episode.Persuader{per, rnd}, users, nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Case{}
	for _, c := range cases {
		byID[c.ID] = c
	}
	var ds []*Dialogue
	turns := 0
	for p := range res.Dialogues {
		ds = append(ds, res.Dialogues[p][0]...)
		for _, d := range res.Dialogues[p][0] {
			turns += len(d.Turns)
		}
	}
	c := CacheRecords(byID, ds)
	if len(c.Sessions) != 40 || len(c.Turns) != turns {
		t.Fatalf("%d sessions, %d turns (want 40, %d)", len(c.Sessions), len(c.Turns), turns)
	}
	tr := c.Turns[2]
	if len(tr.History) != 2*tr.Turn || tr.History[len(tr.History)-1].Speaker != episode.PersuadeeSpeaker ||
		tr.History[len(tr.History)-1].Text != ds[0].Turns[tr.Turn-1].Persuadee {
		t.Errorf("turn record %d: %d messages", tr.Turn, len(tr.History))
	}
	var buf strings.Builder
	if err := c.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := bdi.ReadCache("mem", strings.NewReader(buf.String()))
	if err != nil || len(back.Turns) != len(c.Turns) {
		t.Fatalf("round trip: %v", err)
	}
	ex, err := back.Examples(context.Background(), enc, bdi.DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	errOf := func(lambda float64) float64 {
		st, err := bdi.FitStudent(ex, bdi.DefaultAlpha, lambda)
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for _, e := range ex {
			s += bdi.DistA(st.Predict(e.History), e.Z, 32)
		}
		return s / float64(len(ex))
	}
	fit, mean := errOf(1), errOf(1e12)
	if !(fit < 0.8*mean) {
		t.Errorf("student error %.4f not below 0.8 x mean-predictor error %.4f", fit, mean)
	}
}
