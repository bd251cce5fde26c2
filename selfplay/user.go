package selfplay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

// Reaction is one reaction class of the user-side policy (docs/masp.md):
// what the user does with the persuader's latest turn. Three classes are
// decisions (accept, conditional, reject); the others continue the
// dialogue.
type Reaction int

// The reaction classes, the user policy's NumReactions actions.
const (
	// VoiceConcern says one of the user's doubts aloud.
	VoiceConcern Reaction = iota
	// PushBack objects to the persuader's move itself.
	PushBack
	// WarmUp welcomes the move.
	WarmUp
	// Deflect puts the decision off.
	Deflect
	// Accept agrees to the proposal (decision.Accept).
	Accept
	// Conditional agrees under a condition (decision.Conditional).
	Conditional
	// Reject declines (decision.Reject).
	Reject
	// NumReactions is the number of classes.
	NumReactions = 7
)

var reactionNames = [NumReactions]string{"voice_concern", "push_back", "warm_up", "deflect", "accept", "conditional", "reject"}

// String returns the class's stable name ("voice_concern", "push_back",
// "warm_up", "deflect", "accept", "conditional", "reject").
func (r Reaction) String() string {
	if r >= 0 && int(r) < NumReactions {
		return reactionNames[r]
	}
	return "unknown"
}

// Decision returns the episode decision of r: accept, conditional or
// reject for those classes, continue for the others.
func (r Reaction) Decision() decision.Decision {
	switch r {
	case Accept:
		return decision.Accept
	case Conditional:
		return decision.Conditional
	case Reject:
		return decision.Reject
	}
	return decision.Continue
}

// LabelOf is the reaction class of a simulator reply, the behaviour-cloning
// target of the user policy's warm start (the MASP paper's Algorithm 1 line 4): a
// terminal decision gives its class; otherwise the planner's reaction
// tagger (planner.TagReaction) reads the text, and a voiced worry gives
// VoiceConcern, an objection PushBack, a welcome WarmUp, and anything else
// (putting off, a question, "that's all", a plain acknowledgement)
// Deflect. Choice: the priority voiced > pushback > welcome keeps a reply
// such as "That helps. But what bothers me is ..." a voiced concern, as
// the planner reads it.
func LabelOf(d decision.Decision, text string) Reaction {
	switch d {
	case decision.Accept:
		return Accept
	case decision.Conditional:
		return Conditional
	case decision.Reject:
		return Reject
	}
	rs := planner.TagReaction(text)
	switch {
	case rs.Has(planner.Voiced):
		return VoiceConcern
	case rs.Has(planner.Pushback):
		return PushBack
	case rs.Has(planner.Positive):
		return WarmUp
	}
	return Deflect
}

// NumFeatures is the length of the user policy's feature vector
// (FeatureNames; docs/masp.md, "Self-play").
const NumFeatures = 36

// FeatureNames names the user policy's features, in order. Every entry is
// in [0, 1] except the three deltas and "receptivity_gain" ([-1, 1]).
//
// BDI state (masp.FromLatent of the user's mind, the masp.SimTeacher mapping,
// before the user's own decision): receptivity, confidence, valence
// rescaled to (v+1)/2, their changes since the previous reply (valence
// change halved), receptivity minus its initial value; the intention the
// mapping's texts state (ready: openness at or above the acceptance
// threshold; considering: at or above the conditional threshold;
// resisting: below), the desire to decide unpressured (reactance at or
// above the guarded level); concerns: open (voiced by the mind,
// unanswered) min(n, 3)/3, answered share of all concerns, a concern
// answered by the latest turn, a doubt the mind holds that the user has
// not said aloud yet. The mind's own inclination: the decision the
// simulator gives now or has given earlier (accept, conditional, reject),
// whether it would have voiced a concern now, whether the turn was the type's
// misstep, and whether the mind has stopped (it decided earlier and the
// policy did not follow; the decision it reached stays set). The persuader's latest turn (tagger.Tags): the
// five acts and any pressure. Turn t/10 (capped at 1), the first turn, and
// the user's previous reaction class (one-hot, zero at the first turn).
var FeatureNames = [NumFeatures]string{
	"receptivity", "confidence", "valence01", "d_receptivity", "d_confidence", "d_valence_half", "receptivity_gain",
	"intention_ready", "intention_considering", "intention_resisting", "desire_unpressured",
	"open_concerns", "answered_share", "answered_now", "unsaid_doubt",
	"mind_accept", "mind_conditional", "mind_reject", "mind_voices", "mind_misstep", "mind_stopped",
	"act_diagnostic", "act_evidence", "act_plan", "act_commitment", "act_autonomy", "pressure",
	"turn", "first_turn",
	"prev_voice_concern", "prev_push_back", "prev_warm_up", "prev_deflect", "prev_accept", "prev_conditional", "prev_reject",
}

