package episode

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
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
}

func (c Config) withDefaults() Config {
	if c.Tmax <= 0 {
		c.Tmax = DefaultTmax
	}
	if c.Basis == nil {
		c.Basis = probe.Default
	}
	if c.Goal == nil {
		g := reward.DefaultGoal
		c.Goal = &g
	}
	return c
}

// ErrTruncated is returned (wrapped) by a PersuadeeSession or
// PersuaderSession when the conversation no longer fits the model's context
// window. The episode then ends as decision.TermTruncated (SPEC §7).
var ErrTruncated = errors.New("conversation exceeds the context window")

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
// visible transcript.
//
// Errors: a cancelled ctx returns ctx.Err() and no episode (the caller
// re-runs it on resume). A role error wrapping ErrTruncated ends the episode
// as truncated; any other role error returns an episode with Terminal
// TermFailed and Error set, and a nil error, so the failure is recorded.
func Run(ctx context.Context, cfg Config, sc *scenario.Scenario, per Persuader, pee Persuadee, seed uint64) (*Episode, error) {
	cfg = cfg.withDefaults()
	ep := &Episode{
		ScenarioID: sc.ID, Seed: seed, Persuader: per.Name(), Persuadee: pee.Name(),
		Split: sc.Split, Family: sc.Family, Domain: sc.Domain, Resistance: sc.Hidden.Resistance,
		Turns: []Turn{},
	}
	fail := func(err error) (*Episode, error) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrTruncated) {
			ep.Terminal = decision.TermTruncated
			ep.RGoal = cfg.Goal.Goal(ep.Terminal)
			ep.Error = err.Error()
			return ep, nil
		}
		ep.Terminal = decision.TermFailed
		ep.Error = err.Error()
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
	var transcript []Message

	// A prober that counts engine usage (LLM persuadees) reports it through
	// TakeProbeUsage; it is recorded per turn. Choice: the t = 0 read-out's
	// usage is not recorded (an Episode has no field for it).
	usageOf, _ := es.(interface{ TakeProbeUsage() Usage })
	var probeUsage Usage
	readProbes := func() ([]probe.Reading, *float64, float64, error) {
		if prober == nil {
			return nil, nil, 0, nil
		}
		t0 := time.Now()
		ans, err := prober.Probe(ctx, transcript, cfg.Basis)
		ms := msSince(t0)
		if usageOf != nil {
			probeUsage = usageOf.TakeProbeUsage()
		}
		if err != nil {
			return nil, nil, ms, fmt.Errorf("probe: %w", err)
		}
		if len(ans) != len(cfg.Basis) {
			return nil, nil, ms, fmt.Errorf("probe: got %d answers for %d probes", len(ans), len(cfg.Basis))
		}
		rs := make([]probe.Reading, len(ans))
		for k, a := range ans {
			rs[k] = probe.Read(cfg.Basis[k].ID, a)
		}
		var bp *float64
		if b, ok := probe.Belief(rs); ok {
			bp = &b
		}
		return rs, bp, ms, nil
	}

	rs, b0, _, err := readProbes()
	if err != nil {
		return fail(err)
	}
	ep.Initial, ep.B0 = rs, b0
	prev := b0
	ep.Terminal = decision.TermPending
	for t := 1; t <= cfg.Tmax; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		turn := Turn{T: t}
		t0 := time.Now()
		u, err := ps.Say(ctx, transcript)
		turn.PersuaderMS = msSince(t0)
		if err != nil {
			return fail(fmt.Errorf("turn %d persuader: %w", t, err))
		}
		turn.Persuader, turn.PersuaderUsage = u.Text, u.Usage
		tags := tagger.Tag(u.Text)
		turn.Acts = tags.Acts.Strings()
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

		turn.Probes, turn.Belief, turn.ProbeMS, err = readProbes()
		turn.ProbeUsage = probeUsage
		if err != nil {
			return fail(fmt.Errorf("turn %d: %w", t, err))
		}
		if turn.Belief != nil && prev != nil {
			if d, ok := reward.Dense(*turn.Belief, *prev, true, true); ok {
				turn.Dense = &d
			}
		}
		prev = turn.Belief
		ep.Turns = append(ep.Turns, turn)
		if r.Decision.Terminal() {
			ep.Terminal = decision.FromDecision(r.Decision)
			break
		}
	}
	ep.RGoal = cfg.Goal.Goal(ep.Terminal)
	return ep, nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
