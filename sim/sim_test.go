package sim_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// cycler is a tiny persuader that says its lines in order, cycling.
type cycler struct {
	name  string
	lines []string
}

func (c *cycler) Name() string { return c.name }
func (c *cycler) Start(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) {
	return &cyclerSession{c: c}, nil
}

type cyclerSession struct {
	c *cycler
	i int
}

func (s *cyclerSession) Say(context.Context, []episode.Message) (episode.Utterance, error) {
	u := episode.Utterance{Text: s.c.lines[s.i%len(s.c.lines)]}
	s.i++
	return u, nil
}

// informerLike never asks for a commitment: diagnostic, evidence and plan
// lines that touch the fixture's concern keywords.
var informerLike = &cycler{name: "cycle", lines: []string{
	"What worries you most about this?",
	"Studies show that 9 out of 10 people get no fever at all from the shot.",
	"We could start small: I'll set up an appointment for next week, during your hours.",
	"Research on this year's strain shows the vaccine matches it well.",
	"It's entirely your decision, and there's no pressure from me.",
}}

// asker adds a commitment ask with pressure.
var asker = &cycler{name: "ask", lines: []string{
	"You have to get the shot now, will you do it?",
	"What is holding you back?",
	"Studies show 80% of nurses who got it had no fever. Will you sign up today?",
	"Don't be selfish. Will you do it?",
}}

func fixtures() []*scenario.Scenario {
	var out []*scenario.Scenario
	for i, r := range scenario.Resistances {
		for j, st := range []float64{-0.6, -0.2, 0.2, 0.6} {
			out = append(out, &scenario.Scenario{
				ID: fmt.Sprintf("fx-%s-%d", r, j), Split: scenario.Heldout, Domain: "flu vaccination for night-shift nurses",
				Family: scenario.Healthcare, Proposal: "Get the seasonal flu shot at the staff clinic this week.",
				Persuader: scenario.Party{Name: []string{"Dana", ""}[i%2], Role: "infection-control lead"},
				Persuadee: scenario.Party{Name: "Sam", Role: "night-shift nurse"},
				Closeness: scenario.Closenesses[(i+j)%5],
				Hidden: scenario.HiddenProfile{
					Resistance: r, InitialStance: st,
					Concerns: []scenario.Concern{
						{ID: "side-effects", Description: "Last time the shot left me feverish for two days.", Keywords: []string{"fever", "side effect"}},
						{ID: "timing", Description: "The clinic is only open while I sleep.", Keywords: []string{"hours", "schedule"}},
						{ID: "efficacy", Description: "I doubt this year's vaccine even matches the strain.", Keywords: []string{"strain", "match"}},
					},
					Constraints: []string{"I work four nights a week."},
				},
			})
		}
	}
	return out
}

// noProbe hides the session's Prober, so Run reads no probes.
type noProbe struct{ p *sim.Persuadee }

func (n noProbe) Name() string { return n.p.Name() }
func (n noProbe) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	s, err := n.p.Start(ctx, sc, seed)
	return struct{ episode.PersuadeeSession }{s}, err
}

// transcript is the comparable content of an episode.
func transcript(ep *episode.Episode) string {
	out := string(ep.Terminal)
	for _, t := range ep.Turns {
		out += "\n" + t.Persuader + "\n> " + t.Persuadee + " [" + string(t.Decision) + "]"
	}
	return out
}

func run(t testing.TB, per episode.Persuader, pee episode.Persuadee, sc *scenario.Scenario, seed uint64) *episode.Episode {
	t.Helper()
	ep, err := episode.Run(context.Background(), episode.Config{}, sc, per, pee, seed)
	if err != nil || ep.Terminal == decision.TermFailed {
		t.Fatalf("run %s: %v %s", sc.ID, err, ep.Error)
	}
	return ep
}

