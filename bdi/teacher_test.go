package bdi

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

func TestParseState(t *testing.T) {
	good := `{"belief":"b","desire":"d","intention":"i","receptivity":0.4,"confidence":"0.7","valence":-0.2}`
	for _, c := range []struct {
		name, in, err string
	}{
		{"plain", good, ""},
		{"think and fence", "<think>let me see {not json}</think>\nHere you go:\n```json\n" + good + "\n```", ""},
		{"prose around", "Sure! " + good + " Hope this helps.", ""},
		{"case and aliases", `{"Belief":"b","DESIRE":"d","Intention":"i","openness":0.4,"commitment":0.7,"valence":-0.2}`, ""},
		{"braces in strings", `{"belief":"b {x}","desire":"d","intention":"i","receptivity":0.4,"confidence":0.7,"valence":-0.2}`, ""},
		{"missing field", `{"belief":"b","desire":"d","intention":"i","receptivity":0.4,"confidence":0.7}`, `"valence" missing`},
		{"out of range", `{"belief":"b","desire":"d","intention":"i","receptivity":1.4,"confidence":0.7,"valence":0}`, "receptivity = 1.4 outside [0, 1]"},
		{"not a number", `{"belief":"b","desire":"d","intention":"i","receptivity":"high","confidence":0.7,"valence":0}`, `"receptivity" = "high" is not a number`},
		{"truncated", `{"belief":"b","desire":"d"`, "no JSON object"},
		{"no json", "RATIONAL", "no JSON object"},
		{"belief not string", `{"belief":3,"desire":"d","intention":"i","receptivity":0.4,"confidence":0.7,"valence":0}`, `"belief" is not a string`},
	} {
		s, err := ParseState(c.in)
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if s.Receptivity != 0.4 || s.Confidence != 0.7 || s.Valence != -0.2 || s.Desire != "d" {
				t.Errorf("%s: %+v", c.name, s)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
}

// fakeChat answers from a script and records the requests.
type fakeChat struct {
	answers []string
	reqs    []llm.ChatRequest
}

func (f *fakeChat) Chat(_ context.Context, r llm.ChatRequest) (*llm.ChatResponse, error) {
	f.reqs = append(f.reqs, r)
	if len(f.reqs) > len(f.answers) {
		return nil, errors.New("no more answers")
	}
	return &llm.ChatResponse{Content: f.answers[len(f.reqs)-1]}, nil
}

var history = []episode.Message{
	{Speaker: episode.PersuaderSpeaker, Text: "Have you heard of Save the Children?"},
	{Speaker: episode.PersuadeeSpeaker, Text: "Yes, but I am not sure they spend money well."},
}

// The repair path: a bad answer, then a good one after one repair request
// that quotes the bad answer; two bad answers give ErrMissing.
func TestLLMTeacherRepair(t *testing.T) {
	good := `{"belief":"The user doubts overhead.","desire":"The user wants value.","intention":"The user will ask about costs.","receptivity":0.4,"confidence":0.6,"valence":0.0}`
	f := &fakeChat{answers: []string{`{"belief": "x", "receptivity": 2}`, good}}
	tc := &LLMTeacher{Engine: f}
	s, err := tc.Label(context.Background(), P4G, "A student on a budget.", "donate to Save the Children", history)
	if err != nil {
		t.Fatal(err)
	}
	if s.Intention != "The user will ask about costs." || len(f.reqs) != 2 {
		t.Fatalf("state %+v after %d requests", s, len(f.reqs))
	}
	first := f.reqs[0]
	if *first.Sampling.Temperature != 0.2 || first.Sampling.MaxTokens != 320 {
		t.Errorf("sampling %+v", first.Sampling)
	}
	u := first.Messages[1].Content
	for _, want := range []string{"Save the Children", "A student on a budget.", "User: Yes, but I am not sure", "Assistant: Have you heard"} {
		if !strings.Contains(u, want) {
			t.Errorf("prompt lacks %q:\n%s", want, u)
		}
	}
	rep := f.reqs[1].Messages
	if len(rep) != 4 || rep[2].Role != "assistant" || rep[2].Content != `{"belief": "x", "receptivity": 2}` || !strings.Contains(rep[3].Content, "not valid") {
		t.Errorf("repair request %+v", rep)
	}

	f = &fakeChat{answers: []string{"I cannot say.", `{"belief":"b"}`}}
	tc = &LLMTeacher{Engine: f, Schema: true}
	_, err = tc.Label(context.Background(), P4G, "", "donate", history)
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "after one repair") || len(f.reqs) != 2 {
		t.Errorf("err %v after %d requests", err, len(f.reqs))
	}
	if f.reqs[0].JSONSchema == nil {
		t.Error("schema not sent")
	}
	// An engine error is returned as is, without a repair.
	f = &fakeChat{}
	tc = &LLMTeacher{Engine: f}
	if _, err = tc.Label(context.Background(), P4G, "", "donate", nil); err == nil || errors.Is(err, ErrMissing) || len(f.reqs) != 1 {
		t.Errorf("engine error: %v", err)
	}
}

func simScenario() *scenario.Scenario {
	return &scenario.Scenario{
		ID: "fx", Split: scenario.Heldout, Domain: "flu shots", Family: scenario.Healthcare,
		Proposal: "Get the seasonal flu shot at the staff clinic this week.", Closeness: scenario.Professional,
		Hidden: scenario.HiddenProfile{
			Resistance: scenario.EntrenchedBelief, InitialStance: -0.4,
			Concerns: []scenario.Concern{
				{ID: "side-effects", Description: "Last time the shot left me feverish.", Keywords: []string{"fever"}},
				{ID: "timing", Description: "The clinic is only open while I sleep.", Keywords: []string{"hours"}},
			},
		},
	}
}

// SimTeacher's formulas at t = 0 of a professional EB persuadee with
// stance -0.4: u = 0.15, r = 0, nothing voiced; the expected values are
// written with the hand-set parameters (sim.HandConfig: Accept 0.3).
func TestSimTeacherInitial(t *testing.T) {
	c := sim.HandConfig()
	sess, err := sim.New(c).Start(context.Background(), simScenario(), 1)
	if err != nil {
		t.Fatal(err)
	}
	lr, ok := sess.(sim.LatentReader)
	if !ok {
		t.Fatal("sim session is not a LatentReader")
	}
	s, err := SimTeacher{Reader: lr}.Label(context.Background(), P4G, "", simScenario().Proposal, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "rho", s.Receptivity, 0.6/1.3, 1e-12)
	near(t, "c", s.Confidence, 0.4, 1e-12)
	near(t, "v", s.Valence, 0.4*(0.3-1)+0.3*-0.4, 1e-12)
	if s.Belief != "The user is not convinced that it is a good idea to get the seasonal flu shot at the staff clinic this week." ||
		s.Intention != "The user intends to decline or keep resisting." {
		t.Errorf("texts %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
	if _, err := (SimTeacher{}).Label(context.Background(), P4G, "", "", nil); err == nil {
		t.Error("nil reader accepted")
	}
}

func TestFromLatentCases(t *testing.T) {
	base := sim.Latent{AcceptAt: 0.3, ConditionalAt: 0, Guarded: 0.5, Rapport: 0.5, Decision: decision.Continue,
		Concerns: []sim.LatentConcern{{ID: "cost", Description: "It costs too much.", State: sim.ConcernVoiced},
			{ID: "trust", Description: "I don't trust them.", State: sim.ConcernAddressed}}}
	l := base
	l.Openness, l.Reactance = 0.6, 1
	s := FromLatent(l, "Donate $1.")
	near(t, "rho", s.Receptivity, 1.0/2, 1e-12) // clamp01(1.6/1.3) / (1 + 1)
	near(t, "c (half open)", s.Confidence, 0.6*0.75, 1e-12)
	near(t, "v", s.Valence, 0.3*0.6-0.5, 1e-12)
	if s.Belief != "The user still has doubts: It costs too much." || s.Desire != "The user wants to decide freely without being pressured." ||
		s.Intention != "The user is ready to agree if asked." {
		t.Errorf("texts %+v", s)
	}
	l = base
	l.Openness, l.Decision = 0.1, decision.Accept
	l.Concerns[0].State = sim.ConcernAddressed
	s = FromLatent(l, "Donate $1.")
	near(t, "c after accept", s.Confidence, 0.8, 0)
	if s.Intention != "The user intends to donate $1 now." || !strings.HasPrefix(s.Belief, "The user feels their worries about cost, trust have been answered") {
		t.Errorf("accept texts %+v", s)
	}
	l.Decision, l.Openness = decision.Conditional, -2 // clamps
	l.Concerns[0].State = sim.ConcernVoiced
	s = FromLatent(l, "Donate $1.")
	if s.Receptivity != 0 || s.Intention != "The user intends to go ahead only if this is settled: It costs too much." || math.Abs(s.Confidence-1) > 1e-12 {
		t.Errorf("conditional %+v", s)
	}
}
