package realengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/perception"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/scenario"
)

// readerCall is one chat request the proxy saw: the conversation the
// reader reported on, whether it carried the reader's JSON schema, and the
// engine's answer.
type readerCall struct {
	prompt     string // the first user message (the transcript so far)
	turns      int    // messages in the request (2, or 4 for a retry)
	structured bool
	answer     string
}

// readerProxy forwards to s and records every chat request made after
// reset.
type readerProxy struct {
	mu    sync.Mutex
	calls []readerCall
}

func (p *readerProxy) reset() {
	p.mu.Lock()
	p.calls = nil
	p.mu.Unlock()
}

func (p *readerProxy) snapshot() []readerCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]readerCall(nil), p.calls...)
}

// start returns the proxy's base URL; it is closed when the test ends.
func (p *readerProxy) start(t *testing.T, s *server) string {
	t.Helper()
	target, err := url.Parse(s.base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	var schema any
	if err := json.Unmarshal(perception.LLMSchema, &schema); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			rp.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			ResponseFormat struct {
				Type       string `json:"type"`
				JSONSchema struct {
					Schema any `json:"schema"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		c := readerCall{}
		if json.Unmarshal(body, &req) == nil {
			for _, m := range req.Messages {
				if m.Role == "user" && c.prompt == "" {
					c.prompt = m.Content
				}
			}
			c.turns = len(req.Messages)
			rf := req.ResponseFormat
			c.structured = rf.Type == "json_schema" && fmt.Sprint(rf.JSONSchema.Schema) == fmt.Sprint(schema)
		}
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		var resp struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &resp) == nil && len(resp.Choices) > 0 {
			c.answer = resp.Choices[0].Message.Content
		}
		p.mu.Lock()
		p.calls = append(p.calls, c)
		p.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestSimLLMReader plays episodes of the script persuader against
// sim+reader=llm:reader, resolved through the role registry from a
// --config naming llama-server, and checks the reader's plumbing (the
// tiny model's perceptions mean nothing): every persuader turn sent the
// reader's JSON schema as response_format and got an answer under the
// engine's grammar, one request per read when the answer parses and a
// second after a malformed one; a read whose two answers are both
// malformed ends the episode failed, naming the failed read, after the
// turns read before it; and the engine's answers, replayed through the
// fake engine, read the same way (an answer the reader accepts is never
// recorded as a failure). docs/engines.md gives the outcome the tiny
// model's answers have (a failed read at turn 1).
func TestSimLLMReader(t *testing.T) {
	s := startServer(t, 16384, 1)
	var px readerProxy
	base := px.start(t, s)
	cfg := filepath.Join(t.TempDir(), "persuarena.yaml")
	yaml := fmt.Sprintf(`backends:
  - name: tiny
    base_url: %s/v1
    engine: llamacpp
    model: %s
    timeout: 60s
roles:
  reader:
    backend: tiny
    thinking: false
    sampling:
      temperature: 0.7
      max_tokens: 256
      seed: 7
`, base, modelName)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	const name = "sim+reader=llm:reader"
	pee, err := roles.ResolvePersuadee(context.Background(), cfg, name)
	if err != nil {
		t.Fatal(err)
	}
	if pee.Name() != name {
		t.Fatalf("persuadee name %q, want %q", pee.Name(), name)
	}
	px.reset() // capability detection is not the reader's
	const tmax = 3
	scs := heldout(t, 2)
	eps := runEpisodes(t, pee, scs, tmax)
	calls := px.snapshot()
	for i, c := range calls {
		t.Logf("request %d: structured %v, answer %q", i, c.structured, c.answer)
		if !c.structured {
			t.Errorf("request %d: no response_format json_schema with the reader's schema", i)
		}
		// Unconstrained, the model answers "Yes" or "No" (internal/ggufgen):
		// an object opening with the schema's first field is the
		// engine's grammar at work.
		if !strings.HasPrefix(strings.Join(strings.Fields(c.answer), ""), `{"acts":`) {
			t.Errorf("request %d: answer %.60q does not follow the schema's grammar", i, c.answer)
		}
	}
	// Group the requests by read: consecutive requests on the same
	// conversation (the retry continues it with the malformed answer and
	// a note naming the parse error).
	var reads [][]readerCall
	for _, c := range calls {
		if n := len(reads); n > 0 && reads[n-1][0].prompt == c.prompt {
			reads[n-1] = append(reads[n-1], c)
			continue
		}
		reads = append(reads, []readerCall{c})
	}
	k := 0
	for e, ep := range eps {
		failed := ep.Terminal == decision.TermFailed
		t.Logf("%s: terminal %s after %d turns, error %q", ep.ScenarioID, ep.Terminal, len(ep.Turns), ep.Error)
		switch {
		case failed && !strings.Contains(ep.Error, perception.ErrFailedRead.Error()):
			t.Errorf("%s: failed with %q, want a failed read", ep.ScenarioID, ep.Error)
		case failed && strings.HasSuffix(ep.Error, "llm:reader: "):
			t.Errorf("%s: failed read without its reason", ep.ScenarioID)
		case failed && ep.Transient:
			t.Errorf("%s: a failed read recorded as transient", ep.ScenarioID)
		case !failed && ep.Error != "":
			t.Errorf("%s: terminal %s with error %q", ep.ScenarioID, ep.Terminal, ep.Error)
		case !failed && ep.Terminal == decision.TermPending && len(ep.Turns) != tmax:
			t.Errorf("%s: pending after %d turns, want %d", ep.ScenarioID, len(ep.Turns), tmax)
		case !failed && ep.Terminal != decision.TermPending && (len(ep.Turns) == 0 || decision.FromDecision(ep.Turns[len(ep.Turns)-1].Decision) != ep.Terminal):
			t.Errorf("%s: terminal %s, not the last turn's decision", ep.ScenarioID, ep.Terminal)
		}
		want := len(ep.Turns)
		if failed {
			want++ // the turn whose read failed is not recorded
		}
		for i := 0; i < want; i++ {
			if k >= len(reads) {
				t.Fatalf("%s: %d reads reached the engine, want one per persuader turn", ep.ScenarioID, k)
			}
			r := reads[k]
			k++
			last := failed && i == want-1
			if !last && !strings.Contains(r[0].prompt, ep.Turns[i].Persuader) {
				t.Errorf("%s t=%d: read on a conversation without the turn's persuader message", ep.ScenarioID, i+1)
			}
			switch {
			case last && len(r) != 2:
				t.Errorf("%s t=%d: failed read after %d requests, want 2 (one retry)", ep.ScenarioID, i+1, len(r))
			case !last && len(r) > 2:
				t.Errorf("%s t=%d: read took %d requests, want 1 or 2", ep.ScenarioID, i+1, len(r))
			}
			if r[0].turns != 2 || len(r) == 2 && r[1].turns != 4 {
				t.Errorf("%s t=%d: requests of %d then %d messages, want 2 then 4 (the retry continues the conversation)", ep.ScenarioID, i+1, r[0].turns, r[len(r)-1].turns)
			}
			// The same answers from the fake engine read the same way: the
			// real engine's reply reached the reader's parse unchanged, and
			// an answer the parse accepts is never recorded as a failure.
			if ok := replayRead(t, &scs[e], r); ok == last {
				t.Errorf("%s t=%d: replayed answers read ok %v, the episode read failed %v", ep.ScenarioID, i+1, ok, last)
			}
		}
	}
	if k != len(reads) {
		t.Errorf("%d reads reached the engine, %d persuader turns played", len(reads), k)
	}
}

// replayRead reads one message of sc with the LLM reader on the fake
// engine answering with rs's answers in order, and reports whether the
// read succeeded; it asks for no more answers than rs has.
func replayRead(t *testing.T, sc *scenario.Scenario, rs []readerCall) bool {
	t.Helper()
	var n atomic.Int32
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(func(fakeengine.Request) fakeengine.Reply {
		i := int(n.Add(1)) - 1
		if i >= len(rs) {
			t.Errorf("replay: request %d of %d answers", i+1, len(rs))
			return fakeengine.Reply{Text: "no answer"}
		}
		return fakeengine.Reply{Text: rs[i].answer}
	}))
	defer srv.Close()
	c, err := llm.NewClient(srv.Backend("fake"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := perception.NewLLM("llm:replay", c, llm.Role{Backend: "fake"}).Start(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Read(context.Background(), perception.Input{Transcript: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Hi."}}})
	if err != nil && !errors.Is(err, perception.ErrFailedRead) {
		t.Fatalf("replay: %v", err)
	}
	return err == nil
}
