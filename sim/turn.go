package sim

import (
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/perception"
	"github.com/persuarena/persuarena/tagger"
)

// turnIn is one persuader turn as the dynamics read it: the perception
// and what observe's steps derive from it, in step order. Each step reads
// what earlier steps set and writes its own fields (docs/simulator/model.md,
// "One turn").
type turnIn struct {
	pc *perception.Perception
	a  tagger.ActSet
	// press, cues and claims count pressure markers, manipulation cues
	// and unsupported claims (>= 0).
	press, cues, claims float64
	diag, evid, plan    bool
	ask                 bool
	// aut is autonomy support, unless manipulation cues take it back.
	aut bool
	// directive is plan detail without autonomy support to a type that
	// reads it as one (TypeParams.DirectivePlan).
	directive bool
	// echo reports a message that mostly echoes the persuadee; novelty in
	// [0, 1] scales what a message brings (1 new, 0 a second repeat).
	echo    bool
	novelty float64

	// Step 1.
	challenge             bool // IT: evidence or an ask before feeling understood
	touchVoiced, touchAny bool
	dismissed, answered   int
	ignored               bool // a reply that voiced a concern was ignored

	// Step 4.
	idle bool // content-free: nothing to react to
}

// observe applies one persuader turn, as perceived (pc), to the latent
// state and returns the decision. It is the whole of the simulator's
// dynamics, one method per step docs/simulator/model.md numbers.
func (s *session) observe(pc *perception.Perception) decision.Decision {
	s.turn++
	t := s.perceive(pc)
	s.engage(&t)
	s.rapport(&t)
	s.react(&t)
	s.openness(&t)
	s.voicing(&t)
	d := s.decide(&t)
	s.persuasiveness(&t)
	if d.Terminal() {
		s.ended = true
	}
	return d
}

// perceive derives the turn's inputs from pc and resets the turn's
// events. Novelty: echo of the persuadee's own words and repeats of the
// persuader's earlier messages give diminishing, then negative, returns.
func (s *session) perceive(pc *perception.Perception) turnIn {
	c, tp := s.cfg, s.tp
	a := pc.Acts
	t := turnIn{pc: pc, a: a,
		press: float64(max(pc.Pressure, 0)), cues: float64(pc.Cues.Len()), claims: float64(max(pc.Unsupported, 0)),
		diag: a.Has(tagger.Diagnostic), evid: a.Has(tagger.Evidence), plan: a.Has(tagger.Plan),
		ask: a.Has(tagger.Commitment),
		// an autonomy phrase among manipulation cues leaves no real choice
		aut: a.Has(tagger.Autonomy) && pc.Cues == 0,
	}
	// a plan pushed without autonomy support is a directive to a type
	// that reads it so (DirectivePlan), as resented as an ask
	t.directive = tp.DirectivePlan && t.plan && !t.aut
	e := &s.ev
	e.voiced = e.voiced[:0]
	e.nAddr, e.bad, e.ask, e.diag, e.nothing, e.gain = 0, false, t.ask, t.diag, false, 0
	e.decision, e.condition = decision.Continue, -1

	t.echo = pc.Echo >= c.EchoHigh
	if t.echo {
		s.echoes++
	}
	t.novelty = 1.0
	switch {
	case pc.Repeat >= 2:
		t.novelty = 0
	case pc.Repeat == 1:
		t.novelty = 0.5
	}
	if t.echo {
		t.novelty = min(t.novelty, max(0, 1-pc.Echo))
	}
	return t
}