// User is the trainable user-side policy of MASP self-play (MASP paper,
// §3.3-3.5) as an episode.Persuadee. Each user session keeps a *mind*: a
// simulator session (package sim, with Mind's configuration) started on the
// scenario with the episode's persuadee seed, whose latent state moves with
// the persuader's acts exactly as the simulator's does. Each turn the mind
// reads the persuader's message; its latent state, mapped to BDI by
// masp.FromLatent (the masp.SimTeacher mapping), together with the
// persuader's tagged acts and the mind's own inclination gives the feature
// vector (FeatureNames); the policy network chooses a reaction class;
// templates write the reply, and the class gives the decision. Sessions
// implement sim.LatentReader (the mind's latent state with the user's own
// decision, so masp's teacher and rule-based rationality judge read the user,
// not the bare simulator) and episode.Prober (Probe), so episodes run through
// episode.Run and masp.Play unchanged. User is immutable and safe for
// concurrent Start calls; do not change the Net while it is in use.
type User struct {
	name  string
	net   *Net
	mind  *sim.Persuadee
	mimic bool
}

// UserOption configures NewUser.
type UserOption func(*User)

// WithUserName sets Name (default "selfplay-user").
func WithUserName(name string) UserOption { return func(u *User) { u.name = name } }

// Mimic makes the user follow its mind: each turn's class is LabelOf the
// simulator's own reply (the network is still evaluated, for the
// log-probabilities). Used to collect the warm-start data; such a user
// decides exactly as the simulator would.
func Mimic() UserOption { return func(u *User) { u.mimic = true } }

// NewUser returns a user policy over net (NumFeatures inputs, NumReactions
// actions; not copied) whose minds are simulator sessions with
// configuration mind (sim.DefaultConfig, sim.Soft, ...). Errors: an
// invalid net or one of another shape, or an invalid mind configuration.
func NewUser(net *Net, mind sim.Config, opts ...UserOption) (*User, error) {
	if net == nil {
		return nil, errors.New("selfplay: nil user net")
	}
	if err := net.Validate(); err != nil {
		return nil, fmt.Errorf("selfplay: user net: %w", err)
	}
	if net.In != NumFeatures || net.Actions != NumReactions {
		return nil, fmt.Errorf("selfplay: user net has %d inputs and %d actions, want %d and %d", net.In, net.Actions, NumFeatures, NumReactions)
	}
	if err := mind.Validate(); err != nil {
		return nil, fmt.Errorf("selfplay: user mind: %w", err)
	}
	u := &User{name: "selfplay-user", net: net, mind: sim.New(mind)}
	for _, o := range opts {
		o(u)
	}
	return u, nil
}

// Name returns the user's name ("selfplay-user" unless WithUserName).
func (u *User) Name() string { return u.name }

// Start begins an episode on sc (including its hidden profile): the mind
// is a simulator session started with seed. It implements
// episode.Persuadee by calling StartSession.
func (u *User) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	return u.StartSession(ctx, sc, seed)
}

// StartSession is Start returning the concrete session, whose Decisions
// a trainer reads after the episode. Errors: ctx done, or the
// simulator's start error (nil scenario, unknown resistance type).
func (u *User) StartSession(ctx context.Context, sc *scenario.Scenario, seed uint64) (*UserSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ms, err := u.mind.Start(ctx, sc, seed)
	if err != nil {
		return nil, err
	}
	lr, ok := ms.(sim.LatentReader)
	if !ok {
		return nil, errors.New("selfplay: the simulator session has no latent reader")
	}
	s := &UserSession{u: u, sc: sc, mind: ms, lr: lr, seed: seed, said: make([]bool, len(sc.Hidden.Concerns)),
		prev: -1, proposal: firstPerson(sc.Proposal), last: map[string]int{}, mindDec: decision.Continue}
	s.latent = lr.Latent()
	s.prevBDI = scalars(s.latent, sc.Proposal)
	s.rho0 = s.prevBDI[0]
	return s, nil
}

// UserDecision records one turn's choice of a user session, for training.
type UserDecision struct {
	// T is the 1-based turn.
	T int
	// Features is the policy's input (NumFeatures values).
	Features []float64
	// Action is the chosen class.
	Action Reaction
	// Label is what the mind (the simulator) did this turn (LabelOf), -1
	// once the mind has stopped.
	Label Reaction
	// Logp is the chosen class's log-probability (nats) under the policy
	// that chose it, and Entropy that policy's entropy here (at most
	// ln 7 ≈ 1.946).
	Logp, Entropy float64
}

