package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/scenario"
)

func runMASP(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	c := newMASPCmd() // fresh flags for every run
	c.SetOut(&out)
	c.SetErr(&out)
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
	if _, err := runMASP(t, "masp", "eval", "--users", "llm:judge", "--resamples", "10"); err == nil || !strings.Contains(err.Error(), "unknown user") {
		t.Errorf("llm user: %v", err)
	}
	if _, err := runMASP(t, "masp", "eval", "--task", "cb", "--from", "", "--users", "sim"); err == nil || !strings.Contains(err.Error(), "needs --from") {
		t.Errorf("cb without --from: %v", err)
	}
}

func TestMASPImportAndPPDPPEval(t *testing.T) {
	src := filepath.Join("..", "..", "..", "shared", "data", "ppdpp", "cb-test.txt")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("PPDPP data not present: %v", err)
	}
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
