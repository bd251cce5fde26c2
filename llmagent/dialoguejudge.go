package llmagent

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

// Criteria are the PersuHMM paper's three dialogue-quality criteria, in
// the order of DialogueScores and of the judge's answer.
var Criteria = []string{"persuasiveness", "empathy", "helpfulness"}

// Scale bounds of the dialogue-quality ratings. Choice: the PersuHMM paper
// names the criteria but not their scale; we rate each from 1 (not at all)
// to 5 (fully), the scale of its goal evaluator.
const (
	MinRating = 1
	MaxRating = 5
)

// DialogueScores are one dialogue's ratings in [MinRating, MaxRating] on
// the PersuHMM paper's criteria: Persuasiveness (did the persuader change
// the persuadee's mind), Empathy (did it respond to the persuadee's
// feelings) and Helpfulness (did it solve the persuadee's problem). With
// several samples each is the mean of the readable samples.
type DialogueScores struct {
	Persuasiveness, Empathy, Helpfulness float64
}

// Values returns the scores in Criteria order.
func (s DialogueScores) Values() [3]float64 {
	return [3]float64{s.Persuasiveness, s.Empathy, s.Helpfulness}
}

var (
	scoresSchema = json.RawMessage(`{"type":"object","properties":{"persuasiveness":{"type":"integer","minimum":1,"maximum":5},"empathy":{"type":"integer","minimum":1,"maximum":5},"helpfulness":{"type":"integer","minimum":1,"maximum":5}},"required":["persuasiveness","empathy","helpfulness"],"additionalProperties":false}`)
	wonSchema    = json.RawMessage(`{"type":"object","properties":{"success":{"type":"integer","enum":[0,1]}},"required":["success"],"additionalProperties":false}`)
	preferSchema = json.RawMessage(`{"type":"object","properties":{"better":{"type":"string","enum":["A","B","tie"]}},"required":["better"],"additionalProperties":false}`)
)

// numberField reads obj[key] as a number (a JSON number or a numeric
// string); ok is false otherwise or for NaN.
func numberField(obj map[string]any, key string) (float64, bool) {
	var x float64
	switch v := decision.Field(obj, key).(type) {
	case float64:
		x = v
	case string:
		var err error
		if x, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return x, !math.IsNaN(x)
}

// Scores rates the dialogue on the PersuHMM paper's three criteria (see
// DialogueScores), each answer clamped to [MinRating, MaxRating]. It sees
// the public scenario and the visible transcript only. It returns the
// call's engine usage (all samples). Errors: engine errors;
// ErrJudgeUnparsed when no sample gives all three ratings.
func (j *Judge) Scores(ctx context.Context, pub scenario.Public, transcript []episode.Message) (DialogueScores, episode.Usage, error) {
	texts, u, err := j.ask(ctx, judgeScoresPrompt(pub, transcript), scoresSchema)
	if err != nil {
		return DialogueScores{}, u, err
	}
	var sum [3]float64
	n := 0
	for _, t := range texts {
		obj, ok := lastJSONObject(t)
		var v [3]float64
		for c, name := range Criteria {
			x, isNum := numberField(obj, name)
			ok = ok && isNum
			v[c] = math.Max(MinRating, math.Min(MaxRating, x))
		}
		if !ok {
			j.miss()
			continue
		}
		for c := range v {
			sum[c] += v[c]
		}
		n++
	}
	if n == 0 {
		return DialogueScores{}, u, fmt.Errorf("llm judge %s: scores: %w", j.name, ErrJudgeUnparsed)
	}
	f := float64(n)
	return DialogueScores{sum[0] / f, sum[1] / f, sum[2] / f}, u, nil
}

// Won is the PersuHMM paper's binary Win Rate judge: whether the
// persuader reached the goal of the scenario by the end of the dialogue.
// With several samples the majority decides; a tie is a loss. It returns
// the call's engine usage. Errors: engine errors; ErrJudgeUnparsed when no
// sample answers 0 or 1.
func (j *Judge) Won(ctx context.Context, pub scenario.Public, transcript []episode.Message) (bool, episode.Usage, error) {
	texts, u, err := j.ask(ctx, judgeWonPrompt(pub, transcript), wonSchema)
	if err != nil {
		return false, u, err
	}
	yes, n := 0, 0
	for _, t := range texts {
		obj, ok := lastJSONObject(t)
		x, isNum := numberField(obj, "success")
		if !ok || !isNum || (x != 0 && x != 1) {
			j.miss()
			continue
		}
		n++
		if x == 1 {
			yes++
		}
	}
	if n == 0 {
		return false, u, fmt.Errorf("llm judge %s: win: %w", j.name, ErrJudgeUnparsed)
	}
	return 2*yes > n, u, nil
}

// Prefer is the PersuHMM paper's pairwise preference between two
// dialogues a and b of the same scenario: +1 when a is the better
// persuasion, -1 when b is, 0 for a tie. It asks twice, a shown first and
// then b shown first, each with Samples samples, and returns the sign of
// the summed votes (+1 for a, -1 for b, 0 for a tie or an unreadable
// sample). Choice: both orders to cancel the judge's position bias; a
// judge that always prefers the first dialogue thereby yields a tie.
// It returns the call's engine usage. Errors: engine errors;
// ErrJudgeUnparsed when no sample of either order is readable.
func (j *Judge) Prefer(ctx context.Context, pub scenario.Public, a, b []episode.Message) (int, episode.Usage, error) {
	var u episode.Usage
	sum, read := 0, 0
	for order, pair := range [2][2][]episode.Message{{a, b}, {b, a}} {
		texts, ou, err := j.ask(ctx, judgePreferPrompt(pub, pair[0], pair[1]), preferSchema)
		u = u.Add(ou)
		if err != nil {
			return 0, u, err
		}
		sign := 1
		if order == 1 {
			sign = -1
		}
		for _, t := range texts {
			obj, ok := lastJSONObject(t)
			s, isStr := decision.Field(obj, "better").(string)
			v := 0
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "a":
				v = 1
			case "b":
				v = -1
			case "tie":
			default:
				ok = false
			}
			if !ok || !isStr {
				j.miss()
				continue
			}
			read++
			sum += sign * v
		}
	}
	if read == 0 {
		return 0, u, fmt.Errorf("llm judge %s: preference: %w", j.name, ErrJudgeUnparsed)
	}
	switch {
	case sum > 0:
		return 1, u, nil
	case sum < 0:
		return -1, u, nil
	}
	return 0, u, nil
}

