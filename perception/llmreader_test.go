package perception_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/perception"
	"github.com/persuarena/persuarena/persuader"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

func llmReader(t *testing.T, h fakeengine.Handler) *perception.LLM {
	t.Helper()
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(h))
	t.Cleanup(srv.Close)
	c, err := llm.NewClient(srv.Backend("fake"))
	if err != nil {
		t.Fatal(err)
	}
	return perception.NewLLM("llm:reader", c, llm.Role{Backend: "fake"})
}

// answerFor is a well-formed answer for sc: evidence, every concern
// answered, no cue.
func answerFor(sc *scenario.Scenario) string {
	var cs []string
	for _, c := range sc.Hidden.Concerns {
		cs = append(cs, fmt.Sprintf(`{"id":%q,"engagement":"answered"}`, c.ID))
	}
	return `{"acts":["evidence"],"pressure":0,"concerns":[` + strings.Join(cs, ",") +
		`],"unsupported_claims":1,"cues":["urgency"],"relevance":0.5,"echo":0,"repeat":0}`
}

func arenaScenario(t *testing.T) *scenario.Scenario {
	all, err := scenario.Resolve("arena")
	if err != nil {
		t.Fatal(err)
	}
	return &all[0]
}

// The LLM reader sends one schema-constrained request per message, parses
// the answer strictly, asks again once after a malformed answer and then
// fails with ErrFailedRead; its perception drives the simulator.
func TestLLMReaderOnFakeEngine(t *testing.T) {
	sc := arenaScenario(t)
	var calls atomic.Int32
	var bad atomic.Int32 // malformed answers still to give
	r := llmReader(t, func(req fakeengine.Request) fakeengine.Reply {
		calls.Add(1)
		if req.Body["response_format"] == nil {
			return fakeengine.Reply{Text: "no schema sent"}
		}
		if bad.Load() > 0 {
			bad.Add(-1)
			return fakeengine.Reply{Text: `{"acts":["bribery"]}`}
		}
		return fakeengine.Reply{Text: answerFor(sc)}
	})
	ctx := context.Background()
	s, err := r.Start(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	in := perception.Input{Transcript: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Act now."}}}
	p, err := s.Read(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if p.Acts != tagger.ActSet(0).With(tagger.Evidence) || p.Unsupported != 1 || !p.Cues.Has(perception.Urgency) ||
		p.Relevance != 0.5 || len(p.Concerns) != len(sc.Hidden.Concerns) || p.Concerns[0] != perception.Answered || calls.Load() != 1 {
		t.Fatalf("perception %+v after %d calls", p, calls.Load())
	}
	bad.Store(1)
	if _, err := s.Read(ctx, in); err != nil || calls.Load() != 3 {
		t.Fatalf("one malformed answer: err %v, %d calls, want a retry that succeeds", err, calls.Load())
	}
	bad.Store(2)
	if _, err := s.Read(ctx, in); !errors.Is(err, perception.ErrFailedRead) || calls.Load() != 5 {
		t.Fatalf("two malformed answers: err %v, %d calls, want ErrFailedRead after 2", err, calls.Load())
	}
	// end to end: sim with the LLM reader; a failed read fails the episode
	pee := sim.New(sim.DefaultConfig()).WithReader(r)
	if pee.Name() != "sim+reader=llm:reader" {
		t.Fatalf("name %q", pee.Name())
	}
	per, _ := persuader.New("script")
	ep, err := episode.Run(ctx, episode.Config{Tmax: 3}, sc, per, pee, 1)
	if err != nil || len(ep.Turns) == 0 || ep.Terminal == "failed" {
		t.Fatalf("episode: %v, %d turns, %s %s", err, len(ep.Turns), ep.Terminal, ep.Error)
	}
	bad.Store(1000)
	ep, err = episode.Run(ctx, episode.Config{Tmax: 3}, sc, per, pee, 1)
	if err != nil || ep.Terminal != "failed" || !strings.Contains(ep.Error, "failed read") {
		t.Fatalf("malformed reader: %v, terminal %s, error %q, want a failed episode naming the failed read", err, ep.Terminal, ep.Error)
	}
}

// Strict parsing: unknown fields, unknown names, missing or repeated
// concerns and out-of-range numbers are all malformed.
func TestLLMReaderStrict(t *testing.T) {
	sc := arenaScenario(t)
	good := answerFor(sc)
	for _, bad := range []string{
		"not json",
		strings.Replace(good, `"repeat":0`, `"repeat":0,"extra":1`, 1),
		strings.Replace(good, `"evidence"`, `"flattery"`, 1),
		strings.Replace(good, `"answered"`, `"loved"`, 1),
		strings.Replace(good, `"relevance":0.5`, `"relevance":1.5`, 1),
		strings.Replace(good, `,"repeat":0`, ``, 1),
		strings.Replace(good, `"id":"`+sc.Hidden.Concerns[1].ID+`"`, `"id":"`+sc.Hidden.Concerns[0].ID+`"`, 1),
		good + " trailing",
	} {
		r := llmReader(t, func(fakeengine.Request) fakeengine.Reply { return fakeengine.Reply{Text: bad} })
		s, _ := r.Start(context.Background(), sc)
		_, err := s.Read(context.Background(), perception.Input{Transcript: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Hi."}}})
		if !errors.Is(err, perception.ErrFailedRead) {
			t.Errorf("answer %.60q: err %v, want ErrFailedRead", bad, err)
		}
	}
}
