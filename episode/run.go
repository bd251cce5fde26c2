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

// DefaultTmax is the maximum number of persuader turns (Probe-RPO paper: 10).
const DefaultTmax = 10

// MaxTmax bounds Tmax wherever a user sets it (--tmax, stored specs).
//
// Choice: 1,000 turns, 100 times the papers' 10 and beyond any context
// window an LLM persuadee has, while a typo such as --tmax 2000000000
// cannot size a per-turn table of gigabytes.
const MaxTmax = 1000

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
	// ActJudge, when set, replaces the rule tagger's Turn.Acts by the judge's
	// multi-label tagging of every persuader utterance (Probe-RPO paper,
	// Figure 5), asked once the episode has ended (Episode.ActsBy =
	// ActsByJudge). When any utterance's tagging fails, every turn keeps
	// the rule tags and the error goes to Episode.JudgeError.
	ActJudge ActJudge
	// Rewarder, when set, scores every scored episode after the judges
	// (Episode.Reward); its failure never fails the episode: the error
	// goes to Episode.JudgeError, prefixed "reward: ".
	Rewarder Rewarder
	// NoProbes skips every probe read-out, as EnvOptions.NoProbes does:
	// outcome-only episodes (--probes none) for a persuadee that gives no
	// log-probabilities, Initial, B0 and each turn's Probes, Belief and
	// Dense left missing.
	NoProbes bool
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

// episodeBox is an episode record allocated together with room for the
// turns, probe readings and floats (P(Yes) buffers, beliefs, dense
// rewards) of an episode of up to DefaultTmax turns on a basis of up to
// boxProbes probes, so such an episode takes one allocation for all of
// them; a longer one or a larger basis takes more from the chunks.
type episodeBox struct {
	ep       Episode
	turns    [DefaultTmax]Turn
	readings [(DefaultTmax + 1) * boxProbes]probe.Reading
	floats   [2*(DefaultTmax+1) + 2*boxProbes]float64
}

// boxProbes is the basis size episodeBox has room for (the default K = 3).
const boxProbes = 3

// ErrTruncated is returned (wrapped) by a PersuadeeSession or
// PersuaderSession when the conversation no longer fits the model's context
// window. The episode then ends as decision.TermTruncated (docs/engines.md).
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

// Run plays one episode of sc between per and pee (Probe-RPO paper): probes at
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
// as truncated (but a probe fork that outgrows the context window leaves its
// turn and decision standing, with the turn's belief missing); any other role error returns an episode with Terminal
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

// judges reports whether cfg asks for any judge of an ended episode.
func (c Config) judges() bool { return c.Judge != nil || c.ActJudge != nil }

// verdict is the judges' answers on one ended episode, before they are
// recorded (apply).
type verdict struct {
	ms       float64 // wall-clock time of the whole judge step
	strategy float64
	stratU   Usage
	stratErr error
	tags     [][]string // per persuader utterance, with an ActJudge
	tagU     []Usage
	tagErr   []error
}

// runJudges asks the configured judges about an ended episode, all
// concurrently: the strategy rating of transcript and, with an ActJudge,
// the tagging of each of utterances (the persuader's turns in order). The
// judges read the dialogue only, never the probe read-outs, which is what
// lets Env start them before the last read-out has settled.
func runJudges(ctx context.Context, cfg Config, sc *scenario.Scenario, utterances []string, transcript []Message) verdict {
	var v verdict
	acts := cfg.ActJudge != nil && len(utterances) > 0
	t0 := time.Now()
	var wg sync.WaitGroup
	if cfg.Judge != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.strategy, v.stratU, v.stratErr = cfg.Judge.Strategy(ctx, sc.Public(), transcript)
		}()
	}
	if acts {
		n := len(utterances)
		v.tags, v.tagU, v.tagErr = make([][]string, n), make([]Usage, n), make([]error, n)
		for i, u := range utterances {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v.tags[i], v.tagU[i], v.tagErr[i] = cfg.ActJudge.Acts(ctx, u)
			}()
		}
	}
	wg.Wait()
	v.ms = msSince(t0)
	return v
}