// judgeScoresPrompt asks for the three PersuHMM paper ratings.
func judgeScoresPrompt(pub scenario.Public, transcript []episode.Message) []string {
	return []string{
		`You rate a persuasive conversation from the persuader's side on three criteria, each an integer from 1 (not at all) to 5 (fully). "persuasiveness": how far the persuader moved the persuadee's opinion or intention towards the proposal, judged from what the persuadee says and does. "empathy": how well the persuader noticed and answered the persuadee's feelings and worries. "helpfulness": how far the persuader dealt with the persuadee's actual problem or need, rather than only pushing the proposal. Answer with only the JSON object {"persuasiveness": <1-5>, "empathy": <1-5>, "helpfulness": <1-5>}.`,
		judgedConversation(pub, transcript),
	}
}

// judgeWonPrompt asks the binary Win Rate question.
func judgeWonPrompt(pub scenario.Public, transcript []episode.Message) []string {
	return []string{
		`You decide whether a persuasion succeeded. It succeeded (1) only when, by the end of the conversation, the persuadee clearly agrees to the proposal or commits to act on it; interest, hesitation, partial or conditional agreement and polite thanks are failure (0). Answer with only the JSON object {"success": <0 or 1>}.`,
		judgedConversation(pub, transcript),
	}
}

// judgePreferPrompt asks which of two conversations of the same scenario
// persuades better.
func judgePreferPrompt(pub scenario.Public, first, second []episode.Message) []string {
	var b strings.Builder
	setting(&b, pub)
	b.WriteString("\nConversation A:\n")
	renderTranscript(&b, first)
	b.WriteString("\nConversation B:\n")
	renderTranscript(&b, second)
	return []string{
		`You compare two conversations in which a persuader pursues the same proposal with the same person. Decide which persuader did better overall: moving the person towards agreement, responding to their feelings and helping with their actual problem, honestly and without pressure. The order in which the conversations are shown says nothing about their quality. Answer with only the JSON object {"better": "A"}, {"better": "B"} or {"better": "tie"}.`,
		b.String(),
	}
}
