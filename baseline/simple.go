package baseline

import (
	"context"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// pushy asks for commitment every turn and, in most turns, adds pressure
// (urgency, ultimatums, guilt). It never diagnoses, informs, plans or
// leaves the choice open. It is a deliberately bad baseline: it shows what
// pressure costs against persuadees that resist it, and it is never a
// default.
type pushy struct{}

// Name returns "pushy".
func (pushy) Name() string { return "pushy" }

// Start begins a pushy session; it sees only pub.
func (pushy) Start(_ context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	return &pushySession{base: newBase(pub, seed, false)}, nil
}

type pushySession struct {
	base
	used usedCount
}

// usedCount remembers how many template uses the turns before turn t
// took (a function of the seed and t alone), so turn t continues the
// count instead of recounting every earlier turn.
type usedCount struct{ t, n int }

// before returns the uses of turns 0..t-1, per(k) being turn k's.
func (u *usedCount) before(t int, per func(k int) int) int {
	k, n := 0, 0
	if u.t <= t {
		k, n = u.t, u.n
	}
	for ; k < t; k++ {
		n += per(k)
	}
	u.t, u.n = t, n
	return n
}

// pushyPressures draws how many pressure sentences turn t carries.
// Choice: pressure in 70% of turns, two sentences in a quarter of those.
func pushyPressures(seed uint64, t int) int {
	r := newTurnSource(seed, t)
	if !r.chance(7, 10) {
		return 0
	}
	if r.chance(1, 4) {
		return 2
	}
	return 1
}

// Say writes the pressure sentences first and the ask last. Pressure
// templates are used in deck order across turns, so none repeats until the
// bank is used up.
func (s *pushySession) Say(ctx context.Context, transcript []episode.Message) (episode.Utterance, error) {
	if err := ctx.Err(); err != nil {
		return episode.Utterance{}, err
	}
	t := turnIndex(transcript)
	used := s.used.before(t, func(k int) int { return pushyPressures(s.seed, k) })
	parts := make([]part, 0, 3)
	for i := range pushyPressures(s.seed, t) {
		parts = append(parts, part{bPressure, used + i})
	}
	parts = append(parts, part{bPushAsk, t})
	return s.compose(parts, ""), nil
}

// informer states evidence every turn (one or two sentences) and nothing
// else: no questions, no plan, no ask, no autonomy. It does not listen.
type informer struct{}

// Name returns "informer".
func (informer) Name() string { return "informer" }

// Start begins an informer session; it sees only pub.
func (informer) Start(_ context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	return &informerSession{base: newBase(pub, seed, false)}, nil
}

type informerSession struct {
	base
	used usedCount
}

// informerSentences draws how many evidence sentences turn t has.
// Choice: one or two, evenly.
func informerSentences(seed uint64, t int) int {
	return 1 + newTurnSource(seed, t).intn(2)
}

// Say uses the evidence templates in deck order across turns, so none
// repeats until the bank is used up.
func (s *informerSession) Say(ctx context.Context, transcript []episode.Message) (episode.Utterance, error) {
	if err := ctx.Err(); err != nil {
		return episode.Utterance{}, err
	}
	t := turnIndex(transcript)
	used := s.used.before(t, func(k int) int { return informerSentences(s.seed, k) })
	parts := make([]part, 0, 2)
	for i := range informerSentences(s.seed, t) {
		parts = append(parts, part{bEvid, used + i})
	}
	return s.compose(parts, ""), nil
}

// random realises, each turn, a uniformly drawn non-empty subset of the
// five acts, one generic sentence per act, statements first and questions
// last (evidence, plan, autonomy, diagnostic question, commitment ask). It
// does not listen and never adds pressure.
type random struct{}

// Name returns "random".
func (random) Name() string { return "random" }

// Start begins a random session; it sees only pub.
func (random) Start(_ context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	return &randomSession{base: newBase(pub, seed, false)}, nil
}

type randomSession struct{ base }

// randomOrder is the order in which random realises the acts it drew.
var randomOrder = [tagger.NumActs]struct {
	act  tagger.Act
	bank bankID
}{
	{tagger.Evidence, bEvid}, {tagger.Plan, bPlan}, {tagger.Autonomy, bAuton},
	{tagger.Diagnostic, bDiag}, {tagger.Commitment, bCommit},
}

// Say draws turn t's act set from the turn's own random stream and
// realises it; it errs only when ctx is done.
func (s *randomSession) Say(ctx context.Context, transcript []episode.Message) (episode.Utterance, error) {
	if err := ctx.Err(); err != nil {
		return episode.Utterance{}, err
	}
	t := turnIndex(transcript)
	r := newTurnSource(s.seed, t)
	set := tagger.ActSet(1 + r.intn(1<<tagger.NumActs-1)) // 1..31
	parts := make([]part, 0, tagger.NumActs)
	for _, o := range randomOrder {
		if set.Has(o.act) {
			parts = append(parts, part{o.bank, t})
		}
	}
	return s.compose(parts, ""), nil
}
