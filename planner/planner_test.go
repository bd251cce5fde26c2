package planner

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

func TestTagReaction(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"", []string{}},
		{"I see.", []string{}},
		{"Since you ask, here is what bothers me. The clinic is only open while I sleep.", []string{"voiced"}},
		{"Honestly? I can't afford it.", []string{"voiced"}},
		{"Okay, that actually helps.", []string{"positive"}},
		{"I'm not sure that helps at all.", []string{}}, // negated cue
		{"I'm not worried about that.", []string{}},
		{"That's just a claim. Saying it louder doesn't make it true.", []string{"pushback"}},
		{"Not yet. I'm still not persuaded.", []string{"deflect"}},
		{"What would the first step even look like?", []string{"question"}},
		{"I don't know where I'd even start.", []string{"deflect"}},
		{"Do you have anything solid to back that up?", []string{"question"}},
		{"That's really all of it; I've told you what worries me.", []string{"voiced", "exhausted"}},
		{"That\u2019s a fair point. But before I answer that: the cost worries me.", []string{"voiced", "positive"}},
		{"Stop telling me what I have to do.", []string{"pushback"}},
	}
	for _, c := range cases {
		if got := TagReaction(c.text).Strings(); !slices.Equal(got, c.want) {
			t.Errorf("TagReaction(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func msgs(pairs ...string) []episode.Message {
	var out []episode.Message
	for i, s := range pairs {
		sp := episode.PersuaderSpeaker
		if i%2 == 1 {
			sp = episode.PersuadeeSpeaker
		}
		out = append(out, episode.Message{Speaker: sp, Text: s})
	}
	return out
}

func TestFeatures(t *testing.T) {
	spec := FeatureSpec{Version: FeatureVersion, Tmax: 4, BowDims: 0}
	if spec.Dim() != 4+15+6+4 || len(spec.Names()) != spec.Dim() {
		t.Fatalf("Dim %d, names %d", spec.Dim(), len(spec.Names()))
	}
	x := spec.Features(nil, nil)
	want := make([]float64, spec.Dim())
	want[0] = 1 // turn 1, nothing else
	if !slices.Equal(x, want) {
		t.Fatalf("empty transcript: %v", x)
	}
	tr := msgs(
		"What worries you most about it?", // diagnostic
		"Since you ask, here is what bothers me. The commute takes two hours.",
		"The documented results are encouraging; most people find the commute easier than expected. What else worries you?", // evidence + diagnostic, echoes "commute"
		"Before I answer that: my knee hurts on stairs.",
	)
	x = spec.Features(x, tr)
	want = make([]float64, spec.Dim())
	want[2] = 1                                              // turn 3
	d, e := 4+int(tagger.Diagnostic), 4+int(tagger.Evidence) // used
	want[d], want[e] = 1, 1
	want[d+5], want[e+5] = 0.5, 0.25 // counts 2 and 1, over 4
	want[d+10], want[e+10] = 1, 1    // last turn
	want[19+int(Voiced)] = 1
	want[25] = 0.5     // voiced 2
	want[26] = 0.25    // addressed 1 (the commute)
	want[27] = 1       // open > 0
	want[28] = 1.0 / 3 // open 1
	if !slices.Equal(x, want) {
		for i := range x {
			if x[i] != want[i] {
				t.Errorf("%s = %v, want %v", spec.Names()[i], x[i], want[i])
			}
		}
	}
	// Turns past Tmax use the last one-hot entry; the bag of words sets
	// exactly one flag per distinct word hash.
	long := msgs("a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
	if x := spec.Features(nil, long); x[3] != 1 || x[2] != 0 {
		t.Errorf("turn 6 of Tmax 4: %v", x[:4])
	}
	bow := FeatureSpec{Version: FeatureVersion, Tmax: 4, BowDims: 8}
	x = bow.Features(nil, msgs("Hi.", "okay okay"))
	n := 0
	for _, v := range x[29:] {
		n += int(v)
	}
	if len(x) != 37 || n != 1 {
		t.Errorf("bag of words: len %d, %d flags set, want 37 and 1", len(x), n)
	}
}

func TestPolicyLogProbs(t *testing.T) {
	spec := DefaultFeatureSpec()
	p, err := NewPolicy(spec, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	x := spec.Features(nil, nil)
	lp := p.LogProbs(nil, x)
	for a, l := range lp {
		if math.Abs(l+math.Log(NumActions)) > 1e-12 {
			t.Fatalf("initial policy: logp[%d] = %v, want -ln 31", a, l)
		}
	}
	// A hand-checked linear policy: with x = e_0 the logits are row 0 of
	// W2 plus b2.
	lin, _ := NewPolicy(spec, 0, 1)
	lin.W2[0*NumActions+5] = math.Log(2) // action 5: logit ln 2
	lin.B2[7] = math.Log(3)              // action 7: logit ln 3
	lp = lin.LogProbs(nil, x)
	z := 29.0 + 2 + 3
	if math.Abs(lp[5]-math.Log(2/z)) > 1e-12 || math.Abs(lp[7]-math.Log(3/z)) > 1e-12 || math.Abs(lp[0]-math.Log(1/z)) > 1e-12 {
		t.Errorf("linear logp[5,7,0] = %v %v %v, want ln(2/34) ln(3/34) ln(1/34)", lp[5], lp[7], lp[0])
	}
	// The hidden layer: one unit, w1 = 1 on feature 0, w2 = 1 for action
	// 0: logit tanh(1).
	one, _ := NewPolicy(FeatureSpec{Version: 1, Tmax: 1}, 1, 1)
	clear(one.W1)
	one.W1[0] = 1
	one.W2[0] = 1
	lp = one.LogProbs(nil, []float64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	zz := math.Exp(math.Tanh(1)) + 30
	if math.Abs(lp[0]-(math.Tanh(1)-math.Log(zz))) > 1e-12 {
		t.Errorf("hidden logp[0] = %v, want %v", lp[0], math.Tanh(1)-math.Log(zz))
	}
}

func TestSample(t *testing.T) {
	lp := []float64{math.Log(0.2), math.Log(0.5), math.Log(0.3)}
	for _, c := range []struct {
		u    float64
		want int
	}{{0, 0}, {0.19, 0}, {0.2, 1}, {0.69, 1}, {0.71, 2}, {0.999999, 2}, {1, 2}} {
		if got := Sample(lp, c.u); got != c.want {
			t.Errorf("Sample(u=%v) = %d, want %d", c.u, got, c.want)
		}
	}
	if ActionSet(0) != 1<<tagger.Diagnostic || ActionSet(30) != 31 || ActionOf(31) != 30 || ActionOf(0) != -1 || ActionOf(32) != -1 {
		t.Error("action <-> set mapping")
	}
}

// TestPlannerAgainstSim plays the initial planner against the simulator:
// every turn's decision is recorded, the tagger reads the chosen acts, the
// log-probability is ln(1/31), and the same seed replays the same episode.
func TestPlannerAgainstSim(t *testing.T) {
	scs, err := scenario.Resolve("arena")
	if err != nil {
		t.Fatalf("built-in arena set: %v", err)
	}
	pol, _ := NewPolicy(DefaultFeatureSpec(), DefaultHidden, 3)
	pl, err := New(pol)
	if err != nil {
		t.Fatal(err)
	}
	pee := sim.New(sim.DefaultConfig())
	ctx := context.Background()
	seen := map[tagger.ActSet]bool{}
	for i := 0; i < 20; i++ {
		var sess *Session
		rec := recorder{pl, &sess}
		ep, err := episode.Run(ctx, episode.Config{}, &scs[i], rec, pee, uint64(i))
		if err != nil || ep.Error != "" {
			t.Fatal(err, ep.Error)
		}
		ds := sess.Decisions()
		if len(ds) != len(ep.Turns) {
			t.Fatalf("%d decisions for %d turns", len(ds), len(ep.Turns))
		}
		for k, d := range ds {
			if d.T != k || strings.Join(ep.Turns[k].Acts, ",") != strings.Join(d.Acts.Strings(), ",") {
				t.Errorf("turn %d: decided %v, tagged %v", k, d.Acts.Strings(), ep.Turns[k].Acts)
			}
			if math.Abs(d.Logp+math.Log(31)) > 1e-12 || math.Abs(d.Entropy-math.Log(31)) > 1e-12 {
				t.Errorf("turn %d: logp %v entropy %v", k, d.Logp, d.Entropy)
			}
			seen[d.Acts] = true
		}
		ep2, _ := episode.Run(ctx, episode.Config{}, &scs[i], pl, pee, uint64(i))
		for k := range ep.Turns {
			if ep.Turns[k].Persuader != ep2.Turns[k].Persuader {
				t.Fatalf("scenario %d turn %d differs on replay", i, k)
			}
		}
	}
	if len(seen) < 20 {
		t.Errorf("a uniform policy drew only %d distinct act sets in 20 episodes", len(seen))
	}
}

type recorder struct {
	p *Planner
	s **Session
}

func (r recorder) Name() string { return r.p.Name() }
func (r recorder) Start(ctx context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	s, err := r.p.StartSession(ctx, pub, seed)
	*r.s = s
	return s, err
}

func TestGreedy(t *testing.T) {
	pol, _ := NewPolicy(DefaultFeatureSpec(), 0, 1)
	pol.B2[ActionOf(1<<tagger.Plan|1<<tagger.Autonomy)] = 5
	pl, _ := New(pol, Greedy())
	s, _ := pl.StartSession(context.Background(), scenario.Public{ID: "x"}, 9)
	u, err := s.Say(context.Background(), nil)
	if err != nil || strings.Join(u.Acts, ",") != "plan,autonomy" {
		t.Errorf("greedy: %v %v", u.Acts, err)
	}
}

func TestCheckpointRoundTripAndErrors(t *testing.T) {
	dir := t.TempDir()
	pol, _ := NewPolicy(FeatureSpec{Version: 1, Tmax: 10, BowDims: 4}, 5, 7)
	pol.B2[3] = 0.1 + 0.2 // a float that needs all 17 digits
	path := filepath.Join(dir, "p.json")
	if err := Save(path, &Checkpoint{Policy: pol, Reference: pol.Clone(), Training: []byte(`{"step":3}`)}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Policy.W1, pol.W1) || c.Policy.B2[3] != pol.B2[3] || c.Policy.Spec != pol.Spec || string(c.Training) != `{"step":3}` {
		t.Error("round trip changed the checkpoint")
	}
	pl, err := LoadPlanner(path)
	if h := c.Hash(); err != nil || c.Name != "p" || len(h) != 12 || pl.Name() != "planner:p@"+h {
		t.Errorf("LoadPlanner: %v %v (checkpoint name %q, hash %q)", pl, err, c.Name, h)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	// The arm name carries no directory: the same file elsewhere keeps
	// its name; another policy under the same name hashes differently.
	other := filepath.Join(t.TempDir(), "q.json")
	if err := Save(other, &Checkpoint{Policy: pol, Name: "p"}); err != nil {
		t.Fatal(err)
	}
	if pl2, err := LoadPlanner(other); err != nil || pl2.Name() != pl.Name() {
		t.Errorf("same policy elsewhere: %v, want %s (%v)", pl2, pl.Name(), err)
	}
	pol2 := pol.Clone()
	pol2.B2[0] += 1
	if h2 := (&Checkpoint{Policy: pol2}).Hash(); h2 == c.Hash() {
		t.Errorf("changed policy kept hash %s", h2)
	}
	os.Remove(other)
	bad := map[string]string{
		"syntax":  "{\n\"format\": \"persuarena-planner\",\n\"version\": 1,,\n}",
		"format":  `{"format":"other","version":1}`,
		"version": `{"format":"persuarena-planner","version":9}`,
		"nopol":   `{"format":"persuarena-planner","version":1}`,
		"size":    `{"format":"persuarena-planner","version":1,"policy":{"spec":{"version":1,"tmax":10},"hidden":0,"w2":[1],"b2":[]}}`,
		"unknown": `{"format":"persuarena-planner","version":1,"extra":1}`,
	}
	wantIn := map[string]string{"syntax": ":3:", "format": `format "other"`, "version": "version 9", "nopol": "no policy",
		"size": "w2 has 1 values, want 1085", "unknown": "extra"}
	for name, body := range bad {
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, []byte(body), 0o644)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), wantIn[name]) {
			t.Errorf("%s: error %v, want the path and %q", name, err, wantIn[name])
		}
	}
	// An invalid policy is not written.
	broken := pol.Clone()
	broken.W2 = broken.W2[:3]
	if err := Save(filepath.Join(dir, "b.json"), &Checkpoint{Policy: broken}); err == nil {
		t.Error("Save wrote an invalid policy")
	}
	if _, err := os.Stat(filepath.Join(dir, "b.json")); !os.IsNotExist(err) {
		t.Error("b.json exists")
	}
}
