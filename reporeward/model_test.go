package reporeward

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
)

// engine answers like vLLM's /pooling, /classify, /score and SGLang's
// /classify, scoring a conversation by how often it says "thank".
func engine(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, "bad json", 400)
			return
		}
		score := func(s string) float64 { return float64(strings.Count(strings.ToLower(s), "thank")) }
		switch {
		case r.URL.Path == "/pooling":
			fmt.Fprintf(w, `{"id":"pool-1","object":"list","created":1,"model":"rm","data":[{"index":0,"object":"pooling","data":[0.1,%v]}],"usage":{"prompt_tokens":9,"total_tokens":9}}`, score(body["input"].(string)))
		case r.URL.Path == "/classify" && body["input"] != nil:
			x := score(body["input"].([]any)[0].(string))
			fmt.Fprintf(w, `{"id":"c","object":"list","data":[{"index":0,"label":"good","probs":[%v,%v],"num_classes":2}]}`, 1-x/10, x/10)
		case r.URL.Path == "/classify":
			fmt.Fprintf(w, `[{"embedding":[%v],"meta_info":{"id":"x","prompt_tokens":9}}]`, score(body["text"].([]any)[0].(string)))
		case r.URL.Path == "/score":
			fmt.Fprintf(w, `{"id":"s","object":"list","data":[{"index":0,"object":"score","score":%v}]}`, score(body["text_2"].(string)))
		default:
			http.NotFound(w, r)
		}
	}))
}

func TestHTTPModelAPIs(t *testing.T) {
	srv := engine(t)
	defer srv.Close()
	in := Input{Transcript: []episode.Message{
		{Speaker: "persuader", Text: "Thank you for your time, thanks."}, {Speaker: "persuadee", Text: "Thanks."},
		{Speaker: "persuader", Text: "Thank you again."},
	}}
	for api, want := range map[string]float64{APIVLLMPooling: 4, APIVLLMClassify: 0.4, APISGLang: 4, APIVLLMScore: 1} {
		m := &HTTPModel{URL: srv.URL, API: api, Model: "rm"}
		got, err := m.Score(context.Background(), in)
		if err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: %v, %v; want %v", api, got, err, want)
		}
	}
	bad := &HTTPModel{URL: srv.URL + "/nothing", API: APIVLLMPooling}
	if _, err := bad.Score(context.Background(), in); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("404: %v", err)
	}
}

// TestBTRecoversPreferences: synthetic pairs whose preferred text is the
// one asking about the partner's needs and without pressure; the model
// must rank held-out pairs of new wordings correctly.
func TestBTRecoversPreferences(t *testing.T) {
	good := []string{"What matters most to you in the new contract?", "How are your bookings doing this season?",
		"Which terms would work for your team?", "Thank you, what would help you decide?"}
	bad := []string{"You must sign today, last chance.", "Decide now or we walk away.",
		"This offer ends tonight, hurry.", "Sign now, no more excuses."}
	rng := rand.New(rand.NewPCG(1, 2))
	var pairs []Pair
	for range 200 {
		g, b := good[rng.IntN(len(good))], bad[rng.IntN(len(bad))]
		if rng.IntN(2) == 0 {
			g += " " + good[rng.IntN(len(good))]
		}
		pairs = append(pairs, Pair{Chosen: g, Rejected: b})
	}
	m, rep, err := TrainBT(pairs, BTConfig{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Train != 160 || rep.Heldout != 40 || rep.HeldoutAcc < 0.99 || rep.TrainAcc < 0.99 {
		t.Fatalf("report %+v", rep)
	}
	if m.ScoreText("What would make this work for you?") <= m.ScoreText("You must decide now, last chance.") {
		t.Error("unseen wordings ranked the wrong way")
	}
	var lines strings.Builder
	for _, p := range pairs[:3] {
		b, _ := json.Marshal(p)
		lines.Write(append(b, '\n'))
	}
	got, err := ReadPairs("p.jsonl", strings.NewReader(lines.String()+"\n"))
	if err != nil || len(got) != 3 {
		t.Fatalf("ReadPairs: %d, %v", len(got), err)
	}
	if _, err := ReadPairs("p.jsonl", strings.NewReader(`{"chosen":"a"}`)); err == nil || !strings.Contains(err.Error(), "p.jsonl:1: rejected") {
		t.Errorf("ReadPairs missing field: %v", err)
	}
}
