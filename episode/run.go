package episode

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/reward"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// DefaultTmax is the maximum number of persuader turns (SPEC §1, seed 000: 10).
const DefaultTmax = 10

// Config configures episodes.
type Config struct {
	// Tmax is the maximum number of persuader turns; 0 means DefaultTmax.
	Tmax int
	// Basis is the probe basis; nil means probe.Default.
	Basis probe.Basis
	// Goal maps terminal states to R_goal; zero value means reward.DefaultGoal.
	Goal *reward.GoalRewards
	// Judge, when set, rates the persuader's strategy once the episode has
	// ended (Episode.RStrategy; never for failed episodes). A judge error
	// is recorded in Episode.JudgeError and never fails the episode.
	Judge Judge
	// ActJudge, when set, replaces the rule tagger's Turn.Acts by the
	// judge's multi-label tagging of every persuader utterance (seed 000
	// Figure 5), asked once the episode has ended (Episode.ActsBy =
	// ActsByJudge). The persuadee still receives the rule tags
	// (Message.Tags). When any utterance's tagging fails, every turn keeps
	// the rule tags and the error goes to Episode.JudgeError.
	ActJudge ActJudge
	// SequentialProbes, when set, waits for each engine-backed probe
	// read-out before the persuader's next utterance is asked for, as
	// before the read-out overlapped it. Same transcripts and numbers on
	// engines that are batch-invariant; set it where an engine's
	// concurrent requests change each other's numerics (llama.cpp with
	// several slots, for example) and a run must be reproducible at the
	// cost of one probe round trip per turn. Simulator probes are never
	// concurrent.
	SequentialProbes bool
}

func (c Config) withDefaults() Config {
	if c.Tmax <= 0 {
		c.Tmax = DefaultTmax
	}
	if c.Basis == nil {
		c.Basis = probe.Default
	}
	if c.Goal == nil {
		c.Goal = &defaultGoal
	}
	return c
}

// defaultGoal is the Goal of a Config that sets none (never written).
var defaultGoal = reward.DefaultGoal

// actStrings[a] is a.Strings() for every ActSet, built once so that a
// turn's Acts cost no allocation; each slice's capacity is its length, so
// an append by a caller copies instead of writing into the shared array.
var actStrings = func() [1 << tagger.NumActs][]string {
	var t [1 << tagger.NumActs][]string
	for a := range t {
		s := tagger.ActSet(a).Strings()
		t[a] = s[:len(s):len(s)]
	}
	return t
}()

// actsOf returns the names of a's acts (Turn.Acts), shared and read-only.
func actsOf(a tagger.ActSet) []string {
	if int(a) < len(actStrings) {
		return actStrings[a]
	}
	return a.Strings()
}

// chunk hands out sub-slices of n elements of larger backing arrays, so an
// episode's probe readings and beliefs take a few allocations instead of
// one per read-out. Each slice's capacity is its length.
type chunk[T any] struct{ buf []T }

func (c *chunk[T]) take(n, batch int) []T {
	if cap(c.buf)-len(c.buf) < n {
		c.buf = make([]T, 0, max(n, batch*n))
	}
	l := len(c.buf)
	c.buf = c.buf[:l+n]
	return c.buf[l : l+n : l+n]
}

// ErrTruncated is returned (wrapped) by a PersuadeeSession or
// PersuaderSession when the conversation no longer fits the model's context
// window. The episode then ends as decision.TermTruncated (SPEC §7).
var ErrTruncated = errors.New("conversation exceeds the context window")

// ErrTransient marks a role error that may not recur: an engine that
// answered 5xx or 429 until its retries ran out, a timeout, a refused
// connection, an open circuit breaker. Run records such an episode as
// failed with Episode.Transient set, and eval.Execute may replay it.
var ErrTransient = errors.New("transient")

// Seed derives an episode's seed from the run seed, scenario id and rollout
// index (FNV-1a then a SplitMix64 finaliser), so an episode's randomness is
// independent of scheduling and worker count.
func Seed(runSeed uint64, scenarioID string, rollout int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d", runSeed, scenarioID, rollout)
	return Mix(h.Sum64())
}