// engage is step 1, the concerns engaged now. A concern voiced in an
// earlier reply is addressed when answered (a reason, fact or plan beyond
// the persuadee's own words) with one of the type's addressing acts; an
// IT persuadee takes none before it feels understood. Dismissing or
// mocking a concern is counted apart (step 3).
func (s *session) engage(t *turnIn) {
	c, tp, e := s.cfg, s.tp, &s.ev
	notUnderstood := s.kind == kIT && s.u < c.Understood
	t.challenge = notUnderstood && (t.evid || t.ask)
	canAddress := t.a&tp.AddressActs != 0 && !notUnderstood && t.novelty > 0
	for i, g := range t.pc.Concerns {
		if i >= len(s.state) {
			break
		}
		switch g {
		case perception.Dismissed:
			t.dismissed++
			t.touchAny = true
			continue
		case perception.Answered, perception.Acknowledged, perception.Conceded:
			t.touchAny = true
		default:
			continue
		}
		switch s.state[i] {
		case voiced:
			t.touchVoiced = true
			if g == perception.Answered && canAddress {
				s.state[i] = addressed
				e.nAddr++
			} else if g == perception.Answered {
				t.answered++
			}
		case hidden:
			if g == perception.Answered {
				t.answered++
			}
		case addressed:
			t.touchVoiced = true
		}
	}
	if t.plan && tp.PlanResolves && t.novelty > 0 && t.pc.Cues == 0 {
		// a plan pushed with a manipulation cue reassures no one (and the
		// cue's own words, "it's your choice, but…", must not touch a
		// worry for it)
		for i, g := range t.pc.Concerns {
			if i < len(s.state) && s.state[i] == voiced && (g == perception.Acknowledged || g == perception.Answered) {
				s.state[i] = addressed
				e.nAddr++
				break
			}
		}
	}
	t.ignored = s.turn > 1 && t.pc.Relevance < 0.5 && s.lastVoiced
}

// rapport is step 2, felt understanding.
func (s *session) rapport(t *turnIn) {
	c := s.cfg
	du := 0.0
	if t.diag {
		du += c.RapportDiag * s.rapW * t.novelty
	}
	if t.aut {
		du += c.RapportAutonomy * s.rapW * t.novelty
	}
	if t.touchVoiced && (!t.echo || s.echoes <= 1) {
		du += c.RapportEcho * s.rapW * t.novelty
	}
	du -= c.RapportPressure * (t.press + t.cues)
	du -= c.RapportDismiss * float64(t.dismissed)
	if t.ignored {
		du -= c.RapportIgnore
	}
	if t.ask && !t.aut {
		du -= c.RapportAsk
	}
	s.u = clamp(s.u+du, 0, 1)
}

// react is step 3, reactance (Brehm 1966), and trust. Manipulation cues
// and dismissed concerns build reactance whatever autonomy phrase
// surrounds them; unsupported specific claims lower trust, which damps
// every later gain.
func (s *session) react(t *turnIn) {
	c, tp := s.cfg, s.tp
	rho := s.rho * c.ReactDecay
	if t.aut {
		rho *= 1 - tp.Calm
	}
	build := c.ReactPressure * t.press
	if (t.ask || t.directive) && !t.aut {
		build += c.ReactAsk
	}
	rho += build * tp.Reactance * s.reactW
	rho += (c.ReactManip*t.cues + c.ReactDismiss*float64(t.dismissed)) * s.reactW
	if t.challenge {
		rho += c.ReactBackfire
	}
	s.rho = rho
	for range t.pc.Unsupported {
		s.trust *= 1 - c.TrustClaim
	}
}

