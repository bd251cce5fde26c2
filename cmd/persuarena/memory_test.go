package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

// hmmReply scripts the PersuHMM LLM components (recognised by their
// system prompts) and the dialogue judges on the fake engine; every other
// request (persuader, persuadee, probes) is fakeReply's. The plan has one
// stage, every task yields two L2 patterns, and the generator abstracts
// one logical strategy from the first two.
func hmmReply(r fakeengine.Request) fakeengine.Reply {
	sys := ""
	if len(r.Messages) > 0 {
		sys = r.Messages[0].Content
	}
	for _, c := range [][2]string{
		{"You plan persuasive", `{"stages": [{"step": "ask about worries", "goal": "feels heard", "strategy": ""}]}`},
		{"You judge how far", `{"scores": [5]}`},
		{"You extract success", `{"l1": [], "l2": ["charity; asked about worries; opened up", "charity; shared a figure; convinced"]}`},
		{"You abstract persuasion", `{"strategies": [{"text": "Ask what worries them first", "domain": "charity", "patterns": [1, 2]}]}`},
		{"You sort persuasion", `{"category": "logical"}`},
		{"You decide whether a new", `{"same": 0}`},
		{"You find groups", `{"groups": []}`},
		{"You name a group", `{"name": "Giving"}`},
		{"You decide whether a cluster", `{"macro": ""}`},
		{"You rate a persuasive conversation", `{"persuasiveness": 4, "empathy": 3, "helpfulness": 5}`},
		{"You decide whether a persuasion succeeded", `{"success": 1}`},
		{"You compare two conversations", `{"better": "A"}`}, // position-biased: ties
	} {
		if strings.HasPrefix(sys, c[0]) {
			return fakeengine.Reply{Text: c[1]}
		}
	}
	return fakeReply(r)
}

// startHMMEngine starts the fake engine with hmmReply and writes a
// persuarena.yaml with roles q (persuadee), p (components, persuader and
// encoder) and j (judge) on it.
func startHMMEngine(t *testing.T) (string, *fakeengine.Server) {
	t.Helper()
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(hmmReply))
	t.Cleanup(srv.Close)
	cfg := fmt.Sprintf("backends:\n  - name: fake\n    base_url: %s\n    engine: vllm\n    model: %s\nroles:\n  q:\n    backend: fake\n  p:\n    backend: fake\n  j:\n    backend: fake\n", srv.URL, srv.Model)
	path := filepath.Join(t.TempDir(), "persuarena.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, srv
}

// mustExec runs the root command with args and fails the test on error.
func mustExec(t *testing.T, args ...string) (string, string) {
	t.Helper()
	out, errOut, err := execRoot(t, args...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, errOut)
	}
	return out, errOut
}

// persuarena memory learn --llm llm:p --encoder llm:p, then eval
// --persuader hmm:FILE --persuadee llm:q and memory compare, end to end on
// the fake engine.
func TestMemoryLLMEndToEnd(t *testing.T) {
	cfg, srv := startHMMEngine(t)
	mem := filepath.Join(t.TempDir(), "hmm.json")
	out, log := mustExec(t, "memory", "learn", "--out", mem, "--llm", "llm:p", "--encoder", "llm:p", "--config", cfg,
		"--scenarios", "p4g", "--tasks", "2", "--batch", "2", "--tmax", "2", "--seed", "1")
	// Two tasks of one batch (the simulator accepts neither in 2 turns): 4
	// pending patterns, turned into one strategy from the
	// first two; the hierarchy names the single domain's macro domain.
	if want := "domains 1  strategies 1 (logical 1, emotional 0, behavioral 0)  patterns 2  macro domains 1  macro-strategies 0  mean validity 1.000  learning tasks 2\n"; !strings.HasPrefix(out, want) {
		t.Errorf("learn stats:\n%s\nwant prefix:\n%s", out, want)
	}
	if !strings.Contains(log, "tasks 2/2  accepted 0  pending patterns 0  tokens ") {
		t.Errorf("learn log:\n%s", log)
	}
	if n := srv.Stats().Requests["/v1/embeddings"]; n == 0 {
		t.Error("--encoder llm:p sent no /v1/embeddings request")
	}
	show, _ := mustExec(t, "memory", "show", mem)
	if !strings.Contains(show, `macro domain "Giving": [charity]`) || !strings.Contains(show, "Ask what worries them first") {
		t.Errorf("show:\n%s", show)
	}

	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ecfg := evalConfig{Grid: runplan.Grid{Persuaders: []string{"hmm:" + mem}, Persuadees: []string{"llm:q"}, Scenarios: []string{writeScenarios(t, 2)}, Split: "all", Tmax: 4, Rollouts: 1, Seed: 1}, Basis: probe.Default, Config: cfg}
	var eout, elog bytes.Buffer
	if err := runEval(ctx, have(db), "", ecfg, 1, "table", &eout, &elog); err != nil {
		t.Fatalf("%v\n%s", err, elog.String())
	}
	if s := eout.String(); !strings.Contains(s, "hmm:hmm.json") || !strings.Contains(s, "llm:q") {
		t.Errorf("eval output:\n%s", s)
	}

	cout, _ := mustExec(t, "memory", "compare", "hmm:"+mem, "script", "--persuadee", "llm:q", "--judge", "llm:j", "--config", cfg,
		"--scenarios", writeScenarios(t, 2), "--split", "", "--tmax", "4", "--seed", "1")
	for _, want := range []string{
		"2 tasks, persuadee llm:q, judges llm:j, seed 1\n",
		// golden: the fake engine's tokenizer is deterministic
		"| hmm:hmm.json | llm:j | 1.000 (2/2) | 1.000 (2/2) | 4.00 | 3.00 | 5.00 | 1600 |\n",
		"| script | llm:j | 1.000 (2/2) | 1.000 (2/2) | 4.00 | 3.00 | 5.00 | 1460 |\n",
		"| judge | hmm:hmm.json wins | ties | script wins |\n|---|---|---|---|\n| llm:j | 0 | 2 | 0 |\n",
	} {
		if !strings.Contains(cout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, cout)
		}
	}
}

// persuarena memory ablate against an LLM persuadee on the fake engine:
// the five variants and the built-in persuaders each play the two test
// tasks, the fake user accepts on its second reply, and every variant
// that speaks twice wins.
func TestMemoryAblateLLMPersuadee(t *testing.T) {
	cfg, srv := startHMMEngine(t)
	ss, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, sc := range append(append(scenario.Filter(ss, scenario.Train)[:2], scenario.Filter(ss, scenario.Val)[:1]...), scenario.Filter(ss, scenario.Heldout)[:1]...) {
		line, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	file := filepath.Join(t.TempDir(), "ablate.jsonl")
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := mustExec(t, "memory", "ablate", "--scenarios", file, "--persuadee", "llm:q", "--config", cfg, "--tmax", "3", "--seed", "1")
	for _, want := range []string{"learn 2 tasks, test 2 tasks, persuadee llm:q", "no-skills", "plan-without-memory", "direct-comparison", "no-hierarchy", "full", "script"} {
		if !strings.Contains(out, want) {
			t.Errorf("ablation table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "| 1.000 (2/2) |"); n != 9 {
		t.Errorf("%d of 9 rows (5 variants, 4 built-ins) won both tasks:\n%s", n, out)
	}
	if strings.Contains(out, "| 4 | full | 1.000 (2/2) | 0 |") {
		t.Errorf("the full variant's learning against the LLM persuadee counted no tokens:\n%s", out)
	}
	if srv.Stats().Requests["/v1/chat/completions"] == 0 {
		t.Error("the LLM persuadee was never asked")
	}
}
