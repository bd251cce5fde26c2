package baseline

import (
	"context"
	"testing"

	"github.com/persuarena/persuarena/episode"
)

// benchEpisode plays ten turns of name against the fake replies per
// iteration and reports the cost per turn.
func benchEpisode(b *testing.B, name string) {
	p, _ := New(name)
	ctx := context.Background()
	tr := make([]episode.Message, 0, 20)
	b.ReportAllocs()
	turns := 0
	for i := 0; b.Loop(); i++ {
		s, _ := p.Start(ctx, publics[0], uint64(i))
		tr = tr[:0]
		for k := 0; k < 10; k++ {
			u, _ := s.Say(ctx, tr)
			tr = append(tr, episode.Message{Speaker: episode.PersuaderSpeaker, Text: u.Text},
				episode.Message{Speaker: episode.PersuadeeSpeaker, Text: replies[k%len(replies)]})
			turns++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(turns), "ns/turn")
}

// BenchmarkScriptTurn measures the script persuader (Start plus ten Say
// calls per op; ns/turn is the per-turn cost).
func BenchmarkScriptTurn(b *testing.B)   { benchEpisode(b, "script") }
func BenchmarkPushyTurn(b *testing.B)    { benchEpisode(b, "pushy") }
func BenchmarkInformerTurn(b *testing.B) { benchEpisode(b, "informer") }
func BenchmarkRandomTurn(b *testing.B)   { benchEpisode(b, "random") }
