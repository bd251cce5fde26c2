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

	"github.com/persuarena/persuarena/decision"
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
// visible transcript.
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
	cfg = cfg.withDefaults()
	ep := &Episode{
		ScenarioID: sc.ID, Seed: seed, Persuader: per.Name(), Persuadee: pee.Name(),
		Split: sc.Split, Family: sc.Family, Domain: sc.Domain, Resistance: sc.Hidden.Resistance,
		Turns: make([]Turn, 0, min(cfg.Tmax, 16)),
	}
	transcript := make([]Message, 0, 2*min(cfg.Tmax, 16))
	fail := func(err error) (*Episode, error) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrTruncated) {
			ep.Terminal = decision.TermTruncated
			ep.RGoal = cfg.Goal.Goal(ep.Terminal)
			ep.Error = err.Error()
			return judge(ctx, cfg, sc, ep, transcript)
		}
		ep.Terminal = decision.TermFailed
		ep.Error = err.Error()
		ep.Transient = errors.Is(err, ErrTransient)
		var ra interface{ RetryAfter() time.Duration }
		if ep.Transient && errors.As(err, &ra) {
			ep.RetryAfter = ra.RetryAfter()
		}
		return ep, nil
	}
	ps, err := per.Start(ctx, sc.Public(), Mix(seed^1))
	if err != nil {
		return fail(fmt.Errorf("persuader start: %w", err))
	}
	es, err := pee.Start(ctx, sc, Mix(seed^2))
	if err != nil {
		return fail(fmt.Errorf("persuadee start: %w", err))
	}
	prober, _ := es.(Prober)
	direct, _ := es.(ProbabilityProber)
	selfTag, _ := es.(UtteranceTagger)

	// A prober that counts engine usage (LLM persuadees) reports it through
	// TakeProbeUsage; it is recorded per turn, and for t = 0 in
	// Episode.InitialProbeUsage.
	usageOf, _ := es.(interface{ TakeProbeUsage() Usage })
	var (
		readings chunk[probe.Reading]
		floats   chunk[float64]
		pYes     []float64 // reused by the direct path
	)
	// batch sizes the chunks for a whole episode of read-outs.
	batch := min(cfg.Tmax, 16) + 1
	belief := func(rs []probe.Reading) *float64 {
		b, ok := probe.Belief(rs)
		if !ok {
			return nil
		}
		bp := &floats.take(1, 2*batch)[0]
		*bp = b
		return bp
	}
	// A read-out is started right after a reply and settled later: an
	// engine-backed prober runs in its own goroutine while the persuader
	// writes its next utterance (it never sees the probes), so probe
	// latency leaves the turn's critical path; the simulator's direct path
	// and a session without a prober are read at once. The persuadee's
	// next Reply waits for the read-out to settle, so a session is still
	// used by one goroutine at a time, and a read-out's error is reported
	// before anything that happened after it, as if read in sequence.
	type readOut struct {
		rs    []probe.Reading
		b     *float64
		ms    float64
		usage Usage
		err   error
	}
	var inflight chan readOut // the read-out in flight, or nil
	var ready readOut         // the settled read-out when inflight is nil
	startProbes := func() {
		switch {
		case direct != nil:
			// The simulator: P(Yes) straight from its state, read as the
			// Answer FromProbability(p) would be (probe.ReadProbability).
			t0 := time.Now()
			pYes = direct.ProbeProbabilities(pYes[:0], cfg.Basis)
			ready = readOut{ms: msSince(t0)}
			if len(pYes) != len(cfg.Basis) {
				ready.err = fmt.Errorf("probe: got %d answers for %d probes", len(pYes), len(cfg.Basis))
				return
			}
			ready.rs = readings.take(len(pYes), batch)
			for k, p := range pYes {
				ready.rs[k] = probe.ReadProbability(cfg.Basis[k].ID, p)
			}
			ready.b = belief(ready.rs)
		case prober == nil:
			ready = readOut{}
		default:
			tr := transcript[:len(transcript):len(transcript)] // the main loop appends meanwhile
			ch := make(chan readOut, 1)
			inflight = ch
			go func() {
				t0 := time.Now()
				ans, err := prober.Probe(ctx, tr, cfg.Basis)
				o := readOut{ms: msSince(t0)}
				if usageOf != nil {
					o.usage = usageOf.TakeProbeUsage()
				}
				switch {
				case err != nil:
					o.err = fmt.Errorf("probe: %w", err)
				case len(ans) != len(cfg.Basis):
					o.err = fmt.Errorf("probe: got %d answers for %d probes", len(ans), len(cfg.Basis))
				default:
					o.rs = make([]probe.Reading, len(ans))
					for k, a := range ans {
						o.rs[k] = probe.Read(cfg.Basis[k].ID, a)
					}
					if b, ok := probe.Belief(o.rs); ok {
						o.b = &b
					}
				}
				ch <- o
			}()
			if cfg.SequentialProbes {
				ready, inflight = <-ch, nil
			}
		}
	}
	settle := func() readOut {
		if inflight != nil {
			ready, inflight = <-inflight, nil
		}
		return ready
	}
	// record completes turn (whose reply came last) with its read-out and
	// appends it to the episode.
	var prev *float64
	record := func(turn Turn, o readOut) error {
		turn.Probes, turn.Belief, turn.ProbeMS, turn.ProbeUsage = o.rs, o.b, o.ms, o.usage
		if o.err != nil {
			return fmt.Errorf("turn %d: %w", turn.T, o.err)
		}
		if turn.Belief != nil && prev != nil {
			if d, ok := reward.Dense(*turn.Belief, *prev, true, true); ok {
				turn.Dense = &floats.take(1, 2*batch)[0]
				*turn.Dense = d
			}
		}
		prev = turn.Belief
		ep.Turns = append(ep.Turns, turn)
		return nil
	}

	startProbes() // t = 0, overlapping the persuader's first utterance
	ep.Terminal = decision.TermPending
	var last Turn // the turn whose read-out is in flight (T = 0: the initial one)
	for t := 1; t <= cfg.Tmax; t++ {
		if err := ctx.Err(); err != nil {
			settle()
			return nil, err
		}
		turn := Turn{T: t}
		t0 := time.Now()
		u, err := ps.Say(ctx, transcript)
		turn.PersuaderMS = msSince(t0)
		o := settle()
		if last.T == 0 {
			ep.InitialProbeUsage, ep.InitialProbeMS = o.usage, o.ms
			if o.err != nil {
				return fail(o.err)
			}
			ep.Initial, ep.B0 = o.rs, o.b
			prev = o.b
		} else if err := record(last, o); err != nil {
			return fail(err)
		}
		if err != nil {
			return fail(fmt.Errorf("turn %d persuader: %w", t, err))
		}
		turn.Persuader, turn.PersuaderUsage = u.Text, u.Usage
		var tags tagger.Tags
		if selfTag != nil {
			tags = selfTag.TagUtterance(u.Text)
		} else {
			tags = tagger.Tag(u.Text)
		}
		turn.Acts = actsOf(tags.Acts)
		transcript = append(transcript, Message{Speaker: PersuaderSpeaker, Text: u.Text, Tags: tags, Tagged: true})

		t0 = time.Now()
		r, err := es.Reply(ctx, transcript)
		turn.PersuadeeMS = msSince(t0)
		if err != nil {
			return fail(fmt.Errorf("turn %d persuadee: %w", t, err))
		}
		if !r.Decision.Valid() {
			return fail(fmt.Errorf("turn %d persuadee: invalid decision %q", t, r.Decision))
		}
		turn.Persuadee, turn.Decision, turn.PersuadeeUsage = r.Text, r.Decision, r.Usage
		transcript = append(transcript, Message{Speaker: PersuadeeSpeaker, Text: r.Text})

		startProbes()
		if r.Decision.Terminal() || t == cfg.Tmax {
			// nothing left to overlap the last read-out with
			if err := record(turn, settle()); err != nil {
				return fail(err)
			}
			if r.Decision.Terminal() {
				ep.Terminal = decision.FromDecision(r.Decision)
			}
			break
		}
		last = turn
	}
	ep.RGoal = cfg.Goal.Goal(ep.Terminal)
	return judge(ctx, cfg, sc, ep, transcript)
}

// judge runs the configured judges on a scored episode: the strategy
// rating and, with an ActJudge, the tagging of every persuader utterance,
// all concurrently; JudgeMS is the wall-clock time of the whole step. A
// cancelled ctx returns ctx.Err() and no episode, as elsewhere in Run.
func judge(ctx context.Context, cfg Config, sc *scenario.Scenario, ep *Episode, transcript []Message) (*Episode, error) {
	acts := cfg.ActJudge != nil && len(ep.Turns) > 0
	if cfg.Judge == nil && !acts {
		return ep, nil
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
		return nil, err
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
	return ep, nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
