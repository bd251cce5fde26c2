package tagger

import "testing"

// benchText is a typical 200-character persuader utterance.
const benchText = "I hear you on the cost. The documented results for people in a similar situation show most manage it within two weeks. Would you be willing to try it next Tuesday? It's entirely your decision."

func BenchmarkTag(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		Tag(benchText)
	}
}
