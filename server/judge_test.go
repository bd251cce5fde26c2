package server

import (
	"context"
	"errors"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

// badJudge rates out of range, or fails, and reports what it cost.
type badJudge struct {
	rating float64
	err    error
}

func (j badJudge) Strategy(context.Context, scenario.Public, []episode.Message) (float64, episode.Usage, error) {
	return j.rating, episode.Usage{PromptTokens: 40, Requests: 1}, j.err
}

// The server's judge is an episode.Judge, run by the turn engine: an
// out-of-range rating or a failure leaves R_strategy = 0 (R_out = R_goal
// = +3 for the accept at turn 3) and is reported; the stored episode
// carries the judge's usage.
func TestJudgeFailuresReported(t *testing.T) {
	f := &fake{decisions: []decision.Decision{decision.Continue, decision.Continue, decision.Accept}, probs: []float64{0.5, 0.6, 0.4, 0.7}}
	for _, c := range []struct {
		j    badJudge
		want string
	}{
		{badJudge{rating: 2}, "strategy: rating 2 outside [-1, 1]"},
		{badJudge{err: errors.New("judge offline")}, "strategy: judge offline"},
	} {
		cfg := fakeConfig(t, f).Env
		cfg.Judge = c.j
		_, last, env := playFake(t, cfg, Outcome, 3)
		md := last.Metadata
		if md.RStrategy != nil || md.StrategyError != c.want || *md.ROut != 3 || *last.Reward != 3 || md.Terminal != decision.TermAccept {
			t.Fatalf("%+v: metadata %+v", c.j, md)
		}
		if ep := env.Episode(); ep.JudgeError != c.want || ep.JudgeUsage.PromptTokens != 40 || ep.OutcomeReward(1) != 3 {
			t.Fatalf("stored episode: %q, %+v", ep.JudgeError, ep.JudgeUsage)
		}
	}
}
