package llmagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/scenario"
)

// issueMix is the fault mix of the drill that found the breaker's
// lock-out: 28 % 5xx, 4 % 429, 3 % timeouts, 3 % truncated JSON.
var issueMix = fakeengine.Chaos{Seed: 30, P5xx: 0.28, P429: 0.04, PTimeout: 0.03, PTruncated: 0.03, TimeoutDelay: 2 * time.Second}

// drillMix is the fault mix of the engine drill: 28 % 5xx, 4 % 429 with
// Retry-After 1 s, 3 % timeouts, 3 % truncated bodies, 1 % connection
// resets, and two 1.5 s outages (2 s and 8 s after the start).
var drillMix = fakeengine.Chaos{Seed: 30, P5xx: 0.28, P429: 0.04, PTimeout: 0.03, PTruncated: 0.03, PReset: 0.01,
	TimeoutDelay: 2 * time.Second, Outages: []fakeengine.Outage{{Start: 2 * time.Second, For: 1500 * time.Millisecond}, {Start: 8 * time.Second, For: 1500 * time.Millisecond}}}

// drillLatency is the fake engine's time per request.
const drillLatency = 50 * time.Millisecond

// drillWorkers and drillInFlight: every episode runs at once and the
// client holds at most drillInFlight requests at the engine, so that the
// engine is saturated, as in a real evaluation: the drill's wall time
// then measures the engine time the faults waste (idle gaps, replays,
// an open circuit) rather than one episode's backoff.
const (
	drillWorkers  = 24
	drillInFlight = 4
)

// drillSettings are the client and replay settings of one drill; the
// zero value is the shipped defaults (llm.Backend.WithDefaults: 120 s
// attempts, a breaker cooldown of 30 s; eval.DefaultRetryWait), with
// drillInFlight requests at the engine.
type drillSettings struct {
	Timeout, Cooldown, RetryWait time.Duration
}

// fastDrill are the fast drill's own settings: 0.5 s attempts, a 1 s
// breaker cooldown and 200 ms before an episode's first replay, so that
// a fault costs little wall time and the drill fits a test.
var fastDrill = drillSettings{Timeout: 500 * time.Millisecond, Cooldown: time.Second, RetryWait: 200 * time.Millisecond}

// drill plays n LLM-vs-LLM episodes (Tmax 4), drillWorkers at a time, through
// eval.Execute with 2 replays per episode against one fake vLLM engine
// (drillLatency per request) with the given chaos (nil: none) and
// settings. It returns the episodes, the wall time and the engine.
func drill(t testing.TB, n int, chaos *fakeengine.Chaos, set drillSettings) ([]*episode.Episode, time.Duration, *fakeengine.Server) {
	t.Helper()
	opts := []fakeengine.Option{fakeengine.WithHandler(duoHandler(3)), fakeengine.WithLatency(drillLatency)}
	if chaos != nil {
		opts = append(opts, fakeengine.WithChaos(*chaos))
	}
	srv := fakeengine.New(llm.VLLM, opts...)
	t.Cleanup(srv.Close)
	be := srv.Backend("drill")
	be.MaxInFlight, be.Timeout, be.BreakerCooldown = drillInFlight, set.Timeout, set.Cooldown
	c, err := llm.NewClient(be)
	if err != nil {
		t.Fatal(err)
	}
	per, pee := NewPersuader("llm:per", c, llm.Role{}), NewPersuadee("llm:pee", c, llm.Role{}, PersuadeeOptions{})
	var ss []scenario.Scenario
	for i := range n {
		sc := *testScenario()
		sc.ID = fmt.Sprintf("d%03d", i)
		ss = append(ss, sc)
	}
	jobs := eval.Plan([]episode.Persuader{per}, []episode.Persuadee{pee}, []eval.Set{{Name: "drill", Scenarios: ss}}, 1, nil)
	var mu sync.Mutex
	var eps []*episode.Episode
	t0 := time.Now()
	err = eval.Execute(context.Background(), jobs, eval.Options{RunID: "drill", Seed: 1, Workers: drillWorkers, Retries: 2,
		Episode: episode.Config{Tmax: 4}, RetryWait: set.RetryWait,
		Sink: func(ep *episode.Episode) error { mu.Lock(); eps = append(eps, ep); mu.Unlock(); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return eps, time.Since(t0), srv
}

// Under 28 % 5xx, 4 % 429, 3 % timeouts, 3 % truncated bodies, 1 %
// resets and two outages, no episode fails: the retries absorb single
// faults, requests wait for an open circuit instead of failing, and the
// circuit does not open on the noise. The wall time against the
// fault-free run is logged; BenchmarkFaultDrill measures it against its
// target (docs/engines.md).
func TestFaultDrillNoTransientFailures(t *testing.T) {
	cidata.Slow(t, "a fault drill of about 10 s")
	const n = 24
	clean, base, _ := drill(t, n, nil, fastDrill)
	if len(clean) != n {
		t.Fatalf("%d fault-free episodes, want %d", len(clean), n)
	}
	for _, tc := range []struct {
		name string
		mix  fakeengine.Chaos
	}{{"issue mix", issueMix}, {"with resets and outages", drillMix}} {
		mix := tc.mix
		eps, wall, srv := drill(t, n, &mix, fastDrill)
		if len(eps) != n {
			t.Fatalf("%s: %d episodes, want %d", tc.name, len(eps), n)
		}
		failed := 0
		for _, ep := range eps {
			if ep.Terminal == decision.TermFailed {
				failed++
				t.Errorf("%s: %s failed: %s", tc.name, ep.ScenarioID, ep.Error)
			}
		}
		st := srv.ChaosStats()
		if st.Status5xx == 0 || st.Timeouts == 0 || st.Truncated == 0 || st.Status429 == 0 || mix.PReset > 0 && (st.Resets == 0 || st.Outage == 0) {
			t.Fatalf("%s injected too little: %+v", tc.name, st)
		}
		t.Logf("fault drill, %s: %d episodes, %d failed; faults %+v; wall %v vs %v fault-free (%.2fx)",
			tc.name, n, failed, st, wall.Round(time.Millisecond), base.Round(time.Millisecond), wall.Seconds()/base.Seconds())
	}
}

// A permanent 400 fails its request at once: one attempt, no retry, no
// wait, not transient.
func TestFaultDrillPermanent400FailsAtOnce(t *testing.T) {
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(duoHandler(3)), fakeengine.WithChaos(fakeengine.Chaos{Seed: 1, P400: 1}))
	t.Cleanup(srv.Close)
	c, err := llm.NewClient(srv.Backend("drill"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "hello"}}})
	if err == nil || srv.Stats().Total != 1 || strings.Contains(err.Error(), "giving up") {
		t.Fatalf("400: %v after %d requests", err, srv.Stats().Total)
	}
	if errors.Is(err, llm.ErrTransient) {
		t.Fatalf("a 400 is not transient: %v", err)
	}
}

