package masp

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

// The rationality signal q (MASP paper, Eq. 22).
const (
	Rational    = 1
	NotRational = -1
	// Unjudged is q for an unparseable answer or a failed call.
	Unjudged = 0
)

// RationalityJudge returns q_t in {-1, 0, +1} for one exchange: +1 when
// the user's reply is rational given its mental state (it updated on a
// concrete, honest reason, or reasonably resisted without one), -1 when
// not, 0 when the judgement failed or could not be read (MASP paper, §4,
// Appendix C.2). It never returns an error: failures are 0. raw is the
// judge's answer or the rule that fired, for the record.
type RationalityJudge interface {
	Rationality(ctx context.Context, ex *Exchange) (q int, raw string)
}

var (
	thinkRE   = regexp.MustCompile(`(?is)<think>.*?</think>`)
	echoRE    = regexp.MustCompile(`(?i)\brational\s*(?:or|/|\|)\s*not[\s_-]*rational\b`)
	ratWordRE = regexp.MustCompile(`(?i)\b(not[\s_-]*rational|irrational|non[\s_-]*rational|rational)\b`)
)

// ParseRationality reads a rationality judge's answer: +1 for RATIONAL, -1
// for NOT_RATIONAL, 0 when neither can be read. It is case-insensitive,
// removes <think> blocks and echoes of the choice ("RATIONAL or
// NOT_RATIONAL"), accepts NOT_RATIONAL spelt with a space or hyphen,
// "irrational" and "non-rational" as -1, and takes the first label that
// remains (judges answer first and explain after). "rationality" and
// other longer words are not labels.
//
// Note: the released judge (rewards.py RationalityJudge) tests for
// NOT_RATIONAL anywhere before RATIONAL anywhere, so an answer that
// explains "RATIONAL: a NOT_RATIONAL reply would be ..." reads -1 there
// and +1 here.
func ParseRationality(s string) int {
	s = thinkRE.ReplaceAllString(s, " ")
	s = echoRE.ReplaceAllString(s, " ")
	m := ratWordRE.FindString(s)
	if m == "" {
		return Unjudged
	}
	if strings.EqualFold(m, "rational") {
		return Rational
	}
	return NotRational
}

// LLMRationalityJudge asks an engine the common rationality question of
// the MASP paper's Appendix C.2 (in the project's words): the task, the user's
// current BDI state (Exchange.State; "unknown" when no teacher ran), the
// latest exchange, and whether replying this way was rational. The answer
// is read with ParseRationality; an engine error gives 0.
type LLMRationalityJudge struct {
	Engine llm.Chatter
	// Sampling for the judge; zero means temperature 0 and 16 tokens (the
	// released judge uses temperature 0 and 8 tokens).
	Sampling llm.Sampling
	Thinking *bool
}

const rationalityPrompt = `Task: %s

The user's current mental state:
%s

Latest exchange:
Assistant: %s
User: %s

Question: given that mental state, was it rational for the user to reply this way? A rational reply updates when the assistant gives a concrete and honest reason to update, and resists when no such reason was given. Conceding without a good reason, or refusing a clear and honest argument, is not rational.
Answer with exactly one label: RATIONAL or NOT_RATIONAL.`

// Rationality implements RationalityJudge.
func (j *LLMRationalityJudge) Rationality(ctx context.Context, ex *Exchange) (int, string) {
	state := "unknown"
	if ex.State != nil {
		state = ex.State.Text()
	}
	p := fmt.Sprintf(rationalityPrompt, bdi.TaskDescription(ex.Case.Task), state, ex.Utterance, ex.Reply.Text)
	sm := j.Sampling
	if sm.Temperature == nil {
		zero := 0.0
		sm.Temperature = &zero
	}
	if sm.MaxTokens <= 0 {
		sm.MaxTokens = 16
	}
	resp, err := j.Engine.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: p}}, Sampling: sm, Thinking: j.Thinking})
	if err != nil {
		return Unjudged, "error: " + err.Error()
	}
	return ParseRationality(resp.Content), resp.Content
}

// Margins of SimRationalityJudge: openness moves smaller than this are
// treated as noise (the simulator's per-turn noise SD is 0.03-0.06).
const simMoveMargin = 0.1

// SimRationalityJudge is the rule-based rationality judge for the
// simulator: it reads the persuader turn's tags and the latent state
// before and after the reply (Exchange.Before, After) and applies the
// paper's definition (Appendix C.2) literally. A turn "gives a reason"
// when it carries evidence or plan detail, no pressure marker, and
// addresses at least one voiced concern (Latent.AddressedNow > 0).
//
//   - accept or conditional: RATIONAL when the turn had no pressure and
//     the user has had a reason to move: some concern addressed so far, or
//     an initial stance already at or above 0 (not against the proposal);
//     otherwise NOT_RATIONAL (yielding to pressure, or sycophancy).
//   - reject: NOT_RATIONAL when the turn gave a reason (refusing a clear,
//     honest answer to one's own concern), otherwise RATIONAL.
//   - continue: NOT_RATIONAL when openness fell by more than 0.1 right
//     after a reason, or rose by more than 0.1 under pressure; otherwise
//     RATIONAL.
//
// Without latent snapshots (a persuadee that is not the simulator) it
// returns 0. Choice: the rules and the 0.1 margin are the project's; the
// simulator is built to be mostly rational, so NOT_RATIONAL marks the
// soft simulator's concessions and pressure-driven moves.
type SimRationalityJudge struct{}

// Rationality implements RationalityJudge.
func (SimRationalityJudge) Rationality(_ context.Context, ex *Exchange) (int, string) {
	if ex.Before == nil || ex.After == nil {
		return Unjudged, "no latent state"
	}
	b, a := ex.Before, ex.After
	press := ex.Tags.Pressure > 0
	reason := !press && (ex.Tags.Acts.Has(tagger.Evidence) || ex.Tags.Acts.Has(tagger.Plan)) && a.AddressedNow > 0
	dO := a.Openness - b.Openness
	switch ex.Reply.Decision {
	case decision.Accept, decision.Conditional:
		switch {
		case press:
			return NotRational, "yielded under pressure"
		case a.Count(sim.ConcernAddressed) == 0 && a.Openness0 < 0:
			return NotRational, "yielded with no concern answered"
		}
		return Rational, "yielded after reasons"
	case decision.Reject:
		if reason {
			return NotRational, "refused right after a concern was answered"
		}
		return Rational, "refused without a good reason on the table"
	}
	switch {
	case reason && dO < -simMoveMargin:
		return NotRational, "moved away after a reason"
	case press && dO > simMoveMargin:
		return NotRational, "warmed up under pressure"
	}
	return Rational, "held or moved in proportion"
}
