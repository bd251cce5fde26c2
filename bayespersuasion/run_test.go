package bayespersuasion

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClaimSpecLoad(t *testing.T) {
	all, err := ClaimSpec{}.Load()
	if err != nil {
		t.Fatal(err)
	}
	two, err := ClaimSpec{Limit: 2}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) <= 2 || len(two) != 2 || two[0].ID != "standing-desk" || two[1].ID != all[1].ID {
		t.Errorf("%d claims; limit 2: %d", len(all), len(two))
	}
	if _, err := (ClaimSpec{File: filepath.Join(t.TempDir(), "none.json")}).Load(); err == nil {
		t.Error("missing claim file: no error")
	}
}

func TestRunOptimum(t *testing.T) {
	var out bytes.Buffer
	if err := RunOptimum(ClaimSpec{Limit: 1}, &out); err != nil {
		t.Fatal(err)
	}
	// standing-desk: prior 0.35, act iff P(true) >= 0.6: no disclosure 0,
	// full disclosure 0.35, optimal 0.35/0.6 = 0.583.
	want := "claim          domain  states  none   full   optimal  pool all  pool best\n" +
		"standing-desk  health  2       0.000  0.350  0.583    0.227     0.391\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestRunEvalAndTrain(t *testing.T) {
	ctx := context.Background()
	ck := filepath.Join(t.TempDir(), "planner.json")
	var out bytes.Buffer
	if err := RunTrain(ctx, TrainSpec{Steps: 20, Seed: 2, Out: ck}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 || lines[0] != "step    1  mean reward 0.141" || lines[4] != "step   20  mean reward 0.377" ||
		lines[5] != "θ = [1.438 0.263 0.815 -0.815] (ΔV, Δbelief, item bias, stop); checkpoint "+ck {
		t.Errorf("train output:\n%s", out.String())
	}
	out.Reset()
	spec := EvalSpec{ClaimSpec: ClaimSpec{Limit: 5}, Receiver: "bayes", Planner: ck, Settings: []string{"static", " dynamic"}, Rollouts: 3, Seed: 2}
	if err := RunEval(ctx, spec, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"5 claims × 3 rollouts", "planner  static", "greedy   dynamic",
		"\nLikert vs probe belief (150 episodes): Spearman before 0.725, after 0.947, change 0.899; mean |Likert-probe| before 0.047, after 0.043, change 0.039\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("eval output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestFmtRho(t *testing.T) {
	if got := fmtRho(math.NaN()) + " " + fmtRho(-0.25); got != "- -0.250" {
		t.Errorf("fmtRho: %q", got)
	}
}

func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	if err := (EvalSpec{Settings: []string{"both"}}).Validate(); err == nil || err.Error() != `--setting "both": want static or dynamic` {
		t.Errorf("setting both: %v", err)
	}
	if err := RunEval(ctx, EvalSpec{ClaimSpec: ClaimSpec{Limit: 1}, Receiver: "bayes", Settings: []string{"both"}}, &bytes.Buffer{}); err == nil {
		t.Error("RunEval, setting both: no error")
	}
	if err := RunEval(ctx, EvalSpec{ClaimSpec: ClaimSpec{Limit: 1}, Receiver: "llm:nobody"}, &bytes.Buffer{}); err == nil {
		t.Error("unknown LLM receiver: no error")
	}
	if err := RunTrain(ctx, TrainSpec{}, &bytes.Buffer{}); err == nil || err.Error() != "--out CHECKPOINT is required" {
		t.Errorf("train without --out: %v", err)
	}
	if err := RunImport("", 1, &bytes.Buffer{}); err == nil || err.Error() != "--from FILE (.jsonl or .csv) is required" {
		t.Errorf("import without --from: %v", err)
	}
}

func TestRunImport(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.csv")
	if err := os.WriteFile(p, []byte("claim,argument,rating_initial,rating_final\nA,x,2,5\nA,y,3,3\nB,z,4,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := RunImport(p, 1, &out); err != nil {
		t.Fatal(err)
	}
	// Changes +3, 0, -2: mean 1/3, one of three rose; the bootstrap
	// interval spans the extreme changes.
	if want := "3 ratings of 2 claims: mean rating change +0.333 (95% CI -2.000 to +3.000); 33.3% rose\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