// apply records v in ep: JudgeMS, JudgeUsage, RStrategy, the judge's acts
// of every turn (ActsBy) and JudgeError (a judge's failure never fails
// the episode). v.tags, when set, has one entry per turn of ep.
func (v *verdict) apply(cfg Config, ep *Episode) {
	ep.JudgeMS = v.ms
	var msgs []string
	if cfg.Judge != nil {
		ep.JudgeUsage = ep.JudgeUsage.Add(v.stratU)
		switch {
		case v.stratErr != nil:
			msgs = append(msgs, "strategy: "+v.stratErr.Error())
		case math.IsNaN(v.strategy) || v.strategy < -1 || v.strategy > 1:
			msgs = append(msgs, fmt.Sprintf("strategy: rating %v outside [-1, 1]", v.strategy))
		default:
			s := v.strategy
			ep.RStrategy = &s
		}
	}
	if v.tags != nil {
		ok := len(v.tags) == len(ep.Turns)
		if !ok {
			// A defect, not a judge failure: recorded rather than a panic
			// in a worker goroutine.
			msgs = append(msgs, fmt.Sprintf("acts: %d judged utterances for %d turns", len(v.tags), len(ep.Turns)))
		}
		for i, err := range v.tagErr {
			ep.JudgeUsage = ep.JudgeUsage.Add(v.tagU[i])
			if err != nil {
				ok = false
				t := i + 1
				if i < len(ep.Turns) {
					t = ep.Turns[i].T
				}
				msgs = append(msgs, fmt.Sprintf("acts of turn %d: %v", t, err))
			}
		}
		if ok {
			for i := range ep.Turns {
				ep.Turns[i].Acts = append([]string{}, v.tags[i]...)
			}
			ep.ActsBy = ActsByJudge
		}
	}
	ep.JudgeError = strings.Join(msgs, "; ")
}

// utterances returns the persuader's utterances of ep's recorded turns,
// then pending (the current turn's, before it settles; it may be "", an
// empty utterance is a turn too); nil without an ActJudge, which is the
// only judge that reads them.
func utterances(cfg Config, ep *Episode, pending ...string) []string {
	if cfg.ActJudge == nil {
		return nil
	}
	out := make([]string, 0, len(ep.Turns)+len(pending))
	for _, t := range ep.Turns {
		out = append(out, t.Persuader)
	}
	return append(out, pending...)
}

// judging is a judge step started before the episode's last read-out
// settled (Env.startJudges).
type judging struct {
	cancel context.CancelFunc
	done   chan verdict
}

// wait returns the judges' verdict.
func (j *judging) wait() verdict { return <-j.done }

