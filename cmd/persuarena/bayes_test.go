package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestBayesCommands(t *testing.T) {
	out, err := runTag(t, "bayes", "optimum", "--limit", "1")
	if err != nil {
		t.Fatal(err)
	}
	// standing-desk: prior 0.35, act iff P(true) ≥ 0.6: full disclosure
	// 0.35, optimal 0.35/0.6.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Join(strings.Fields(lines[len(lines)-1])[:6], " "); got != "standing-desk health 2 0.000 0.350 0.583" {
		t.Errorf("optimum row %q", got)
	}
	ck := filepath.Join(t.TempDir(), "planner.json")
	if out, err = runTag(t, "bayes", "train", "--limit", "0", "--steps", "20", "--seed", "2", "--out", ck); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "step   20") {
		t.Errorf("train output:\n%s", out)
	}
	out, err = runTag(t, "bayes", "eval", "--limit", "5", "--rollouts", "3", "--seed", "2", "--planner", ck, "--setting", "static,dynamic")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"5 claims × 3 rollouts", "planner  static", "greedy   dynamic", "Likert vs probe"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}
	if _, err := runTag(t, "bayes", "eval", "--limit", "1", "--setting", "both", "--planner", ""); err == nil {
		t.Error("--setting both: no error")
	}
}
