// Package planner is PersuArena's trainable strategy planner: a small policy
// network that, each turn, chooses which of the five persuasion acts of the
// Probe-RPO paper's Figure 5 to use (one of the 31 non-empty act sets) from
// features of the visible transcript only (turn index, acts used so far, the
// persuadee's last reaction, concerns voiced vs addressed), and a realiser
// that writes the utterance for the chosen acts: the built-in template banks
// by default (baseline.Realise), or an LLM that implements Realiser (planner
// + LLM, as in PPDPP). Package train fits it with Probe-RPO (Probe-RPO
// paper). docs/training.md describes it.
package planner

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// Realiser writes the utterance for a chosen act set. An implementation
// must see only the public scenario view and the visible transcript, and
// should realise exactly acts (the planner's log-probabilities are of the
// chosen set, whatever the text ends up carrying; Run tags the text
// independently). Implementations must be safe for concurrent use.
type Realiser interface {
	Realise(ctx context.Context, pub scenario.Public, acts tagger.ActSet, transcript []episode.Message, seed uint64) (episode.Utterance, error)
}

// TemplateRealiser is the default Realiser: baseline.Realise, the
// built-in template banks with echoes of what the persuadee voiced; the
// tagger reads back exactly the chosen acts.
type TemplateRealiser struct{}

// Realise calls baseline.Realise; it errs when ctx is done or acts is not
// a non-empty set of the five acts.
func (TemplateRealiser) Realise(ctx context.Context, pub scenario.Public, acts tagger.ActSet, transcript []episode.Message, seed uint64) (episode.Utterance, error) {
	if err := ctx.Err(); err != nil {
		return episode.Utterance{}, err
	}
	return baseline.Realise(pub, acts, transcript, seed)
}

// Planner is a persuader driven by a Policy (it implements
// episode.Persuader). Each turn it computes the features of the visible
// transcript, draws an act set from the policy (or takes the most likely
// one when Greedy), and has the Realiser write it. It is immutable after
// New and safe for concurrent Start calls.
type Planner struct {
	policy   *Policy
	name     string
	realiser Realiser
	greedy   bool
}

// Option configures New.
type Option func(*Planner)

// WithName sets the planner's Name (default "planner").
func WithName(name string) Option { return func(p *Planner) { p.name = name } }

// WithRealiser replaces the template realiser.
func WithRealiser(r Realiser) Option { return func(p *Planner) { p.realiser = r } }

// Greedy makes the planner take the most likely act set each turn (ties to
// the lowest action index) instead of sampling. Choice: sampling is the
// default, as in training and in the Probe-RPO paper's evaluation of its
// sampled LLM policy.
func Greedy() Option { return func(p *Planner) { p.greedy = true } }

// New returns a planner for policy (which it does not copy: do not change
// it while the planner is in use). Errors: an invalid policy.
func New(policy *Policy, opts ...Option) (*Planner, error) {
	if policy == nil {
		return nil, fmt.Errorf("planner: nil policy")
	}
	if err := policy.Validate(); err != nil {
		return nil, fmt.Errorf("planner: %w", err)
	}
	p := &Planner{policy: policy, name: "planner", realiser: TemplateRealiser{}}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// Name returns the planner's name, "planner" unless WithName set another
// (LoadPlanner uses the checkpoint's ArmName, "planner:NAME@HASH").
func (p *Planner) Name() string { return p.name }

// Policy returns the planner's policy (not a copy).
func (p *Planner) Policy() *Policy { return p.policy }

// Start begins an episode; it sees only pub. It implements
// episode.Persuader by calling StartSession.
func (p *Planner) Start(ctx context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	return p.StartSession(ctx, pub, seed)
}

// StartSession is Start returning the concrete session, whose Decisions
// a trainer reads after the episode.
func (p *Planner) StartSession(ctx context.Context, pub scenario.Public, seed uint64) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Session{p: p, pub: pub, seed: seed}, nil
}

// Decision records one turn's choice, for training.
type Decision struct {
	// T is the 0-based index of the persuader turn.
	T int
	// Features is the policy's input (len Spec.Dim()).
	Features []float64
	// Action is the chosen action index in [0, NumActions); Acts its set.
	Action int
	Acts   tagger.ActSet
	// Logp is the chosen action's log-probability (nats) under the
	// policy that chose it, and Entropy that policy's entropy at this
	// state (nats, at most ln 31 ≈ 3.434).
	Logp, Entropy float64
}

// Session is one episode of a planner. Each turn's draw uses its own
// random stream seeded from (session seed, turn index), so a turn's choice
// is a pure function of the seed, the transcript and the policy.
type Session struct {
	p         *Planner
	pub       scenario.Public
	seed      uint64
	decisions []Decision
	lp        []float64
	tagged    []taggedTurn // the tags of the transcript's persuader turns (features)
}

// Say chooses and realises the next turn. Errors: ctx done, or the
// realiser's error.
func (s *Session) Say(ctx context.Context, transcript []episode.Message) (episode.Utterance, error) {
	if err := ctx.Err(); err != nil {
		return episode.Utterance{}, err
	}
	x := s.p.policy.Spec.features(nil, transcript, &s.tagged)
	s.lp = s.p.policy.LogProbs(s.lp, x)
	t := 0
	for _, m := range transcript {
		if m.Speaker == episode.PersuaderSpeaker {
			t++
		}
	}
	a := 0
	if s.p.greedy {
		for i, l := range s.lp {
			if l > s.lp[a] {
				a = i
			}
		}
	} else {
		r := rand.New(rand.NewPCG(s.seed, episode.Mix(uint64(t)+0x91a7)))
		a = Sample(s.lp, r.Float64())
	}
	probs := make([]float64, len(s.lp))
	for i, l := range s.lp {
		probs[i] = math.Exp(l)
	}
	acts := ActionSet(a)
	u, err := s.p.realiser.Realise(ctx, s.pub, acts, transcript, s.seed)
	if err != nil {
		return episode.Utterance{}, fmt.Errorf("planner: realise %v: %w", acts.Strings(), err)
	}
	u.Acts = acts.Strings()
	s.decisions = append(s.decisions, Decision{T: t, Features: x, Action: a, Acts: acts,
		Logp: s.lp[a], Entropy: grpo.Entropy(probs)})
	return u, nil
}

// Decisions returns the turns decided so far, in order (the session's own
// slice: read it after the episode).
func (s *Session) Decisions() []Decision { return s.decisions }

// Sample returns the action drawn by inverse CDF for a uniform u in [0, 1)
// from the log-probabilities logp: the first index whose cumulative
// probability exceeds u (the last index when rounding leaves u above the
// total).
func Sample(logp []float64, u float64) int {
	c := 0.0
	for i, l := range logp {
		c += math.Exp(l)
		if u < c {
			return i
		}
	}
	return len(logp) - 1
}
