package selfplay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/scenario"
)

// marker is planted in every test scenario's hidden persona and
// motivation; it must never reach the planner.
const marker = "ZQXHIDDENMARKER"

// testScenarios returns the first n p4g train scenarios with the marker
// in their hidden persona and motivation.
func testScenarios(t *testing.T, n int) []scenario.Scenario {
	t.Helper()
	ss, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	ss = scenario.Filter(ss, scenario.Train)[:n]
	out := make([]scenario.Scenario, n)
	for i := range ss {
		out[i] = ss[i]
		out[i].Hidden.Persona += " " + marker + " persona."
		out[i].Hidden.Motivation += " " + marker + " motivation."
	}
	return out
}

// tinyConfig is a configuration small enough for unit tests.
func tinyConfig() Config {
	c := DefaultConfig()
	c.Cycles, c.G, c.ScenariosPerStep, c.SystemSteps, c.UserSteps, c.Updates = 2, 2, 3, 1, 1, 2
	c.UserHidden, c.UserWarmSteps = 8, 20
	c.Seed = 7
	return c
}

func newTiny(t *testing.T, cfg Config, o Options) *Runner {
	t.Helper()
	if o.Scenarios == nil {
		o.Scenarios = testScenarios(t, 8)
	}
	r, err := New(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type snapshot struct {
	sys, usr string
	sysOpt   string
	usrOpt   string
}

func snap(t *testing.T, r *Runner) snapshot {
	t.Helper()
	j := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	so, err := r.sysOpt.State()
	if err != nil {
		t.Fatal(err)
	}
	uo, err := r.usrOpt.State()
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{sys: j(r.sys), usr: j(r.usr), sysOpt: string(so), usrOpt: string(uo)}
}

// TestFrozenSideUnchanged: a system update leaves the user's weights and
// Adam state bit-identical and changes the planner; a user update leaves
// the planner's bit-identical and changes the user (Algorithm 1 lines 7
// and 12).
func TestFrozenSideUnchanged(t *testing.T) {
	r := newTiny(t, tinyConfig(), Options{Workers: 2})
	ctx := context.Background()
	before := snap(t, r)
	if _, _, _, err := r.updateStep(ctx, 0, PhaseSystem, 0); err != nil {
		t.Fatal(err)
	}
	mid := snap(t, r)
	if mid.usr != before.usr || mid.usrOpt != before.usrOpt {
		t.Error("the frozen user changed during the system update")
	}
	if mid.sys == before.sys || mid.sysOpt == before.sysOpt {
		t.Error("the system update did not change the planner")
	}
	if _, _, _, err := r.updateStep(ctx, 0, PhaseUser, 0); err != nil {
		t.Fatal(err)
	}
	after := snap(t, r)
	if after.sys != mid.sys || after.sysOpt != mid.sysOpt {
		t.Error("the frozen planner changed during the user update")
	}
	if after.usr == mid.usr || after.usrOpt == mid.usrOpt {
		t.Error("the user update did not change the user")
	}
}

// TestAlternationOrder: each cycle runs system, then user, then the
// student refresh; the user phase plays the planner the system phase has
// just updated, and the student refresh follows the user update.
func TestAlternationOrder(t *testing.T) {
	r := newTiny(t, tinyConfig(), Options{Workers: 2})
	type ev struct {
		cycle int
		p     Phase
		s     snapshot
		stud  string
	}
	var evs []ev
	r.onPhase = func(c int, p Phase) {
		b, _ := json.Marshal(r.student)
		evs = append(evs, ev{c, p, snap(t, r), string(b)})
	}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%d:%s", e.cycle, e.p))
	}
	want := []string{"0:system", "0:user", "0:student", "1:system", "1:user", "1:student"}
	if !slices.Equal(got, want) {
		t.Fatalf("phases %v, want %v", got, want)
	}
	for c := range 2 {
		sysStart, usrStart, studStart := evs[3*c].s, evs[3*c+1].s, evs[3*c+2].s
		if usrStart.sys == sysStart.sys {
			t.Errorf("cycle %d: the user phase did not see an updated planner", c)
		}
		if usrStart.usr != sysStart.usr {
			t.Errorf("cycle %d: the user changed before its phase", c)
		}
		if studStart.usr == usrStart.usr || studStart.sys != usrStart.sys {
			t.Errorf("cycle %d: the user phase did not update only the user", c)
		}
	}
	if evs[3].stud == evs[0].stud {
		t.Error("the student was not refreshed after cycle 1")
	}
}

// TestDeterministic: the same seed gives the same weights, student and
// metrics, whatever the worker count.
func TestDeterministic(t *testing.T) {
	cfg := tinyConfig()
	cfg.Cycles = 1
	var res [2]struct {
		s   snapshot
		met Metrics
		st  string
	}
	for i, w := range []int{1, 3} {
		r := newTiny(t, cfg, Options{Workers: w})
		ms, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r.student)
		res[i].s, res[i].met, res[i].st = snap(t, r), ms[0], string(b)
	}
	if res[0].s != res[1].s {
		t.Error("weights or optimiser states differ between runs with the same seed")
	}
	if res[0].st != res[1].st {
		t.Error("students differ")
	}
	if !reflect.DeepEqual(finite(res[0].met), finite(res[1].met)) {
		t.Errorf("metrics differ:\n%v\n%v", res[0].met, res[1].met)
	}
	// Another seed gives another run.
	cfg.Seed = 8
	r := newTiny(t, cfg, Options{Workers: 1})
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if snap(t, r).sys == res[0].s.sys {
		t.Error("seed 8 gave the same planner as seed 7")
	}
}

