package tagger

import (
	"testing"

	"github.com/persuarena/persuarena/scenario"
)

// benchText is a typical 200-character persuader utterance.
const benchText = "I hear you on the cost. The documented results for people in a similar situation show most manage it within two weeks. Would you be willing to try it next Tuesday? It's entirely your decision."

func BenchmarkTag(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		Tag(benchText)
	}
}

var benchConcerns = []scenario.Concern{
	{ID: "cost", Keywords: []string{"cost", "price", "afford"}},
	{ID: "time", Keywords: []string{"time", "schedule", "busy"}},
	{ID: "side", Keywords: []string{"side effects", "risk"}},
	{ID: "family", Keywords: []string{"family", "kids", "partner"}},
}

func BenchmarkMentions(b *testing.B) {
	b.ReportAllocs()
	dst := make([]bool, 0, len(benchConcerns))
	for b.Loop() {
		dst = AppendMentions(dst[:0], benchText, benchConcerns)
	}
}

func BenchmarkMentionsAlloc(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Mentions(benchText, benchConcerns)
	}
}

// BenchmarkMentionsCompiled is BenchmarkMentions with the concerns
// compiled once (ConcernSet), as the simulator uses it.
func BenchmarkMentionsCompiled(b *testing.B) {
	b.ReportAllocs()
	cs := Compile(benchConcerns)
	dst := make([]bool, 0, len(benchConcerns))
	for b.Loop() {
		dst = cs.AppendMentions(dst[:0], benchText)
	}
}