// Mix is the SplitMix64 finaliser; Mix(seed ^ k) derives independent
// sub-seeds (k = 1 persuader, 2 persuadee).
func Mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Run plays one episode of sc between per and pee (SPEC §1-2): probes at
// t = 0, then up to Tmax persuader turns, each followed by the persuadee's
// reply and a probe read-out; a terminal decision ends the episode, Tmax
// gives pending. The persuader only ever receives sc.Public() and the
// visible transcript. A scored episode (not failed) is then given to
// cfg.Judge and cfg.ActJudge, when set, with the public scenario and the
// visible transcript. Run is the shortest driver of an Env: start the
// persuader, Reset, then Say and Step until the episode is done.
//
// Concurrency: the read-out after each reply (and the one at t = 0) of a
// Prober that is not a ProbabilityProber runs in its own goroutine while
// the persuader writes its next utterance, which never depends on probes;
// the persuadee's next Reply starts only once it has finished, so a
// persuadee session is never used by two goroutines at once. With an
// engine of latency L per request an LLM-vs-LLM turn then takes about 2L
// instead of 3L (BenchmarkLLMTurnLatency in package llmagent). Outcomes
// are those of reading in sequence: a read-out's error is reported before
// the next utterance's result, which is then discarded.
//
// Errors: a cancelled ctx returns ctx.Err() and no episode (the caller
// re-runs it on resume). A role error wrapping ErrTruncated ends the episode
// as truncated; any other role error returns an episode with Terminal
// TermFailed and Error set (Transient when it wraps ErrTransient), and a
// nil error, so the failure is recorded.
func Run(ctx context.Context, cfg Config, sc *scenario.Scenario, per Persuader, pee Persuadee, seed uint64) (*Episode, error) {
	var env Env
	env.init(cfg, sc, pee, seed, EnvOptions{Persuader: per.Name()})
	// done returns the episode once the Env has ended it; a role error is
	// recorded in it, only an abandoned (cancelled) episode is an error.
	done := func(err error) (*Episode, error) {
		if ep := env.Episode(); ep != nil {
			return ep, nil
		}
		return nil, err
	}
	ps, err := per.Start(ctx, sc.Public(), Mix(seed^1))
	if err != nil {
		return done(env.fail(ctx, &RoleError{Role: RolePersuader, Err: err}))
	}
	if err := env.Reset(ctx); err != nil {
		return done(err)
	}
	for !env.Done() {
		if err := ctx.Err(); err != nil {
			return nil, env.abandon(err)
		}
		t0 := time.Now()
		u, err := ps.Say(ctx, env.transcript) // overlaps the read-out in flight
		ms := msSince(t0)
		if err != nil {
			// the read-out's error comes first, as if read in sequence
			if err := env.settle(ctx); err != nil {
				return done(err)
			}
			return done(env.fail(ctx, &RoleError{T: env.cur.Turn.T + 1, Role: RolePersuader, Err: err}))
		}
		if err := env.step(ctx, u, ms); err != nil {
			return done(err)
		}
	}
	return done(nil)
}

// judge runs the configured judges on a scored episode: the strategy
// rating and, with an ActJudge, the tagging of every persuader utterance,
// all concurrently; JudgeMS is the wall-clock time of the whole step. It
// returns ctx.Err() when ctx was cancelled (the Env then abandons the
// episode), else nil: a judge's failure goes to Episode.JudgeError.
func judge(ctx context.Context, cfg Config, sc *scenario.Scenario, ep *Episode, transcript []Message) error {
	acts := cfg.ActJudge != nil && len(ep.Turns) > 0
	if cfg.Judge == nil && !acts {
		return nil
	}
	t0 := time.Now()
	var (
		wg       sync.WaitGroup
		strategy float64
		stratU   Usage
		stratErr error
		tags     [][]string
		tagU     []Usage
		tagErr   []error
	)
	if cfg.Judge != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			strategy, stratU, stratErr = cfg.Judge.Strategy(ctx, sc.Public(), transcript)
		}()
	}
	if acts {
		n := len(ep.Turns)
		tags, tagU, tagErr = make([][]string, n), make([]Usage, n), make([]error, n)
		for i := range ep.Turns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tags[i], tagU[i], tagErr[i] = cfg.ActJudge.Acts(ctx, ep.Turns[i].Persuader)
			}()
		}
	}
	wg.Wait()
	ep.JudgeMS = msSince(t0)
	if err := ctx.Err(); err != nil {
		return err
	}
	var msgs []string
	if cfg.Judge != nil {
		ep.JudgeUsage = ep.JudgeUsage.Add(stratU)
		switch {
		case stratErr != nil:
			msgs = append(msgs, "strategy: "+stratErr.Error())
		case math.IsNaN(strategy) || strategy < -1 || strategy > 1:
			msgs = append(msgs, fmt.Sprintf("strategy: rating %v outside [-1, 1]", strategy))
		default:
			ep.RStrategy = &strategy
		}
	}
	if acts {
		ok := true
		for i, err := range tagErr {
			ep.JudgeUsage = ep.JudgeUsage.Add(tagU[i])
			if err != nil {
				ok = false
				msgs = append(msgs, fmt.Sprintf("acts of turn %d: %v", ep.Turns[i].T, err))
			}
		}
		if ok {
			for i := range ep.Turns {
				ep.Turns[i].Acts = append([]string{}, tags[i]...)
			}
			ep.ActsBy = ActsByJudge
		}
	}
	ep.JudgeError = strings.Join(msgs, "; ")
	return nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
