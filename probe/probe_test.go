package probe

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Seed 000 Table 8: probe states (ca, pe, ac) per turn of held-out scenario
// 112 and the published r_dense column. The Probe-RPO paper says B_t = mean_k
// p_k with p = (1+s)/2 reproduces r_dense to ±0.003; t = 1 starts from B_0 =
// B_1 (all probes at -1 before and after turn 1, r_1 = -0.000).
var table8 = []struct {
	ca, pe, ac, rDense float64
}{
	{-1.00, -1.00, -1.00, -0.000},
	{-0.98, -1.00, -0.96, +0.010},
	{+0.99, -0.64, +1.00, +0.716},
	{+0.91, +0.91, +1.00, +0.242},
	{+1.00, +1.00, +1.00, +0.032},
}

func readingsFromStates(ss ...float64) []Reading {
	rs := make([]Reading, len(ss))
	for i, s := range ss {
		rs[i] = Read("x", FromProbability((1+s)/2))
	}
	return rs
}

func TestTable8DenseRewards(t *testing.T) {
	prev, _ := Belief(readingsFromStates(-1, -1, -1)) // B_0
	var sumAbs float64
	var abs []float64
	for i, row := range table8 {
		b, ok := Belief(readingsFromStates(row.ca, row.pe, row.ac))
		if !ok {
			t.Fatalf("turn %d: belief unreadable", i+1)
		}
		r := b - prev
		// Table 8 prints states to two decimals, so the SPEC tolerance ±0.003 is
		// met with equality on turn 4 (0.245 vs 0.242); allow float residue.
		if math.Abs(r-row.rDense) > 0.003+1e-9 {
			t.Errorf("turn %d: r_dense = %.4f, Table 8 says %.3f", i+1, r, row.rDense)
		}
		abs = append(abs, math.Abs(r))
		sumAbs += math.Abs(r)
		prev = b
	}
	// "Two turns carry 95.9% of sum |r_dense|" (turns 3 and 4).
	share := (abs[2] + abs[3]) / sumAbs
	if math.Abs(share-0.959) > 0.003 {
		t.Errorf("top-two share = %.4f, Table 8 says 0.959", share)
	}
}

func TestStateAndShare(t *testing.T) {
	p, err := Share(0.3, 0.1)
	if err != nil || math.Abs(p-0.75) > 1e-12 {
		t.Fatalf("Share(0.3,0.1) = %v, %v; want 0.75", p, err)
	}
	if s := State(0.75); s != 0.5 {
		t.Errorf("State(0.75) = %v, want 0.5", s)
	}
	if _, err := Share(0, 0); err != ErrUnreadable {
		t.Errorf("Share(0,0) err = %v, want ErrUnreadable", err)
	}
}

func TestPoolVariantsAndDuplicates(t *testing.T) {
	ln := math.Log
	a := Answer{Top: []TokenLogprob{
		{Token: " Yes", ID: -1, Logprob: ln(0.4)},
		{Token: "yes", ID: -1, Logprob: ln(0.1)},
		{Token: "YES", ID: -1, Logprob: ln(0.05)},
		{Token: " Yes", ID: -1, Logprob: ln(0.4)}, // vLLM duplicate: dropped
		{Token: "▁No", ID: -1, Logprob: ln(0.2)},
		{Token: "No.", ID: -1, Logprob: ln(0.05)},
		{Token: "Maybe", ID: -1, Logprob: ln(0.1)},
		{Token: "", ID: -1, Logprob: -1},
		{Token: "no", ID: -1, Logprob: -9999},            // below-top-k sentinel
		{Token: "No", ID: -1, Logprob: math.Inf(-1)},     // -inf
		{Token: "ĠNo", ID: -1, Logprob: -3.4e38},         // float min
		{Token: "Nope", ID: -1, Logprob: math.NaN()},     // null decoded as NaN
		{Token: "nO", ID: 7, Logprob: ln(0.05)},          // by id
		{Token: "nO-dup", ID: 7, Logprob: ln(0.9)},       // same id: dropped
		{Token: "Yesterday", ID: -1, Logprob: ln(0.01)},  // not an answer word
		{Token: " yes ", ID: -1, Logprob: ln(0.0000001)}, // tiny
	}}
	y, n := Pool(a)
	if math.Abs(y-(0.55+1e-7)) > 1e-12 || math.Abs(n-0.30) > 1e-12 {
		t.Fatalf("Pool = (%.12f, %.12f), want (0.5500001, 0.30)", y, n)
	}
	r := Read("ca", a)
	if !r.OK || math.Abs(r.P-(0.55+1e-7)/(0.85+1e-7)) > 1e-12 {
		t.Errorf("Read = %+v", r)
	}
}

