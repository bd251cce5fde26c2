package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/fidelity"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// fakeReply scripts the LLM roles on the fake engine: the persuader (its
// system prompt states its goal) asks a question; the persuadee continues
// once and accepts on the second persuader turn; probes read Yes 0.8; the
// judge rates every strategy 0.5 and tags every utterance diagnostic +
// autonomy.
func fakeReply(r fakeengine.Request) fakeengine.Reply {
	switch {
	case strings.Contains(r.Prompt, "You rate how a persuader went about persuading"): // judge: R_strategy
		return fakeengine.Reply{Text: `{"score": 0.5, "reason": "Honest, asks about concerns."}`}
	case strings.Contains(r.Prompt, "reviewer of business negotiations"): // judge: a REPO rubric
		return fakeengine.Reply{Text: `{"score": 4, "reason": "Warm and in order."}`}
	case strings.Contains(r.Prompt, "You label one persuader message"): // judge: acts
		return fakeengine.Reply{Text: "```json\n{\"acts\": [\"diagnostic\", \"autonomy\"]}\n```"}
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
	cfg := evalConfig{Grid: runplan.Grid{Persuaders: []string{"script"}, Persuadees: []string{"llm:q"}, Scenarios: []string{writeScenarios(t, 3)}, Split: "all", Tmax: 10, Rollouts: 1, Seed: 1}, Basis: probe.Default, Config: cfgPath}
	var out, errOut bytes.Buffer
	if err := runEval(ctx, have(db), "", cfg, 4, "table", &out, &errOut); err != nil {
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
	// The t = 0 read-out is recorded: on vLLM a persuadee turn is 2
	// requests (reply + probes), so the read-out before turn 1 is 1; the
	// cost table spreads it over the 6 turns: 3/6 = 0.50 requests.
	for _, ep := range eps {
		if u := ep.InitialProbeUsage; u.Requests != 1 || u.PromptTokens == 0 || u.CompletionTokens != 3 {
			t.Errorf("episode %s: t = 0 probe usage %+v", ep.ScenarioID, u)
		}
	}
	if !regexp.MustCompile(`llm:q\s+probes t=0\s+6\s+0\.50\s`).MatchString(got) {
		t.Errorf("cost table lacks the t = 0 row (6 turns, 0.50 requests):\n%s", got)
	}
}

// startJudgeEngine adds a second fake engine (OpenAI profile: it reports
// cached tokens and its capability detection makes no generation, so its
// counters are the judge's alone) to the config at cfgPath, as backend
// "judge" with role "j".
func startJudgeEngine(t *testing.T, cfgPath string) *fakeengine.Server {
	t.Helper()
	srv := fakeengine.New(llm.OpenAI, fakeengine.WithHandler(fakeReply), fakeengine.WithAPIKey("sk-test-0123456789abcdef"),
		fakeengine.WithModel("judge-model"))
	t.Cleanup(srv.Close)
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(raw), "roles:\n", fmt.Sprintf(`  - name: judge
    base_url: %s
    engine: openai
    model: judge-model
    api_key_env: PERSUARENA_FAKE_KEY
roles:
`, srv.URL), 1) + "  j:\n    backend: judge\n    sampling:\n      temperature: 0\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv
}

// persuarena eval --persuader script --persuadee sim --judge llm:j: every
// episode gets R_strategy from the judge, R_out = R_goal + R_strategy, the
// table adds the two columns, and the cost table has the judge row with
// the engine's token counts. A judge failure leaves the episode's outcome.
func TestEvalJudge(t *testing.T) {
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	jsrv := startJudgeEngine(t, cfgPath)
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	scen := writeScenarios(t, 4)
	plain := evalConfig{Grid: runplan.Grid{Persuaders: []string{"script"}, Persuadees: []string{"sim"}, Scenarios: []string{scen}, Split: "all", Tmax: 10, Rollouts: 1, Seed: 1}, Basis: probe.Default}
	var plainOut bytes.Buffer
	if err := runEval(ctx, have(db), "", plain, 1, "table", &plainOut, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	cfg := plain
	cfg.Config, cfg.Judge = cfgPath, "llm:j"
	var out, errOut bytes.Buffer
	if err := runEval(ctx, have(db), "", cfg, 2, "table", &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	got := out.String()
	runs, _ := db.ListRuns(ctx)
	var judgedRun, plainRun string
	for _, r := range runs {
		if strings.Contains(string(r.Config), `"judge":"llm:j"`) {
			judgedRun = r.ID
		} else {
			plainRun = r.ID
		}
	}
	eps, err := db.Episodes(ctx, judgedRun)
	if err != nil || len(eps) != 4 {
		t.Fatalf("%d episodes, %v", len(eps), err)
	}
	base, _ := db.Episodes(ctx, plainRun)
	var ju episode.Usage
	turns := 0
	var sumGoal float64
	for i, ep := range eps {
		if ep.RStrategy == nil || *ep.RStrategy != 0.5 || ep.JudgeError != "" || ep.OutcomeReward(1) != ep.RGoal+0.5 {
			t.Errorf("episode %s: R_strategy %v, R_out %v, R_goal %v, judge error %q", ep.ScenarioID, ep.RStrategy, ep.OutcomeReward(1), ep.RGoal, ep.JudgeError)
		}
		// The judge does not change the episode itself.
		if ep.Terminal != base[i].Terminal || len(ep.Turns) != len(base[i].Turns) || ep.ActsBy != "" {
			t.Errorf("episode %s: %s/%d turns with the judge, %s/%d without", ep.ScenarioID, ep.Terminal, len(ep.Turns), base[i].Terminal, len(base[i].Turns))
		}
		ju = ju.Add(ep.JudgeUsage)
		turns += len(ep.Turns)
		sumGoal += ep.RGoal
	}
	// The judge's usage is the judge engine's own count: one chat request
	// per episode.
	st := jsrv.Stats()
	if ju.Requests != 4 || st.Requests["/v1/chat/completions"] != 4 || ju.PromptTokens != st.PromptTokens ||
		ju.CompletionTokens != st.CompletionTokens || ju.CachedTokens != st.CachedTokens || ju.PromptTokens == 0 {
		t.Errorf("judge usage %+v; engine saw %d chats, %d prompt, %d cached, %d decoded tokens", ju,
			st.Requests["/v1/chat/completions"], st.PromptTokens, st.CachedTokens, st.CompletionTokens)
	}
	// Outcome table: two more columns after R_goal, R_out = R_goal + 0.5.
	lines := strings.Split(got, "\n")
	head := strings.Join(strings.Fields(lines[1]), " ")
	if head != "persuader persuadee set n acc% cond% pend% rej% trunc% R_goal R_strategy R_out turns B_T moved% closed|moved% failed" {
		t.Fatalf("header %q:\n%s", head, got)
	}
	row := strings.Fields(lines[2])
	mean := sumGoal / 4
	if row[9] != fmt.Sprintf("%+.2f", mean) || row[10] != "+0.50" || row[11] != fmt.Sprintf("%+.2f", mean+0.5) {
		t.Errorf("row %v: want R_goal %+.2f, R_strategy +0.50, R_out %+.2f", row, mean, mean+0.5)
	}
	// Cost table: the judge row only (script and sim use no engine), with
	// the engine's counts spread over the turns.
	// (no prefix-once count: the judge's requests share no read-out prefix)
	want := fmt.Sprintf(`script\s+sim\s+judge\s+%d\s+%.2f\s+%.0f\s+-\s+%.0f\s+%.1f\s`, turns, 4/float64(turns),
		float64(st.PromptTokens)/float64(turns), float64(st.CachedTokens)/float64(turns), float64(st.CompletionTokens)/float64(turns))
	if !regexp.MustCompile(want).MatchString(got) || strings.Count(got, "script  ") != 2 {
		t.Errorf("cost table lacks %s:\n%s", want, got)
	}
	if !strings.Contains(got, "judge: 4 of 4 scored episodes rated, 0 with judge errors") {
		t.Errorf("judge counts missing:\n%s", got)
	}
	// The judge-less run's table keeps exactly its columns.
	ph := strings.Join(strings.Fields(strings.Split(plainOut.String(), "\n")[1]), " ")
	if ph != "persuader persuadee set n acc% cond% pend% rej% trunc% R_goal turns B_T moved% closed|moved% failed" ||
		strings.Contains(plainOut.String(), "R_strategy") || strings.Contains(plainOut.String(), "judge") {
		t.Errorf("judge-less output changed:\n%s", plainOut.String())
	}

	// Fault injection: the first judge request fails (HTTP 400, never
	// retried); that episode keeps its outcome, with R_strategy nil and the
	// error stored (an engine error reports no usage).
	jsrv.Fail(fakeengine.Fault{Path: "/v1/chat/completions", Status: 400})
	out.Reset()
	if err := runEval(ctx, have(db), "", cfg, 1, "table", &out, &errOut); err != nil {
		t.Fatal(err)
	}
	runs, _ = db.ListRuns(ctx)
	var failedRun string
	for _, r := range runs {
		if r.ID != judgedRun && r.ID != plainRun {
			failedRun = r.ID
		}
	}
	eps2, _ := db.Episodes(ctx, failedRun)
	nFailed := 0
	for i, ep := range eps2 {
		if ep.Terminal != base[i].Terminal || ep.RGoal != base[i].RGoal {
			t.Errorf("episode %s: outcome %s with a failing judge, %s without", ep.ScenarioID, ep.Terminal, base[i].Terminal)
		}
		if ep.JudgeError != "" {
			nFailed++
			if ep.RStrategy != nil || ep.OutcomeReward(1) != ep.RGoal || !strings.Contains(ep.JudgeError, "400") || ep.JudgeUsage != (episode.Usage{}) {
				t.Errorf("failed judge: R_strategy %v, error %q, usage %+v", ep.RStrategy, ep.JudgeError, ep.JudgeUsage)
			}
		} else if ep.RStrategy == nil || *ep.RStrategy != 0.5 {
			t.Errorf("episode %s: R_strategy %v", ep.ScenarioID, ep.RStrategy)
		}
	}
	if nFailed != 1 || jsrv.Pending() != 0 {
		t.Errorf("%d episodes with a judge error, %d faults pending; want 1, 0", nFailed, jsrv.Pending())
	}
	if !strings.Contains(out.String(), "judge: 3 of 4 scored episodes rated, 1 with judge errors") {
		t.Errorf("output:\n%s", out.String())
	}
}

// --judge-acts stores the judge's act tags (Figure 5) instead of the rule
// tagger's, one judge request per persuader turn besides the rating.
func TestEvalJudgeActs(t *testing.T) {
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	jsrv := startJudgeEngine(t, cfgPath)
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := evalConfig{Grid: runplan.Grid{Persuaders: []string{"script"}, Persuadees: []string{"sim"}, Scenarios: []string{writeScenarios(t, 2)}, Split: "all", Tmax: 10, Rollouts: 1, Seed: 1}, Basis: probe.Default, Config: cfgPath, Judge: "llm:j", JudgeActs: true}
	var out, errOut bytes.Buffer
	if err := runEval(ctx, have(db), "", cfg, 2, "table", &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	runs, _ := db.ListRuns(ctx)
	eps, _ := db.Episodes(ctx, runs[0].ID)
	turns := 0
	for _, ep := range eps {
		turns += len(ep.Turns)
		if ep.ActsBy != episode.ActsByJudge || ep.JudgeUsage.Requests != 1+len(ep.Turns) {
			t.Errorf("episode %s: acts by %q, judge usage %+v", ep.ScenarioID, ep.ActsBy, ep.JudgeUsage)
		}
		for _, tu := range ep.Turns {
			if strings.Join(tu.Acts, ",") != "diagnostic,autonomy" {
				t.Errorf("turn %d acts %v", tu.T, tu.Acts)
			}
		}
	}
	if got := jsrv.Stats().Requests["/v1/chat/completions"]; got != len(eps)+turns {
		t.Errorf("%d judge requests, want %d", got, len(eps)+turns)
	}
	if !strings.Contains(out.String(), "acts tagged by the judge in 2") {
		t.Errorf("output:\n%s", out.String())
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
	cfg := evalConfig{Grid: runplan.Grid{Persuaders: []string{"llm:p", "script"}, Persuadees: []string{"llm:q", "sim"}, Scenarios: []string{writeScenarios(t, 2)}, Split: "all", Tmax: 10, Rollouts: 1, Seed: 1}, Basis: probe.Default, Config: cfgPath}
	var out, errOut bytes.Buffer
	if err := runEval(ctx, have(db), "", cfg, 4, "table", &out, &errOut); err != nil {
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
	if _, err := mustRegistry(t, "").Persuadees([]string{"llm:q"}); err == nil || !strings.Contains(err.Error(), "needs --config") {
		t.Errorf("llm:q without config: %v", err)
	}
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	if _, err := mustRegistry(t, cfgPath).Persuaders([]string{"llm:nosuch"}); err == nil || !strings.Contains(err.Error(), `no role or backend "nosuch"`) {
		t.Errorf("unknown role: %v", err)
	}
	if _, err := roles.ResolvePersuadee(context.Background(), cfgPath, "llm:q"); err != nil {
		t.Errorf("fidelity llm persuadee: %v", err)
	}
}

// persuarena fidelity p4g --persuadee llm:q: open-loop replay through the
// LLM persuadee (a few annotated dialogues).
func TestFidelityLLM(t *testing.T) {
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	pee, err := roles.ResolvePersuadee(context.Background(), cfgPath, "llm:q")
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

// A run in which every episode failed is an error that says why (the
// engine's own message), and the stored run is marked failed.
func TestEvalAllFailed(t *testing.T) {
	cfgPath, srv := startFakeEngine(t, llm.VLLM)
	faults := make([]fakeengine.Fault, 200)
	for i := range faults {
		faults[i] = fakeengine.Fault{Path: "/v1/chat/completions", Status: 400, Body: `{"error": {"message": "model is being unloaded", "type": "invalid_request_error"}}`}
	}
	srv.Fail(faults...)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := evalConfig{Grid: runplan.Grid{Persuaders: []string{"script"}, Persuadees: []string{"llm:q"}, Scenarios: []string{writeScenarios(t, 3)}, Split: "all", Tmax: 10, Rollouts: 1, Seed: 1}, Basis: probe.Default, Config: cfgPath}
	var out, errOut bytes.Buffer
	err = runEval(ctx, have(db), "", cfg, 2, "table", &out, &errOut)
	if !errors.Is(err, runs.ErrAllFailed) || !strings.Contains(err.Error(), "3 failed, none scored") || !strings.Contains(err.Error(), "model is being unloaded") {
		t.Fatalf("error %v\n%s", err, errOut.String())
	}
	rs, _ := db.ListRuns(ctx)
	if len(rs) != 1 || rs[0].Status != store.StatusFailed {
		t.Fatalf("runs %+v", rs)
	}
}

// persuarena eval --probes none: a persuadee whose engine returns no
// log-probabilities (here an Ollama older than 0.12.11; hosted APIs alike)
// is evaluated outcome-only, the Probe-RPO paper's Table 7 protocol, with
// no probe request sent and the B_T columns saying why they are empty.
// Without the flag the run fails before it starts, with one line naming
// it (issue 47 item 10: on 3b48d04 every episode failed with
// ErrLogprobsUnavailable, and "none" was read as a basis file name).
func TestEvalProbesNone(t *testing.T) {
	srv := fakeengine.New(llm.Ollama, fakeengine.WithHandler(fakeReply), fakeengine.WithOllamaVersion("0.12.3"))
	t.Cleanup(srv.Close)
	cfg := filepath.Join(t.TempDir(), "persuarena.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("backends:\n  - name: hosted\n    base_url: %s\n    engine: ollama\n    model: %s\nroles:\n  q:\n    backend: hosted\n", srv.URL, srv.Model)), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "r.db")
	exec := func(args ...string) (string, error) {
		out, _, err := execRoot(t, append([]string{"eval", "--persuader", "script", "--persuadee", "llm:q", "--db", db, "--config", cfg,
			"--scenarios", writeScenarios(t, 2), "--split", "all", "--workers", "2"}, args...)...)
		return out, err
	}
	_, err := exec()
	if err == nil || !strings.Contains(err.Error(), "--probes none") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("without --probes none: %v; want one line naming the flag", err)
	}
	if st := srv.Stats(); st.Requests["/v1/chat/completions"] != 1 { // capability detection only
		t.Fatalf("requests before the refusal: %v", st.Requests)
	}
	out, err := exec("--probes", "none")
	if err != nil {
		t.Fatalf("--probes none: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^\s+script\s+llm:q\s+few\s+2\s+100\.0\s+0\.0\s+0\.0\s+0\.0\s+0\.0\s+\+3\.00\s+2\.0\s+-\s+-\s+-\s+2\s+0$`).MatchString(out) ||
		!strings.Contains(out, "no B_T") {
		t.Errorf("table:\n%s", out)
	}
	// Two episodes of two turns: four replies, no probe fork (and one
	// more capability detection: a new process's client).
	if st := srv.Stats(); st.Requests["/v1/chat/completions"] != 2+4 {
		t.Errorf("requests %v: want two detections and the 4 replies only", st.Requests)
	}
}
