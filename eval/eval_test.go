package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

// fakePersuader says "turn N <random>" from its seed.
type fakePersuader struct{ name string }

func (f fakePersuader) Name() string { return f.name }
func (f fakePersuader) Start(_ context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	return &fakePersuaderSession{rng: rand.New(rand.NewPCG(seed, 0)), pub: pub}, nil
}

type fakePersuaderSession struct {
	rng *rand.Rand
	pub scenario.Public
}

func (s *fakePersuaderSession) Say(_ context.Context, tr []episode.Message) (episode.Utterance, error) {
	return episode.Utterance{Text: fmt.Sprintf("about %s, turn %d: %d", s.pub.Domain, len(tr)/2+1, s.rng.IntN(1000))}, nil
}

// fakePersuadee decides at random from its seed; its belief is a seeded walk.
type fakePersuadee struct{}

func (fakePersuadee) Name() string { return "fake" }
func (fakePersuadee) Start(_ context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	return &fakePersuadeeSession{rng: rand.New(rand.NewPCG(seed, 1)), p: 0.3}, nil
}

type fakePersuadeeSession struct {
	rng *rand.Rand
	p   float64
}

func (s *fakePersuadeeSession) Reply(_ context.Context, tr []episode.Message) (episode.Reply, error) {
	s.p = math.Min(0.99, math.Max(0.01, s.p+0.2*(s.rng.Float64()-0.4)))
	d := decision.Continue
	switch x := s.rng.Float64(); {
	case x < 0.1:
		d = decision.Accept
	case x < 0.15:
		d = decision.Reject
	}
	return episode.Reply{Text: fmt.Sprintf("reply %.3f", s.p), Decision: d}, nil
}

func (s *fakePersuadeeSession) Probe(_ context.Context, _ []episode.Message, b probe.Basis) ([]probe.Answer, error) {
	out := make([]probe.Answer, len(b))
	for i := range out {
		out[i] = probe.FromProbability(s.p)
	}
	return out, nil
}

func testSet(n int) Set {
	s := Set{Name: "t"}
	for i := range n {
		s.Scenarios = append(s.Scenarios, scenario.Scenario{ID: fmt.Sprintf("s%02d", i), Domain: fmt.Sprintf("d%d", i)})
	}
	return s
}

// strip removes timings, which legitimately differ between runs.
func strip(eps []*episode.Episode) string {
	slices.SortFunc(eps, func(a, b *episode.Episode) int {
		return cmpKey(episode.KeyOf(a), episode.KeyOf(b))
	})
	for _, ep := range eps {
		ep.InitialProbeMS, ep.JudgeMS = 0, 0
		for i := range ep.Turns {
			ep.Turns[i].PersuaderMS, ep.Turns[i].PersuadeeMS, ep.Turns[i].ProbeMS = 0, 0, 0
		}
	}
	raw, _ := json.Marshal(eps)
	return string(raw)
}

