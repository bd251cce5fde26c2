package perception_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/perception"
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
	per, _ := baseline.New("script")
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

// The retry after a malformed answer is a different request: the same
// conversation continued by the malformed answer and a user message
// naming the parse error, with the next seed; its correct answer is the
// perception, and the usage of both requests is the read's.
func TestLLMReaderRetry(t *testing.T) {
	sc := arenaScenario(t)
	malformed := strings.Replace(answerFor(sc), `"evidence"`, `"bribery"`, 1)
	var reqs []fakeengine.Request
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(func(req fakeengine.Request) fakeengine.Reply {
		reqs = append(reqs, req)
		if len(reqs) == 1 {
			return fakeengine.Reply{Text: malformed}
		}
		return fakeengine.Reply{Text: answerFor(sc)}
	}))
	t.Cleanup(srv.Close)
	c, err := llm.NewClient(srv.Backend("fake"))
	if err != nil {
		t.Fatal(err)
	}
	seed := int64(7)
	r := perception.NewLLM("llm:reader", c, llm.Role{Backend: "fake", Sampling: llm.Sampling{Seed: &seed}})
	s, err := r.Start(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Read(context.Background(), perception.Input{Transcript: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Act now."}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first, second := reqs[0], reqs[1]
	if len(first.Messages) != 2 || len(second.Messages) != 4 {
		t.Fatalf("messages: %d then %d, want 2 then 4", len(first.Messages), len(second.Messages))
	}
	for i := range first.Messages {
		if second.Messages[i] != first.Messages[i] {
			t.Errorf("retry message %d differs from the first request's: the retry continues its conversation", i)
		}
	}
	if m := second.Messages[2]; m.Role != "assistant" || m.Content != malformed {
		t.Errorf("retry message 2: %s %q, want the malformed answer as the assistant's", m.Role, m.Content)
	}
	if m := second.Messages[3]; m.Role != "user" || !strings.Contains(m.Content, `unknown act "bribery"`) || !strings.Contains(m.Content, "JSON") {
		t.Errorf("retry message 3: %s %q, want a user message naming the parse error and asking for JSON", m.Role, m.Content)
	}
	if first.Body["seed"] != float64(7) || second.Body["seed"] != float64(8) {
		t.Errorf("seeds %v then %v, want 7 then 8", first.Body["seed"], second.Body["seed"])
	}
	if second.Body["response_format"] == nil {
		t.Error("the retry sent no schema")
	}
	// the second answer is the perception
	if p.Acts != tagger.ActSet(0).With(tagger.Evidence) || p.Unsupported != 1 || p.Cues != perception.CueSet(0).With(perception.Urgency) ||
		p.Relevance != 0.5 || p.Concerns[len(p.Concerns)-1] != perception.Answered {
		t.Errorf("perception %+v, want the second answer's", p)
	}
	// usage: both requests, as the fake engine counts them (prompt: the
	// rendered chat prompt's tokens; completion: the answer's)
	want := episode.Usage{
		PromptTokens:     len(fakeengine.Tokenize(first.Prompt)) + len(fakeengine.Tokenize(second.Prompt)),
		CompletionTokens: len(fakeengine.Tokenize(malformed)) + len(fakeengine.Tokenize(answerFor(sc))),
		Requests:         2,
	}
	if p.Usage != want || want.PromptTokens < 200 || want.CompletionTokens < 20 {
		t.Errorf("usage %+v, want %+v", p.Usage, want)
	}
	// unseeded, the retry is unseeded too
	reqs = nil
	r = perception.NewLLM("llm:reader", c, llm.Role{Backend: "fake"})
	s, _ = r.Start(context.Background(), sc)
	if _, err := s.Read(context.Background(), perception.Input{Transcript: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Act now."}}}); err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Body["seed"] != nil || reqs[1].Body["seed"] != nil || len(reqs[1].Messages) != 4 {
		t.Errorf("unseeded: %d requests, seeds %v, %v", len(reqs), reqs[0].Body["seed"], reqs[len(reqs)-1].Body["seed"])
	}
}

// The LLM reader's usage is the simulated persuadee's: each turn's
// PersuadeeUsage is exactly the engine usage of that turn's read.
func TestLLMReaderUsageInEpisode(t *testing.T) {
	sc := arenaScenario(t)
	var prompts []string
	r := llmReader(t, func(req fakeengine.Request) fakeengine.Reply {
		prompts = append(prompts, req.Prompt)
		return fakeengine.Reply{Text: answerFor(sc)}
	})
	pee := sim.New(sim.DefaultConfig()).WithReader(r)
	per, _ := baseline.New("script")
	ep, err := episode.Run(context.Background(), episode.Config{Tmax: 3}, sc, per, pee, 1)
	if err != nil || ep.Terminal == "failed" {
		t.Fatalf("episode: %v, %s %s", err, ep.Terminal, ep.Error)
	}
	if len(prompts) != len(ep.Turns) || len(ep.Turns) == 0 {
		t.Fatalf("%d reads for %d turns", len(prompts), len(ep.Turns))
	}
	completion := len(fakeengine.Tokenize(answerFor(sc)))
	for i, tn := range ep.Turns {
		want := episode.Usage{PromptTokens: len(fakeengine.Tokenize(prompts[i])), CompletionTokens: completion, Requests: 1}
		if tn.PersuadeeUsage != want {
			t.Errorf("turn %d: persuadee usage %+v, want %+v", tn.T, tn.PersuadeeUsage, want)
		}
	}
	// the embedded reader costs nothing
	ep, err = episode.Run(context.Background(), episode.Config{Tmax: 3}, sc, per, sim.New(sim.DefaultConfig()), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range ep.Turns {
		if tn.PersuadeeUsage != (episode.Usage{}) {
			t.Errorf("embedded reader, turn %d: usage %+v, want none", tn.T, tn.PersuadeeUsage)
		}
	}
}