// TestResumeEqualsUninterrupted: one cycle, a resume from its checkpoint
// and a second cycle give the same checkpoint bytes, weights and metrics
// as two cycles in one go.
func TestResumeEqualsUninterrupted(t *testing.T) {
	ctx := context.Background()
	cfg := tinyConfig()
	scs := testScenarios(t, 8)
	dirA, dirB := t.TempDir(), t.TempDir()
	a := newTiny(t, cfg, Options{Scenarios: scs, Workers: 2, Dir: dirA})
	msA, err := a.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := newTiny(t, cfg, Options{Scenarios: scs, Workers: 2, Dir: dirB})
	if _, err := b.Cycle(ctx); err != nil {
		t.Fatal(err)
	}
	b2, err := Resume(ctx, dirB, Options{Scenarios: scs, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if b2.CyclesDone() != 1 {
		t.Fatalf("resumed at cycle %d, want 1", b2.CyclesDone())
	}
	msB, err := b2.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(msB) != 1 || !reflect.DeepEqual(finite(msB[0]), finite(msA[1])) {
		t.Errorf("cycle 2 metrics differ after resume:\n%v\n%v", msB, msA[1])
	}
	if snap(t, a) != snap(t, b2) {
		t.Error("weights or optimiser states differ after resume")
	}
	for _, f := range []string{CheckpointFile, PlannerFile, UserFile} {
		x, err := os.ReadFile(filepath.Join(dirA, f))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(dirB, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between the uninterrupted and the resumed run", f)
		}
	}
	// A resume on other scenarios is refused.
	if _, err := Resume(ctx, dirB, Options{Scenarios: scs[:7]}); err == nil || !strings.Contains(err.Error(), "scenarios differ") {
		t.Errorf("resume on other scenarios: err = %v", err)
	}
}

// TestTinyRunChangesBoth: a two-cycle run completes, moves both policies
// away from their references, writes loadable checkpoints and plausible
// metrics.
func TestTinyRunChangesBoth(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	r := newTiny(t, tinyConfig(), Options{Workers: 2, Dir: dir, Log: &log})
	ms, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || r.CyclesDone() != 2 {
		t.Fatalf("%d cycles done", r.CyclesDone())
	}
	if slices.Equal(r.sys.W2, r.sysRef.W2) {
		t.Error("the planner did not move from its reference")
	}
	if slices.Equal(r.usr.W2, r.usrRef.W2) {
		t.Error("the user did not move from its reference")
	}
	for _, m := range ms {
		// 3 scenarios x G 2 x 1 step per phase.
		if m["sys_dialogues"] != 6 || m["user_dialogues"] != 6 {
			t.Errorf("dialogues %v / %v, want 6", m["sys_dialogues"], m["user_dialogues"])
		}
		sum := 0.0
		for a := range NumReactions {
			sum += m["user_react_"+Reaction(a).String()]
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("user reaction shares sum to %v", sum)
		}
		if m["student_n"] <= float64(len(r.base)) {
			t.Errorf("student fitted on %v examples, base alone has %d", m["student_n"], len(r.base))
		}
	}
	pl, err := planner.LoadPlanner(filepath.Join(dir, PlannerFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pl.Policy().W2, r.sys.W2) {
		t.Error("planner.json does not hold the current planner")
	}
	u, err := LoadUser(filepath.Join(dir, UserFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(u.net.W2, r.usr.W2) || u.Name() != "user:"+filepath.Join(dir, UserFile) {
		t.Error("user.json does not hold the current user")
	}
	for _, want := range []string{"user warm start:", "cycle 1/2 system", "cycle 1/2 user", "cycle 2/2 student"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// TestPlannerOnly: with UserSteps 0 the user phase is skipped and the
// user stays at its warm-start reference while the planner trains.
func TestPlannerOnly(t *testing.T) {
	cfg := tinyConfig()
	cfg.Cycles, cfg.UserSteps = 1, 0
	r := newTiny(t, cfg, Options{Workers: 2})
	var phases []Phase
	r.onPhase = func(_ int, p Phase) { phases = append(phases, p) }
	ms, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(phases, []Phase{PhaseSystem, PhaseStudent}) {
		t.Errorf("phases %v", phases)
	}
	if !slices.Equal(r.usr.W2, r.usrRef.W2) || slices.Equal(r.sys.W2, r.sysRef.W2) {
		t.Error("planner-only run changed the user or not the planner")
	}
	if _, ok := ms[0]["user_dialogues"]; ok {
		t.Error("user metrics without a user phase")
	}
}

// spy wraps a persuader and records everything it is given.
type spy struct {
	p    episode.Persuader
	mu   sync.Mutex
	seen []string
}

func (s *spy) Name() string { return s.p.Name() }
func (s *spy) Start(ctx context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	b, _ := json.Marshal(pub)
	s.mu.Lock()
	s.seen = append(s.seen, string(b))
	s.mu.Unlock()
	inner, err := s.p.Start(ctx, pub, seed)
	return &spySession{s: s, inner: inner}, err
}

type spySession struct {
	s     *spy
	inner episode.PersuaderSession
}

func (ss *spySession) Say(ctx context.Context, tr []episode.Message) (episode.Utterance, error) {
	var b strings.Builder
	for _, m := range tr {
		b.WriteString(m.Text + "\n")
	}
	ss.s.mu.Lock()
	ss.s.seen = append(ss.s.seen, b.String())
	ss.s.mu.Unlock()
	return ss.inner.Say(ctx, tr)
}

// TestHiddenProfileNeverReachesPlanner: over a self-play cycle, neither
// the public view nor any transcript the planner receives holds the
// marker planted in the hidden persona and motivation.
func TestHiddenProfileNeverReachesPlanner(t *testing.T) {
	cfg := tinyConfig()
	cfg.Cycles = 1
	r := newTiny(t, cfg, Options{Workers: 2})
	var spies []*spy
	var mu sync.Mutex
	r.wrapSystem = func(p episode.Persuader) episode.Persuader {
		s := &spy{p: p}
		mu.Lock()
		spies = append(spies, s)
		mu.Unlock()
		return s
	}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range spies {
		for _, x := range s.seen {
			n++
			if strings.Contains(x, marker) {
				t.Fatalf("the planner saw the hidden marker: %q", x)
			}
		}
	}
	if n < 12 {
		t.Fatalf("only %d planner inputs recorded", n)
	}
	// The user itself does read the scenario (its concerns are voiced).
	if !strings.Contains(r.cases[0].Scenario.Hidden.Persona, marker) {
		t.Fatal("marker not planted")
	}
}

// TestAdvantagesHand checks returns-to-go and per-turn group
// normalisation by hand (γ = 0.5, sample std, ε = 1e-6): rewards
// A = (0, 1), B = (1, 0), C = (0.5) give returns-to-go A (0.5, 1),
// B (1, 0), C (0.5). Turn 1: mean 2/3, std sqrt(1/12) = 0.288675, so
// A and C get -0.57735 and B +1.154701; turn 2 (A, B only): mean 0.5,
// std 0.707107, so ±0.707107. A failed rollout (nil) is left out.
func TestAdvantagesHand(t *testing.T) {
	cfg := grpo.DefaultConfig()
	adv, err := Advantages([][]float64{{0, 1}, {1, 0}, {0.5}, nil}, 0.5, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := math.Sqrt(1.0/12), math.Sqrt(0.5)
	want := [][]float64{{(0.5 - 2.0/3) / (s1 + 1e-6), 0.5 / (s2 + 1e-6)}, {(1 - 2.0/3) / (s1 + 1e-6), -0.5 / (s2 + 1e-6)}, {(0.5 - 2.0/3) / (s1 + 1e-6)}, nil}
	for i := range want {
		if len(adv[i]) != len(want[i]) {
			t.Fatalf("row %d: %v, want %v", i, adv[i], want[i])
		}
		for k := range want[i] {
			if math.Abs(adv[i][k]-want[i][k]) > 1e-12 {
				t.Errorf("A[%d][%d] = %.9f, want %.9f", i, k, adv[i][k], want[i][k])
			}
		}
	}
	if math.Abs(want[0][0]+0.57735) > 1e-4 || math.Abs(want[1][0]-1.154701) > 1e-4 {
		t.Fatalf("hand values off: %v", want)
	}
	// A missing reward counts 0: (NaN, 1) is (0, 1).
	a2, err := Advantages([][]float64{{math.NaN(), 1}, {1, 0}, {0.5}}, 0.5, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a2[:3], adv[:3]) {
		t.Errorf("NaN reward not counted as 0: %v vs %v", a2, adv)
	}
}

// TestConfigValidate names the bad field.
func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Cycles = 0 }, "cycles"},
		{func(c *Config) { c.G = 1 }, "g = 1"},
		{func(c *Config) { c.Weights.Gamma = 0 }, "gamma"},
		{func(c *Config) { c.Mind = "bogus" }, "mind"},
		{func(c *Config) { c.User.ClipEps = 1 }, "user"},
		{func(c *Config) { c.SystemSteps = 4096 }, "system_steps"},
		{func(c *Config) { c.SystemSteps = 0 }, "system_steps"},
		{func(c *Config) { c.UserSteps = -1 }, "user_steps"},
	} {
		cfg := DefaultConfig()
		c.mod(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v", c.want, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Error(err)
	}
}

type fixedJudge struct{}

func (fixedJudge) Rationality(context.Context, *masp.Exchange) (int, string) {
	return masp.Rational, "base"
}

// TestWithheldYesJudge: after the mind's accept or conditional, any reply
// that is not a yes is NOT_RATIONAL; otherwise the base judge decides.
func TestWithheldYesJudge(t *testing.T) {
	for _, c := range []struct {
		mind, reply decision.Decision
		q           int
		raw         string
	}{
		{decision.Accept, decision.Continue, masp.NotRational, "withheld the yes its mind had reached (accept)"},
		{decision.Conditional, decision.Reject, masp.NotRational, "withheld the yes its mind had reached (conditional)"},
		{decision.Accept, decision.Conditional, masp.Rational, "base"},
		{decision.Conditional, decision.Accept, masp.Rational, "base"},
		{decision.Reject, decision.Continue, masp.Rational, "base"},
		{decision.Continue, decision.Continue, masp.Rational, "base"},
	} {
		m := c.mind
		j := WithheldYesJudge{Base: fixedJudge{}, Mind: func() decision.Decision { return m }}
		q, raw := j.Rationality(context.Background(), &masp.Exchange{Reply: episode.Reply{Decision: c.reply}})
		if q != c.q || raw != c.raw {
			t.Errorf("mind %s, reply %s: (%d, %q), want (%d, %q)", c.mind, c.reply, q, raw, c.q, c.raw)
		}
	}
}

// TestReactionDecision maps the classes to decisions.
func TestReactionDecision(t *testing.T) {
	want := []decision.Decision{decision.Continue, decision.Continue, decision.Continue, decision.Continue, decision.Accept, decision.Conditional, decision.Reject}
	for a := range NumReactions {
		if got := Reaction(a).Decision(); got != want[a] {
			t.Errorf("%s: %s, want %s", Reaction(a), got, want[a])
		}
	}
}
