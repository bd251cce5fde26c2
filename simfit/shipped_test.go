package simfit

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/persuasiontrace"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// shipped is the fit shipped with the repository (docs/simulator/fit.md).
var shipped = filepath.Join("..", "sim", "fits", "people.json")

// ReproEnv, when set to a non-empty value, runs the full reproduction of
// the shipped fit (the final fit without cross-validation, a few minutes on a busy
// 2-core machine; .ci/run sets it).
const ReproEnv = "PERSUARENA_SIMFIT_REPRO"

// TraceEnv, when set, names the PersuasionTrace directory the shipped fit
// read; by default the shared copy beside the repository (CI copies
// shared/ next to the clone).
const TraceEnv = "PERSUARENA_PERSUASIONTRACE"

// traceRounds imports the PersuasionTrace copy (cidata: a missing copy
// fails under CI, skips elsewhere) and returns its train and validation
// people's rounds and the hash of their scenarios.
func traceRounds(t *testing.T) (train, val []persuasiontrace.Round, hash string) {
	t.Helper()
	dir := os.Getenv(TraceEnv)
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data", "persuasiontrace")
	}
	cidata.Require(t, dir)
	rs, _, err := persuasiontrace.Import(dir)
	if err != nil {
		t.Fatal(err)
	}
	train, val = TraceSplit(rs)
	hash, err = DataHash(persuasiontrace.Scenarios(slices.Concat(train, val)))
	if err != nil {
		t.Fatal(err)
	}
	return train, val, hash
}

func TestShippedFitLoadsAndMatchesData(t *testing.T) {
	c, f, err := sim.LoadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := scenario.Resolve("p4g")
	if err != nil {
		t.Fatal(err)
	}
	h, err := DataHash(ss)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Provenance
	if p == nil || p.Data != h || p.Seed != 1 || p.Split != "train" || p.Dialogues != 662 || p.Users != 499 || p.Evaluations > DefaultEvals {
		t.Errorf("provenance %+v, want data %s, seed 1, 662 train dialogues of 499 users", p, h)
	}
	if len(f.Params) != len(PeopleParams) {
		t.Errorf("%d parameters shipped, want %d", len(f.Params), len(PeopleParams))
	}
	if _, _, th := traceRounds(t); p.TraceData != th {
		t.Errorf("PersuasionTrace data %s, want %s", p.TraceData, th)
	}
	for _, q := range PeopleParams {
		v, err := c.Param(q.Name)
		if err != nil || v != f.Params[q.Name] || v < q.Lo || v > q.Hi {
			t.Errorf("%s = %v (%v), file %v, bounds [%v, %v]", q.Name, v, err, f.Params[q.Name], q.Lo, q.Hi)
		}
	}
	// The fit minimises train J plus the closed-loop penalty, starting
	// from the hand-set parameters, and the shipped values meet every
	// closed-loop limit.
	if !(p.Objective["train_penalised"] <= p.Objective["train_penalised_default"]) {
		t.Errorf("shipped penalised train objective %v above the hand-set one's %v", p.Objective["train_penalised"], p.Objective["train_penalised_default"])
	}
	if p.Metrics["closed_penalty"] != 0 || p.ClosedLoop == "" || f.Base != sim.HandName {
		t.Errorf("closed-loop penalty %v (want 0), closed loop %q, base %q", p.Metrics["closed_penalty"], p.ClosedLoop, f.Base)
	}
}

func TestFitReproducesShipped(t *testing.T) {
	if os.Getenv(ReproEnv) == "" {
		t.Skipf("set %s=1 to refit the shipped fit (CI does)", ReproEnv)
	}
	_, f, err := sim.LoadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv(TraceEnv)
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data", "persuasiontrace")
	}
	cidata.Require(t, dir)
	// the documented command's spec (docs/simulator/fit.md), through the code
	// the command runs, so the two cannot drift apart
	spec := P4GSpec{Base: sim.HandName, Bounds: "people", Trace: dir, Seed: f.Provenance.Seed,
		MaxEvals: PeopleEvals, ClosedN: DefaultClosedN, Workers: 2}
	got, err := FitP4G(context.Background(), spec, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range f.Params {
		if got.Params[k] != v {
			t.Errorf("%s: refit %v, shipped %v", k, got.Params[k], v)
		}
	}
	for _, k := range []string{"train", "train_penalised"} {
		if math.Abs(got.Provenance.Objective[k]-f.Provenance.Objective[k]) > 1e-6 {
			t.Errorf("%s objective refit %v, shipped %v", k, got.Provenance.Objective[k], f.Provenance.Objective[k])
		}
	}
	if got.Provenance.ClosedLoop != f.Provenance.ClosedLoop {
		t.Errorf("closed loop refit %q, shipped %q", got.Provenance.ClosedLoop, f.Provenance.ClosedLoop)
	}
}
