package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/fidelity"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// fakeReply scripts both LLM roles on the fake engine: the persuader (its
// system prompt states its goal) asks a question; the persuadee continues
// once and accepts on the second persuader turn; probes read Yes 0.8.
func fakeReply(r fakeengine.Request) fakeengine.Reply {
	switch {
	case strings.Contains(r.Prompt, "A private question to yourself"):
		return fakeengine.Reply{FirstToken: map[string]float64{"Yes": 0.8, "No": 0.2}}
	case strings.Contains(r.Prompt, "Your goal: persuade them"):
		return fakeengine.Reply{Text: "What would make this easier for you? The choice is yours."}
	case strings.Count(r.Prompt, "<|im_start|>user") >= 2:
		return fakeengine.Reply{Text: "Fair enough, I'll do it.\nDECISION: accept"}
	}
	return fakeengine.Reply{Text: "<think>hidden thoughts</think>Tell me more.\n**DECISION:** continue"}
}

// startFakeEngine is the documented test helper of docs/llm-roles.md: it
// starts the in-repo fake OpenAI-compatible engine (package
// llm/fakeengine) with the given profile and writes a persuarena.yaml
// naming it as backend "fake" with roles "q" (persuadee) and "p"
// (persuader), the API key read from PERSUARENA_FAKE_KEY. It returns the
// config path; the server stops when the test ends.
func startFakeEngine(t *testing.T, eng llm.Engine) (string, *fakeengine.Server) {
	t.Helper()
	const key = "sk-test-0123456789abcdef"
	t.Setenv("PERSUARENA_FAKE_KEY", key)
	srv := fakeengine.New(eng, fakeengine.WithHandler(fakeReply), fakeengine.WithAPIKey(key), fakeengine.WithCacheReport(true))
	t.Cleanup(srv.Close)
	cfg := fmt.Sprintf(`backends:
  - name: fake
    base_url: %s
    engine: %s
    model: %s
    api_key_env: PERSUARENA_FAKE_KEY
    max_in_flight: 32
roles:
  q:
    backend: fake
    sampling:
      temperature: 0.7
      max_tokens: 256
  p:
    backend: fake
    sampling:
      temperature: 0.9
`, srv.URL, eng, srv.Model)
	path := filepath.Join(t.TempDir(), "persuarena.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, srv
}

// writeScenarios writes the first n held-out p4g scenarios to a JSONL file.
func writeScenarios(t *testing.T, n int) string {
	t.Helper()
	ss, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, sc := range scenario.Filter(ss, scenario.Heldout)[:n] {
		line, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "few.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// persuarena eval --persuader script --persuadee llm:q --config FILE, end
// to end against the fake engine: outcome table, cost table, protocol
// counts; the stored run names the role and model, never the key.
func TestEvalLLMPersuadee(t *testing.T) {
	cfgPath, srv := startFakeEngine(t, llm.VLLM)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := evalConfig{Persuaders: []string{"script"}, Persuadees: []string{"llm:q"}, Scenarios: []string{writeScenarios(t, 3)},
		Split: "all", Tmax: 10, Rollouts: 1, Seed: 1, Basis: probe.Default, Config: cfgPath}
	var out, errOut bytes.Buffer
	if err := runEval(ctx, db, "", cfg, 4, "table", &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	got := out.String()
	for _, want := range []string{"acc%", "script", "llm:q", "engine cost per persuader turn", "reply", "probes",
		"llm:q decision protocol: 6 replies, 0 repaired, 0 violations", "probes via completions"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "not an LLM") {
		t.Errorf("output calls the LLM persuadee a simulator:\n%s", got)
	}
	runs, _ := db.ListRuns(ctx)
	eps, err := db.Episodes(ctx, runs[0].ID)
	if err != nil || len(eps) != 3 {
		t.Fatalf("%d episodes, %v", len(eps), err)
	}
	for _, ep := range eps {
		if ep.Terminal != decision.TermAccept || len(ep.Turns) != 2 || ep.Turns[1].ProbeUsage.Requests != 1 || ep.Turns[1].PersuadeeUsage.Requests != 1 {
			t.Errorf("episode %s: %q, %d turns, usage %+v", ep.ScenarioID, ep.Terminal, len(ep.Turns), ep.Turns)
		}
		for _, tu := range ep.Turns {
			if strings.Contains(tu.Persuadee, "DECISION") || strings.Contains(tu.Persuadee, "think") {
				t.Errorf("stored visible reply %q", tu.Persuadee)
			}
		}
	}
	raw := string(runs[0].Config)
	if !strings.Contains(raw, `"model":"fake-model"`) || !strings.Contains(raw, `"ref":"llm:q"`) || strings.Contains(raw, "sk-test") {
		t.Errorf("stored run config %s", raw)
	}
	if st := srv.Stats(); st.Unauthorized != 0 || st.Authorized == 0 {
		t.Errorf("auth: %d authorized, %d unauthorized", st.Authorized, st.Unauthorized)
	}
}

// Both roles LLMs plus sim: outcome, Table 7 grid and cost tables.
func TestEvalLLMRolesGrid(t *testing.T) {
	cfgPath, _ := startFakeEngine(t, llm.Ollama)
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := evalConfig{Persuaders: []string{"llm:p", "script"}, Persuadees: []string{"llm:q", "sim"}, Scenarios: []string{writeScenarios(t, 2)},
		Split: "all", Tmax: 10, Rollouts: 1, Seed: 1, Basis: probe.Default, Config: cfgPath}
	var out, errOut bytes.Buffer
	if err := runEval(ctx, db, "", cfg, 4, "table", &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	got := out.String()
	for _, want := range []string{"full acceptance % (persuader x persuadee", "100.0 (n=2)", "engine cost per persuader turn",
		"probes via chat"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// The LLM persuader's cost rows exist for both persuadees.
	if n := strings.Count(got, "llm:p  "); n < 2 {
		t.Errorf("cost table:\n%s", got)
	}
}

func TestLLMRoleErrors(t *testing.T) {
	if _, err := newPersuadees([]string{"llm:q"}, nil); err == nil || !strings.Contains(err.Error(), "needs --config") {
		t.Errorf("llm:q without config: %v", err)
	}
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	roles, err := loadLLMRoles(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newPersuaders([]string{"llm:nosuch"}, roles); err == nil || !strings.Contains(err.Error(), `no role or backend "nosuch"`) {
		t.Errorf("unknown role: %v", err)
	}
	if _, err := fidelityPersuadee("llm:q", cfgPath); err != nil {
		t.Errorf("fidelity llm persuadee: %v", err)
	}
}

// persuarena fidelity p4g --persuadee llm:q: open-loop replay through the
// LLM persuadee (a few annotated dialogues).
func TestFidelityLLM(t *testing.T) {
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	pee, err := fidelityPersuadee("llm:q", cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	var few []scenario.Scenario
	for _, sc := range ss {
		if sc.Outcome != nil && sc.Outcome.PersuadeeActs != nil && len(few) < 4 {
			few = append(few, sc)
		}
	}
	rep, err := fidelity.Run(context.Background(), few, pee, fidelity.Options{Seed: 1, Resamples: 20, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scenarios != 4 || rep.Failed != 0 || rep.Persuadee != "llm:q" || rep.Agreement.Scenarios != 4 {
		t.Errorf("report: %d scenarios, %d failed (%s), persuadee %q, agreement over %d", rep.Scenarios, rep.Failed, rep.FirstError, rep.Persuadee, rep.Agreement.Scenarios)
	}
	for _, tr := range rep.Traces {
		if tr.B0 == nil || math.Abs(*tr.B0-0.8) > 1e-6 || tr.Decision != decision.Accept {
			t.Errorf("trace %s: B0 %v, decision %q", tr.ScenarioID, tr.B0, tr.Decision)
		}
	}
}