// openness is step 4: the turn's gains, damped by receptivity, reactance,
// trust, novelty and the person's factor, less its losses, plus the
// reaction noise.
func (s *session) openness(t *turnIn) {
	c, tp, e, pc := s.cfg, s.tp, &s.ev, t.pc
	pos, neg := 0.0, 0.0
	if e.nAddr > 0 {
		w := 1.0
		switch s.kind {
		case kEB:
			w = s.evW
		case kAA:
			w = s.planW
		}
		if tp.Dilution > 0 && t.evid {
			k := 0.0
			if t.plan {
				k++
			}
			if t.a.Has(tagger.Autonomy) { // the phrase, credited or not: a cue takes no weight back
				k++
			}
			w /= 1 + tp.Dilution*k
		}
		pos += c.AddressTotal / float64(len(s.state)) * float64(e.nAddr) * w
	}
	if t.diag {
		pos += tp.GainDiag
	}
	if t.evid && !t.challenge && pc.Unsupported == 0 {
		pos += tp.GainEvidence * s.evW
	}
	if t.plan {
		pos += tp.GainPlan * s.planW
	}
	if t.aut {
		pos += tp.GainAutonomy
	}
	sp, sn := c.Strategy.open(pc.Strategies) // P4G strategies (strategy.go)
	pos += sp
	neg += sn
	e.bad = s.misstep(t)
	if e.bad {
		neg += tp.BadMove
	}
	if t.plan && t.novelty > 0 {
		s.plans++
	}
	if t.novelty > 0 && tp.Conflict > 0 {
		// more to weigh, and leave to wait: an avoider needs more of a
		// plan before it decides
		for _, more := range [...]bool{t.evid, t.aut} {
			if more {
				s.need = min(s.need+tp.Conflict, s.plans0+tp.MaxConflict)
			}
		}
	}
	if t.diag && s.firstHidden(len(s.state)) < 0 {
		// asked again for reasons it has all given: rehearses its own view
		neg += tp.RehearseCost
	}
	neg += c.PressureCost * t.press
	neg += c.ManipCost*t.cues + c.DismissCost*float64(t.dismissed) + c.ClaimCost*t.claims
	neg += c.ReactLeak * s.rho
	if t.ask {
		s.asks++
		if s.asks > c.FatigueFree {
			neg += c.FatigueCost * float64(s.asks-c.FatigueFree)
		}
	}
	if t.echo && s.echoes > 1 {
		neg += c.EchoCost * float64(s.echoes-1)
	}
	if pc.Repeat >= 2 {
		neg += c.RepeatCost * float64(pc.Repeat-1)
	}
	if t.press > 0 || t.cues > 0 {
		s.pressTurns++
	}
	// A content-free turn (no act, no pressure or cue, no concern engaged,
	// no P4G strategy the simulator reacts to: filler or small talk) gives
	// nothing to react to: no reaction noise, and wasted time costs
	// IdleCost. The draw is made anyway so the stream never depends on
	// branches.
	t.idle = t.a == 0 && t.press == 0 && t.cues == 0 && !t.touchAny && pc.Unsupported == 0 && !c.Strategy.reacts(pc.Strategies)
	noise := s.dyn.NormFloat64() * s.noiseSD
	if t.idle {
		noise = 0
		neg += c.IdleCost
	}
	if t.novelty == 0 {
		noise = 0 // nothing new to react to
	}
	pos += c.AnswerGain * float64(t.answered)
	if (t.answered > 0 || e.nAddr > 0) && t.novelty > 0 {
		// an argument that bears on a worry: most at the first one
		s.argues++
		pos += c.ArgueGain / float64(s.argues)
	}
	pos *= s.recv / (1 + s.rho) * s.trust * t.novelty * s.person
	e.gain = pos - neg
	s.o = clamp(s.o+pos-neg+noise, -1, 1)
	if s.firm && c.FirmCap > 0 {
		s.o = min(s.o, s.o0+c.FirmCap)
	}
}

// misstep reports whether the turn is the type's characteristic misstep
// or a misstep of any type (a directive, a dismissed concern, an
// unsupported claim, a manipulation cue). It reads the plan turns before
// this one's.
func (s *session) misstep(t *turnIn) bool {
	var bad bool
	switch s.kind {
	case kEB: // bare assertion: evidence off the voiced concerns, or a claim without evidence
		bad = (t.evid && !t.touchVoiced) || ((t.ask || t.press > 0) && !t.evid && !t.diag && !t.plan && !t.aut)
	case kIT: // direct challenge before feeling understood backfires
		bad = t.challenge
	case kAR: // a demand that leaves no choice
		bad = t.ask && !t.aut
	case kAA: // asked to decide with no concrete plan on the table
		bad = t.ask && !t.plan && s.plans < s.need
	}
	return bad || t.directive || t.dismissed > 0 || t.pc.Unsupported > 0 || t.pc.Cues != 0
}

// voicing is step 5, partial observability: what the reply voices.
func (s *session) voicing(t *turnIn) {
	c, e := s.cfg, &s.ev
	if t.diag {
		if i := s.firstHidden(len(s.state)); i >= 0 {
			s.voice(i, rVoiceAsked)
		} else {
			e.nothing = true
		}
	}
	for i, g := range t.pc.Concerns {
		if len(e.voiced) >= c.MaxVoice {
			break
		}
		if g.Touches() && i < len(s.state) && s.state[i] == hidden {
			s.voice(i, rVoiceTouched)
		}
	}
	if t.ask && s.tp.Surface && len(e.voiced) < c.MaxVoice {
		if i := s.firstHidden(c.Blocking); i >= 0 {
			s.voice(i, rVoiceAsk)
		}
	}
	s.lastVoiced = len(e.voiced) > 0
}

