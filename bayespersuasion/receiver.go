package bayespersuasion

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

// Basis is the probe basis of this environment: one yes/no question on
// belief in the claim, so B_t is the receiver's P(claim holds).
var Basis = probe.Basis{{ID: "claim", Dimension: "belief in the claim",
	Question: "Do I now believe that the claim under discussion is true?"}}

// World is one episode's hidden facts: the state and which evidence items
// hold. The sender knows it (it knows more than the receiver); the
// receiver only checks disclosures against it.
type World struct {
	// State indexes Claim.States.
	State int `json:"state"`
	// Holds[i] says whether Claim.Evidence[i] holds.
	Holds []bool `json:"holds"`
}

// DrawWorld draws a World of c: the state from the prior, then each item
// independently with P(e | state). Same seed, same world.
func DrawWorld(c *Claim, seed uint64) World {
	rng := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909))
	u := rng.Float64()
	w := World{State: len(c.Prior) - 1, Holds: make([]bool, len(c.Evidence))}
	for s, p := range c.Prior {
		if u < p {
			w.State = s
			break
		}
		u -= p
	}
	for i, e := range c.Evidence {
		w.Holds[i] = rng.Float64() < e.Likelihood[w.State]
	}
	return w
}

// Scenario returns the scenario.Scenario that carries c through
// episode.Run and the LLM roles: the sender-preferred action as the
// proposal, the claim in the background, and a hidden profile that states
// the receiver's prior belief in words (for LLM receivers).
func (c *Claim) Scenario() *scenario.Scenario {
	act := c.Actions[c.SenderAction()]
	b := c.Belief(c.Prior)
	bg := "The claim under discussion: " + c.Text
	if c.Background != "" {
		bg = c.Background + " " + bg
	}
	return &scenario.Scenario{
		ID: c.ID, Split: scenario.Val, Domain: c.Domain,
		Proposal:         act.Text,
		AcceptMeans:      "you decide to " + act.Text,
		ConditionalMeans: "you take a partial step instead",
		Persuader:        scenario.Party{Role: "someone who has looked into the evidence"},
		Persuadee:        scenario.Party{Role: "someone deciding whether to " + act.Text},
		Relationship:     "acquaintances", Closeness: scenario.Acquainted,
		Background: bg,
		Hidden: scenario.HiddenProfile{
			Persona:       fmt.Sprintf("You have not made up your mind. Before the conversation you think the claim is about %d%% likely to be true, and you act on it only if the evidence makes it likely enough.", int(100*b+0.5)),
			Motivation:    "to decide well, on the evidence you are shown",
			Resistance:    scenario.AmbivalentAvoidance,
			InitialStance: 2*b - 1,
		},
		Provenance: scenario.Provenance{Source: "bayes"},
	}
}

// normText lower-cases s and turns every run of non-alphanumeric runes
// into one space, padded with spaces at both ends.
func normText(s string) string {
	var b strings.Builder
	b.WriteByte(' ')
	space := true
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}

// Disclosed returns the indices of c.Evidence that text names, in
// c.Evidence order: an item is named by its id as a word of its own
// ("e2", "[e2]", "E2:"), or by quoting its text (case, punctuation and
// spacing ignored).
func Disclosed(c *Claim, text string) []int {
	t := normText(text)
	var out []int
	for i, e := range c.Evidence {
		if strings.Contains(t, normText(e.ID)) || strings.Contains(t, normText(e.Text)) {
			out = append(out, i)
		}
	}
	return out
}

// Receiver is the embedded Bayesian receiver, an episode.Persuadee: it
// updates its belief by Bayes' rule on exactly the evidence items a
// persuader's utterance discloses (Disclosed), answers in words, and ends
// with its best response to the posterior as a terminal decision. Safe for
// concurrent use.
//
// Choice: verifiable disclosure without lying. An item counts only if it
// holds in the episode's World; naming one that does not is ignored
// (Credulous lifts this). Any other words (appeals, claims not in the
// pool) move nothing.
//
// Choice: the receiver reads nothing into what was left unsaid (it does
// not reason about the sender's selection), so a sender that hides
// unfavourable items can do better than Benchmarks.Optimal against it;
// Benchmarks.PoolBest is the best such sender's value.
//
// Choice: the decision is taken at turn Tmax, or earlier when a turn
// discloses nothing new (the sender has rested its case): accept when
// the best response is the sender-preferred action (Claim.SenderAction),
// conditional when it is another action the sender values above its
// least-valued one, reject otherwise. Before that every reply is
// continue.
type Receiver struct {
	claims map[string]*Claim
	// Tmax is the turn at which the receiver decides at the latest; it
	// should equal episode.Config.Tmax (1 in the static setting).
	Tmax int
	// Credulous, when set, believes named items that do not hold.
	Credulous bool
}

// NewReceiver returns a Bayesian receiver for the given claims (looked up
// by scenario id) deciding at turn tmax at the latest (tmax < 1 means 1).
func NewReceiver(claims []*Claim, tmax int) *Receiver {
	m := make(map[string]*Claim, len(claims))
	for _, c := range claims {
		m[c.ID] = c
	}
	return &Receiver{claims: m, Tmax: max(tmax, 1)}
}

