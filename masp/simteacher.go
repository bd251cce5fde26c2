package masp

import (
	"context"
	"errors"
	"math"
	"strings"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/sim"
)

// SimTeacher is the bdi.Teacher of a simulator persuadee: it maps the
// simulator's latent state to BDI (for the simulator the teacher may read
// its latent state, the MASP paper's oracle belief updater, Appendix B.1). It reads Reader at
// call time, so Label labels the current state: call it right after each
// persuadee reply; profile and history are not used, goal (the scenario
// proposal) fills the texts.
//
// With openness o in [-1, 1], reactance r >= 0, rapport u in [0, 1], and
// open = voiced-but-unaddressed concerns / voiced-or-addressed concerns (0
// when none was voiced):
//
//	receptivity rho = clamp01((1 + o) / (1 + a)) / (1 + r), a = Latent.AcceptAt
//	confidence  c   = clamp01(|o| (1 - open / 2)), raised to >= 0.8 after an
//	                   accept or reject and >= 0.6 after a conditional
//	valence     v   = clamp(0.4 (2u - 1) + 0.3 o - 0.5 min(r, 1), -1, 1)
//
// Choice: receptivity is openness rescaled so that 0 is o = -1 and 1 is
// the persuadee's own acceptance threshold (ready to say yes, the P4G
// target's 1.0), damped by irritation; confidence is the strength of the
// stance, lowered while voiced doubts are unresolved and raised by a
// decision (the target's 0.8 after an accept); valence is mostly felt
// understanding (rapport), then leaning, minus irritation, so a warm,
// accepting persuadee sits near the target's 0.5. The texts
// are chosen from the concern states, openness relative to the persuadee's
// own thresholds (Latent.AcceptAt, ConditionalAt, Guarded) and the latest
// decision; docs/masp.md lists them.
type SimTeacher struct {
	Reader sim.LatentReader
}

// Label returns the current state of the simulator session (see
// SimTeacher). It returns an error only when Reader is nil.
func (t SimTeacher) Label(_ context.Context, _ bdi.Task, _, goal string, _ []episode.Message) (bdi.State, error) {
	if t.Reader == nil {
		return bdi.State{}, errors.New("masp: SimTeacher has no latent reader")
	}
	l := t.Reader.Latent()
	return FromLatent(l, goal), nil
}

// FromLatent is SimTeacher's mapping of a latent snapshot to a state (see
// SimTeacher); goal is the scenario proposal.
func FromLatent(l sim.Latent, goal string) bdi.State {
	o, r, u := l.Openness, math.Max(l.Reactance, 0), l.Rapport
	voiced, addressed := l.Count(sim.ConcernVoiced), l.Count(sim.ConcernAddressed)
	open := 0.0
	if voiced+addressed > 0 {
		open = float64(voiced) / float64(voiced+addressed)
	}
	s := bdi.State{
		Receptivity: clamp((1+o)/(1+l.AcceptAt), 0, 1) / (1 + r),
		Confidence:  clamp(math.Abs(o)*(1-open/2), 0, 1),
		Valence:     clamp(0.4*(2*u-1)+0.3*o-0.5*math.Min(r, 1), -1, 1),
	}
	switch l.Decision {
	case decision.Accept, decision.Reject:
		s.Confidence = math.Max(s.Confidence, 0.8)
	case decision.Conditional:
		s.Confidence = math.Max(s.Confidence, 0.6)
	}
	g := bdi.GoalPhrase(goal)
	var openDesc, addrIDs []string
	for _, c := range l.Concerns {
		switch c.State {
		case sim.ConcernVoiced:
			openDesc = append(openDesc, strings.TrimSpace(c.Description))
		case sim.ConcernAddressed:
			addrIDs = append(addrIDs, strings.ReplaceAll(c.ID, "_", " "))
		}
	}
	switch {
	case len(openDesc) > 0:
		s.Belief = "The user still has doubts: " + strings.Join(openDesc, " ")
	case len(addrIDs) > 0 && o >= l.ConditionalAt:
		s.Belief = "The user feels their worries about " + strings.Join(addrIDs, ", ") + " have been answered and believes it is worthwhile to " + g + "."
	case o >= l.AcceptAt:
		s.Belief = "The user believes it is worthwhile to " + g + "."
	case o < 0:
		s.Belief = "The user is not convinced that it is a good idea to " + g + "."
	default:
		s.Belief = "The user is unsure whether it is worth it to " + g + "."
	}
	switch {
	case r >= l.Guarded:
		s.Desire = "The user wants to decide freely without being pressured."
	case o >= l.AcceptAt:
		s.Desire = "The user wants to help and to " + g + "."
	case o >= l.ConditionalAt:
		s.Desire = "The user would like to help but wants their remaining doubts settled first."
	default:
		s.Desire = "The user wants to keep things as they are and not be talked into anything."
	}
	switch {
	case l.Decision == decision.Accept:
		s.Intention = "The user intends to " + g + " now."
	case l.Decision == decision.Conditional:
		cond := "their remaining doubt is settled"
		if len(openDesc) > 0 {
			cond = "this is settled: " + openDesc[0]
		}
		s.Intention = "The user intends to go ahead only if " + cond
	case l.Decision == decision.Reject:
		s.Intention = "The user intends to decline."
	case o >= l.AcceptAt:
		s.Intention = "The user is ready to agree if asked."
	case o >= l.ConditionalAt:
		s.Intention = "The user is considering it and wants more concrete information."
	default:
		s.Intention = "The user intends to decline or keep resisting."
	}
	return s
}

func clamp(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

var _ bdi.Teacher = SimTeacher{}