// UserSession is one episode of a User. Each turn's class is drawn from
// its own random stream seeded from (session seed, turn), and the
// template from another, so a turn is a pure function of the seed, the
// transcript and the weights.
type UserSession struct {
	u        *User
	sc       *scenario.Scenario
	mind     episode.PersuadeeSession
	lr       sim.LatentReader
	seed     uint64
	turn     int
	stopped  bool              // the mind decided and the policy did not follow
	mindDec  decision.Decision // the mind's terminal decision once stopped
	ended    bool
	said     []bool
	prev     Reaction
	prevBDI  [3]float64
	rho0     float64
	proposal string
	latent   sim.Latent
	lastText string
	last     map[string]int // bank name -> template index used last
	lp       []float64
	dec      []UserDecision
}

// scalars returns (receptivity, confidence, valence) of l mapped by
// masp.FromLatent as if no decision had been taken (the state the user
// decides from).
func scalars(l sim.Latent, goal string) [3]float64 {
	l.Decision = decision.Continue
	s := masp.FromLatent(l, goal)
	return [3]float64{s.Receptivity, s.Confidence, s.Valence}
}

// Reply lets the mind read the persuader's latest message, chooses a
// reaction class and writes it. Errors: a transcript that does not end
// with a persuader message, a session that already decided, ctx done, or
// the mind's error.
func (s *UserSession) Reply(ctx context.Context, transcript []episode.Message) (episode.Reply, error) {
	if err := ctx.Err(); err != nil {
		return episode.Reply{}, err
	}
	if len(transcript) == 0 || transcript[len(transcript)-1].Speaker != episode.PersuaderSpeaker {
		return episode.Reply{}, errors.New("selfplay: Reply needs a transcript ending with a persuader message")
	}
	if s.ended {
		return episode.Reply{}, errors.New("selfplay: the user has already decided")
	}
	s.turn++
	tags := tagger.Tag(transcript[len(transcript)-1].Text)
	before := s.lr.Latent()
	wasStopped := s.stopped
	mindDec := s.mindDec
	label := Reaction(-1)
	if !s.stopped {
		r, err := s.mind.Reply(ctx, transcript)
		if err != nil {
			return episode.Reply{}, fmt.Errorf("selfplay: mind: %w", err)
		}
		mindDec = r.Decision
		label = LabelOf(r.Decision, r.Text)
		if r.Decision.Terminal() {
			s.stopped, s.mindDec = true, r.Decision
		}
	}
	l := s.lr.Latent()
	if wasStopped {
		// A stopped mind no longer reads turns: nothing was answered now.
		l.AddressedNow, l.Misstep = 0, false
	}
	l.Turn = s.turn
	x := s.features(l, before, tags, mindDec, wasStopped)
	s.lp = s.u.net.LogProbs(s.lp, x)
	var a Reaction
	if s.u.mimic && label >= 0 {
		a = label
	} else {
		r := rand.New(rand.NewPCG(s.seed, episode.Mix(uint64(s.turn)+0x75736572)))
		a = Reaction(planner.Sample(s.lp, r.Float64()))
	}
	probs := make([]float64, len(s.lp))
	for i, v := range s.lp {
		probs[i] = math.Exp(v)
	}
	s.dec = append(s.dec, UserDecision{T: s.turn, Features: x, Action: a, Label: label, Logp: s.lp[a], Entropy: grpo.Entropy(probs)})
	text := s.render(a, l)
	s.lastText = text
	s.prev = a
	s.prevBDI = scalars(l, s.sc.Proposal)
	l.Decision = a.Decision()
	l.Ended = l.Decision.Terminal()
	s.ended = l.Ended
	s.latent = l
	return episode.Reply{Text: text, Decision: l.Decision}, nil
}