func TestUnreadableIsMissing(t *testing.T) {
	// A thinking model answering "<think>": neither Yes nor No.
	r := Read("pe", Answer{Top: []TokenLogprob{{Token: "<think>", ID: -1, Logprob: -0.01}}})
	if r.OK {
		t.Fatalf("unreadable probe reported as readable: %+v", r)
	}
	// Missing probes are dropped from the mean, never counted as 0.
	b, ok := Belief([]Reading{{P: 0.8, OK: true}, r, {P: 0.4, OK: true}})
	if !ok || math.Abs(b-0.6) > 1e-12 {
		t.Errorf("Belief = %v, %v; want 0.6", b, ok)
	}
	if _, ok := Belief([]Reading{r, r}); ok {
		t.Error("Belief of only unreadable probes must be missing")
	}
}

// An answer the engine gave but the client rejected (post-sampling
// probabilities) is unreadable with its reason, never P = 1; a readable
// answer carries no reason.
func TestUnreadableKeepsReason(t *testing.T) {
	const why = "llm: engine artefact: post-sampling probabilities"
	if r := Read("ca", Answer{Top: []TokenLogprob{}, Reason: why}); r != (Reading{Probe: "ca", Reason: why}) {
		t.Fatalf("rejected answer read as %+v", r)
	}
	r := Read("ca", Answer{Top: []TokenLogprob{{Token: "Yes", ID: -1, Logprob: math.Log(0.75)}, {Token: "No", ID: -1, Logprob: math.Log(0.25)}}, Reason: why})
	if !r.OK || r.Reason != "" || math.Abs(r.P-0.75) > 1e-12 {
		t.Fatalf("readable answer read as %+v", r)
	}
}

func TestLoadBasis(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "b.json")
	os.WriteFile(good, []byte(`[{"id":"x","dimension":"d","question":"Do I trust them?"}]`), 0o644)
	b, err := LoadBasis(good)
	if err != nil || len(b) != 1 || b[0].Question != "Do I trust them?" {
		t.Fatalf("LoadBasis = %v, %v", b, err)
	}
	dup := filepath.Join(dir, "dup.json")
	os.WriteFile(dup, []byte(`[{"id":"x","question":"a"},{"id":"x","question":"b"}]`), 0o644)
	if _, err := LoadBasis(dup); err == nil || !strings.Contains(err.Error(), "[1].id: duplicate") {
		t.Errorf("duplicate id error = %v", err)
	}
	noq := filepath.Join(dir, "noq.json")
	os.WriteFile(noq, []byte(`[{"id":"x"}]`), 0o644)
	if _, err := LoadBasis(noq); err == nil || !strings.Contains(err.Error(), "[0].question: missing") {
		t.Errorf("missing question error = %v", err)
	}
}

func TestResolve(t *testing.T) {
	for ref, want := range map[string]Basis{"": Default, "default": Default, "agreement": AgreementBasis} {
		b, err := Resolve(ref)
		if err != nil || len(b) != len(want) || b[0].ID != want[0].ID {
			t.Errorf("Resolve(%q) = %v, %v; want %v", ref, b, err, want)
		}
	}
	f := filepath.Join(t.TempDir(), "b.json")
	if err := os.WriteFile(f, []byte(`[{"id":"x","question":"Do I trust them?"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := Resolve(f); err != nil || len(b) != 1 || b[0].ID != "x" {
		t.Errorf("Resolve(file) = %v, %v", b, err)
	}
	if _, err := Resolve(filepath.Join(t.TempDir(), "agreement")); err == nil || !strings.Contains(err.Error(), "probe basis") {
		t.Errorf("Resolve(missing file) error = %v", err)
	}
}

// ReadProbability must give Read(id, FromProbability(p)) bit for bit: the
// simulator's transcripts and beliefs depend on it.
func TestReadProbabilityMatchesRead(t *testing.T) {
	ps := []float64{0, 1e-300, 1e-13, 1e-12, 0.1, 0.25, 1.0 / 3, 0.5, 0.7, 0.999999, 1 - 1e-12, 1, 2, -1, math.NaN(), math.Inf(1)}
	for i := range 20000 {
		ps = append(ps, float64(i)/19999, math.Float64frombits(0x3fe0000000000000+uint64(i)*7919))
	}
	for _, p := range ps {
		got, want := ReadProbability("pe", p), Read("pe", FromProbability(p))
		if got.Probe != want.Probe || got.OK != want.OK || math.Float64bits(got.P) != math.Float64bits(want.P) {
			t.Fatalf("ReadProbability(%v) = %+v, Read(FromProbability) = %+v", p, got, want)
		}
	}
	// Hand values: 0.25 survives the round trip (exp(log 0.25) = 0.25,
	// 0.25 + exp(log1p(-0.25)) = 1); p = 0 is clamped to 1e-12; NaN is
	// unreadable.
	if r := ReadProbability("ca", 0.25); !r.OK || r.P != 0.25 || r.Probe != "ca" {
		t.Fatalf("ReadProbability(0.25) = %+v, want {ca 0.25 true}", r)
	}
	if r := ReadProbability("ca", 0); !r.OK || math.Abs(r.P-1e-12) > 1e-24 {
		t.Fatalf("ReadProbability(0) = %+v, want P = 1e-12", r)
	}
	if r := ReadProbability("ca", math.NaN()); r.OK {
		t.Fatalf("ReadProbability(NaN) = %+v, want unreadable", r)
	}
}
