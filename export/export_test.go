package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/store"
)

const runID = "20250101-000000-abcd"

func fp(v float64) *float64 { return &v }

// ep builds an episode whose turns carry the given dense rewards (NaN =
// missing: nil belief and dense) and three readable probes each.
func ep(persuader, sc string, rollout int, term decision.Terminal, rGoal float64, dense ...float64) *episode.Episode {
	e := &episode.Episode{
		ScenarioID: sc, Rollout: rollout, Seed: 0xfedcba9876543210 + uint64(rollout),
		Persuader: persuader, Persuadee: "sim",
		Split: scenario.Heldout, Family: scenario.Healthcare, Domain: "flu vaccination",
		Resistance: scenario.IdentityThreat,
		Initial:    []probe.Reading{{Probe: "ca", P: 0.5, OK: true}, {Probe: "pe", P: 0.5, OK: true}, {Probe: "ac", P: 0.5, OK: true}},
		B0:         fp(0.5),
		Terminal:   term, RGoal: rGoal, Turns: []episode.Turn{},
	}
	b := 0.5
	for i, d := range dense {
		tu := episode.Turn{
			T: i + 1, Persuader: "persuader says " + sc, Persuadee: "persuadee replies",
			Decision: decision.Continue, Acts: []string{"evidence"},
		}
		if math.IsNaN(d) {
			tu.Probes = []probe.Reading{{Probe: "ca"}, {Probe: "pe"}, {Probe: "ac"}}
		} else {
			b += d
			tu.Belief, tu.Dense = fp(b), fp(d)
			tu.Probes = []probe.Reading{{Probe: "ca", P: b, OK: true}, {Probe: "pe", P: b, OK: true}, {Probe: "ac", P: b, OK: true}}
		}
		e.Turns = append(e.Turns, tu)
	}
	if n := len(e.Turns); n > 0 && term != decision.TermFailed && term != decision.TermPending {
		e.Turns[n-1].Decision = decision.Decision(term)
	}
	return e
}

// handRun is the hand-built run: four groups.
//
//	planner/sim/s1: accept [0.2, 0], reject [0.1, -, -, -0.1], accept [-0.2],
//	                failed [5] (left out)
//	planner/sim/s2: pending [0.1], pending [-0.1] (dead, separated)
//	planner/sim/s3: pending [0.1, -] with an unreadable turn, failed with no turns
//	script/sim/s1:  accept [0.3] (group of one)
func handRun() []*episode.Episode {
	nan := math.NaN()
	return []*episode.Episode{
		ep("planner", "s1", 0, decision.TermAccept, 3, 0.2, 0),
		ep("planner", "s1", 1, decision.TermReject, -3, 0.1, nan, nan, -0.1),
		ep("planner", "s1", 2, decision.TermAccept, 3, -0.2),
		ep("planner", "s1", 3, decision.TermFailed, 0, 5),
		ep("planner", "s2", 0, decision.TermPending, -1, 0.1),
		ep("planner", "s2", 1, decision.TermPending, -1, -0.1),
		ep("planner", "s3", 0, decision.TermPending, -1, 0.1, nan),
		ep("planner", "s3", 1, decision.TermFailed, 0),
		ep("script", "s1", 0, decision.TermAccept, 3, 0.3),
	}
}

func openStore(t *testing.T) (*store.DB, string) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.CreateRun(ctx, store.Run{ID: runID, Kind: "train", Seed: 7, Config: json.RawMessage(`{"lambda":0.5}`)}); err != nil {
		t.Fatal(err)
	}
	// Save out of order: the export must follow the store's order.
	eps := handRun()
	for i := len(eps) - 1; i >= 0; i-- {
		if err := db.SaveEpisode(ctx, runID, eps[i]); err != nil {
			t.Fatal(err)
		}
	}
	return db, dir
}

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("%s = %.15g, want %.15g", name, got, want)
	}
}

func readJSONL(t *testing.T, data []byte) []Episode {
	t.Helper()
	var eps []Episode
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e Episode
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("line %d: %v", len(eps)+1, err)
		}
		eps = append(eps, e)
	}
	return eps
}

