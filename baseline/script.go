package baseline

import (
	"context"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

// script follows a fixed, listening policy: diagnose, address what the
// persuadee voiced with evidence, give a concrete plan with a small first
// step, then leave the choice open and ask. It only sees the transcript:
// it extracts short content phrases from the persuadee's replies (see
// extract) and echoes them, so concerns voiced in the persuadee's own
// words are addressed in those words.
//
// Policy per turn (Choice; the numbers are the project's; docs/persuaders.md
// has examples):
//   - turn 1: an open diagnostic question;
//   - the last reply voiced new content: evidence on it, echoing up to two
//     phrases, plus a diagnostic follow-up on them while fewer than maxDiag
//     diagnostic questions were asked and either the last diagnostic
//     question brought something new or a 40% draw says so; after three
//     evidence turns with no plan yet, a plan that works around it instead;
//   - nothing new, right after an ask: a plan echoing the reply's conditions
//     when it sounds conditional ("if", "only", "unless", "depends",
//     "maybe", ...), else a diagnostic question; the ask is repeated next;
//   - nothing new otherwise, first match: no evidence yet and fewer than two
//     diagnostic questions: diagnostic; no evidence yet: generic evidence;
//     fewer than two evidence turns, no plan and fewer than two diagnostic
//     questions: diagnostic; the last diagnostic question brought something
//     new: diagnostic; no plan yet: a plan; otherwise autonomy plus a
//     commitment ask.
type script struct{}

// Name returns "script".
func (script) Name() string { return "script" }

// Start begins a script session; it sees only pub.
func (script) Start(_ context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	return &scriptSession{base: newBase(pub, seed, true)}, nil
}

// move is the script's choice for one turn.
type move uint8

const (
	mDiag move = iota
	mEvid
	mPlan
	mAsk
)

// scriptState is what the script has done and heard so far. It is a pure
// function of the transcript (replayed from it when the cache does not
// match), which keeps Say a function of the seed and the transcript alone.
type scriptState struct {
	turns            int // persuader turns decided so far
	diag, evid, plan int // turns that included each move
	asks             int
	last             move
	addressed        []phrase // voiced phrases already echoed, oldest first
	seen             map[string]bool
	// lastHadDiag: the previous turn asked a diagnostic question;
	// diagFruitful: the reply to the latest diagnostic question voiced
	// something new (so there may be more to hear).
	lastHadDiag, diagFruitful bool
}

type scriptSession struct {
	base
	st scriptState
	// The transcript length and last message text at the previous Say: a
	// transcript extending that one continues from the cached state.
	prevLen  int
	prevLast string
	cached   bool
	// own is the reused buffer of the previous utterance's words (decide).
	own []string
}

// decision is one planned turn: the move, the sentences and the echo text.
type decision struct {
	mv    move
	parts []part
	x     string
}

// Say decides the turn from the transcript (see script) and realises it;
// it errs only when ctx is done.
func (s *scriptSession) Say(ctx context.Context, transcript []episode.Message) (episode.Utterance, error) {
	if err := ctx.Err(); err != nil {
		return episode.Utterance{}, err
	}
	t := turnIndex(transcript)
	if !s.continues(transcript, t) {
		// Replay the policy over the earlier turns of this transcript.
		s.st = scriptState{seen: map[string]bool{}}
		for k := 0; k < t; k++ {
			s.decide(replyBefore(transcript, k), k, prevPersuader(transcript, k))
		}
	}
	d := s.decide(lastReply(transcript), t, lastPersuader(transcript))
	s.prevLen, s.cached = len(transcript), true
	s.prevLast = ""
	if len(transcript) > 0 {
		s.prevLast = transcript[len(transcript)-1].Text
	}
	return s.compose(d.parts, d.x), nil
}

// continues reports whether transcript extends the one of the previous
// Say by this session's utterance (and any replies), so the cached state
// covers exactly its first t turns.
func (s *scriptSession) continues(transcript []episode.Message, t int) bool {
	if !s.cached || s.st.turns != t || len(transcript) <= s.prevLen {
		return false
	}
	if s.prevLen > 0 && transcript[s.prevLen-1].Text != s.prevLast {
		return false
	}
	return transcript[s.prevLen].Speaker == episode.PersuaderSpeaker
}

// decide chooses turn t's move from reply (the persuadee's latest message
// before it) and updates the state. own is the persuader's previous
// utterance, whose words are not echoed back.
func (s *scriptSession) decide(reply string, t int, own string) decision {
	st := &s.st
	r := newTurnSource(s.seed, t)
	s.own = appendWords(s.own[:0], own)
	stop := stopSet{words: s.f.stop, own: s.own}
	fresh := extract(reply, st.seen, stop, 2)
	if st.lastHadDiag {
		st.diagFruitful = len(fresh) > 0
	}
	var d decision
	switch {
	case t == 0:
		d = decision{mv: mDiag, parts: []part{{bDiag, t}}}
	case len(fresh) > 0 && (st.evid < 3 || st.plan > 0):
		x := joinPhrases(fresh)
		d = decision{mv: mEvid, parts: []part{{bEvidEcho, t}}, x: x}
		if st.diag < maxDiag && (st.diagFruitful || r.chance(2, 5)) {
			d.parts = append(d.parts, part{bDiagEcho, t})
		}
	case len(fresh) > 0:
		d = decision{mv: mPlan, parts: []part{{bPlanEcho, t}}, x: joinPhrases(fresh)}
	case st.last == mAsk && conditional(reply):
		ps := extract(reply, nil, stop, 2)
		if len(ps) == 0 {
			ps = recent(st.addressed, 2)
		}
		d = s.planTurn(t, ps)
	case st.last == mAsk:
		d = decision{mv: mDiag, parts: []part{{bDiag, t}}}
	case st.evid == 0 && st.diag < 2, st.plan == 0 && st.evid < 2 && st.diag < 2:
		d = decision{mv: mDiag, parts: []part{{bDiag, t}}}
	case st.evid == 0:
		d = decision{mv: mEvid, parts: []part{{bEvid, t}}}
	case st.diagFruitful && st.diag < maxDiag:
		d = decision{mv: mDiag, parts: []part{{bDiag, t}}}
	case st.plan == 0:
		d = s.planTurn(t, recent(st.addressed, 2))
	default:
		d = decision{mv: mAsk, parts: []part{{bAuton, t}, {bCommit, t}}}
	}
	for _, p := range fresh {
		if !st.seen[p.key] {
			st.seen[p.key] = true
			st.addressed = append(st.addressed, p)
		}
	}
	st.lastHadDiag = false
	for _, p := range d.parts {
		switch p.bank {
		case bDiag, bDiagEcho:
			st.diag++
			st.lastHadDiag = true
		}
	}
	switch d.mv {
	case mEvid:
		st.evid++
	case mPlan:
		st.plan++
	case mAsk:
		st.asks++
	}
	st.last = d.mv
	st.turns = t + 1
	return d
}

// maxDiag caps the diagnostic questions asked outside the turn after an
// ask.
const maxDiag = 4

// planTurn is a plan that echoes ps when there are any.
func (s *scriptSession) planTurn(t int, ps []phrase) decision {
	if len(ps) == 0 {
		return decision{mv: mPlan, parts: []part{{bPlan, t}}}
	}
	return decision{mv: mPlan, parts: []part{{bPlanEcho, t}}, x: joinPhrases(ps)}
}

// recent returns the last n phrases of ps.
func recent(ps []phrase, n int) []phrase {
	if len(ps) > n {
		return ps[len(ps)-n:]
	}
	return ps
}

// conditional reports whether a reply sounds like a conditional or
// unresolved answer.
func conditional(reply string) bool {
	found := false
	forWords(reply, func(w string) bool {
		switch w {
		case "if", "only", "unless", "provided", "depends", "maybe", "perhaps", "might", "unsure", "condition", "conditions":
			found = true
		}
		return !found
	})
	return found
}

// replyBefore returns the last persuadee message before persuader turn k
// (0-based), or "".
func replyBefore(transcript []episode.Message, k int) string {
	seen := 0
	last := ""
	for _, m := range transcript {
		if m.Speaker == episode.PersuaderSpeaker {
			if seen == k {
				return last
			}
			seen++
		} else {
			last = m.Text
		}
	}
	return last
}

// prevPersuader returns persuader turn k-1's text, or "" for k = 0.
func prevPersuader(transcript []episode.Message, k int) string {
	if k == 0 {
		return ""
	}
	seen := 0
	for _, m := range transcript {
		if m.Speaker == episode.PersuaderSpeaker {
			if seen == k-1 {
				return m.Text
			}
			seen++
		}
	}
	return ""
}

// lastPersuader returns the latest persuader message, or "".
func lastPersuader(transcript []episode.Message) string {
	for i := len(transcript) - 1; i >= 0; i-- {
		if transcript[i].Speaker == episode.PersuaderSpeaker {
			return transcript[i].Text
		}
	}
	return ""
}
