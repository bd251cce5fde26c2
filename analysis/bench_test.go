package analysis

import (
	"fmt"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

// armOutcomes returns n outcomes of one arm: 2,770 scenarios × 16
// rollouts for n = 44,320 (one persuader of 'eval --split all --rollouts
// 16'), with a terminal state cycling by k.
func armOutcomes(persuader string, n, k int) []episode.Outcome {
	terms := []decision.Terminal{decision.TermAccept, decision.TermConditional, decision.TermPending, decision.TermReject}
	goals := []float64{3, 1, -1, -3}
	os := make([]episode.Outcome, n)
	for i := range os {
		j := (i*k + i/7) % 4
		os[i] = episode.Outcome{Persuader: persuader, Persuadee: "sim", ScenarioID: fmt.Sprintf("s%04d", i/16),
			Rollout: i % 16, Terminal: terms[j], RGoal: goals[j]}
	}
	return os
}

// BenchmarkCompareOutcomes44k is 'persuarena compare RUN:A RUN:B' on a
// 177k-episode run without the database: two 44,320-episode arms, 10,000
// paired resamples for both intervals. The issue-12 target for the whole
// command (reading included) is under 3 s on 2 cores.
func BenchmarkCompareOutcomes44k(b *testing.B) {
	a, bb := armOutcomes("script", 44320, 1), armOutcomes("random", 44320, 3)
	for b.Loop() {
		if _, err := CompareOutcomes("r", a, "r", bb, CompareOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
