package realengine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// wantP is the probe read-out the model's design gives: logits 20 (Yes)
// and 19 (No) after the answer position, P = 1/(1+e^-1).
var wantP = 1 / (1 + math.Exp(-1))

const modelName = "tiny-qwen3"

func env(t *testing.T, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		v := os.Getenv(n)
		if v == "" {
			t.Skipf("set %s (scripts/real-engine does)", strings.Join(names, ", "))
		}
		out = append(out, v)
	}
	return out
}

// server is one llama-server process on a free loopback port.
type server struct {
	base string // http://127.0.0.1:PORT
	log  string
}

// startServer starts llama-server with one thread, metrics, jinja chat
// templates, ctx tokens of context over slots slots; it is stopped when
// the test ends.
func startServer(t *testing.T, ctx, slots int) *server {
	t.Helper()
	v := env(t, "PERSUARENA_LLAMA_SERVER", "PERSUARENA_REAL_MODEL")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logPath := filepath.Join(t.TempDir(), "llama-server.log")
	lf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(v[0], "-m", v[1], "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"-t", "1", "-c", strconv.Itoa(ctx), "-np", strconv.Itoa(slots), "--jinja", "--metrics",
		"--alias", modelName, "--no-webui")
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{base: fmt.Sprintf("http://127.0.0.1:%d", port), log: logPath}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		lf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("llama-server log tail:\n%s", b)
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(s.base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("llama-server not healthy after 90 s: %v\n%s", err, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *server) backend() llm.Backend {
	return llm.Backend{Name: "tiny", BaseURL: s.base + "/v1", Engine: llm.LlamaCpp, Model: modelName, Timeout: time.Minute}
}

// counts are llama-server's token counters (/metrics).
type counts struct{ prompt, cached, predicted int }

func (c counts) sub(d counts) counts {
	return counts{c.prompt - d.prompt, c.cached - d.cached, c.predicted - d.predicted}
}

func (s *server) metrics(t *testing.T) counts {
	t.Helper()
	resp, err := http.Get(s.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c counts
	found := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "llamacpp:prompt_tokens_total":
			c.prompt, found = int(v), found+1
		case "llamacpp:prompt_tokens_cached_total":
			c.cached, found = int(v), found+1
		case "llamacpp:tokens_predicted_total":
			c.predicted, found = int(v), found+1
		}
	}
	if found != 3 {
		t.Fatalf("/metrics: %d of the 3 token counters found", found)
	}
	return c
}

// product is what PersuArena counted: uncached prompt tokens, cached
// prompt tokens and decoded tokens over a set of episodes.
func product(eps []*episode.Episode) (counts, episode.Usage) {
	var u episode.Usage
	for _, ep := range eps {
		u = u.Add(ep.InitialProbeUsage).Add(ep.JudgeUsage)
		for _, tu := range ep.Turns {
			u = u.Add(tu.PersuaderUsage).Add(tu.PersuadeeUsage).Add(tu.ProbeUsage)
		}
	}
	return counts{u.PromptTokens - u.CachedTokens, u.CachedTokens, u.CompletionTokens}, u
}

// heldout returns the first n held-out p4g scenarios.
func heldout(t *testing.T, n int) []scenario.Scenario {
	t.Helper()
	ss, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	ss = scenario.Filter(ss, scenario.Split("heldout"))
	if len(ss) < n {
		t.Fatalf("%d held-out p4g scenarios, want %d", len(ss), n)
	}
	return ss[:n]
}

// checkProbes asserts every probe of every episode was read, with the
// model's designed P(Yes).
func checkProbes(t *testing.T, eps []*episode.Episode, k int) {
	t.Helper()
	for _, ep := range eps {
		all := [][]probe.Reading{ep.Initial}
		for _, tu := range ep.Turns {
			all = append(all, tu.Probes)
		}
		for i, rs := range all {
			if len(rs) != k {
				t.Errorf("%s: probe round %d has %d readings, want %d", ep.ScenarioID, i, len(rs), k)
			}
			for _, r := range rs {
				if !r.OK || math.Abs(r.P-wantP) > 0.005 {
					t.Errorf("%s: probe round %d %s: P %.4f ok %v, want %.4f readable", ep.ScenarioID, i, r.Probe, r.P, r.OK, wantP)
				}
			}
		}
	}
}

// detectCost is what one capability detection costs the engine: it is
// not counted in any product usage (docs/engines.md), so it is measured
// here, twice, and must be the same both times.
func detectCost(t *testing.T, s *server) counts {
	t.Helper()
	var cost []counts
	for i := 0; i < 2; i++ {
		c, err := llm.NewClient(s.backend())
		if err != nil {
			t.Fatal(err)
		}
		m0 := s.metrics(t)
		if _, err := c.Detect(context.Background()); err != nil {
			t.Fatal(err)
		}
		cost = append(cost, s.metrics(t).sub(m0))
	}
	if cost[0] != cost[1] {
		t.Fatalf("capability detection cost the engine %+v, then %+v", cost[0], cost[1])
	}
	return cost[0]
}

// TestEvalBatchedProbes runs the product's eval (script persuader against
// two LLM persuadees, configured through --config: the default tagged-line
// protocol and structured: auto) on two held-out scenarios and checks: no
// failed episode, every probe readable with the designed P(Yes) in both
// protocols (forks are rendered in the text protocol either way), the
// batched probe path (one /completion request per probe round), the reply
// the model gives in each protocol (its text "Yes." with a decision line;
// "Okay" under a JSON grammar), and prompt / cached / decoded token totals
// equal to the engine's own counters.
func TestEvalBatchedProbes(t *testing.T) {
	bin := env(t, "PERSUARENA_BIN")[0]
	s := startServer(t, 16384, 2)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "persuarena.yaml")
	yaml := fmt.Sprintf(`backends:
  - name: tiny
    base_url: %s/v1
    engine: llamacpp
    model: %s
    timeout: 60s
roles:
  persuadee:
    backend: tiny
    thinking: false
    sampling:
      temperature: 0.7
      max_tokens: 64
      seed: 7
  json:
    backend: tiny
    thinking: false
    structured: auto
    sampling:
      temperature: 0.7
      max_tokens: 64
      seed: 7
`, s.base, modelName)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var jl bytes.Buffer
	for _, sc := range heldout(t, 2) {
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		jl.Write(append(b, '\n'))
	}
	scFile := filepath.Join(dir, "heldout4.jsonl")
	if err := os.WriteFile(scFile, jl.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	detect := detectCost(t, s)
	m0 := s.metrics(t)
	db := filepath.Join(dir, "run.db")
	const tmax = 3
	cmd := exec.Command(bin, "eval", "--config", cfg, "--persuader", "script", "--persuadee", "llm:persuadee,llm:json",
		"--scenarios", scFile, "--split", "all", "--tmax", strconv.Itoa(tmax), "--workers", "2", "--db", db, "--seed", "7")
	out, err := cmd.CombinedOutput()
	t.Logf("persuarena eval:\n%s", out)
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	engine := s.metrics(t).sub(m0).sub(detect)
	for _, pee := range []string{"llm:persuadee", "llm:json"} {
		if !strings.Contains(string(out), pee+" decision protocol: 6 replies, 0 repaired, 0 violations (counted as continue; 0 cut at the length limit); probes via completions") {
			t.Errorf("eval did not report 6 protocol-clean replies of %s with probes via completions (the batched path)", pee)
		}
	}

	d, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	runs, err := d.ListRuns(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	eps, err := d.Episodes(context.Background(), runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 4 {
		t.Fatalf("%d episodes stored, want 4", len(eps))
	}
	for _, ep := range eps {
		if ep.Terminal == decision.TermFailed || ep.Error != "" {
			t.Errorf("%s: %s %q", ep.ScenarioID, ep.Terminal, ep.Error)
		}
		if len(ep.Turns) != tmax {
			t.Errorf("%s: %d turns, want %d (the model always continues)", ep.ScenarioID, len(ep.Turns), tmax)
		}
		if ep.InitialProbeUsage.Requests != 1 {
			t.Errorf("%s: initial probes took %d requests, want 1 (batched)", ep.ScenarioID, ep.InitialProbeUsage.Requests)
		}
		for _, tu := range ep.Turns {
			if tu.ProbeUsage.Requests != 1 {
				t.Errorf("%s t=%d: probes took %d requests, want 1 (batched)", ep.ScenarioID, tu.T, tu.ProbeUsage.Requests)
			}
			want := map[string]string{"llm:persuadee": "Yes.", "llm:json": "Okay"}[ep.Persuadee]
			if tu.Persuadee != want || tu.Decision != decision.Continue || tu.PersuadeeUsage.Requests != 1 {
				t.Errorf("%s %s t=%d: reply %q decision %s in %d requests, want %q, continue, 1",
					ep.Persuadee, ep.ScenarioID, tu.T, tu.Persuadee, tu.Decision, tu.PersuadeeUsage.Requests, want)
			}
		}
	}
	checkProbes(t, eps, len(probe.Default))
	prod, u := product(eps)
	t.Logf("tokens (uncached prompt / cached prompt / decoded): product %+v, engine %+v (detection %+v excluded); product usage %+v",
		prod, engine, detect, u)
	if prod != engine {
		t.Errorf("product token totals %+v, engine counters %+v", prod, engine)
	}
	if prod.cached == 0 {
		t.Errorf("no cached prompt tokens over %d episodes: prefix reuse not seen", len(eps))
	}
}

// runEpisodes plays the script persuader against pee on scs in order.
func runEpisodes(t *testing.T, pee episode.Persuadee, scs []scenario.Scenario, tmax int) []*episode.Episode {
	t.Helper()
	per, err := baseline.New("script")
	if err != nil {
		t.Fatal(err)
	}
	var eps []*episode.Episode
	for i := range scs {
		ep, err := episode.Run(context.Background(), episode.Config{Tmax: tmax}, &scs[i], per, pee, uint64(11+i))
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep)
	}
	return eps
}

// TestChatProbePath plays episodes with the probes on the chat path (K
// one-token chat requests per round) and the text decision protocol, and
// checks readable probes and exact token accounting as above.
func TestChatProbePath(t *testing.T) {
	s := startServer(t, 16384, 2)
	c, err := llm.NewClient(s.backend())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Detect(context.Background()); err != nil { // cached: not counted below
		t.Fatal(err)
	}
	off, text := false, false
	pee := llmagent.NewPersuadee("llm:tiny", c, llm.Role{Thinking: &off, Sampling: llm.Sampling{Temperature: ptr(0.7), MaxTokens: 64, Seed: ptr(int64(7))}},
		llmagent.PersuadeeOptions{ProbePath: llmagent.ProbeChat, Structured: &text})
	m0 := s.metrics(t)
	const tmax = 2
	eps := runEpisodes(t, pee, heldout(t, 2), tmax)
	engine := s.metrics(t).sub(m0)
	if pee.Path() != llmagent.ProbeChat {
		t.Fatalf("probe path %s", pee.Path())
	}
	k := len(probe.Default)
	for _, ep := range eps {
		if ep.Error != "" || len(ep.Turns) != tmax {
			t.Errorf("%s: %s %q after %d turns", ep.ScenarioID, ep.Terminal, ep.Error, len(ep.Turns))
		}
		if ep.InitialProbeUsage.Requests != k {
			t.Errorf("%s: initial probes took %d requests, want %d (one chat request per probe)", ep.ScenarioID, ep.InitialProbeUsage.Requests, k)
		}
		for _, tu := range ep.Turns {
			if tu.ProbeUsage.Requests != k {
				t.Errorf("t=%d: probes took %d requests, want %d", tu.T, tu.ProbeUsage.Requests, k)
			}
			if (tu.Persuadee != "Yes." && tu.Persuadee != "No.") || tu.Decision != decision.Continue {
				t.Errorf("t=%d: reply %q decision %s, want \"Yes.\" or \"No.\" and continue (text protocol)", tu.T, tu.Persuadee, tu.Decision)
			}
		}
	}
	if st := pee.Stats(); st.Repairs != 0 || st.Violations != 0 || st.Replies != int64(len(eps)*tmax) {
		t.Errorf("protocol stats %+v", st)
	}
	checkProbes(t, eps, k)
	prod, u := product(eps)
	t.Logf("chat path tokens: product %+v, engine %+v; product usage %+v", prod, engine, u)
	if prod != engine {
		t.Errorf("product token totals %+v, engine counters %+v", prod, engine)
	}
}

// TestThinking asks the same question with thinking on and off: on, the
// model's reasoning ("Hmm", between <think> and </think>) arrives apart
// from the reply; off, the template's empty think block leaves none. Then
// it plays an episode with a thinking persuadee.
func TestThinking(t *testing.T) {
	s := startServer(t, 4096, 1)
	c, err := llm.NewClient(s.backend())
	if err != nil {
		t.Fatal(err)
	}
	q := []llm.Message{{Role: "user", Content: "Would you donate to Save the Children?"}}
	for _, on := range []bool{true, false} {
		r, err := c.Chat(context.Background(), llm.ChatRequest{Messages: q, Thinking: &on,
			Sampling: llm.Sampling{Temperature: ptr(0.7), MaxTokens: 64, Seed: ptr(int64(7))}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("thinking %v: content %q reasoning %q usage %+v", on, r.Content, r.Reasoning, r.Usage)
		wantR := ""
		if on {
			wantR = "Hmm"
		}
		if strings.TrimSpace(r.Reasoning) != wantR {
			t.Errorf("thinking %v: reasoning %q, want %q", on, r.Reasoning, wantR)
		}
		if d, ok := decision.Parse(r.Content); !ok || d != decision.Continue || strings.Contains(r.Content, "think>") {
			t.Errorf("thinking %v: content %q: want a reply with DECISION: continue and no think tags", on, r.Content)
		}
		p, err := c.RenderChat(context.Background(), llm.TemplateRequest{Messages: q, AddGenerationPrompt: true, Thinking: &on})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.HasSuffix(p, "<|im_start|>assistant\n<think>\n\n</think>\n\n"); got == on {
			t.Errorf("thinking %v: rendered prompt ends %q", on, p[max(0, len(p)-60):])
		}
	}
	// A persuadee with thinking on: the reasoning stays out of the
	// transcript, and probes (always thinking off) still read.
	on, text := true, false
	pee := llmagent.NewPersuadee("llm:tiny", c, llm.Role{Thinking: &on, Sampling: llm.Sampling{Temperature: ptr(0.7), MaxTokens: 64, Seed: ptr(int64(7))}},
		llmagent.PersuadeeOptions{Structured: &text})
	eps := runEpisodes(t, pee, heldout(t, 1), 2)
	for _, tu := range eps[0].Turns {
		if (tu.Persuadee != "Yes." && tu.Persuadee != "No.") || tu.Decision != decision.Continue {
			t.Errorf("thinking on, t=%d: reply %q decision %s, want \"Yes.\" or \"No.\" and continue", tu.T, tu.Persuadee, tu.Decision)
		}
	}
	if eps[0].Error != "" || len(eps[0].Turns) != 2 || pee.Stats().Repairs != 0 {
		t.Errorf("thinking on: %s %q after %d turns, stats %+v", eps[0].Terminal, eps[0].Error, len(eps[0].Turns), pee.Stats())
	}
	checkProbes(t, eps, len(probe.Default))
}

// TestContextOverflow plays an episode on a server whose context is too
// small for the conversation: the episode must end truncated, not failed.
func TestContextOverflow(t *testing.T) {
	s := startServer(t, 1024, 1)
	c, err := llm.NewClient(s.backend())
	if err != nil {
		t.Fatal(err)
	}
	off := false
	pee := llmagent.NewPersuadee("llm:tiny", c, llm.Role{Thinking: &off, Sampling: llm.Sampling{Temperature: ptr(0.7), MaxTokens: 64, Seed: ptr(int64(7))}},
		llmagent.PersuadeeOptions{})
	eps := runEpisodes(t, pee, heldout(t, 1), 10)
	ep := eps[0]
	t.Logf("terminal %s after %d turns, error %q", ep.Terminal, len(ep.Turns), ep.Error)
	if ep.Terminal != decision.TermTruncated {
		t.Fatalf("terminal %s (error %q), want truncated", ep.Terminal, ep.Error)
	}
	if len(ep.Turns) == 0 {
		t.Errorf("truncated before the first turn: the context should hold the opening")
	}
}

func ptr[T any](v T) *T { return &v }
