package main

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/runs"
)

// ptFixture is package persuasiontrace's hand-made fixture: two persuasion
// rounds of person 7 and one control round of person 8 (three more
// rounds are skipped).
var ptFixture = filepath.Join("..", "..", "persuasiontrace", "testdata", "rounds")

// persuarena fidelity persuasiontrace on the fixture, through cobra: the
// JSON form with the embedded simulator, the table with sim-hard, and the
// required --from.
func TestFidelityPersuasionTraceCommand(t *testing.T) {
	out, _, err := execRoot(t, "fidelity", "persuasiontrace", "--from", ptFixture, "--persuadee", "sim", "--resamples", "50", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Persuadee string `json:"persuadee"`
		Import    struct {
			Read    int `json:"read"`
			Reports int `json:"reports"`
		} `json:"import"`
		Persuasion struct {
			Rounds int `json:"rounds"`
			People int `json:"people"`
		} `json:"persuasion"`
		Control struct {
			Rounds int `json:"rounds"`
		} `json:"control"`
		References []json.RawMessage `json:"references"`
		Targets    []json.RawMessage `json:"targets"`
		Rounds     []struct {
			ID      string            `json:"id"`
			Reports []json.RawMessage `json:"reports"`
			Sim     []*float64        `json:"sim"`
		} `json:"rounds"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if got.Persuadee != "sim" || got.Import.Read != 6 || got.Import.Reports != 7 || got.Persuasion.Rounds != 2 || got.Persuasion.People != 1 ||
		got.Control.Rounds != 1 || len(got.References) != 10 || len(got.Targets) != 7 || len(got.Rounds) != 3 ||
		got.Rounds[2].ID != "pt-nested-deeper-b-000" || len(got.Rounds[2].Reports) != 3 || len(got.Rounds[2].Sim) != 3 || got.Rounds[2].Sim[0] == nil {
		t.Errorf("json %s", out)
	}

	out, _, err = execRoot(t, "fidelity", "persuasiontrace", "--from", ptFixture, "--persuadee", "sim-hard", "--resamples", "50", "--format", "table")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Open-loop fidelity on PersuasionTrace: persuadee sim-hard, seed 1",
		"imported 6 rounds from 2 files", "skipped 1: no messages", "control rounds: 1 of 1 people, 1 reports", "fidelity targets:"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	if _, _, err := execRoot(t, "fidelity", "persuasiontrace", "--from", "", "--format", "table"); err == nil || !strings.Contains(err.Error(), "--from: the PersuasionTrace directory is required") {
		t.Errorf("no --from: %v", err)
	}
}

// persuarena fidelity persuasiontrace --persuadee llm:q, end to end on the
// fake engine: its probes read 0.8 at every position, so the per-report
// MAE is the mean of |report - 0.8| per round: (0.4 + 0.25 + 0.2)/3 and
// (0.5 + 0.4 + 0.3)/3 on the two persuasion rounds.
func TestFidelityPersuasionTraceLLM(t *testing.T) {
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	rep, err := runs.FidelityPersuasionTrace(context.Background(), runs.FidelitySpec{From: ptFixture, Persuadee: "llm:q", Config: cfgPath,
		Seed: 1, Resamples: 50, Workers: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Persuadee != "llm:q" || rep.Failed != 0 || rep.Persuasion.Rounds != 2 || rep.Control.Rounds != 1 {
		t.Fatalf("report: %s, %d failed (%s), %d + %d rounds", rep.Persuadee, rep.Failed, rep.FirstError, rep.Persuasion.Rounds, rep.Control.Rounds)
	}
	want := ((0.4+0.25+0.2)/3 + (0.5+0.4+0.3)/3) / 2
	if m := rep.Persuasion.MAESim.Value; m == nil || math.Abs(*m-want) > 1e-6 {
		t.Errorf("MAE %v, want %v", m, want)
	}
	for _, r := range rep.Rounds {
		if r.B0 == nil || math.Abs(*r.B0-0.8) > 1e-6 {
			t.Errorf("%s: B0 %v, want 0.8", r.ID, r.B0)
		}
	}
}

// persuarena fidelity persuasiontrace --persuadee sim+reader=llm:q, end to
// end on the fake engine: the LLM role is asked to read each message for
// the simulator; the fake engine's answer is not the reader schema's JSON,
// so every replay records a failed read (never a guessed perception) and
// the report names it.
func TestFidelityPersuasionTraceSimLLMReader(t *testing.T) {
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	_, err := runs.FidelityPersuasionTrace(context.Background(), runs.FidelitySpec{From: ptFixture, Persuadee: "sim+reader=llm:q", Config: cfgPath,
		Seed: 1, Resamples: 50, Workers: 2}, nil)
	if err == nil || !strings.Contains(err.Error(), "every replay failed") || !strings.Contains(err.Error(), "perception: failed read: llm:q") {
		t.Fatalf("err %v, want every replay to fail with the reader's failed read", err)
	}
}
