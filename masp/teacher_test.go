package masp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
)

// scriptChat answers from a script and records the requests.
type scriptChat struct {
	answers []string
	reqs    []llm.ChatRequest
}

func (f *scriptChat) Chat(_ context.Context, r llm.ChatRequest) (*llm.ChatResponse, error) {
	f.reqs = append(f.reqs, r)
	if len(f.reqs) > len(f.answers) {
		return nil, errors.New("no more answers")
	}
	return &llm.ChatResponse{Content: f.answers[len(f.reqs)-1]}, nil
}

var teacherHistory = []episode.Message{
	{Speaker: episode.PersuaderSpeaker, Text: "Have you heard of Save the Children?"},
	{Speaker: episode.PersuadeeSpeaker, Text: "Yes, but I am not sure they spend money well."},
}

// The repair path: a bad answer, then a good one after one repair request
// that quotes the bad answer; two bad answers give ErrMissing.
func TestLLMTeacherRepair(t *testing.T) {
	good := `{"belief":"The user doubts overhead.","desire":"The user wants value.","intention":"The user will ask about costs.","receptivity":0.4,"confidence":0.6,"valence":0.0}`
	f := &scriptChat{answers: []string{`{"belief": "x", "receptivity": 2}`, good}}
	tc := &LLMTeacher{Engine: f}
	s, err := tc.Label(context.Background(), bdi.P4G, "A student on a budget.", "donate to Save the Children", teacherHistory)
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

	f = &scriptChat{answers: []string{"I cannot say.", `{"belief":"b"}`}}
	tc = &LLMTeacher{Engine: f, Schema: true}
	_, err = tc.Label(context.Background(), bdi.P4G, "", "donate", teacherHistory)
	if !errors.Is(err, bdi.ErrMissing) || !strings.Contains(err.Error(), "after one repair") || len(f.reqs) != 2 {
		t.Errorf("err %v after %d requests", err, len(f.reqs))
	}
	if f.reqs[0].JSONSchema == nil {
		t.Error("schema not sent")
	}
	// An engine error is returned as is, without a repair.
	f = &scriptChat{}
	tc = &LLMTeacher{Engine: f}
	if _, err = tc.Label(context.Background(), bdi.P4G, "", "donate", nil); err == nil || errors.Is(err, bdi.ErrMissing) || len(f.reqs) != 1 {
		t.Errorf("engine error: %v", err)
	}
}
