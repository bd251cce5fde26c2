// Package reward holds the outcome and dense rewards of the Probe-RPO paper.
// Each equation lives in exactly one function here.
package reward

import (
	"math"

	"github.com/persuarena/persuarena/decision"
)

// GoalRewards maps terminal states to R_goal (Probe-RPO paper).
type GoalRewards struct {
	Accept      float64 `json:"accept"`
	Conditional float64 `json:"conditional"`
	Pending     float64 `json:"pending"`
	Reject      float64 `json:"reject"`
}

// DefaultGoal is R_goal = Accept +3, Conditional +1, Pending -1, Reject -3:
// the exact least-squares fit of the Probe-RPO paper's Table 5 R_goal column
// against its four terminal shares (residual < 1e-4).
var DefaultGoal = GoalRewards{Accept: 3, Conditional: 1, Pending: -1, Reject: -3}

// Goal returns R_goal for terminal state t under g (Probe-RPO paper, Table 5).
//
// Choice: a truncated episode (context window exceeded, docs/engines.md) reached no
// decision, so it gets the Pending reward; it is never scored as a
// rejection. A failed episode has no reward: Goal returns NaN, and callers
// exclude it from means.
func (g GoalRewards) Goal(t decision.Terminal) float64 {
	switch t {
	case decision.TermAccept:
		return g.Accept
	case decision.TermConditional:
		return g.Conditional
	case decision.TermPending, decision.TermTruncated:
		return g.Pending
	case decision.TermReject:
		return g.Reject
	default:
		return math.NaN()
	}
}

// DefaultStrategyWeight is w_strategy in R_out = R_goal + w·R_strategy
// (Probe-RPO paper). Choice: w = 1 (the Probe-RPO paper does not state it).
const DefaultStrategyWeight = 1.0

// Outcome returns the training outcome reward R_out = R_goal + w·R_strategy
// (the Probe-RPO paper "goal + strategy terminal reward"). strategy is a
// judge's rating in [-1, 1]; pass 0 when no judge is configured.
func Outcome(goal, strategy, w float64) float64 { return goal + w*strategy }

// Dense returns the dense (process) reward r_t = B_t - B_{t-1} (Probe-RPO
// paper, §3.2), in [-1, 1]. ok is false when either belief is missing (all
// probes unreadable); a missing reward is never 0.
func Dense(bt, bprev float64, btOK, bprevOK bool) (r float64, ok bool) {
	if !btOK || !bprevOK {
		return 0, false
	}
	return bt - bprev, true
}
