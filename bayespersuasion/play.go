package bayespersuasion

import (
	"context"
	"fmt"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

// Setting is the Strategic Persuasion paper's interaction setting.
type Setting string

// The settings.
const (
	// Static: the sender speaks once (Tmax 1) and the receiver decides.
	Static Setting = "static"
	// Dynamic: several turns, up to one more than the pool has items; the
	// Bayesian receiver decides once a turn brings nothing new.
	Dynamic Setting = "dynamic"
)

// Tmax returns the turn limit of setting s on claim c: 1 for Static,
// len(c.Evidence)+1 for Dynamic.
func (s Setting) Tmax(c *Claim) int {
	if s == Static {
		return 1
	}
	return len(c.Evidence) + 1
}

// SenderRole puts a sender into one episode: it binds to the claim, the
// world it knows and the setting.
type SenderRole interface {
	Name() string
	Bind(c *Claim, w World, s Setting) episode.Persuader
}

// ReceiverRole puts a receiver into one episode of c in w with turn limit
// tmax.
type ReceiverRole interface {
	Name() string
	Bind(c *Claim, w World, tmax int) BoundReceiver
}

// BoundReceiver is a receiver bound to one episode.
type BoundReceiver interface {
	episode.Persuadee
	// Readout returns the receiver's belief over states after ep and its
	// Likert answers before and after (1-7; 0 when it gave none).
	Readout(ctx context.Context, ep *episode.Episode) (post []float64, likertBefore, likertAfter int, err error)
}

// StrategySender is the SenderRole of a built-in Strategy (Sender).
func StrategySender(s Strategy) SenderRole { return strategySender{s} }

type strategySender struct{ s Strategy }

func (s strategySender) Name() string { return s.s.Name() }
func (s strategySender) Bind(c *Claim, w World, st Setting) episode.Persuader {
	return &Sender{S: s.s, C: c, W: w, Static: st == Static}
}

// BayesRole is the ReceiverRole of the embedded Bayesian receiver.
// Credulous is Receiver.Credulous.
type BayesRole struct{ Credulous bool }

// Name returns "bayes".
func (BayesRole) Name() string { return "bayes" }

// Bind implements ReceiverRole.
func (b BayesRole) Bind(c *Claim, w World, tmax int) BoundReceiver {
	r := NewReceiver([]*Claim{c}, tmax)
	r.Credulous = b.Credulous
	return &boundBayes{r: r, c: c, w: w}
}

type boundBayes struct {
	r    *Receiver
	c    *Claim
	w    World
	sess *ReceiverSession
}

func (b *boundBayes) Name() string { return b.r.Name() }

// Start implements episode.Persuadee: the session in the bound world.
func (b *boundBayes) Start(context.Context, *scenario.Scenario, uint64) (episode.PersuadeeSession, error) {
	b.sess = b.r.Session(b.c, b.w)
	return b.sess, nil
}

// Readout implements BoundReceiver.
func (b *boundBayes) Readout(_ context.Context, _ *episode.Episode) ([]float64, int, int, error) {
	if b.sess == nil {
		return nil, 0, 0, fmt.Errorf("bayes receiver: no session")
	}
	return b.sess.Posterior(), Likert(b.c.Belief(b.c.Prior)), b.sess.Likert(), nil
}

// Result is one played episode, scored.
type Result struct {
	Claim    string  `json:"claim"`
	Domain   string  `json:"domain"`
	Sender   string  `json:"sender"`
	Receiver string  `json:"receiver"`
	Setting  Setting `json:"setting"`
	Rollout  int     `json:"rollout"`
	Seed     uint64  `json:"seed"`
	// State is the world's state index.
	State    int               `json:"state"`
	Terminal decision.Terminal `json:"terminal"`
	Turns    int               `json:"turns"`
	// PriorValue and PostValue are V(prior) and V(the receiver's belief
	// after the episode); Gain = PostValue - PriorValue, the Strategic
	// Persuasion paper's reward.
	PriorValue float64 `json:"prior_value"`
	PostValue  float64 `json:"post_value"`
	Gain       float64 `json:"gain"`
	// OptimalGain is Benchmarks.OptimalGain of the claim.
	OptimalGain float64 `json:"optimal_gain"`
	// ProbeBefore and ProbeAfter are the probe beliefs B_0 and B_T in [0,
	// 1] (P(claim holds)); nil when unreadable.
	ProbeBefore *float64 `json:"probe_before"`
	ProbeAfter  *float64 `json:"probe_after"`
	// LikertBefore and LikertAfter are the receiver's 1-7 ratings; 0 when
	// not given.
	LikertBefore int    `json:"likert_before"`
	LikertAfter  int    `json:"likert_after"`
	Error        string `json:"error,omitempty"`
}

// EpisodeSeed derives the seed of rollout k of claim c from the run seed;
// the World depends on it but not on the sender or the setting, so every
// sender meets the same worlds in both settings (paired comparisons).
func EpisodeSeed(runSeed uint64, c *Claim, k int) uint64 {
	return episode.Seed(runSeed, c.ID, k)
}

// Play plays one episode of c between snd and rcv in setting st through
// episode.Run (probe basis Basis) and scores it. seed is the episode seed
// (EpisodeSeed); the world is WorldOf(c, seed). A failed
// episode (an engine error) comes back with Error set and a zero gain;
// errors: a cancelled ctx, or a receiver whose Readout fails.
func Play(ctx context.Context, c *Claim, b Benchmarks, snd SenderRole, rcv ReceiverRole, st Setting, seed uint64) (Result, error) {
	w := WorldOf(c, seed)
	tmax := st.Tmax(c)
	pee := rcv.Bind(c, w, tmax)
	per := snd.Bind(c, w, st)
	ep, err := episode.Run(ctx, episode.Config{Tmax: tmax, Basis: Basis}, c.Scenario(), per, pee, seed)
	if err != nil {
		return Result{}, err
	}
	r := Result{Claim: c.ID, Domain: c.Domain, Sender: snd.Name(), Receiver: rcv.Name(), Setting: st, Seed: seed,
		State: w.State, Terminal: ep.Terminal, Turns: len(ep.Turns), PriorValue: b.Prior, PostValue: b.Prior,
		OptimalGain: b.OptimalGain(), ProbeBefore: ep.B0, Error: ep.Error}
	if bt, ok := ep.FinalBelief(); ok {
		r.ProbeAfter = &bt
	}
	if ep.Terminal == decision.TermFailed {
		return r, nil
	}
	post, lb, la, err := pee.Readout(ctx, ep)
	if err != nil {
		return r, fmt.Errorf("bayes: claim %s: %w", c.ID, err)
	}
	r.LikertBefore, r.LikertAfter = lb, la
	r.PostValue = c.Value(post)
	r.Gain = r.PostValue - r.PriorValue
	return r, nil
}

// WorldOf returns the World of the episode with seed seed:
// DrawWorld(c, episode.Mix(seed^3)).
func WorldOf(c *Claim, seed uint64) World { return DrawWorld(c, episode.Mix(seed^3)) }
