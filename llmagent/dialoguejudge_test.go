package llmagent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/scenario"
)

// fakeJudge starts the fake engine answering with h and returns a judge
// on it with samples samples per question.
func fakeJudge(t *testing.T, samples int, h fakeengine.Handler) (*Judge, *fakeengine.Server) {
	t.Helper()
	srv := fakeengine.New(llm.OpenAI, fakeengine.WithHandler(h))
	t.Cleanup(srv.Close)
	c, err := llm.NewClient(srv.Backend("fake"))
	if err != nil {
		t.Fatal(err)
	}
	temp := 0.7
	return NewJudge("llm:j", c, llm.Role{Sampling: llm.Sampling{Temperature: &temp}}, samples), srv
}

func dialogue(lines ...string) []episode.Message {
	var ms []episode.Message
	for i, l := range lines {
		sp := episode.PersuaderSpeaker
		if i%2 == 1 {
			sp = episode.PersuadeeSpeaker
		}
		ms = append(ms, episode.Message{Speaker: sp, Text: l})
	}
	return ms
}

var judgePub = scenario.Public{ID: "t1", Proposal: "Donate $5 to the shelter"}

// cycle answers the i-th matching request (in arrival order) with
// replies[i % len].
func cycle(prefix string, replies ...string) fakeengine.Handler {
	var mu sync.Mutex
	n := 0
	return func(r fakeengine.Request) fakeengine.Reply {
		if len(r.Messages) == 0 || !strings.HasPrefix(r.Messages[0].Content, prefix) {
			return fakeengine.Reply{Text: "?"}
		}
		mu.Lock()
		defer mu.Unlock()
		n++
		return fakeengine.Reply{Text: replies[(n-1)%len(replies)]}
	}
}

func TestJudgeScores(t *testing.T) {
	ctx := context.Background()
	tr := dialogue("Would you give $5?", "Maybe.")
	// One sample: empathy 7 is clamped to 5, the string "2" is read.
	j, _ := fakeJudge(t, 1, cycle("You rate a persuasive conversation", `Sure: {"persuasiveness": 4, "empathy": 7, "helpfulness": "2"}`))
	s, u, err := j.Scores(ctx, judgePub, tr)
	if err != nil || s != (DialogueScores{4, 5, 2}) || u.Requests != 1 || u.PromptTokens == 0 {
		t.Fatalf("scores %+v, usage %+v, %v", s, u, err)
	}
	// Two samples are averaged: (4+3)/2, (5+5)/2, (2+1)/2; a third,
	// unreadable one (no empathy) is skipped and counted.
	j, _ = fakeJudge(t, 3, cycle("You rate a persuasive conversation",
		`{"persuasiveness": 4, "empathy": 5, "helpfulness": 2}`, `{"persuasiveness": 3, "empathy": 5, "helpfulness": 1}`, `{"persuasiveness": 3}`))
	if s, _, err = j.Scores(ctx, judgePub, tr); err != nil || s != (DialogueScores{3.5, 5, 1.5}) || j.Unparsed() != 1 {
		t.Fatalf("3 samples: %+v, unparsed %d, %v", s, j.Unparsed(), err)
	}
	j, _ = fakeJudge(t, 1, cycle("You rate a persuasive conversation", `no idea`))
	if _, _, err = j.Scores(ctx, judgePub, tr); !errors.Is(err, ErrJudgeUnparsed) {
		t.Fatalf("unreadable: %v", err)
	}
}

func TestJudgeWon(t *testing.T) {
	ctx := context.Background()
	tr := dialogue("Would you give $5?", "Yes, I will.")
	for _, c := range []struct {
		samples int
		replies []string
		want    bool
	}{
		{1, []string{`{"success": 1}`}, true},
		{1, []string{`{"success": "0"}`}, false},
		{2, []string{`{"success": 1}`, `{"success": 0}`}, false}, // a tie is a loss
		{3, []string{`{"success": 1}`, `{"success": 0}`, `{"success": 1}`}, true},
	} {
		j, _ := fakeJudge(t, c.samples, cycle("You decide whether a persuasion succeeded", c.replies...))
		if got, _, err := j.Won(ctx, judgePub, tr); err != nil || got != c.want {
			t.Errorf("%v: %v, %v; want %v", c.replies, got, err, c.want)
		}
	}
	j, _ := fakeJudge(t, 1, cycle("You decide whether a persuasion succeeded", `{"success": 2}`))
	if _, _, err := j.Won(ctx, judgePub, tr); !errors.Is(err, ErrJudgeUnparsed) {
		t.Errorf("success 2: %v", err)
	}
}

func TestJudgePrefer(t *testing.T) {
	ctx := context.Background()
	good, bad := dialogue("What worries you about giving?", "Cost."), dialogue("Give now!", "No.")
	// A fair judge finds the good dialogue in either position.
	fair := func(r fakeengine.Request) fakeengine.Reply {
		user := r.Messages[1].Content
		a := user[strings.Index(user, "Conversation A:"):strings.Index(user, "Conversation B:")]
		if strings.Contains(a, "worries") {
			return fakeengine.Reply{Text: `{"better": "A"}`}
		}
		return fakeengine.Reply{Text: `{"better": "b"}`}
	}
	j, srv := fakeJudge(t, 1, fair)
	if v, u, err := j.Prefer(ctx, judgePub, good, bad); err != nil || v != 1 || u.Requests != 2 {
		t.Errorf("good vs bad: %d, %+v, %v", v, u, err)
	}
	if v, _, err := j.Prefer(ctx, judgePub, bad, good); err != nil || v != -1 {
		t.Errorf("bad vs good: %d, %v", v, err)
	}
	if n := srv.Stats().Requests["/v1/chat/completions"]; n != 4 {
		t.Errorf("%d chat requests, want 4 (both orders, twice)", n)
	}
	// A judge that always prefers the first dialogue shown ties.
	j, _ = fakeJudge(t, 1, cycle("You compare two conversations", `{"better": "A"}`))
	if v, _, err := j.Prefer(ctx, judgePub, good, bad); err != nil || v != 0 {
		t.Errorf("position-biased judge: %d, %v; want 0", v, err)
	}
	// A first (a shown first), then a tie (b shown first): +1 + 0 = +1.
	j, _ = fakeJudge(t, 1, cycle("You compare two conversations", `{"better": "A"}`, `{"better": "tie"}`))
	if v, _, err := j.Prefer(ctx, judgePub, good, bad); err != nil || v != 1 {
		t.Errorf("A then tie: %d, %v; want 1", v, err)
	}
	j, _ = fakeJudge(t, 1, cycle("You compare two conversations", `{"better": "C"}`))
	if _, _, err := j.Prefer(ctx, judgePub, good, bad); !errors.Is(err, ErrJudgeUnparsed) || j.Unparsed() != 2 {
		t.Errorf("unreadable: %v, unparsed %d", err, j.Unparsed())
	}
}
