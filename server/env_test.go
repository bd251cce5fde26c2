package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/store"
)

func newEnv(t *testing.T, cfg EnvConfig) *Env {
	t.Helper()
	f, err := NewFactory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f.NewEnv()
}

func u64(v uint64) *uint64 { return &v }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func code(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// replay is a persuader that says fixed lines.
type replay struct{ lines []string }

func (r *replay) Name() string { return "replay" }
func (r *replay) Start(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) {
	return &replaySession{r: r}, nil
}

type replaySession struct {
	r *replay
	i int
}

func (s *replaySession) Say(context.Context, []episode.Message) (episode.Utterance, error) {
	s.i++
	return episode.Utterance{Text: s.r.lines[s.i-1]}, nil
}

// An external persuader that sends the script persuader's utterances gets
// exactly the episode persuarena eval records: same replies, decisions,
// beliefs, dense rewards, terminal state and R_goal, for the same (seed,
// scenario, rollout).
func TestEnvMatchesEpisodeRun(t *testing.T) {
	ctx := context.Background()
	all := sets(t)
	script, err := baseline.New("script")
	if err != nil {
		t.Fatal(err)
	}
	pee := sim.New(sim.DefaultConfig())
	f, err := NewFactory(EnvConfig{Persuadee: pee, Sets: all, Split: scenario.Heldout})
	if err != nil {
		t.Fatal(err)
	}
	terminals := map[decision.Terminal]int{}
	for _, set := range all {
		hs := scenario.Filter(set.Scenarios, scenario.Heldout)[:12]
		for i := range hs {
			sc := &hs[i]
			const runSeed, rollout = 17, 1
			ref, err := episode.Run(ctx, episode.Config{}, sc, script, pee, episode.Seed(runSeed, sc.ID, rollout))
			if err != nil {
				t.Fatal(err)
			}
			env := f.NewEnv()
			obs, err := env.Reset(ctx, ResetOptions{Set: set.Name, ScenarioID: sc.ID, Seed: u64(runSeed), Rollout: rollout})
			if err != nil {
				t.Fatal(err)
			}
			if !ptrEq(obs.Metadata.Belief, ref.B0) {
				t.Fatalf("%s: B0 %v, eval %v", sc.ID, fp(obs.Metadata.Belief), fp(ref.B0))
			}
			for _, rt := range ref.Turns {
				obs, rw, done, err := env.Step(ctx, Action{Message: rt.Persuader})
				if err != nil {
					t.Fatal(err)
				}
				dec := string(rt.Decision)
				if rt.T == 10 && rt.Decision == decision.Continue {
					dec = DecisionPending
				}
				if obs.Reply != rt.Persuadee || obs.Decision != dec || obs.Turn != rt.T ||
					!ptrEq(obs.Metadata.Belief, rt.Belief) || !ptrEq(obs.Metadata.Dense, rt.Dense) ||
					strings.Join(obs.Metadata.Acts, ",") != strings.Join(rt.Acts, ",") {
					t.Fatalf("%s turn %d: server %q %s B=%v r=%v acts=%v; eval %q %s B=%v r=%v acts=%v", sc.ID, rt.T,
						obs.Reply, obs.Decision, fp(obs.Metadata.Belief), fp(obs.Metadata.Dense), obs.Metadata.Acts,
						rt.Persuadee, rt.Decision, fp(rt.Belief), fp(rt.Dense), rt.Acts)
				}
				if rt.Dense != nil && rw != *rt.Dense {
					t.Fatalf("%s turn %d: reward %v, dense %v", sc.ID, rt.T, rw, *rt.Dense)
				}
				if done != (rt.T == len(ref.Turns)) {
					t.Fatalf("%s turn %d: done %v with %d turns", sc.ID, rt.T, done, len(ref.Turns))
				}
			}
			got := env.Episode()
			if got.Terminal != ref.Terminal || got.RGoal != ref.RGoal || got.Seed != ref.Seed {
				t.Fatalf("%s: terminal %s R_goal %v seed %d; eval %s %v %d", sc.ID, got.Terminal, got.RGoal, got.Seed, ref.Terminal, ref.RGoal, ref.Seed)
			}
			terminals[ref.Terminal]++
		}
	}
	if len(terminals) < 2 {
		t.Fatalf("all 24 episodes ended %v; the comparison covers too little", terminals)
	}
}

func ptrEq(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func fp(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// playFake runs the fake persuadee's episode under mode and returns the
// rewards and the last observation.
func playFake(t *testing.T, cfg EnvConfig, mode RewardMode, steps int) ([]float64, Observation, *Env) {
	t.Helper()
	env := newEnv(t, cfg)
	if _, err := env.Reset(context.Background(), ResetOptions{Seed: u64(1), Reward: mode}); err != nil {
		t.Fatal(err)
	}
	var rws []float64
	var last Observation
	for i := 0; i < steps; i++ {
		obs, rw, done, err := env.Step(context.Background(), Action{Message: "What worries you most about it?"})
		if err != nil {
			t.Fatal(err)
		}
		rws = append(rws, rw)
		last = obs
		if done != (i == steps-1) {
			t.Fatalf("step %d: done %v", i+1, done)
		}
	}
	return rws, last, env
}

type constJudge float64

func (j constJudge) Strategy(context.Context, scenario.Public, []episode.Message) (float64, episode.Usage, error) {
	return float64(j), episode.Usage{}, nil
}

// Rewards by mode on a scripted persuadee: B = 0.5, 0.6, 0.4, 0.7 and an
// accept at turn 3 (R_goal +3, Probe-RPO paper).
func TestRewardModes(t *testing.T) {
	f := &fake{decisions: []decision.Decision{decision.Continue, decision.Continue, decision.Accept}, probs: []float64{0.5, 0.6, 0.4, 0.7}}
	cfg := fakeConfig(t, f).Env
	cases := []struct {
		mode  RewardMode
		judge episode.Judge
		want  []float64
		rout  float64
	}{
		{Dense, nil, []float64{0.1, -0.2, 0.3}, 3},
		{Outcome, nil, []float64{0, 0, 3}, 3},
		{Both, nil, []float64{0.1, -0.2, 3.3}, 3},
		{Outcome, constJudge(0.5), []float64{0, 0, 3.5}, 3.5},
		{Both, constJudge(-1), []float64{0.1, -0.2, 2.3}, 2},
	}
	for _, c := range cases {
		cfg.Judge = c.judge
		rws, last, env := playFake(t, cfg, c.mode, 3)
		for i := range rws {
			if !near(rws[i], c.want[i]) {
				t.Fatalf("%s judge %v: rewards %v, want %v", c.mode, c.judge, rws, c.want)
			}
		}
		md := last.Metadata
		if md.Terminal != decision.TermAccept || *md.RGoal != 3 || !near(*md.ROut, c.rout) || md.RewardMissing || last.Decision != "accept" {
			t.Fatalf("%s: last metadata %+v decision %s", c.mode, md, last.Decision)
		}
		if (c.judge == nil) != (md.RStrategy == nil) {
			t.Fatalf("%s: r_strategy %v with judge %v", c.mode, fp(md.RStrategy), c.judge)
		}
		// The stored episode carries the rating: its R_out (w = 1) is the
		// metadata's.
		if ep := env.Episode(); (ep.RStrategy == nil) != (c.judge == nil) || !near(ep.OutcomeReward(1), c.rout) {
			t.Fatalf("%s: episode r_strategy %v, R_out %v", c.mode, ep.RStrategy, ep.OutcomeReward(1))
		}
		st := env.State()
		if st.StepCount != 3 || !st.Done || st.Terminal != decision.TermAccept || st.RewardMode != c.mode || len(st.Rewards) != 3 || !near(st.Rewards[2], c.want[2]) {
			t.Fatalf("%s: state %+v", c.mode, st)
		}
	}
}

// Unreadable probes give no belief: the dense reward is 0 and flagged
// missing, at the turn itself and the next (B_{t-1} missing), as
// episode.Run leaves Dense nil.
func TestRewardMissing(t *testing.T) {
	f := &fake{probs: []float64{0.5, -1, 0.7, 0.6}}
	cfg := fakeConfig(t, f).Env
	cfg.Tmax = 3
	env := newEnv(t, cfg)
	obs, err := env.Reset(context.Background(), ResetOptions{Seed: u64(2)})
	if err != nil || *obs.Metadata.Belief != 0.5 || obs.Reward != nil {
		t.Fatalf("reset: %+v %v", obs, err)
	}
	want := []struct {
		r       float64
		missing bool
	}{{0, true}, {0, true}, {-0.1, false}}
	for i, w := range want {
		obs, rw, _, err := env.Step(context.Background(), Action{Message: "Here is what the study found."})
		if err != nil {
			t.Fatal(err)
		}
		if !near(rw, w.r) || obs.Metadata.RewardMissing != w.missing || (obs.Metadata.Dense == nil) != w.missing {
			t.Fatalf("turn %d: reward %v missing %v dense %v, want %v %v", i+1, rw, obs.Metadata.RewardMissing, fp(obs.Metadata.Dense), w.r, w.missing)
		}
	}
	st := env.State()
	if len(st.Beliefs) != 4 || st.Beliefs[1] != nil || !near(*st.Beliefs[2], 0.7) || st.Terminal != decision.TermPending || *st.RGoal != -1 {
		t.Fatalf("state %+v", st)
	}
}

// Tmax without a decision ends the episode as pending (R_goal -1).
func TestTmaxPending(t *testing.T) {
	cfg := fakeConfig(t, &fake{}).Env
	cfg.Tmax = 2
	rws, last, _ := playFake(t, cfg, Outcome, 2)
	if last.Decision != DecisionPending || !last.Done || last.Turn != 2 || last.Metadata.Terminal != decision.TermPending || rws[0] != 0 || rws[1] != -1 {
		t.Fatalf("last %+v rewards %v", last, rws)
	}
}

// A context-window overflow ends the episode as truncated, never as a
// rejection (docs/engines.md): R_goal of pending, dense reward missing.
func TestTruncated(t *testing.T) {
	cfg := fakeConfig(t, &fake{replyErr: fmt.Errorf("engine: %w", episode.ErrTruncated), errAt: 2}).Env
	var stored []*episode.Episode
	cfg.Sink = func(ep *episode.Episode) error { stored = append(stored, ep); return nil }
	env := newEnv(t, cfg)
	env.Reset(context.Background(), ResetOptions{Seed: u64(3), Reward: Both})
	env.Step(context.Background(), Action{Message: "hello"})
	obs, rw, done, err := env.Step(context.Background(), Action{Message: "hello again"})
	if err != nil || !done || obs.Decision != DecisionTruncated || obs.Metadata.Terminal != decision.TermTruncated || rw != -1 || !obs.Metadata.RewardMissing {
		t.Fatalf("obs %+v reward %v done %v err %v", obs, rw, done, err)
	}
	if len(stored) != 1 || stored[0].Terminal != decision.TermTruncated || len(stored[0].Turns) != 1 {
		t.Fatalf("stored %+v", stored)
	}
}

// A persuadee failure is an EXECUTION_ERROR (HTTP 500) and ends the
// episode as failed; stepping on is an EXECUTION_ERROR (HTTP 409).
func TestPersuadeeFailure(t *testing.T) {
	cfg := fakeConfig(t, &fake{replyErr: errors.New("engine down"), errAt: 1}).Env
	var stored []*episode.Episode
	cfg.Sink = func(ep *episode.Episode) error { stored = append(stored, ep); return nil }
	env := newEnv(t, cfg)
	env.Reset(context.Background(), ResetOptions{Seed: u64(3)})
	_, _, done, err := env.Step(context.Background(), Action{Message: "hello"})
	var e *Error
	if !errors.As(err, &e) || e.Code != ExecutionError || e.HTTPStatus() != http.StatusInternalServerError || !done || !strings.Contains(e.Message, "engine down") {
		t.Fatalf("err %v done %v", err, done)
	}
	if st := env.State(); !st.Done || st.Terminal != decision.TermFailed || st.RGoal != nil {
		t.Fatalf("state %+v", st)
	}
	_, _, _, err = env.Step(context.Background(), Action{Message: "hello"})
	if !errors.As(err, &e) || e.Code != ExecutionError || e.HTTPStatus() != http.StatusConflict {
		t.Fatalf("step after failure: %v", err)
	}
	if len(stored) != 1 || stored[0].Terminal != decision.TermFailed || stored[0].Error == "" {
		t.Fatalf("stored %+v", stored)
	}
}

func TestEnvValidation(t *testing.T) {
	cfg := fakeConfig(t, &fake{}).Env
	cfg.MaxMessageBytes = 10
	env := newEnv(t, cfg)
	ctx := context.Background()
	if _, _, _, err := env.Step(ctx, Action{Message: "hi"}); code(err) != ValidationError {
		t.Fatalf("step before reset: %v", err)
	}
	bad := []ResetOptions{
		{Set: "nope"}, {Split: "test"}, {Reward: "sparse"}, {Rollout: -1},
		{ScenarioID: "arena-heldout-0001"}, // not in the train split
		{EpisodeID: "has space"}, {EpisodeID: strings.Repeat("x", 256)},
	}
	for _, o := range bad {
		if _, err := env.Reset(ctx, o); code(err) != ValidationError {
			t.Fatalf("reset %+v: %v", o, err)
		}
	}
	if _, err := env.Reset(ctx, ResetOptions{ScenarioID: "arena-heldout-0001", Split: "heldout"}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"", "  \n\t", "12345678901"} {
		if _, _, _, err := env.Step(ctx, Action{Message: m}); code(err) != ValidationError {
			t.Fatalf("message %q: %v", m, err)
		}
	}
	if _, _, _, err := env.Step(ctx, Action{Message: "1234567890"}); err != nil {
		t.Fatalf("10-byte message: %v", err)
	}
	if st := env.State(); st.StepCount != 1 {
		t.Fatalf("rejected actions changed the episode: %+v", st)
	}
	for _, c := range []struct {
		raw  string
		want Code
	}{{`{"message":"hi","tone":"warm"}`, ValidationError}, {`{"message":3}`, ValidationError}, {`{"message":"hi"} x`, InvalidJSON},
		{`{"message":"hi"}{}`, InvalidJSON}, {`null`, ValidationError}, {`{"message":`, InvalidJSON}} {
		if _, err := DecodeAction([]byte(c.raw)); code(err) != c.want {
			t.Fatalf("DecodeAction(%s): %v, want %s", c.raw, err, c.want)
		}
	}
	if a, err := DecodeAction([]byte(`{"message":"hi","metadata":{"k":1}}`)); err != nil || a.Message != "hi" {
		t.Fatalf("action with OpenEnv metadata: %+v %v", a, err)
	}
	if _, err := DecodeResetOptions([]byte(`{"seed":-1}`)); code(err) != ValidationError {
		t.Fatalf("negative seed: %v", err)
	}
}

// Without scenario_id the scenario is pool[Mix(seed^3) mod n] of the set
// and split, and the seed of a seedless reset comes from the server.
func TestScenarioPick(t *testing.T) {
	cfg := fakeConfig(t, &fake{}).Env
	env := newEnv(t, cfg)
	p4gVal := scenario.Filter(sets(t)[1].Scenarios, scenario.Val)
	for _, seed := range []uint64{0, 1, 99, 1 << 63} {
		obs, err := env.Reset(context.Background(), ResetOptions{Seed: u64(seed), Set: "p4g", Split: "val"})
		if err != nil {
			t.Fatal(err)
		}
		want := p4gVal[episode.Mix(seed^3)%uint64(len(p4gVal))].ID
		if obs.Scenario.ID != want {
			t.Fatalf("seed %d: scenario %s, want %s", seed, obs.Scenario.ID, want)
		}
		if st := env.State(); st.Seed != seed || st.Set != "p4g" || st.Split != "val" {
			t.Fatalf("state %+v", st)
		}
	}
	seen := map[uint64]bool{}
	for range 5 {
		env.Reset(context.Background(), ResetOptions{})
		seen[env.State().Seed] = true
	}
	if len(seen) != 5 {
		t.Fatalf("5 seedless resets gave %d distinct seeds", len(seen))
	}
}

// Finished episodes reach the run database with distinct rollout numbers,
// so one scenario can be played many times in a serve run; abandoned
// episodes are not stored.
func TestSinkToStore(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateRun(ctx, store.Run{ID: "serve-1", Kind: "serve", Seed: 0}); err != nil {
		t.Fatal(err)
	}
	cfg := fakeConfig(t, &fake{decisions: []decision.Decision{decision.Reject}}).Env
	cfg.Sink = func(ep *episode.Episode) error { return db.SaveEpisode(ctx, "serve-1", ep) }
	env := newEnv(t, cfg)
	for i := range 3 {
		env.Reset(ctx, ResetOptions{Seed: u64(5), ScenarioID: "arena-train-0001"})
		if i == 1 {
			continue // abandoned by the next reset
		}
		if _, _, done, err := env.Step(ctx, Action{Message: "Please sign today."}); err != nil || !done {
			t.Fatalf("done %v err %v", done, err)
		}
		if strings.Contains(env.Episode().Error, "not stored") {
			t.Fatal(env.Episode().Error)
		}
	}
	eps, err := db.Episodes(ctx, "serve-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 2 || eps[0].Rollout == eps[1].Rollout || eps[0].Terminal != decision.TermReject || eps[0].Persuader != DefaultPersuaderName || eps[0].RGoal != -3 {
		t.Fatalf("stored %d episodes: %+v", len(eps), eps)
	}
}