// decide is step 6, the decision, and the commitment a yes makes.
func (s *session) decide(t *turnIn) decision.Decision {
	c, tp, e := s.cfg, s.tp, &s.ev
	spont := s.dyn.Float64() // drawn every turn so the stream never depends on branches
	open := s.firstOpen(c.Blocking)
	d := decision.Continue
	if t.ask {
		switch {
		case s.rho >= c.RejectReactance:
			d, e.rejectWhy = decision.Reject, rejectReactance
		case s.kind != kAA && s.pressTurns >= c.PressureTurns && s.o < c.RejectOpen:
			d, e.rejectWhy = decision.Reject, rejectPressure
		case s.kind != kAA && s.o <= c.Floor && s.asks >= c.FloorAsks:
			d, e.rejectWhy = decision.Reject, rejectFirm
		case s.rho >= c.Guarded:
			// irritated: will not be rushed into any yes
		case s.kind == kIT && s.u < c.Understood:
			// not yet understood: pushes back, no decision
		case s.plans < s.need:
			// not concrete enough yet: deflects
		case s.o >= s.accept && open < 0:
			d = decision.Accept
		case s.o >= c.Conditional && open >= 0:
			d, e.condition = decision.Conditional, open
		case tp.Plans > 0 && s.o >= c.Conditional:
			d = decision.Conditional // a plan, but doubts: try a first step
		}
	} else if (t.press > 0 || t.cues > 0) && s.rho >= c.RejectReactance {
		// pressure alone can end it: the persuadee walks away
		d, e.rejectWhy = decision.Reject, rejectReactance
	} else if spont < c.Spontaneous {
		switch {
		case s.rho >= c.RejectReactance:
			d, e.rejectWhy = decision.Reject, rejectReactance
		case s.o >= s.accept+c.SpontaneousMargin && open < 0 && s.countState(hidden) < len(s.state) &&
			!(s.kind == kIT && s.u < c.Understood) && s.plans >= s.need:
			d = decision.Accept
		}
	}
	e.decision = d
	if t.ask && (d == decision.Accept || d == decision.Conditional) {
		// self-perception: having said yes to an ask, even "yes, if", the
		// persuadee reads its own answer as willingness; the condition it
		// named is now a term of its yes, no longer a barrier to it
		s.o = clamp(s.o+c.CommitGain, -1, 1)
		s.term = e.condition
	}
	return d
}

// persuasiveness is step 7, perceived persuasiveness: an EMA of fitting
// moves and of where the persuadee stands after its answer.
func (s *session) persuasiveness(t *turnIn) {
	c, tp, e, pc := s.cfg, s.tp, &s.ev, t.pc
	m := 0.0
	if t.a == 0 && t.press == 0 {
		m = c.MoveIdle
	}
	if t.diag {
		m += tp.MoveDiag * t.novelty
	}
	if t.evid && pc.Unsupported == 0 {
		m += tp.MoveEvidence * t.novelty
	}
	if t.plan {
		m += tp.MovePlan * t.novelty
	}
	if t.aut {
		m += tp.MoveAutonomy * t.novelty
	}
	if e.nAddr > 0 {
		m += tp.MoveAddress
	}
	if e.bad {
		m += tp.MoveBad
	}
	m += c.MovePressure * (t.press + t.cues + t.claims + float64(t.dismissed))
	m += c.Strategy.move(pc.Strategies)
	// the judgement also follows where the persuadee now stands: a case
	// that has not moved it does not feel persuasive
	m = clamp(m+c.PEOpen*s.willing(), -1, 1)
	q := (1-c.QRate)*s.q + c.QRate*m
	if t.idle || t.novelty == 0 {
		// saying nothing new is never more persuasive than what came before
		q = min(q, s.q)
	}
	s.q = q
}