// Same seed, same transcript and beliefs; probing or not never changes the
// transcript (the probe is a discarded fork).
func TestDeterministicAndProbeFree(t *testing.T) {
	pee := sim.New(sim.DefaultConfig())
	differs := 0
	for _, per := range []episode.Persuader{informerLike, asker} {
		for i, sc := range fixtures() {
			seed := uint64(1000 + i)
			a, b := run(t, per, pee, sc, seed), run(t, per, pee, sc, seed)
			if transcript(a) != transcript(b) {
				t.Fatalf("%s: same seed, different transcripts:\n%s\n---\n%s", sc.ID, transcript(a), transcript(b))
			}
			for k := range a.Turns {
				if *a.Turns[k].Belief != *b.Turns[k].Belief {
					t.Fatalf("%s turn %d: beliefs differ", sc.ID, k+1)
				}
			}
			c := run(t, per, noProbe{pee}, sc, seed)
			if c.B0 != nil || transcript(c) != transcript(a) {
				t.Fatalf("%s: probing changed the transcript:\n%s\n---\n%s", sc.ID, transcript(a), transcript(c))
			}
			if transcript(run(t, per, pee, sc, seed+1)) != transcript(a) {
				differs++
			}
		}
	}
	if differs == 0 {
		t.Fatal("no episode changed with the seed: noise and wording are not seeded")
	}
}

// Every episode reads t = 0 probes that are low, replies never repeat
// back to back, and no reply is empty.
func TestEpisodeShape(t *testing.T) {
	pee := sim.New(sim.Config{})
	for _, per := range []episode.Persuader{informerLike, asker} {
		for i, sc := range fixtures() {
			ep := run(t, per, pee, sc, uint64(i))
			if ep.B0 == nil || *ep.B0 > 0.15 {
				t.Fatalf("%s: B0 = %v, want < 0.15", sc.ID, ep.B0)
			}
			prev := ""
			for _, tr := range ep.Turns {
				if tr.Persuadee == "" || tr.Persuadee == prev {
					t.Fatalf("%s turn %d: reply %q repeats or is empty", sc.ID, tr.T, tr.Persuadee)
				}
				prev = tr.Persuadee
			}
		}
	}
}

// BenchmarkSimEpisode runs ten-turn episodes (a persuader that never asks,
// so nearly all run to Tmax), including tagging and the 11 probe reads.
func BenchmarkSimEpisode(b *testing.B) {
	pee := sim.New(sim.DefaultConfig())
	scs := fixtures()
	per := &cycler{name: "cycle", lines: informerLike.lines}
	ctx := context.Background()
	turns := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ep, err := episode.Run(ctx, episode.Config{}, scs[i%len(scs)], per, pee, uint64(i))
		if err != nil {
			b.Fatal(err)
		}
		turns += len(ep.Turns)
	}
	b.ReportMetric(float64(turns)/float64(b.N), "turns/op")
}

// BenchmarkSimEpisodeFresh is BenchmarkSimEpisode with every utterance
// new to the process (a unique letters-only word in a sentence of its own
// that no tagger rule or concern keyword reads), so no tagging result can
// be reused: the cost of an episode whose texts never repeat, as with an
// LLM persuader. The utterances are made before the timer starts.
func BenchmarkSimEpisodeFresh(b *testing.B) {
	pee := sim.New(sim.DefaultConfig())
	scs := fixtures()
	ctx := context.Background()
	const pool = 1 << 16
	lines := make([]string, pool)
	for i := range lines {
		w := []byte("zq")
		for n := i; n > 0 || len(w) < 6; n /= 26 {
			w = append(w, byte('a'+n%26))
		}
		lines[i] = informerLike.lines[i%len(informerLike.lines)] + " Zq" + string(w) + "."
	}
	next := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		per := &cycler{name: "cycle", lines: lines[next%pool : next%pool+10 : next%pool+10]}
		next += 10
		if next+10 > pool {
			b.StopTimer()
			for j := range lines { // new texts for the next pass
				lines[j] += " Zq."
			}
			next = 0
			b.StartTimer()
		}
		if _, err := episode.Run(ctx, episode.Config{}, scs[i%len(scs)], per, pee, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}