func cmpKey(a, b episode.Key) int {
	return cmpStrings(fmt.Sprintf("%s|%s|%s|%04d", a.Persuader, a.Persuadee, a.ScenarioID, a.Rollout),
		fmt.Sprintf("%s|%s|%s|%04d", b.Persuader, b.Persuadee, b.ScenarioID, b.Rollout))
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func run(t *testing.T, ctx context.Context, jobs []Job, workers int, sink func(*episode.Episode) error) error {
	t.Helper()
	return Execute(ctx, jobs, Options{RunID: "r", Seed: 7, Workers: workers, Sink: sink})
}

func TestSameSeedSameTranscriptAnyWorkers(t *testing.T) {
	pers := []episode.Persuader{fakePersuader{"a"}, fakePersuader{"b"}}
	jobs := Plan(pers, []episode.Persuadee{fakePersuadee{}}, []Set{testSet(20)}, 2, nil)
	if len(jobs) != 80 {
		t.Fatalf("planned %d jobs, want 2*20*2 = 80", len(jobs))
	}
	collect := func(workers int) string {
		var mu sync.Mutex
		var eps []*episode.Episode
		if err := run(t, context.Background(), jobs, workers, func(ep *episode.Episode) error {
			mu.Lock()
			defer mu.Unlock()
			eps = append(eps, ep)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(eps) != 80 {
			t.Fatalf("%d workers: %d episodes, want 80", workers, len(eps))
		}
		return strip(eps)
	}
	one, eight := collect(1), collect(8)
	if one != eight {
		t.Fatal("transcripts differ between 1 and 8 workers")
	}
}

func TestInterruptAndResumeEveryEpisodeOnce(t *testing.T) {
	pers := []episode.Persuader{fakePersuader{"a"}}
	sets := []Set{testSet(30)}
	planned := Plan(pers, []episode.Persuadee{fakePersuadee{}}, sets, 1, nil)
	stored := map[episode.Key]*episode.Episode{}
	ctx, cancel := context.WithCancel(context.Background())
	err := run(t, ctx, planned, 4, func(ep *episode.Episode) error {
		if _, dup := stored[episode.KeyOf(ep)]; dup {
			t.Errorf("episode %v stored twice", episode.KeyOf(ep))
		}
		stored[episode.KeyOf(ep)] = ep
		if len(stored) == 10 {
			cancel() // Ctrl-C midway
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want context.Canceled", err)
	}
	first := len(stored)
	if first < 10 || first >= 30 {
		t.Fatalf("stored %d episodes before the interrupt took effect", first)
	}
	done := map[episode.Key]bool{}
	for k := range stored {
		done[k] = true
	}
	rest := Plan(pers, []episode.Persuadee{fakePersuadee{}}, sets, 1, done)
	if len(rest) != 30-first {
		t.Fatalf("resume planned %d jobs, want %d", len(rest), 30-first)
	}
	if err := run(t, context.Background(), rest, 4, func(ep *episode.Episode) error {
		if _, dup := stored[episode.KeyOf(ep)]; dup {
			t.Errorf("episode %v stored twice", episode.KeyOf(ep))
		}
		stored[episode.KeyOf(ep)] = ep
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(stored) != 30 {
		t.Fatalf("after resume %d episodes, want 30", len(stored))
	}
	// Resumed episodes equal an uninterrupted run's.
	var all []*episode.Episode
	if err := run(t, context.Background(), planned, 2, func(ep *episode.Episode) error { all = append(all, ep); return nil }); err != nil {
		t.Fatal(err)
	}
	var resumed []*episode.Episode
	for _, ep := range stored {
		resumed = append(resumed, ep)
	}
	if strip(all) != strip(resumed) {
		t.Fatal("interrupted+resumed episodes differ from an uninterrupted run")
	}
}

func TestSinkErrorStopsRun(t *testing.T) {
	jobs := Plan([]episode.Persuader{fakePersuader{"a"}}, []episode.Persuadee{fakePersuadee{}}, []Set{testSet(10)}, 1, nil)
	boom := errors.New("disk full")
	n := 0
	err := run(t, context.Background(), jobs, 2, func(*episode.Episode) error { n++; return boom })
	if !errors.Is(err, boom) || n != 1 {
		t.Fatalf("err = %v after %d sink calls; want the sink error after 1", err, n)
	}
}

func f(x float64) *float64 { return &x }

func TestSummarizeHandComputed(t *testing.T) {
	mk := func(term decision.Terminal, turns int, bt *float64) *episode.Episode {
		ep := &episode.Episode{Terminal: term, RGoal: map[decision.Terminal]float64{
			decision.TermAccept: 3, decision.TermConditional: 1, decision.TermPending: -1, decision.TermReject: -3}[term]}
		for i := range turns {
			tr := episode.Turn{T: i + 1}
			if i == turns-1 {
				tr.Belief = bt
			}
			ep.Turns = append(ep.Turns, tr)
		}
		return ep
	}
	eps := []*episode.Episode{
		mk(decision.TermAccept, 3, f(0.9)),
		mk(decision.TermAccept, 5, f(0.4)),
		mk(decision.TermConditional, 4, f(0.7)),
		mk(decision.TermPending, 10, f(0.6)),
		mk(decision.TermReject, 2, nil), // unreadable belief
		{Terminal: decision.TermFailed, Error: "boom"},
	}
	s := Summarize("p", "q", "t", eps)
	// n = 5 scored; acc 2/5, cond 1/5, pend 1/5, rej 1/5.
	// R_goal = (3+3+1-1-3)/5 = 0.6; turns = (3+5+4+10+2)/5 = 4.8.
	// B_T over 4 readable: (0.9+0.4+0.7+0.6)/4 = 0.65; moved 3/4; closed|moved 1/3;
	// one scored episode left out (no B_T).
	want := Summary{Persuader: "p", Persuadee: "q", Set: "t", N: 5, Failed: 1, Accept: 0.4,
		Conditional: 0.2, Pending: 0.2, Reject: 0.2, MeanRGoal: 0.6, MeanTurns: 4.8, MeanBT: 0.65,
		NoBT: 1, Moved: 0.75, ClosedGivenMoved: 1.0 / 3}
	if math.Abs(s.MeanBT-want.MeanBT) > 1e-12 || math.Abs(s.MeanRGoal-0.6) > 1e-12 || math.Abs(s.MeanTurns-4.8) > 1e-12 {
		t.Fatalf("Summarize = %+v", s)
	}
	// No judge: R_strategy is NaN and R_out is R_goal.
	if !math.IsNaN(s.MeanRStrategy) || s.MeanROut != s.MeanRGoal || s.Judged != 0 {
		t.Fatalf("without a judge: R_strategy %v, R_out %v, judged %d", s.MeanRStrategy, s.MeanROut, s.Judged)
	}
	s.MeanBT, s.MeanRGoal, s.MeanTurns = want.MeanBT, want.MeanRGoal, want.MeanTurns
	s.MeanRStrategy, s.MeanROut = 0, 0
	if s != want {
		t.Fatalf("Summarize =\n %+v\nwant\n %+v", s, want)
	}

	// With a judge: episode 1 rated 0.5, episode 3 rated -1, episode 4's
	// judge failed, the failed episode's rating is ignored.
	eps[0].RStrategy, eps[2].RStrategy, eps[3].JudgeError = f(0.5), f(-1), "judge: HTTP 400"
	eps[5].RStrategy = f(1)
	s = Summarize("p", "q", "t", eps)
	// R_strategy = (0.5 - 1)/2 = -0.25; R_out = (3.5+3+0-1-3)/5 = 0.5.
	if s.Judged != 3 || s.MeanRStrategy != -0.25 || math.Abs(s.MeanROut-0.5) > 1e-12 || math.Abs(s.MeanRGoal-0.6) > 1e-12 {
		t.Fatalf("judged %d, R_strategy %v, R_out %v, R_goal %v", s.Judged, s.MeanRStrategy, s.MeanROut, s.MeanRGoal)
	}
}

// The judge columns appear only when a judge ran, after R_goal; the
// judge-less table keeps its columns exactly.
func TestTableJudgeColumns(t *testing.T) {
	read := []episode.Turn{{Belief: f(0.7)}} // a readable B_T: no "no B_T" column
	plain := Summarize("script", "sim", "p4g", []*episode.Episode{{Terminal: decision.TermAccept, RGoal: 3, Turns: read}})
	var b bytes.Buffer
	if err := WriteTable(&b, []Summary{plain}); err != nil {
		t.Fatal(err)
	}
	head := strings.Fields(strings.SplitN(b.String(), "\n", 2)[0])
	if got := strings.Join(head, " "); got != "persuader persuadee set n acc% cond% pend% rej% trunc% R_goal turns B_T moved% closed|moved% failed" {
		t.Errorf("judge-less header %q", got)
	}
	judgedS := Summarize("script", "sim", "arena", []*episode.Episode{{Terminal: decision.TermReject, RGoal: -3, RStrategy: f(0.75), Turns: read}})
	b.Reset()
	if err := WriteTable(&b, []Summary{plain, judgedS}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if got := strings.Join(strings.Fields(lines[0]), " "); got != "persuader persuadee set n acc% cond% pend% rej% trunc% R_goal R_strategy R_out turns B_T moved% closed|moved% failed" {
		t.Errorf("judge header %q", got)
	}
	// The unjudged group shows "-" for R_strategy and R_out = R_goal.
	if got := strings.Fields(lines[1])[9:12]; strings.Join(got, " ") != "+3.00 - +3.00" {
		t.Errorf("unjudged row %v", got)
	}
	if got := strings.Fields(lines[2])[9:12]; strings.Join(got, " ") != "-3.00 +0.75 -2.25" {
		t.Errorf("judged row %v", got)
	}
	b.Reset()
	if err := WriteCSV(&b, []Summary{plain, judgedS}); err != nil || !strings.Contains(b.String(), "R_goal,R_strategy,R_out,turns") {
		t.Errorf("csv %q, %v", b.String(), err)
	}
	j, _ := json.Marshal([]Summary{plain, judgedS})
	if strings.Count(string(j), "mean_r_strategy") != 1 || !strings.Contains(string(j), `"mean_r_out":-2.25`) {
		t.Errorf("json %s", j)
	}
}

// flakyPersuadee fails to start with a transient fault for the first n
// starts of each scenario (as an engine behind an open breaker does), or
// with a permanent one when permanent is set.
type flakyPersuadee struct {
	mu        sync.Mutex
	n         int
	permanent bool
	after     time.Duration // RetryAfter of the transient error
	starts    map[string]int
}

type retryAfterErr struct {
	error
	after time.Duration
}

func (e retryAfterErr) Unwrap() error             { return e.error }
func (e retryAfterErr) RetryAfter() time.Duration { return e.after }

func (f *flakyPersuadee) Name() string { return "flaky" }
func (f *flakyPersuadee) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	f.mu.Lock()
	f.starts[sc.ID]++
	k := f.starts[sc.ID]
	f.mu.Unlock()
	if f.permanent {
		return nil, errors.New("HTTP 404: model not found")
	}
	if k <= f.n {
		err := fmt.Errorf("%w: llm: circuit breaker open", episode.ErrTransient)
		if f.after > 0 {
			err = retryAfterErr{err, f.after}
		}
		return nil, fmt.Errorf("backend %q: %w", "b", err)
	}
	return fakePersuadee{}.Start(ctx, sc, seed)
}

// TestTransientFailuresAreReplayed: an episode whose persuadee fails with a
// transient fault is replayed with the same seed after waits of RetryWait,
// 2·RetryWait, ...; it is recorded as failed only when the retries run out,
// and a permanent failure is never replayed.
func TestTransientFailuresAreReplayed(t *testing.T) {
	set := testSet(3)
	clean := map[string]*episode.Episode{}
	jobs := Plan([]episode.Persuader{fakePersuader{"a"}}, []episode.Persuadee{fakePersuadee{}}, []Set{set}, 1, nil)
	if err := run(t, context.Background(), jobs, 1, func(ep *episode.Episode) error { clean[ep.ScenarioID] = ep; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		n         int
		permanent bool
		after     time.Duration
		retries   int
		failed    int
		starts    int     // per scenario
		waits     []int64 // seconds, over the whole run
	}{
		{"recovers on the third try", 2, false, 0, 3, 0, 3, []int64{1, 2, 1, 2, 1, 2}},
		{"retries run out", 5, false, 0, 2, 3, 3, []int64{1, 2, 1, 2, 1, 2}},
		{"no retries", 1, false, 0, 0, 3, 1, nil},
		{"permanent is not replayed", 0, true, 0, 3, 3, 1, nil},
		// An open breaker's remaining cooldown is waited out, capped.
		{"waits out a known cooldown", 1, false, 45 * time.Second, 2, 0, 2, []int64{45, 45, 45}},
		{"known cooldown capped", 1, false, 5 * time.Minute, 2, 0, 2, []int64{60, 60, 60}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pee := &flakyPersuadee{n: tc.n, permanent: tc.permanent, after: tc.after, starts: map[string]int{}}
			jobs := Plan([]episode.Persuader{fakePersuader{"a"}}, []episode.Persuadee{pee}, []Set{set}, 1, nil)
			var mu sync.Mutex
			var waits []int64
			got := map[string]*episode.Episode{}
			err := Execute(context.Background(), jobs, Options{RunID: "r", Seed: 7, Workers: 1, Retries: tc.retries,
				RetryWait: time.Second,
				Sleep: func(_ context.Context, d time.Duration) error {
					mu.Lock()
					waits = append(waits, int64(d/time.Second))
					mu.Unlock()
					return nil
				},
				Sink: func(ep *episode.Episode) error { got[ep.ScenarioID] = ep; return nil }})
			if err != nil {
				t.Fatal(err)
			}
			failed := 0
			for id, ep := range got {
				if ep.Terminal == decision.TermFailed {
					failed++
					if ep.Transient == tc.permanent || !strings.Contains(ep.Error, "persuadee start") {
						t.Errorf("%s: transient %v, error %q", id, ep.Transient, ep.Error)
					}
					continue
				}
				// A replayed episode is the episode the seed gives.
				ep.Persuadee = "fake"
				if strip([]*episode.Episode{ep}) != strip([]*episode.Episode{clean[id]}) {
					t.Errorf("%s: replay differs from a clean run", id)
				}
			}
			if len(got) != 3 || failed != tc.failed || !slices.Equal(waits, tc.waits) {
				t.Fatalf("episodes %d, failed %d (want %d), waits %v (want %v)", len(got), failed, tc.failed, waits, tc.waits)
			}
			for id, n := range pee.starts {
				if n != tc.starts {
					t.Errorf("%s: %d starts, want %d", id, n, tc.starts)
				}
			}
		})
	}
}

func TestRetryWaitDoublesAndCaps(t *testing.T) {
	o := Options{RetryWait: 10 * time.Second}
	var got []time.Duration
	for try := range 5 {
		got = append(got, o.retryWait(try))
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	if !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	if (&Options{}).retryWait(0) != DefaultRetryWait {
		t.Fatal("default wait")
	}
}