// drop cancels the judges and waits for them: the episode failed, so
// their verdict is not recorded.
func (j *judging) drop() {
	if j != nil {
		j.cancel()
		<-j.done
	}
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// The roles a RoleError names.
const (
	RolePersuader = "persuader"
	RolePersuadee = "persuadee"
	RoleProbe     = "probe"
)

// ErrInvalidDecision is wrapped by the RoleError of a reply whose decision
// is not one of decision.Decisions.
var ErrInvalidDecision = errors.New("invalid decision")

// ErrNotReset is returned by Step and Settle on an Env that Reset has not
// started; ErrDone by Step on an episode that has ended. Neither changes
// the episode.
var (
	ErrNotReset = errors.New("episode: Env used before Reset")
	ErrDone     = errors.New("episode: the episode has ended")
)

// RoleError is a role failure that ended an episode: a persuader or
// persuadee that failed to start (T = 0) or to speak at turn T, a reply
// with an invalid decision (Err wraps ErrInvalidDecision), or a probe
// read-out that failed after turn T's reply (T = 0: the initial one).
// Its message is the one Episode.Error records, e.g. "turn 3 persuadee:
// engine down", "persuader start: ...", "turn 2: probe: ...", "probe: ...".
type RoleError struct {
	// T is the turn, 1..Tmax; 0 for a start or the t = 0 read-out.
	T int
	// Role is RolePersuader, RolePersuadee or RoleProbe.
	Role string
	// Err is the role's own error.
	Err error
}

func (e *RoleError) Error() string {
	switch {
	case e.Role == RoleProbe && e.T == 0:
		return "probe: " + e.Err.Error()
	case e.Role == RoleProbe:
		return fmt.Sprintf("turn %d: probe: %v", e.T, e.Err)
	case e.T == 0:
		return e.Role + " start: " + e.Err.Error()
	}
	return fmt.Sprintf("turn %d %s: %v", e.T, e.Role, e.Err)
}

// Unwrap returns Err, so errors.Is finds ErrTruncated, ErrTransient and
// ErrInvalidDecision through a RoleError.
func (e *RoleError) Unwrap() error { return e.Err }

// EnvOptions are what a driver of an Env adds to the turn cycle of Run;
// the zero value plays exactly as Run does.
type EnvOptions struct {
	// Persuader is recorded as Episode.Persuader (Run: the persuader's
	// Name).
	Persuader string
	// Start, when set, starts the persuadee session in place of
	// pee.Start (MASP's users framed by their task); seed is the one
	// pee.Start would get, Mix(seed^2).
	Start func(ctx context.Context, sc *scenario.Scenario, seed uint64) (PersuadeeSession, error)
	// Opening is placed at the head of the transcript before the first
	// turn (the MASP paper's initial context h_0); the persuader, the
	// persuadee and the judges see it, turns do not count it.
	Opening []Message
	// NoProbes skips every probe read-out: Initial, B0 and each turn's
	// Probes, Belief and Dense stay nil (the MASP paper's protocol reads
	// no belief).
	NoProbes bool
	// PastTerminal keeps the episode going after a terminal decision,
	// until Tmax or a role error (open-loop replay of a real dialogue).
	//
	// Choice: the episode's Terminal is then its first terminal decision
	// (pending when it made none), as fidelity replay reads a real
	// dialogue's outcome.
	PastTerminal bool
}

// StepResult is what Reset's settled read-out and each Step give a
// driver.
type StepResult struct {
	// Turn is the turn just played: T, utterance, reply, decision, acts,
	// latencies and usage. Its Probes, Belief, Dense, ProbeMS and
	// ProbeUsage are set once the turn's read-out has settled: always in
	// Settle's result, and in Step's unless the read-out is in flight (an
	// engine-backed Prober without Config.SequentialProbes on an episode
	// that goes on). After Reset, Settle gives T = 0 with the initial
	// read-out (Episode.Initial and B0). Dense is nil when no probe is
	// readable at both t-1 and t.
	Turn Turn
	// Tags is the tagger's reading of the utterance (zero for T = 0).
	Tags tagger.Tags
	// Done reports that the episode has ended; Episode().Terminal says
	// how.
	Done bool
}

// Env is the step-wise turn engine every driver of a dialogue uses: Run
// (persuarena eval), the OpenEnv server, the MASP paper's closed-loop
// protocol and fidelity replay. One Env plays one episode of sc against
// pee: Reset starts the persuadee and the t = 0 read-out; each Step tags
// the persuader's utterance, gets the persuadee's reply, validates its
// decision and starts the turn's probe read-out; Settle waits for that
// read-out and completes the turn (Probes, Belief, Dense). A terminal
// decision (unless EnvOptions.PastTerminal) or turn Tmax ends the episode
// (pending without a terminal decision), as does a role error: one
// wrapping ErrTruncated ends it as truncated, any other as failed (a probe
// read-out whose fork outgrows the context window is no such error: its
// readings are unreadable with that reason and the turn stands)
// (Episode.Transient and RetryAfter as Run describes). An ended episode
// that is not failed is then given to Config.Judge and Config.ActJudge.
//
// Concurrency: an engine-backed read-out (a Prober that is not a
// ProbabilityProber) runs in its own goroutine from the end of Step until
// Settle or the next Step, which settles it first, so a driver may ask
// its persuader for the next utterance meanwhile (Run does); the
// persuadee session is never used by two goroutines at once. When the
// episode ends with such a read-out in flight, the judges, which read only
// the dialogue, are asked meanwhile too. An Env is used by one goroutine
// at a time.
type Env struct {
	cfg  Config
	opt  EnvOptions
	sc   *scenario.Scenario
	pee  Persuadee
	seed uint64

	ep         *Episode
	transcript []Message
	es         PersuadeeSession
	prober     Prober
	direct     ProbabilityProber
	selfTag    UtteranceTagger
	usageOf    ProbeUsageReporter

	readings chunk[probe.Reading]
	floats   chunk[float64]
	pYes     []float64 // reused by the direct path
	// pPrev and prevRs are the direct path's previous P(Yes) values and
	// their Readings (nil before the first read-out).
	pPrev  []float64
	prevRs []probe.Reading
	batch  int // read-outs per episode, sizing the chunks

	inflight chan readOut    // the read-out in flight, or nil
	early    *judging        // judges started before the last read-out settled, or nil
	ready    readOut         // the settled read-out when inflight is nil
	pending  bool            // the current turn's read-out is not yet recorded
	cur      StepResult      // the current turn
	prev     []probe.Reading // the read-out at t-1, for r_t
	first    decision.Terminal

	started, done, abandoned bool
}

// readOut is one probe read-out; err is the prober's own error.
type readOut struct {
	rs    []probe.Reading
	b     *float64
	ms    float64
	usage Usage
	err   error
}

// NewEnv returns an Env for one episode of sc with seed (Episode.Seed;
// the persuadee starts with Mix(seed^2), as in Run). Defaults of cfg are
// those of Run; cfg.Tmax counts persuader turns. Call Reset before Step.
func NewEnv(cfg Config, sc *scenario.Scenario, pee Persuadee, seed uint64, opt EnvOptions) *Env {
	e := new(Env)
	e.init(cfg, sc, pee, seed, opt)
	return e
}

// init is NewEnv on an Env of the caller's (Run keeps its own on the
// stack).
func (e *Env) init(cfg Config, sc *scenario.Scenario, pee Persuadee, seed uint64, opt EnvOptions) {
	cfg = cfg.withDefaults()
	n := min(cfg.Tmax, 16)
	*e = Env{cfg: cfg, opt: opt, sc: sc, pee: pee, seed: seed, batch: n + 1}
	box := new(episodeBox)
	e.ep = &box.ep
	*e.ep = Episode{
		ScenarioID: sc.ID, Seed: seed, Persuader: opt.Persuader, Persuadee: pee.Name(),
		Split: sc.Split, Family: sc.Family, Domain: sc.Domain, Resistance: sc.Hidden.Resistance,
		Terminal: decision.TermPending,
	}
	if n <= len(box.turns) {
		e.ep.Turns = box.turns[:0:n]
	} else {
		e.ep.Turns = make([]Turn, 0, n)
	}
	e.readings.buf, e.floats.buf = box.readings[:0], box.floats[:0]
	e.transcript = make([]Message, 0, len(opt.Opening)+2*n)
	e.transcript = append(e.transcript, opt.Opening...)
}

// Reset starts the persuadee session (EnvOptions.Start, else pee.Start,
// with Mix(seed^2)) and the t = 0 probe read-out; Settle then gives
// Episode.Initial and B0. An Env plays one episode: a second Reset is an
// error.
//
// Errors: a *RoleError when the persuadee fails to start, or when an
// immediate read-out (the simulator's) fails; the episode has then ended
// (truncated or failed). A cancelled ctx returns ctx.Err() and abandons
// the episode (Episode returns nil).
func (e *Env) Reset(ctx context.Context) error {
	if e.started {
		return errors.New("episode: Reset called twice; use one Env per episode")
	}
	e.started = true
	if e.done {
		return ErrDone // ended before it started (Run: the persuader failed to start)
	}
	start := e.pee.Start
	if e.opt.Start != nil {
		start = e.opt.Start
	}
	es, err := start(ctx, e.sc, Mix(e.seed^2))
	if err != nil {
		return e.fail(ctx, &RoleError{Role: RolePersuadee, Err: err})
	}
	e.es = es
	if !e.opt.NoProbes && !e.cfg.NoProbes {
		e.prober, _ = es.(Prober)
		e.direct, _ = es.(ProbabilityProber)
		e.usageOf, _ = es.(ProbeUsageReporter)
	}
	e.selfTag, _ = es.(UtteranceTagger)
	e.startProbes(ctx)
	if e.inflight == nil {
		return e.settle(ctx)
	}
	return nil
}

// Step plays turn t = (turns so far) + 1 with u: settles the previous
// read-out, tags u.Text (UtteranceTagger when the session is one, else
// tagger.Tag), appends it to the transcript, gets the persuadee's reply,
// checks its decision, appends the reply and starts the turn's read-out.
// The episode ends on a terminal decision (unless
// EnvOptions.PastTerminal) or at Tmax; the last read-out is then settled
// before Step returns, and the judges run.
//
// Errors: ErrNotReset, ErrDone (nothing happens); a *RoleError for the
// previous read-out, the reply or an invalid decision, which ends the
// episode (truncated when it wraps ErrTruncated, else failed); a
// cancelled ctx returns ctx.Err() and abandons the episode.
func (e *Env) Step(ctx context.Context, u Utterance) (StepResult, error) {
	if !e.started {
		return e.cur, ErrNotReset
	}
	return e.result(e.step(ctx, u, 0))
}

// step is Step on a started Env with the persuader's latency
// (Turn.PersuaderMS); the result is e.cur.
func (e *Env) step(ctx context.Context, u Utterance, persuaderMS float64) error {
	if e.done {
		return ErrDone
	}
	if err := ctx.Err(); err != nil {
		return e.abandon(err)
	}
	if err := e.settle(ctx); err != nil {
		return err
	}
	t := e.cur.Turn.T + 1
	var tags tagger.Tags
	if e.selfTag != nil {
		tags = e.selfTag.TagUtterance(u.Text)
	} else {
		tags = tagger.Tag(u.Text)
	}
	e.cur = StepResult{Turn: Turn{T: t, Persuader: u.Text, Acts: tags.Acts.Names(), PersuaderUsage: u.Usage, PersuaderMS: persuaderMS}, Tags: tags}
	e.transcript = append(e.transcript, Message{Speaker: PersuaderSpeaker, Text: u.Text})

	t0 := time.Now()
	r, err := e.es.Reply(ctx, e.transcript)
	e.cur.Turn.PersuadeeMS = msSince(t0)
	if err != nil {
		return e.fail(ctx, &RoleError{T: t, Role: RolePersuadee, Err: err})
	}
	if !r.Decision.Valid() {
		return e.fail(ctx, &RoleError{T: t, Role: RolePersuadee, Err: fmt.Errorf("%w %q", ErrInvalidDecision, r.Decision)})
	}
	e.cur.Turn.Persuadee, e.cur.Turn.Decision, e.cur.Turn.PersuadeeUsage, e.cur.Turn.ReplyCut = r.Text, r.Decision, r.Usage, r.Cut
	e.transcript = append(e.transcript, Message{Speaker: PersuadeeSpeaker, Text: r.Text})

	e.startProbes(ctx)
	end := t >= e.cfg.Tmax
	if r.Decision.Terminal() {
		if !e.opt.PastTerminal {
			end = true
		} else if e.first == "" {
			e.first = decision.FromDecision(r.Decision)
		}
	}
	if !end {
		if e.inflight == nil {
			return e.settle(ctx)
		}
		return nil
	}
	// Nothing of the persuader's is left to overlap the last read-out
	// with, but the judges read only the dialogue: they start now.
	e.startJudges(ctx)
	if err := e.settle(ctx); err != nil {
		return err
	}
	switch {
	case r.Decision.Terminal() && !e.opt.PastTerminal:
		e.ep.Terminal = decision.FromDecision(r.Decision)
	case e.first != "":
		e.ep.Terminal = e.first
	}
	return e.end(ctx)
}

// startJudges starts the judges of the ending episode while its last
// read-out is in flight (Env.early), so that a judged LLM episode ends
// one engine latency sooner; nothing without a read-out in flight (the
// simulator, Config.SequentialProbes) or without a judge. The transcript
// is complete: the episode takes no further turn.
func (e *Env) startJudges(ctx context.Context) {
	if e.inflight == nil || !e.cfg.judges() {
		return
	}
	jctx, cancel := context.WithCancel(ctx)
	j := &judging{cancel: cancel, done: make(chan verdict, 1)}
	cfg, sc, us, tr := e.cfg, e.sc, utterances(e.cfg, e.ep, e.cur.Turn.Persuader), e.transcript
	go func() {
		defer cancel()
		j.done <- runJudges(jctx, cfg, sc, us, tr)
	}()
	e.early = j
}

// Settle waits for the current turn's read-out (the t = 0 one after
// Reset), records the turn in the episode with its Probes, Belief and
// Dense, and returns the completed result. Without a read-out in flight
// it returns the current result again.
//
// Errors: ErrNotReset; a *RoleError of a failed read-out, which ends the
// episode as failed (a fork that outgrew the context window is not an
// error: the turn is recorded with unreadable probes); a cancelled ctx
// returns ctx.Err() and abandons the episode.
func (e *Env) Settle(ctx context.Context) (StepResult, error) {
	if !e.started {
		return e.cur, ErrNotReset
	}
	return e.result(e.settle(ctx))
}

// Episode returns the episode record so far (the finished one once Done);
// nil when a cancelled context abandoned it. It holds the hidden
// resistance type: it must not reach a persuader.
func (e *Env) Episode() *Episode {
	if e.abandoned {
		return nil
	}
	return e.ep
}

// Transcript returns the visible transcript so far, the opening context
// first. It is the Env's own slice: read it, never change it; the next
// Step appends to it.
func (e *Env) Transcript() []Message { return e.transcript }

// Session returns the persuadee session Reset started (nil before), for
// drivers that read more of it (sim.LatentReader, a teacher); a driver
// must not call its Reply itself.
func (e *Env) Session() PersuadeeSession { return e.es }

// Done reports whether the episode has ended (or was abandoned).
func (e *Env) Done() bool { return e.done }

func (e *Env) result(err error) (StepResult, error) {
	e.cur.Done = e.done
	return e.cur, err
}

// startProbes starts the read-out of the current turn (T = 0: the initial
// one). An engine-backed prober runs in its own goroutine while the driver
// goes on (Run: the persuader writes its next utterance, which never sees
// the probes), so probe latency leaves the turn's critical path; the
// simulator's direct path and a session without a prober are read at
// once. The persuadee's next Reply waits for the read-out to settle, so a
// session is still used by one goroutine at a time, and a read-out's
// error is reported before anything that happened after it, as if read in
// sequence.
func (e *Env) startProbes(ctx context.Context) {
	e.pending = true
	basis := e.cfg.Basis
	switch {
	case e.direct != nil:
		// The simulator: P(Yes) straight from its state, read as the
		// Answer FromProbability(p) would be (probe.ReadProbability).
		// Choice: ProbeMS stays 0: an in-process read-out takes well
		// under the microsecond msSince resolves, so timing it would only
		// cost two clock reads per turn.
		// A probe whose P(Yes) is bit for bit the previous read-out's
		// keeps its Reading (ReadProbability is a function of the id and
		// p alone), which spares its logarithms and exponentials: the
		// simulator's concern-address probe often stays put for turns.
		if e.pYes == nil {
			e.pYes = e.floats.take(len(basis), 2*e.batch)
			e.pPrev = e.floats.take(len(basis), 2*e.batch)
		}
		e.pYes = e.direct.ProbeProbabilities(e.pYes[:0], basis)
		e.ready = readOut{}
		if len(e.pYes) != len(basis) {
			e.ready.err = fmt.Errorf("got %d answers for %d probes", len(e.pYes), len(basis))
			e.prevRs = nil
			return
		}
		rs := e.readings.take(len(e.pYes), e.batch)
		for k, p := range e.pYes {
			if e.prevRs != nil && math.Float64bits(p) == math.Float64bits(e.pPrev[k]) {
				rs[k] = e.prevRs[k]
			} else {
				rs[k] = probe.ReadProbability(basis[k].ID, p)
			}
		}
		e.ready.rs, e.prevRs = rs, rs
		e.pYes, e.pPrev = e.pPrev, e.pYes
		if b, ok := probe.Belief(e.ready.rs); ok {
			bp := &e.floats.take(1, 2*e.batch)[0]
			*bp = b
			e.ready.b = bp
		}
	case e.prober == nil:
		e.ready = readOut{}
	default:
		tr := e.transcript[:len(e.transcript):len(e.transcript)] // the driver appends meanwhile
		prober, usageOf := e.prober, e.usageOf
		ch := make(chan readOut, 1)
		e.inflight = ch
		go func() {
			t0 := time.Now()
			ans, err := prober.Probe(ctx, tr, basis)
			o := readOut{ms: msSince(t0)}
			if usageOf != nil {
				o.usage = usageOf.TakeProbeUsage()
			}
			switch {
			case err != nil:
				o.err = err
			case len(ans) != len(basis):
				o.err = fmt.Errorf("got %d answers for %d probes", len(ans), len(basis))
			default:
				o.rs = make([]probe.Reading, len(ans))
				for k, a := range ans {
					o.rs[k] = probe.Read(basis[k].ID, a)
				}
				if b, ok := probe.Belief(o.rs); ok {
					o.b = &b
				}
			}
			ch <- o
		}()
		if e.cfg.SequentialProbes {
			e.ready, e.inflight = <-ch, nil
		}
	}
}

// settle completes the current turn with its read-out and records it: the
// initial read-out in Episode.Initial and B0, a turn's appended to
// Episode.Turns with its dense reward.
func (e *Env) settle(ctx context.Context) error {
	if !e.pending {
		return nil
	}
	if e.inflight != nil {
		e.ready, e.inflight = <-e.inflight, nil
	}
	e.pending = false
	o := e.ready
	if errors.Is(o.err, ErrTruncated) {
		// A fork that outgrows the context window costs the read-out, not
		// the turn: the reply and its decision stand, the belief is missing.
		o = readOut{rs: e.overflowed(), ms: o.ms, usage: o.usage}
	}
	turn := &e.cur.Turn
	turn.Probes, turn.Belief, turn.ProbeMS, turn.ProbeUsage = o.rs, o.b, o.ms, o.usage
	if turn.T == 0 {
		e.ep.InitialProbeUsage, e.ep.InitialProbeMS = o.usage, o.ms
		if o.err != nil {
			return e.fail(ctx, &RoleError{Role: RoleProbe, Err: o.err})
		}
		e.ep.Initial, e.ep.B0 = o.rs, o.b
		e.prev = o.rs
		return nil
	}
	if o.err != nil {
		return e.fail(ctx, &RoleError{T: turn.T, Role: RoleProbe, Err: o.err})
	}
	if bPrev, bCur, n := probe.Common(e.prev, turn.Probes); n > 0 {
		if d, ok := reward.Dense(bCur, bPrev, true, true); ok {
			turn.Dense = &e.floats.take(1, 2*e.batch)[0]
			*turn.Dense = d
			if n < len(e.cfg.Basis) {
				turn.DenseProbes = n
			}
		}
	}
	e.prev = turn.Probes
	e.ep.Turns = append(e.ep.Turns, *turn)
	return nil
}

// overflowedReason is the Reason of the readings of a read-out whose fork
// outgrew the persuadee's context window.
const overflowedReason = "probe fork exceeds the context window"

// overflowed returns one unreadable Reading per probe of the basis, for a
// read-out whose fork outgrew the context window (ErrTruncated).
func (e *Env) overflowed() []probe.Reading {
	rs := make([]probe.Reading, len(e.cfg.Basis))
	for k, p := range e.cfg.Basis {
		rs[k] = probe.Reading{Probe: p.ID, Reason: overflowedReason}
	}
	return rs
}

// fail ends the episode after a role error and returns err: truncated
// (then judged) when it wraps ErrTruncated, else failed. A cancelled ctx
// abandons the episode instead and returns ctx.Err().
func (e *Env) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return e.abandon(ctx.Err())
	}
	e.ep.Error = err.Error()
	// Judges started early judged a last turn that is not recorded.
	e.early.drop()
	e.early = nil
	if errors.Is(err, ErrTruncated) {
		e.ep.Terminal = decision.TermTruncated
		if jerr := e.end(ctx); jerr != nil {
			return jerr
		}
		return err
	}
	e.done = true
	e.ep.Terminal = decision.TermFailed
	e.ep.Transient = errors.Is(err, ErrTransient)
	var ra interface{ RetryAfter() time.Duration }
	if e.ep.Transient && errors.As(err, &ra) {
		e.ep.RetryAfter = ra.RetryAfter()
	}
	return err
}