// Name implements episode.Persuadee: "bayes".
func (r *Receiver) Name() string { return "bayes" }

// Start implements episode.Persuadee: a session on the claim with id
// sc.ID in a World drawn from seed. Errors: an unknown claim.
func (r *Receiver) Start(_ context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	c, ok := r.claims[sc.ID]
	if !ok {
		return nil, fmt.Errorf("bayes receiver: unknown claim %q", sc.ID)
	}
	return r.session(c, DrawWorld(c, seed)), nil
}

// Session returns a receiver session on c in world w (Play uses it so
// that the sender and the receiver share the world).
func (r *Receiver) Session(c *Claim, w World) *ReceiverSession { return r.session(c, w) }

func (r *Receiver) session(c *Claim, w World) *ReceiverSession {
	return &ReceiverSession{r: r, c: c, w: w, post: append([]float64(nil), c.Prior...), told: make([]bool, len(c.Evidence))}
}

// ReceiverSession is one episode of a Receiver. It implements
// episode.PersuadeeSession, episode.Prober and episode.ProbabilityProber
// (every probe reads P(claim holds) from the exact posterior).
type ReceiverSession struct {
	r    *Receiver
	c    *Claim
	w    World
	post []float64
	told []bool
}

// Posterior returns the current belief over states (a copy).
func (s *ReceiverSession) Posterior() []float64 { return append([]float64(nil), s.post...) }

// Told returns the indices of the items accepted so far, in pool order.
func (s *ReceiverSession) Told() []int {
	var out []int
	for i, t := range s.told {
		if t {
			out = append(out, i)
		}
	}
	return out
}

// Likert returns the current belief in the claim on the 1-7 scale (Likert).
func (s *ReceiverSession) Likert() int { return Likert(s.c.Belief(s.post)) }

// Reply implements episode.PersuadeeSession.
func (s *ReceiverSession) Reply(_ context.Context, transcript []episode.Message) (episode.Reply, error) {
	turn := 0
	last := ""
	for _, m := range transcript {
		if m.Speaker == episode.PersuaderSpeaker {
			turn++
			last = m.Text
		}
	}
	var fresh, refused []int
	for _, i := range Disclosed(s.c, last) {
		switch {
		case s.told[i]:
		case s.w.Holds[i] || s.r.Credulous:
			fresh = append(fresh, i)
		default:
			refused = append(refused, i)
		}
	}
	before := s.c.Belief(s.post)
	if len(fresh) > 0 {
		if p, err := s.c.PosteriorFrom(s.post, fresh); err == nil {
			s.post = p
			for _, i := range fresh {
				s.told[i] = true
			}
		} else {
			refused = append(refused, fresh...)
			fresh = nil
		}
	}
	after := s.c.Belief(s.post)
	var b strings.Builder
	switch {
	case len(fresh) == 0:
		b.WriteString("That gives me nothing new to go on.")
	case after > before+1e-9:
		b.WriteString("That counts in favour of the claim.")
	case after < before-1e-9:
		b.WriteString("That makes the claim look less likely to me.")
	default:
		b.WriteString("That does not change my view.")
	}
	if len(refused) > 0 {
		b.WriteString(" I could not check some of what you cited, so I leave it aside.")
	}
	fmt.Fprintf(&b, " Right now I think the claim is %s (about %d%%).", beliefWords(after), int(100*after+0.5))
	d := decision.Continue
	if turn >= s.r.Tmax || len(fresh) == 0 {
		d = s.decide()
		fmt.Fprintf(&b, " My decision: I will %s.", s.c.Actions[s.c.BestResponse(s.post)].Text)
	}
	return episode.Reply{Text: b.String(), Decision: d}, nil
}

// decide maps the best response to a terminal decision (see Receiver).
func (s *ReceiverSession) decide() decision.Decision {
	a := s.c.BestResponse(s.post)
	if a == s.c.SenderAction() {
		return decision.Accept
	}
	lo := math.Inf(1)
	for k := range s.c.Actions {
		lo = min(lo, expected(s.post, func(st int) float64 { return s.c.SenderValue(k, st) }))
	}
	if expected(s.post, func(st int) float64 { return s.c.SenderValue(a, st) }) > lo+1e-9 {
		return decision.Conditional
	}
	return decision.Reject
}

func beliefWords(b float64) string {
	switch {
	case b < 0.15:
		return "very unlikely"
	case b < 0.4:
		return "unlikely"
	case b < 0.6:
		return "a toss-up"
	case b < 0.85:
		return "likely"
	}
	return "very likely"
}

// ProbeProbabilities implements episode.ProbabilityProber: P(claim holds)
// for every probe of basis.
func (s *ReceiverSession) ProbeProbabilities(dst []float64, basis probe.Basis) []float64 {
	b := s.c.Belief(s.post)
	for range basis {
		dst = append(dst, b)
	}
	return dst
}

// Probe implements episode.Prober through probe.FromProbability.
func (s *ReceiverSession) Probe(_ context.Context, _ []episode.Message, basis probe.Basis) ([]probe.Answer, error) {
	ps := s.ProbeProbabilities(nil, basis)
	out := make([]probe.Answer, len(ps))
	for k, p := range ps {
		out[k] = probe.FromProbability(p)
	}
	return out, nil
}
