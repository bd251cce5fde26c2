// Package decision defines the persuadee's per-turn decision and the
// episode's terminal state (Probe-RPO paper, Table 5).
package decision

// Decision is what the persuadee decided in one reply.
type Decision string

// The per-reply decisions. Continue means no decision yet (including
// deflection); the other three end the episode.
const (
	Continue    Decision = "continue"
	Accept      Decision = "accept"
	Conditional Decision = "conditional"
	Reject      Decision = "reject"
)

// Terminal reports whether d ends the episode.
func (d Decision) Terminal() bool { return d == Accept || d == Conditional || d == Reject }

// Valid reports whether d is one of the four decisions.
func (d Decision) Valid() bool { return d == Continue || d.Terminal() }

// Terminal is how an episode ended (Probe-RPO paper, Table 5), plus two
// states for episodes that could not finish normally.
type Terminal string

// The terminal states.
const (
	// TermAccept is full acceptance.
	TermAccept Terminal = "accept"
	// TermConditional is acceptance with conditions.
	TermConditional Terminal = "conditional"
	// TermPending is no decision by Tmax.
	TermPending Terminal = "pending"
	// TermReject is rejection.
	TermReject Terminal = "reject"
	// TermTruncated is an episode cut short because the conversation outgrew
	// the persuadee's context window (docs/engines.md). It is never a rejection.
	TermTruncated Terminal = "truncated"
	// TermFailed is an episode that ended in an error; it is recorded, and
	// excluded from outcome metrics.
	TermFailed Terminal = "failed"
)

// Terminals lists the four decision-bearing terminal states in the order of
// the Probe-RPO paper's Table 5 (Acc., Cond., Pend., Rej.).
var Terminals = []Terminal{TermAccept, TermConditional, TermPending, TermReject}

// FromDecision maps a terminal decision to its terminal state. Continue
// maps to TermPending (what it means when Tmax is reached).
func FromDecision(d Decision) Terminal {
	switch d {
	case Accept:
		return TermAccept
	case Conditional:
		return TermConditional
	case Reject:
		return TermReject
	default:
		return TermPending
	}
}