// features builds the NumFeatures vector (FeatureNames) from the mind's
// latent state l after this turn, the state before it, the persuader's
// tags and the mind's decision.
func (s *UserSession) features(l, before sim.Latent, tg tagger.Tags, mindDec decision.Decision, stopped bool) []float64 {
	x := make([]float64, NumFeatures)
	sc := scalars(l, s.sc.Proposal)
	x[0], x[1], x[2] = sc[0], sc[1], (sc[2]+1)/2
	x[3] = clamp(sc[0]-s.prevBDI[0], -1, 1)
	x[4] = clamp(sc[1]-s.prevBDI[1], -1, 1)
	x[5] = clamp((sc[2]-s.prevBDI[2])/2, -1, 1)
	x[6] = clamp(sc[0]-s.rho0, -1, 1)
	switch {
	case l.Openness >= l.AcceptAt:
		x[7] = 1
	case l.Openness >= l.ConditionalAt:
		x[8] = 1
	default:
		x[9] = 1
	}
	if l.Reactance >= l.Guarded {
		x[10] = 1
	}
	open, answered := 0, 0
	for i, c := range l.Concerns {
		switch c.State {
		case sim.ConcernVoiced:
			open++
			if !s.said[i] {
				x[14] = 1
			}
		case sim.ConcernAddressed:
			answered++
		}
	}
	x[11] = math.Min(float64(open), 3) / 3
	if n := len(l.Concerns); n > 0 {
		x[12] = float64(answered) / float64(n)
	}
	if l.AddressedNow > 0 {
		x[13] = 1
	}
	switch mindDec {
	case decision.Accept:
		x[15] = 1
	case decision.Conditional:
		x[16] = 1
	case decision.Reject:
		x[17] = 1
	}
	if !stopped && l.Count(sim.ConcernHidden) < before.Count(sim.ConcernHidden) {
		x[18] = 1
	}
	if l.Misstep {
		x[19] = 1
	}
	if stopped {
		x[20] = 1
	}
	for k, a := range tagger.Acts {
		if tg.Acts.Has(a) {
			x[21+k] = 1
		}
	}
	if tg.Pressure > 0 {
		x[26] = 1
	}
	x[27] = math.Min(float64(s.turn)/10, 1)
	if s.turn == 1 {
		x[28] = 1
	}
	if s.prev >= 0 {
		x[29+int(s.prev)] = 1
	}
	return x
}

func clamp(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

// Latent returns the mind's latent state with the user's own latest
// decision (sim.LatentReader): Decision and Ended are the policy's, not
// the simulator's. It never changes the state.
func (s *UserSession) Latent() sim.Latent {
	l := s.latent
	l.Concerns = slices.Clone(s.latent.Concerns)
	return l
}

// MindDecision returns the terminal decision the mind (the simulator)
// has reached, decision.Continue while it has reached none. After it the
// mind reads no more turns; the policy may still not follow it.
func (s *UserSession) MindDecision() decision.Decision {
	if s.stopped {
		return s.mindDec
	}
	return decision.Continue
}

// Decisions returns the turns decided so far, in order (the session's own
// slice: read it after the episode).
func (s *UserSession) Decisions() []UserDecision { return s.dec }

// Probe answers the probe basis from the user's BDI scalars (receptivity
// ρ, confidence c, valence v of masp.FromLatent on Latent, with ρ_0 the
// initial receptivity), as P(Yes):
//
//	ca (felt understood)          (1 + v) / 2
//	pe (a convincing case)        0.5 + (ρ - 0.5)(0.5 + 0.5c)
//	ac (more open than before)    clamp01(0.5 + ρ - ρ_0)
//
// and any other probe id the mean of the three. Choice: valence is felt
// understanding in the masp.SimTeacher mapping; receptivity is readiness to
// agree, pulled towards an undecided 0.5 when held with little
// confidence; the shift probe compares with the start, as the
// simulator's does. It reads the state only and never fails (episode.Prober).
func (s *UserSession) Probe(_ context.Context, _ []episode.Message, basis probe.Basis) ([]probe.Answer, error) {
	st := masp.FromLatent(s.Latent(), s.sc.Proposal)
	ca := (1 + st.Valence) / 2
	pe := 0.5 + (st.Receptivity-0.5)*(0.5+0.5*st.Confidence)
	ac := clamp(0.5+st.Receptivity-s.rho0, 0, 1)
	out := make([]probe.Answer, len(basis))
	for k, p := range basis {
		v := (ca + pe + ac) / 3
		switch p.ID {
		case "ca":
			v = ca
		case "pe":
			v = pe
		case "ac":
			v = ac
		}
		out[k] = probe.FromProbability(v)
	}
	return out, nil
}

var (
	_ episode.Persuadee = (*User)(nil)
	_ episode.Prober    = (*UserSession)(nil)
	_ sim.LatentReader  = (*UserSession)(nil)
)

// firstPerson is the proposal in the persuadee's own words
// (scenario.ProposalPhrase, PersonFirst: "donate part of my task payment
// to Save the Children"), "go ahead with it" when nothing is left.
func firstPerson(p string) string {
	if p = scenario.ProposalPhrase(p, scenario.PersonFirst); p != "" {
		return p
	}
	return "go ahead with it"
}