// end closes a scored episode: R_goal of its Terminal, then the judges'
// verdict (Env.early's when they were started before the last read-out
// settled), then the Rewarder. A cancelled ctx abandons it and returns
// ctx.Err().
func (e *Env) end(ctx context.Context) error {
	e.done = true
	e.ep.RGoal = e.cfg.Goal.Goal(e.ep.Terminal)
	if e.cfg.judges() {
		var v verdict
		if e.early != nil {
			v, e.early = e.early.wait(), nil
		} else {
			v = runJudges(ctx, e.cfg, e.sc, utterances(e.cfg, e.ep), e.transcript)
		}
		if err := ctx.Err(); err != nil {
			return e.abandon(err)
		}
		v.apply(e.cfg, e.ep)
	}
	if e.cfg.Rewarder != nil {
		v, u, err := e.cfg.Rewarder.Reward(ctx, e.sc.Public(), e.ep, e.transcript)
		e.ep.JudgeUsage = e.ep.JudgeUsage.Add(u)
		switch {
		case ctx.Err() != nil:
			return e.abandon(ctx.Err())
		case err != nil:
			e.ep.JudgeError = strings.TrimPrefix(e.ep.JudgeError+"; reward: "+err.Error(), "; ")
		default:
			e.ep.Reward = v
		}
	}
	return nil
}

// abandon ends the episode without a record (a cancelled context) and
// returns err; a read-out in flight is waited for.
func (e *Env) abandon(err error) error {
	e.early.drop()
	e.early = nil
	if e.inflight != nil {
		<-e.inflight
		e.inflight = nil
	}
	e.pending = false
	e.done, e.abandoned = true, true
	return err
}
