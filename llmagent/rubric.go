package llmagent

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/persuarena/persuarena/episode"
)

// Rate asks the judge for one rubric score in [lo, hi] (the REPO paper's
// LLM-as-a-judge rewards: emotional value, SOP compliance, ...): system
// states the rubric, user the material to rate (package reporeward writes
// both). The answer is a JSON object {"score": number, "reason": text}
// (schema-constrained where the engine supports it); the result is the
// mean of the readable samples' scores, each clamped to [lo, hi], with
// the engine usage of every sample. Errors: lo >= hi or not finite,
// engine errors, ErrJudgeUnparsed when no sample is readable.
func (j *Judge) Rate(ctx context.Context, system, user string, lo, hi float64) (float64, episode.Usage, error) {
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, episode.Usage{}, fmt.Errorf("llm judge %s: rate: scale [%v, %v], want lo < hi", j.name, lo, hi)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	schema := json.RawMessage(`{"type":"object","properties":{"score":{"type":"number","minimum":` + f(lo) + `,"maximum":` + f(hi) +
		`},"reason":{"type":"string"}},"required":["score","reason"],"additionalProperties":false}`)
	texts, u, err := j.ask(ctx, []string{system, user}, schema)
	if err != nil {
		return 0, u, err
	}
	mean, n := j.meanScore(texts, lo, hi)
	if n == 0 {
		return 0, u, fmt.Errorf("llm judge %s: rate: %w", j.name, ErrJudgeUnparsed)
	}
	return mean, u, nil
}
