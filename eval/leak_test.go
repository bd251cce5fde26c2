package eval_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

const marker = "ZQX-HIDDEN-MARKER-7781"

// spy wraps a persuader and records everything it is handed.
type spy struct {
	episode.Persuader
	mu   sync.Mutex
	seen []string
}

func (s *spy) record(v any) {
	raw, _ := json.Marshal(v)
	s.mu.Lock()
	s.seen = append(s.seen, string(raw))
	s.mu.Unlock()
}

func (s *spy) Start(ctx context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	s.record(pub)
	inner, err := s.Persuader.Start(ctx, pub, seed)
	return spySession{inner, s}, err
}

type spySession struct {
	episode.PersuaderSession
	s *spy
}

func (ss spySession) Say(ctx context.Context, tr []episode.Message) (episode.Utterance, error) {
	ss.s.record(tr)
	return ss.PersuaderSession.Say(ctx, tr)
}

// The hidden profile never reaches a persuader: a unique marker planted in
// every hidden field that is not meant to be voiced (persona, traits,
// real outcome) appears in nothing any persuader receives.
func TestHiddenProfileNeverReachesPersuader(t *testing.T) {
	ss, err := scenario.Resolve("arena")
	if err != nil {
		t.Fatal(err)
	}
	ss = scenario.Filter(ss, scenario.Heldout)[:24]
	for i := range ss {
		h := &ss[i].Hidden
		h.Persona += " " + marker
		h.Traits = map[string]float64{marker: 3}
		d := 1.5
		ss[i].Outcome = &scenario.Outcome{Donation: &d, PersuaderUtterances: []string{marker}}
	}
	var spies []*spy
	var pers []episode.Persuader
	for _, name := range baseline.Names() {
		p, err := baseline.New(name)
		if err != nil {
			t.Fatal(err)
		}
		sp := &spy{Persuader: p}
		spies = append(spies, sp)
		pers = append(pers, sp)
	}
	jobs := eval.Plan(pers, []episode.Persuadee{sim.New(sim.DefaultConfig())}, []eval.Set{{Name: "arena", Scenarios: ss}}, 2, nil)
	n := 0
	if err := eval.Execute(context.Background(), jobs, eval.Options{Seed: 3, Workers: 4,
		Sink: func(*episode.Episode) error { n++; return nil }}); err != nil {
		t.Fatal(err)
	}
	if n != len(jobs) {
		t.Fatalf("%d episodes, want %d", n, len(jobs))
	}
	total := 0
	for _, sp := range spies {
		total += len(sp.seen)
		for _, s := range sp.seen {
			if strings.Contains(s, marker) {
				t.Fatalf("persuader %s received hidden data: %.200s", sp.Name(), s)
			}
		}
	}
	if total < len(jobs)*2 {
		t.Fatalf("spies saw only %d messages; the test is not exercising the persuaders", total)
	}
}

// Same seed, same transcript: the built-in persuaders against sim on real
// scenarios give byte-identical transcripts with 1 and 8 workers.
func TestSimTranscriptsIndependentOfWorkers(t *testing.T) {
	ss, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	ss = scenario.Filter(ss, scenario.Heldout)[:40]
	var pers []episode.Persuader
	for _, name := range baseline.Names() {
		p, _ := baseline.New(name)
		pers = append(pers, p)
	}
	jobs := eval.Plan(pers, []episode.Persuadee{sim.New(sim.DefaultConfig())}, []eval.Set{{Name: "p4g", Scenarios: ss}}, 2, nil)
	transcripts := func(workers int) map[episode.Key]string {
		out := map[episode.Key]string{}
		err := eval.Execute(context.Background(), jobs, eval.Options{Seed: 11, Workers: workers,
			Sink: func(ep *episode.Episode) error {
				ep.InitialProbeMS = 0 // timings legitimately differ
				for i := range ep.Turns {
					ep.Turns[i].PersuaderMS, ep.Turns[i].PersuadeeMS, ep.Turns[i].ProbeMS = 0, 0, 0
				}
				raw, err := json.Marshal(ep)
				out[episode.KeyOf(ep)] = string(raw)
				return err
			}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	one, eight := transcripts(1), transcripts(8)
	if len(one) != len(jobs) || len(eight) != len(jobs) {
		t.Fatalf("got %d and %d episodes, want %d", len(one), len(eight), len(jobs))
	}
	for k, v := range one {
		if eight[k] != v {
			t.Fatalf("episode %v differs between 1 and 8 workers", k)
		}
	}
}
