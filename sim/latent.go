package sim

import (
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/scenario"
)

// ConcernState names a concern's place in hidden -> voiced -> addressed.
type ConcernState string

// The three concern states (docs/simulator/model.md, "Latent state").
const (
	ConcernHidden    ConcernState = "hidden"
	ConcernVoiced    ConcernState = "voiced"
	ConcernAddressed ConcernState = "addressed"
)

// LatentConcern is one hidden concern of the scenario and its state.
type LatentConcern struct {
	ID          string       `json:"id"`
	Description string       `json:"description"`
	State       ConcernState `json:"state"`
}

// Latent is a read-only snapshot of a simulator session's latent state
// (docs/simulator/model.md), for reward-side tools that are allowed to see it:
// MASP's teacher mentalizer and rule-based judges (MASP paper, Eq. 9,
// 22). It is hidden data: it must never reach a persuader.
//
// Units: Openness and Openness0 in [-1, 1], Rapport in [0, 1], Reactance
// >= 0, Persuasiveness (the perceived-persuasiveness EMA q) in [-1, 1].
type Latent struct {
	// Resistance is the scenario's hidden resistance type.
	Resistance scenario.Resistance `json:"resistance"`
	// Turn is the number of persuader turns observed so far (0 before the
	// first reply).
	Turn int `json:"turn"`
	// Openness is o_t; Openness0 is o_0, the initial stance.
	Openness  float64 `json:"openness"`
	Openness0 float64 `json:"openness0"`
	// Rapport is u_t (felt understanding).
	Rapport float64 `json:"rapport"`
	// Reactance is rho_t (Brehm 1966).
	Reactance float64 `json:"reactance"`
	// Persuasiveness is q_t.
	Persuasiveness float64 `json:"persuasiveness"`
	// Plans, Asks and PressureTurns count turns with plan detail, with a
	// commitment ask and with pressure, so far.
	Plans         int `json:"plans"`
	Asks          int `json:"asks"`
	PressureTurns int `json:"pressure_turns"`
	// Concerns are the scenario's concerns in salience order.
	Concerns []LatentConcern `json:"concerns"`
	// AcceptAt is the openness at or above which this persuadee accepts an
	// ask (Config.Accept adjusted by traits); ConditionalAt is
	// Config.Conditional; Guarded is Config.Guarded.
	AcceptAt      float64 `json:"accept_at"`
	ConditionalAt float64 `json:"conditional_at"`
	Guarded       float64 `json:"guarded"`
	// Decision is the decision of the latest reply (continue before the
	// first); Ended reports a terminal decision.
	Decision decision.Decision `json:"decision"`
	Ended    bool              `json:"ended"`
	// Misstep reports that the latest persuader turn was the type's
	// characteristic misstep (EB bare assertion, IT early challenge, AR
	// demand without choice, AA ask without a plan).
	Misstep bool `json:"misstep"`
	// AddressedNow is the number of concerns addressed by the latest turn.
	AddressedNow int `json:"addressed_now"`
}

// Count returns the number of concerns in state st.
func (l *Latent) Count(st ConcernState) int {
	n := 0
	for _, c := range l.Concerns {
		if c.State == st {
			n++
		}
	}
	return n
}

// LatentReader is implemented by the simulator's sessions (the values
// Persuadee.Start returns), so a caller holding an
// episode.PersuadeeSession can type-assert it to read the latent state.
type LatentReader interface {
	// Latent returns a snapshot of the current latent state; it never
	// changes the state or draws randomness.
	Latent() Latent
}

var _ LatentReader = (*session)(nil)

// Latent returns a snapshot of the session's latent state (LatentReader).
func (s *session) Latent() Latent {
	l := Latent{
		Resistance: s.sc.Hidden.Resistance, Turn: s.turn,
		Openness: s.o, Openness0: s.o0, Rapport: s.u, Reactance: s.rho, Persuasiveness: s.q,
		Plans: s.plans, Asks: s.asks, PressureTurns: s.pressTurns,
		Concerns: make([]LatentConcern, len(s.state)),
		AcceptAt: s.accept, ConditionalAt: s.cfg.Conditional, Guarded: s.cfg.Guarded,
		Decision: decision.Continue, Ended: s.ended,
	}
	if s.turn > 0 {
		l.Decision, l.Misstep, l.AddressedNow = s.ev.decision, s.ev.bad, s.ev.nAddr
	}
	for i, st := range s.state {
		c := s.sc.Hidden.Concerns[i]
		l.Concerns[i] = LatentConcern{ID: c.ID, Description: c.Description, State: [...]ConcernState{ConcernHidden, ConcernVoiced, ConcernAddressed}[st]}
	}
	return l
}