func TestExportJSONLHandGroup(t *testing.T) {
	db, _ := openStore(t)
	var buf bytes.Buffer
	if err := Run(context.Background(), db, runID, JSONL, &buf, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	eps := readJSONL(t, buf.Bytes())
	if len(eps) != 9 {
		t.Fatalf("%d JSONL lines, want 9", len(eps))
	}
	// Group planner/sim/s1, λ 0.5, sample std (ddof 1), ε 1e-6.
	// R_out scored {3, -3, 3}: mean 1, std sqrt(24/2) = sqrt 12.
	aOut := []float64{0.5773501025230072, -1.1547002050460144, 0.5773501025230072, 0}
	// Dense pool {0.2, 0, 0.1, -0.1, -0.2}: std sqrt(0.1/4); 0.2/(std+ε)
	// = 1.264903064117948, 0.1/(std+ε) = 0.632451532058974.
	aDense := [][]float64{
		{1.264903064117948, 0},
		{0, -0.632451532058974, -0.632451532058974, -0.632451532058974},
		{-1.264903064117948},
		{0},
	}
	for i := range 4 {
		e := eps[i]
		if e.Group != "planner/sim/s1" || e.Rollout != i || e.GroupSize != 4 || e.Dead || e.Separated {
			t.Fatalf("episode %d: group %q rollout %d size %d dead %v", i, e.Group, e.Rollout, e.GroupSize, e.Dead)
		}
		near(t, "a_out", e.AOut, aOut[i])
		if len(e.Turns) != len(aDense[i]) {
			t.Fatalf("episode %d: %d turns", i, len(e.Turns))
		}
		for tt, tu := range e.Turns {
			near(t, "a_out turn", tu.AOut, aOut[i])
			near(t, "a_dense", tu.ADense, aDense[i][tt])
			near(t, "advantage", tu.Advantage, aOut[i]+0.5*aDense[i][tt])
		}
	}
	// The failed episode: no rewards, zero advantage, still exported.
	if f := eps[3]; f.Terminal != "failed" || f.RGoal != nil || f.ROut != nil || f.Turns[0].Advantage != 0 {
		t.Errorf("failed episode: %+v", f)
	}
	if r := eps[1]; r.RGoal == nil || *r.RGoal != -3 || *r.ROut != -3 {
		t.Errorf("reject episode rewards: %v %v", r.RGoal, r.ROut)
	}
	// Missing probe read-outs: null belief, dense and p.
	tu := eps[1].Turns[1]
	if tu.Belief != nil || tu.Dense != nil || len(tu.Probes) != 3 || tu.Probes[0].P != nil || tu.Probes[0].Probe != "ca" {
		t.Errorf("missing turn: %+v", tu)
	}
	if !strings.Contains(buf.String(), `"belief":null,"dense":null`) {
		t.Error("JSONL does not write missing belief/dense as null")
	}
	// planner/sim/s2: dead (both pending) and separated by the dense term.
	// Pool {0.1, -0.1}: std sqrt(0.02); A = 0.5·(±0.1/(std+ε)).
	for i, want := range []float64{0.35355089061095135, -0.35355089061095135} {
		e := eps[4+i]
		if !e.Dead || !e.Separated || e.AOut != 0 {
			t.Errorf("s2 rollout %d: dead %v separated %v a_out %v", i, e.Dead, e.Separated, e.AOut)
		}
		near(t, "s2 advantage", e.Turns[0].Advantage, want)
	}
	// planner/sim/s3 (one scored episode) and script/sim/s1 (group of
	// one): zero advantages, not dead.
	for _, e := range eps[6:] {
		if e.Dead || e.AOut != 0 {
			t.Errorf("%s: dead %v a_out %v", e.Group, e.Dead, e.AOut)
		}
		for _, tu := range e.Turns {
			if tu.Advantage != 0 || tu.ADense != 0 {
				t.Errorf("%s#%d turn %d: advantage %v", e.Group, e.Rollout, tu.T, tu.Advantage)
			}
		}
	}
	if eps[8].Group != "script/sim/s1" || len(eps[7].Turns) != 0 || eps[7].Turns == nil {
		t.Errorf("order or empty turns wrong: %q %v", eps[8].Group, eps[7].Turns)
	}
	// Nothing hidden leaks: no resistance type ("IT"), no run config
	// (readJSONL also rejects any field Episode does not declare).
	for _, leak := range []string{`"IT"`, "resistance", "config", `{"lambda":0.5}`} {
		if strings.Contains(buf.String(), leak) {
			t.Errorf("JSONL contains %q", leak)
		}
	}
}

func TestExportLambdaZeroAndGroupSize(t *testing.T) {
	eps := handRun()
	for _, e := range eps {
		e.RunID = runID
	}
	opt := DefaultOptions()
	opt.Config.Lambda = 0
	recs, err := Build(eps, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range recs {
		for _, tu := range e.Turns {
			if math.Float64bits(tu.Advantage) != math.Float64bits(e.AOut) {
				t.Errorf("λ=0: %s#%d turn %d advantage %v != a_out %v", e.Group, e.Rollout, tu.T, tu.Advantage, e.AOut)
			}
		}
	}
	// Blocks of 2: s1 rollouts {0 accept, 1 reject} and {2 accept, 3 failed}.
	opt = DefaultOptions()
	opt.GroupSize = 2
	recs, err = Build(eps, opt)
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Group != "planner/sim/s1#0" || recs[2].Group != "planner/sim/s1#1" || recs[2].GroupSize != 2 {
		t.Fatalf("groups %q %q size %d", recs[0].Group, recs[2].Group, recs[2].GroupSize)
	}
	// {3, -3}: mean 0, sample std sqrt 18: ±3/(sqrt 18 + 1e-6).
	near(t, "block a_out", recs[0].AOut, 3/(math.Sqrt(18)+1e-6))
	near(t, "block a_out literal", recs[1].AOut, -0.7071066145199202)
	if recs[2].AOut != 0 || recs[2].Turns[0].Advantage != 0 {
		t.Errorf("singleton block: %+v", recs[2])
	}
	opt.GroupSize = -1
	if _, err := Build(eps, opt); !errors.Is(err, ErrOptions) {
		t.Errorf("group size -1: err = %v", err)
	}
	opt = DefaultOptions()
	opt.Config.StdDDOF = 2
	if _, err := Build(eps, opt); !errors.Is(err, ErrOptions) {
		t.Errorf("ddof 2: err = %v", err)
	}
}

func TestExportParquetRoundTrip(t *testing.T) {
	db, dir := openStore(t)
	ctx := context.Background()
	path := filepath.Join(dir, "out.parquet")
	if err := RunFile(ctx, db, runID, Parquet, path, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	got, err := parquet.ReadFile[Row](path)
	if err != nil {
		t.Fatal(err)
	}
	// 2+4+1+1 (s1) + 1+1 (s2) + 2+0 (s3) + 1 (script) turns.
	if len(got) != 13 {
		t.Fatalf("%d rows, want 13", len(got))
	}
	eps, err := db.Episodes(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := Build(eps, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := Rows(recs)
	for i := range want {
		g, w := got[i], want[i]
		// Empty lists may read back as nil.
		if len(g.Acts) == 0 && len(w.Acts) == 0 {
			g.Acts, w.Acts = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	// Spot checks on values and nulls.
	r := got[3] // planner/sim/s1 rollout 1, t = 2: unreadable probes
	if r.Rollout != 1 || r.T != 2 || r.Belief != nil || r.Dense != nil || r.Probes[2].P != nil || r.NTurns != 4 {
		t.Errorf("row 3: %+v", r)
	}
	near(t, "row 3 advantage", r.Advantage, -1.1547002050460144-0.5*0.632451532058974)
	if f := got[7]; f.Terminal != "failed" || f.ROut != nil || f.RGoal != nil || f.Advantage != 0 {
		t.Errorf("failed row: %+v", f)
	}
	if r := got[0]; r.ROut == nil || *r.ROut != 3 || r.Seed != 0xfedcba9876543210 || r.B0 == nil || *r.B0 != 0.5 {
		t.Errorf("row 0: %+v", r)
	}
	// Metadata.
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	pf, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"persuarena.run_id": runID, "persuarena.lambda": "0.5", "persuarena.std_ddof": "1"} {
		if got, ok := pf.Lookup(k); !ok || got != v {
			t.Errorf("metadata %s = %q, %v; want %q", k, got, ok, v)
		}
	}
	// No temporary file left beside the output.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestRunFileAtomicOnError(t *testing.T) {
	db, dir := openStore(t)
	path := filepath.Join(dir, "keep.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := RunFile(context.Background(), db, "no-such-run", JSONL, path, DefaultOptions())
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("output overwritten: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	if _, err := ParseFormat("csv"); !errors.Is(err, ErrOptions) {
		t.Errorf("ParseFormat(csv) = %v", err)
	}
	// Deterministic: the same run exports the same bytes.
	var a, b bytes.Buffer
	for _, w := range []*bytes.Buffer{&a, &b} {
		if err := Run(context.Background(), db, runID, Parquet, w, DefaultOptions()); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two Parquet exports of one run differ")
	}
}

// A judged episode's R_out is R_goal + w·R_strategy (w = StrategyWeight):
// two accepted rollouts are no longer a dead group when rated differently.
func TestBuildUsesStrategyRating(t *testing.T) {
	a, b := ep("p", "s1", 0, decision.TermAccept, 3, 0.1), ep("p", "s1", 1, decision.TermAccept, 3, 0.2)
	a.RStrategy, b.RStrategy = fp(0.5), fp(-0.5)
	opt := DefaultOptions()
	opt.Config.StrategyWeight = 2
	out, err := Build([]*episode.Episode{a, b}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if *out[0].ROut != 4 || *out[1].ROut != 2 || *out[0].RGoal != 3 || out[0].Dead || out[0].AOut <= 0 || out[1].AOut >= 0 {
		t.Errorf("R_out %v %v, dead %v, A_out %v %v", *out[0].ROut, *out[1].ROut, out[0].Dead, out[0].AOut, out[1].AOut)
	}
	// Without ratings R_out is R_goal and the group is dead.
	a.RStrategy, b.RStrategy = nil, nil
	out, _ = Build([]*episode.Episode{a, b}, opt)
	if *out[0].ROut != 3 || !out[0].Dead {
		t.Errorf("unrated: R_out %v, dead %v", *out[0].ROut, out[0].Dead)
	}
}

// The episodes format writes the stored records, one episode.Episode per
// line in store order; its file form is atomic and a failed export leaves
// the old file alone. The JSONL format's turn fields carry the same names.
func TestExportEpisodes(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateRun(ctx, store.Run{ID: runID, Kind: "eval", Status: store.StatusDone}); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []string{"c", "a", "b"} {
		if err := db.SaveEpisode(ctx, runID, ep("script", sc, 0, decision.TermAccept, 1, 0.25)); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := Run(ctx, db, runID, Episodes, &buf, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	var back episode.Episode
	if err := json.Unmarshal([]byte(lines[2]), &back); err != nil || back.ScenarioID != "c" || back.Turns[0].Persuader != "persuader says c" || *back.Turns[0].Belief != 0.75 {
		t.Errorf("last line does not decode to scenario c: %v %+v", err, back)
	}
	var rec struct {
		Turns []map[string]any `json:"turns"`
	}
	var jl bytes.Buffer
	if err := Run(ctx, db, runID, JSONL, &jl, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(bytes.SplitN(jl.Bytes(), []byte("\n"), 2)[0], &rec); err != nil || rec.Turns[0]["persuader"] != "persuader says a" || rec.Turns[0]["persuadee"] != "persuadee replies" {
		t.Errorf("jsonl turn fields: %v %v", err, rec.Turns)
	}

	out := filepath.Join(t.TempDir(), "run.jsonl")
	if err := RunFile(ctx, db, runID, Episodes, out, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, buf.Bytes()) {
		t.Errorf("file export differs from stream export")
	}
	if err := RunFile(ctx, db, "nope", Episodes, out, DefaultOptions()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("export of missing run: err = %v, want ErrNotFound", err)
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, buf.Bytes()) {
		t.Errorf("failed export changed the existing file")
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
		t.Errorf("directory holds %d entries after failed export, want 1", len(ents))
	}
}
