package sim

import (
	"fmt"
	"math"

	"github.com/persuarena/persuarena/tagger"
)

// StrategyParams are the simulator's reactions to the PersuasionForGood
// persuader strategies the tagger reads (tagger.Strategy; Wang et al.
// 2019, Persuasion for Good), on top of the reactions to the five acts. A
// strategy reacts through one of two channels (docs/simulator/model.md,
// "P4G strategies"):
//
//   - an openness gain (fields without "Move"): added to the turn's
//     openness change like an act's gain, so it lasts and moves the
//     outcome; a positive gain is scaled by receptivity and reactance as
//     every positive gain is, a negative one is a plain loss;
//   - a move score (fields starting "Move"): added to the turn's move
//     score m_t, so it shows in perceived persuasiveness q and the belief
//     at once and fades at the EMA rate QRate: a reaction in the turn, not
//     in the outcome.
//
// A strategy counts once per turn, however many phrases raise it. The
// defaults follow the effects measured in PersuasionForGood's 300
// annotated dialogues (docs/simulator/model.md); those measured as null default to 0 (no reaction
// beyond the acts the same words carry) and stay fields so that a fit
// (`persuarena sim fit`) can move them.
type StrategyParams struct {
	// DonationInfo is the openness gain of a turn with donation
	// information (how much, from what, where it goes), in [-0.2, 0.2];
	// default 0.03. Measured on P4G: donation information goes with giving, odds
	// ratio 1.32 per SD of its count (p .025). Choice: 0.03, the size of a
	// plan-detail gain (GainPlan of EB, IT and AR), until fitted.
	DonationInfo float64
	// Credibility is the openness gain of a credibility appeal, in
	// [-0.2, 0.2]; default 0. Measured on P4G: odds ratio 0.78 per SD, probably
	// reverse causation (persuaders cite the organisation to the
	// unconvinced), so no effect is assumed.
	Credibility float64
	// Logical, Emotion, PersonalStory and FootInTheDoor are the openness
	// gains of a logical appeal, an emotional appeal, a personal story and
	// a foot-in-the-door request, each in [-0.2, 0.2]; default 0
	// (measured on P4G: null on the outcome).
	Logical, Emotion, PersonalStory, FootInTheDoor float64
	// Inquiry is the openness gain of a turn with a source-, task- or
	// personal-related inquiry, in [-0.2, 0.2]; default 0
	// (measured on P4G: null). An open question about concerns is also a diagnostic act and
	// gets that act's reactions.
	Inquiry float64
	// MoveSelfModel is the move score of a self-modelling turn (the
	// persuader's own donation as an example), in [-1, 1]; default 0.12.
	// Measured on P4G: self-modelling raises positive persuadee reactions in the
	// turn by 0.12 (p .001) without changing the outcome. Choice: the
	// measured difference in the share of positive reactions is used as
	// the move score, on the same [-1, 1] scale as the acts' Move fields.
	MoveSelfModel float64
	// MoveAskAmount is the move score of an amount request ("how much
	// would you like to give?"), in [-1, 1]; default -0.34. Measured on P4G:
	// asking for an amount lowers positive reactions in the turn by 0.34
	// (p .001) without changing the outcome, so it has no openness
	// channel. The request is also a commitment act and gets that act's
	// reactions.
	MoveAskAmount float64
	// MoveSocial is the move score of greeting, praise and thanks
	// (tagger.ContentFree), in [-1, 0]; default 0. These carry no
	// persuasive content: a turn holding only them is content-free (no
	// act, no pressure, no concern, no other strategy), costs IdleCost and
	// never raises the belief; the range keeps it so.
	MoveSocial float64
}

// DefaultStrategyParams returns the default reactions documented on
// StrategyParams (measured on P4G; docs/simulator/model.md).
func DefaultStrategyParams() StrategyParams {
	return StrategyParams{DonationInfo: 0.03, MoveSelfModel: 0.12, MoveAskAmount: -0.34}
}

// check reports the out-of-range fields of p as errors naming the field.
func (p *StrategyParams) check() []error {
	var errs []error
	in := func(name string, v, lo, hi float64) {
		if math.IsNaN(v) || v < lo || v > hi {
			errs = append(errs, fmt.Errorf("sim config: Strategy.%s = %g outside [%g, %g]", name, v, lo, hi))
		}
	}
	in("DonationInfo", p.DonationInfo, -0.2, 0.2)
	in("Credibility", p.Credibility, -0.2, 0.2)
	in("Logical", p.Logical, -0.2, 0.2)
	in("Emotion", p.Emotion, -0.2, 0.2)
	in("PersonalStory", p.PersonalStory, -0.2, 0.2)
	in("FootInTheDoor", p.FootInTheDoor, -0.2, 0.2)
	in("Inquiry", p.Inquiry, -0.2, 0.2)
	in("MoveSelfModel", p.MoveSelfModel, -1, 1)
	in("MoveAskAmount", p.MoveAskAmount, -1, 1)
	in("MoveSocial", p.MoveSocial, -1, 0)
	return errs
}

// inquiries are the three P4G inquiry strategies.
const inquiries = tagger.StrategySet(1<<tagger.SourceInquiry | 1<<tagger.TaskInquiry | 1<<tagger.PersonalInquiry)

// reacts reports whether the simulator reacts to a strategy in st, that
// is whether one of them has a non-zero openness gain or move score; a
// turn with such a strategy is not content-free even without an act.
// Choice: a strategy the simulator does not react to (every null one at
// the defaults) leaves a turn content-free, so a tagger false positive on
// off-topic text ("I had pasta for lunch" reads as a personal story) with
// no reaction can never make filler raise the belief through noise;
// greeting, praise and thanks never count, whatever MoveSocial is.
func (p *StrategyParams) reacts(st tagger.StrategySet) bool {
	pos, neg := p.open(st)
	m := p.move(st &^ tagger.ContentFree)
	return pos != 0 || neg != 0 || m != 0
}

// open returns the openness gains (pos, before receptivity scaling) and
// losses (neg) of the strategies in st.
func (p *StrategyParams) open(st tagger.StrategySet) (pos, neg float64) {
	add := func(on bool, v float64) {
		switch {
		case !on:
		case v > 0:
			pos += v
		default:
			neg -= v
		}
	}
	add(st.Has(tagger.DonationInformation), p.DonationInfo)
	add(st.Has(tagger.CredibilityAppeal), p.Credibility)
	add(st.Has(tagger.LogicalAppeal), p.Logical)
	add(st.Has(tagger.EmotionAppeal), p.Emotion)
	add(st.Has(tagger.PersonalStory), p.PersonalStory)
	add(st.Has(tagger.FootInTheDoor), p.FootInTheDoor)
	add(st&inquiries != 0, p.Inquiry)
	return pos, neg
}

// move returns the move-score contribution of the strategies in st.
func (p *StrategyParams) move(st tagger.StrategySet) float64 {
	m := 0.0
	if st.Has(tagger.SelfModeling) {
		m += p.MoveSelfModel
	}
	if st.Has(tagger.AskAmount) {
		m += p.MoveAskAmount
	}
	if st&tagger.ContentFree != 0 {
		m += p.MoveSocial
	}
	return m
}