// drillDefaultsEpisodes and defaultsMix are the shape of the fault drill
// at the shipped defaults: 240 episodes under drillMix's random faults
// (28 % 5xx, 4 % 429, 3 % answers held 2 s, 3 % truncated bodies, 1 %
// connection resets) and one 20 s outage 5 s after the first request.
const drillDefaultsEpisodes = 240

var defaultsMix = func() fakeengine.Chaos {
	m := drillMix
	m.Outages = []fakeengine.Outage{{Start: 5 * time.Second, For: 20 * time.Second}}
	return m
}()

// BenchmarkFaultDrill measures the fault drill at the shipped defaults
// (drillSettings{}: 120 s attempts, 30 s breaker cooldown, 2 s before an
// episode's first replay, 2 replays) against the fault-free run, side by
// side in each iteration: drillDefaultsEpisodes episodes, fault-free,
// then under defaultsMix (target: at most 3x the fault-free wall time,
// with no episode failed; docs/engines.md). It reports x (the ratio),
// clean-s and faulted-s (wall times) and failed (episodes failed). One
// iteration takes about 2 minutes; run it with -benchtime 1x. A timing
// target, so a benchmark, not a test.
func BenchmarkFaultDrill(b *testing.B) {
	var ratio, failed, clean, faulted float64
	for range b.N {
		_, base, _ := drill(b, drillDefaultsEpisodes, nil, drillSettings{})
		mix := defaultsMix
		eps, wall, srv := drill(b, drillDefaultsEpisodes, &mix, drillSettings{})
		for _, ep := range eps {
			if ep.Terminal == decision.TermFailed {
				failed++
			}
		}
		if len(eps) != drillDefaultsEpisodes {
			b.Fatalf("%d episodes, want %d", len(eps), drillDefaultsEpisodes)
		}
		b.Logf("faults %+v; wall %v vs %v fault-free", srv.ChaosStats(), wall.Round(time.Millisecond), base.Round(time.Millisecond))
		ratio += wall.Seconds() / base.Seconds()
		clean += base.Seconds()
		faulted += wall.Seconds()
	}
	b.ReportMetric(ratio/float64(b.N), "x")
	b.ReportMetric(clean/float64(b.N), "clean-s")
	b.ReportMetric(faulted/float64(b.N), "faulted-s")
	b.ReportMetric(failed/float64(b.N), "failed")
	b.ReportMetric(0, "ns/op")
}

// drillBenchEpisodes is the fast variant's drill size: four episodes per
// worker, so that the set-up every episode waits for and the last
// episodes' tail, a fixed cost, weigh about as in an evaluation of a few
// hundred episodes; with one episode per worker (the test's 24) they are
// a third of the wall time.
const drillBenchEpisodes = 4 * drillWorkers

// BenchmarkFaultDrillFast is the fault drill at its own fast settings
// (fastDrill: 0.5 s attempts, 1 s breaker cooldown, not the shipped
// defaults): drillBenchEpisodes episodes fault-free and under both mixes.
// It reports lockout-x (the lock-out mix) and outage-x (with resets and
// two 1.5 s outages), failed (episodes failed, both mixes), and the wall
// times in seconds (clean-s, lockout-s, outage-s). One iteration plays the
// drill three times (about 80 s); run it with -benchtime 1x.
func BenchmarkFaultDrillFast(b *testing.B) {
	const n = drillBenchEpisodes
	var issue, outage, failed, clean, issueS, outageS float64
	for range b.N {
		_, base, _ := drill(b, n, nil, fastDrill)
		clean += base.Seconds()
		for i, mix := range []fakeengine.Chaos{issueMix, drillMix} {
			eps, wall, _ := drill(b, n, &mix, fastDrill)
			for _, ep := range eps {
				if ep.Terminal == decision.TermFailed {
					failed++
				}
			}
			r := wall.Seconds() / base.Seconds()
			if i == 0 {
				issue, issueS = issue+r, issueS+wall.Seconds()
			} else {
				outage, outageS = outage+r, outageS+wall.Seconds()
			}
		}
	}
	b.ReportMetric(issue/float64(b.N), "lockout-x")
	b.ReportMetric(outage/float64(b.N), "outage-x")
	b.ReportMetric(clean/float64(b.N), "clean-s")
	b.ReportMetric(issueS/float64(b.N), "lockout-s")
	b.ReportMetric(outageS/float64(b.N), "outage-s")
	b.ReportMetric(failed/float64(b.N), "failed")
	b.ReportMetric(0, "ns/op")
}
