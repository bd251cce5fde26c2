package sim

import "github.com/persuarena/persuarena/decision"

// ReplyPolarity returns the direction of the session's last reply towards
// the proposal, as its wording states it: +1 when it accepts or says a
// conditional yes, or opens with a positive reaction (a concern addressed,
// or an openness gain of at least 0.05); -1 when it rejects, pushes back
// at the type's characteristic misstep, deflects an ask, or voices a
// concern; 0 for a plain acknowledgement or question (and before any
// reply). The rules follow the reply's composition (replies.go, compose),
// so the polarity is what a reader of the reply would annotate; package
// fidelity compares it with the annotated P4G persuadee acts.
func (s *session) ReplyPolarity() int {
	if s.turn == 0 {
		return 0
	}
	e := &s.ev
	switch e.decision {
	case decision.Accept, decision.Conditional:
		return 1
	case decision.Reject:
		return -1
	}
	switch {
	case e.bad:
		return -1
	case e.nAddr > 0:
		return 1
	case e.ask, len(e.voiced) > 0:
		return -1
	case e.nothing:
		return 0
	case e.gain >= 0.05:
		return 1
	}
	return 0
}
