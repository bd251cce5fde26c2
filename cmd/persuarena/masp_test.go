package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/scenario"
)

func runMASP(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	c := newMASPCmd() // fresh flags for every run
	c.SetOut(&out)
	c.SetErr(&out)
	if args[1] == "eval" && !slices.Contains(args, "--db") {
		// masp eval stores its run: never in the working directory.
		args = append(args, "--db", filepath.Join(t.TempDir(), "masp.db"))
	}
	c.SetArgs(args[1:])
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.ExecuteContext(context.Background())
	return out.String(), err
}

// masp eval on P4G held-out prints the per-user table, the worst case and
// the paired differences; masp cache writes a cache the student can fit.
func TestMASPEvalAndCache(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache.jsonl")
	out, err := runMASP(t, "masp", "cache", "--split", "val", "--persuader", "script", "--users", "sim", "--out", cache, "--workers", "2")
	if err != nil || !strings.Contains(out, "wrote 200 session and") {
		t.Fatalf("cache: %v\n%s", err, out)
	}
	if c, err := bdi.LoadCache(cache); err != nil || len(c.Sessions) != 200 {
		t.Fatalf("cache file: %v", err)
	}
	dl := filepath.Join(dir, "d.jsonl")
	out, err = runMASP(t, "masp", "eval", "--persuader", "script,pushy", "--users", "sim-soft,sim-hard", "--resamples", "200",
		"--student", cache, "--out", dl, "--curves", "--workers", "2")
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	for _, s := range []string{"task p4g, 120 cases (p4g heldout)", "script     sim-soft  120", "WorstSR@8", "Paired differences against script", "ment. err", "t=8"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if b, err := os.ReadFile(dl); err != nil || bytes.Count(b, []byte("\n")) != 2*2*120 {
		t.Errorf("dialogue file: %v", err)
	}
	if _, err := runMASP(t, "masp", "eval", "--users", "llm:judge", "--resamples", "10"); err == nil || !strings.Contains(err.Error(), "needs --config") {
		t.Errorf("llm user: %v", err)
	}
	if _, err := runMASP(t, "masp", "eval", "--task", "cb", "--from", "", "--users", "sim"); err == nil || !strings.Contains(err.Error(), "needs --from") {
		t.Errorf("cb without --from: %v", err)
	}
}

func TestMASPImportAndPPDPPEval(t *testing.T) {
	src := cidata.Require(t, filepath.Join("..", "..", "..", "shared", "data", "ppdpp", "cb-test.txt"))
	out := filepath.Join(t.TempDir(), "cb.jsonl")
	msg, err := runMASP(t, "masp", "import", "cb", "--from", src, "--out", out)
	if err != nil || !strings.Contains(msg, "wrote 188 scenarios") {
		t.Fatalf("import: %v %s", err, msg)
	}
	ss, err := scenario.LoadFile(out)
	if err != nil || len(ss) != 188 || ss[0].Split != scenario.Heldout {
		t.Fatalf("imported: %d %v", len(ss), err)
	}
	msg, err = runMASP(t, "masp", "eval", "--task", "cb", "--from", src, "--users", "sim", "--persuader", "script", "--resamples", "50", "--student", "")
	if err != nil || !strings.Contains(msg, "task cb, 188 cases (cb-test.txt)") {
		t.Fatalf("cb eval: %v\n%s", err, msg)
	}
}

var listed = regexp.MustCompile(`the price is \$(\d+)`)

// squeeze collapses runs of white space, so table rows compare by content.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// maspFake answers every LLM role of the MASP protocol on the fake engine:
// the persuadee continues once and accepts on its second reply; the
// success judges see the acceptance; the rationality judge says RATIONAL;
// the teacher returns a valid state.
func maspFake(r fakeengine.Request) fakeengine.Reply {
	p := r.Prompt
	accepted := strings.Contains(p, "I'll do it")
	switch {
	case strings.Contains(p, "RATIONAL or NOT_RATIONAL"):
		return fakeengine.Reply{Text: "RATIONAL"}
	case strings.Contains(p, "have the buyer and the seller reached a deal"):
		if m := listed.FindStringSubmatch(p); accepted && m != nil {
			// 10% below the listing: buyer utility > 0.
			v, _ := strconv.ParseFloat(m[1], 64)
			return fakeengine.Reply{Text: fmt.Sprintf("They have reached a deal at $%g.", 0.9*v)}
		}
		return fakeengine.Reply{Text: "They have not reached a deal."}
	case strings.Contains(p, "convinced to donate"):
		if accepted {
			return fakeengine.Reply{Text: "agree"}
		}
		return fakeengine.Reply{Text: "The persuadee remains neutral about donating."}
	case strings.Contains(p, "You track the hidden mental state"):
		return fakeengine.Reply{Text: `{"belief":"The user is weighing it.","desire":"The user wants a fair outcome.","intention":"The user will decide soon.","receptivity":0.6,"confidence":0.5,"valence":0.1}`}
	case strings.Count(p, "<|im_start|>user") >= 2:
		return fakeengine.Reply{Text: "Fair enough, I'll do it.\nDECISION: accept"}
	}
	return fakeengine.Reply{Text: "Tell me more.\nDECISION: continue"}
}

// masp eval with an LLM user, LLM judges and an LLM teacher, end to end
// against the fake engine: P4G (with a simulator user alongside) and the
// CraigslistBargain protocol with the buyer-utility judge.
func TestMASPEvalLLMUsers(t *testing.T) {
	const key = "sk-masp-test-0123456789"
	t.Setenv("PERSUARENA_FAKE_KEY", key)
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(maspFake), fakeengine.WithAPIKey(key))
	t.Cleanup(srv.Close)
	cfg := fmt.Sprintf("backends:\n  - name: fake\n    base_url: %s\n    engine: vllm\n    model: %s\n    api_key_env: PERSUARENA_FAKE_KEY\nroles:\n  q:\n    backend: fake\n    sampling:\n      temperature: 0.7\n  j:\n    backend: fake\n", srv.URL, srv.Model)
	cfgPath := filepath.Join(t.TempDir(), "persuarena.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	few := writeScenarios(t, 4)
	out, err := runMASP(t, "masp", "eval", "--from", few, "--split", "all", "--persuader", "script", "--users", "llm:q,sim-soft",
		"--config", cfgPath, "--judge", "llm:j", "--success-judge", "llm:j", "--teacher", "llm:j", "--resamples", "100", "--workers", "2")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The LLM user accepts at turn 2 in every scenario: SR 1, AT 2, RCSR 1.
	if !strings.Contains(squeeze(out), "script llm:q 4 1.000 [1.000, 1.000] 2.00 [2.00, 2.00] 1.000 [1.000, 1.000] 1.00") {
		t.Errorf("llm:q row:\n%s", out)
	}
	if strings.Contains(out, key) {
		t.Error("output shows the API key")
	}
	src := cidata.Require(t, filepath.Join("..", "..", "..", "shared", "data", "ppdpp", "cb-test.txt"))
	small := filepath.Join(t.TempDir(), "cb-test.txt")
	b, _ := os.ReadFile(src)
	os.WriteFile(small, bytes.Join(bytes.SplitN(b, []byte("\n"), 4)[:3], []byte("\n")), 0o600)
	out, err = runMASP(t, "masp", "eval", "--task", "cb", "--from", small, "--persuader", "script", "--users", "llm:q",
		"--config", cfgPath, "--success-judge", "llm:j", "--resamples", "100", "--no-bdi")
	if err != nil {
		t.Fatalf("cb: %v\n%s", err, out)
	}
	// The opening already holds one seller message, so the fake seller
	// accepts on its first reply: SR 1 at turn 1; no rationality judge, so
	// q = 0 and RCSR 0.
	if !strings.Contains(out, "task cb, 3 cases") || !strings.Contains(squeeze(out), "script llm:q 3 1.000 [1.000, 1.000] 1.00 [1.00, 1.00] 0.000 [0.000, 0.000] 0.00") ||
		!strings.Contains(out, "llm:q has no rationality judge") {
		t.Errorf("cb output:\n%s", out)
	}
}
