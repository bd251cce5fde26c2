package bdi

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
)

func st(b string, rho, c, v float64) State {
	return State{Belief: b, Desire: "The user wants " + b, Intention: "The user will " + b, Receptivity: rho, Confidence: c, Valence: v}
}

func TestFeatures(t *testing.T) {
	h := []episode.Message{
		{Speaker: episode.PersuaderSpeaker, Text: "What worries you most about donating?"},
		{Speaker: episode.PersuadeeSpeaker, Text: "No, I don't trust them."},
		{Speaker: episode.PersuaderSpeaker, Text: "Studies show 90% of the money reaches children. It's entirely your decision."},
		{Speaker: episode.PersuadeeSpeaker, Text: "Okay, that makes sense, thanks. Maybe a dollar?"},
	}
	f := Features(h)
	want := map[string]float64{
		"turns/8": 2.0 / 8, "share_diagnostic": 0.5, "share_evidence": 0.5, "last_evidence": 1, "last_autonomy": 1,
		"last_diagnostic": 0, "mean_pressure": 0,
		"reply_positive": 1, // okay, makes sense, thanks: 3 cues, capped at 3
		"reply_negative": 0, "reply_hedge": 1.0 / 3, "reply_question": 1,
		// tone: first reply (0 - 2)/3 (no, don't), second (3 - 0)/3; mean 1/6
		"mean_reply_tone": 1.0 / 6, "reply_length": 8.0 / 50,
	}
	for i, n := range FeatureNames {
		if w, ok := want[n]; ok {
			near(t, n, f[i], w, 1e-12)
		}
	}
	for i, x := range Features(nil) {
		if x != 0 {
			t.Errorf("empty history feature %s = %v", FeatureNames[i], x)
		}
	}
}

// When the scalar targets are exactly linear in two features, a student
// with a tiny penalty recovers them; text blocks come out unit length.
func TestStudentFitsLinearTargets(t *testing.T) {
	enc := embed.NewHashedTFIDF(16)
	lines := []string{"Studies show it works.", "What worries you?", "Here is a concrete plan: sign up on Monday.", "It is your decision."}
	replies := []string{"No.", "Okay, sure.", "Maybe, I don't know.", "Thanks, that helps."}
	var ex []Example
	for i := range 24 {
		var h []episode.Message
		for k := 0; k <= i%4; k++ {
			h = append(h, episode.Message{Speaker: episode.PersuaderSpeaker, Text: lines[(i+k)%4]},
				episode.Message{Speaker: episode.PersuadeeSpeaker, Text: replies[(i*k+1)%4]})
		}
		f := Features(h)
		s := st([]string{"doubt", "open", "ready", "unsure"}[i%4], clamp(0.1+0.5*f[2], 0, 1), clamp(0.2+0.3*f[0], 0, 1), clamp(0.4*f[17], -1, 1))
		z, err := Vector(context.Background(), s, enc, Alpha{Rho: 4, C: 1, V: 1})
		if err != nil {
			t.Fatal(err)
		}
		ex = append(ex, Example{History: h, Z: z})
	}
	m, err := FitStudent(ex, Alpha{Rho: 4, C: 1, V: 1}, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ex {
		rho, c, v := m.Scalars(e.History)
		f := Features(e.History)
		near(t, "rho", rho, 0.1+0.5*f[2], 1e-5)
		near(t, "c", c, 0.2+0.3*f[0], 1e-5)
		near(t, "v", v, 0.4*f[17], 1e-5)
		z := m.Predict(e.History)
		for b := range 3 {
			near(t, "text block norm", norm(z[b*16:(b+1)*16]), 1, 1e-9)
		}
		near(t, "pre-scaled rho", z[48], 2*rho, 1e-12)
	}
	if _, err := FitStudent(nil, DefaultAlpha, 0); err == nil {
		t.Error("no examples accepted")
	}
	if _, err := FitStudent([]Example{{Z: []float64{1, 2}}}, DefaultAlpha, 0); err == nil {
		t.Error("malformed target accepted")
	}
}

func testCache() *Cache {
	return &Cache{
		Sessions: []SessionRecord{
			{Task: P4G, Session: "s1", Profile: "A nurse who distrusts charities.", Initial: st("The user distrusts charities.", 0.1, 0.8, -0.4)},
			{Task: P4G, Session: "s2", Profile: "A student.", Initial: st("The user likes helping children.", 0.7, 0.4, 0.3)},
			{Task: ESConv, Session: "e1", Initial: st("The user feels hopeless about work.", 0.3, 0.6, -0.7)},
		},
		Turns: []TurnRecord{
			{Task: P4G, Session: "s1", Turn: 1, History: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Hi!"}, {Speaker: episode.PersuadeeSpeaker, Text: "Hello."}}, State: st("x", 0.2, 0.7, -0.3)},
			{Task: P4G, Session: "s2", Turn: 0, State: st("y", 0.7, 0.4, 0.3)},
		},
	}
}

func TestCacheRoundTripAndErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.jsonl")
	c := testCache()
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sessions) != 3 || len(got.Turns) != 2 || got.Sessions[0].Profile != "A nurse who distrusts charities." ||
		got.Turns[0].History[1].Text != "Hello." || got.Turns[0].State != c.Turns[0].State || got.Turns[1].History == nil {
		t.Fatalf("round trip: %+v", got)
	}
	raw, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(raw), `{"kind":"session","task":"p4g","session":"s1"`) {
		t.Errorf("first line %q", strings.SplitN(string(raw), "\n", 2)[0])
	}

	bad := strings.Join([]string{
		`{"kind":"session","task":"p4g","session":"a","initial":{"belief":"b","desire":"d","intention":"i","receptivity":0.5,"confidence":0.5,"valence":0}}`,
		``,
		`{"kind":"turn","task":"p4g","session":"a","turn":1,"history":[{"speaker":"robot","text":"x"}],"state":{"belief":"b","desire":"d","intention":"i","receptivity":0.5,"confidence":0.5,"valence":0}}`,
		`{"kind":"turn","task":"p4g","session":"a","turn":1,"history":[],"state":{"belief":"b","desire":"d","intention":"i","receptivity":0.5,"confidence":1.5,"valence":0}}`,
		`{"kind":"mood"}`,
		`{"kind":"session","task":"p4g","session":"b","extra":1,"initial":{}}`,
		`not json`,
	}, "\n")
	_, err = ReadCache("c.jsonl", strings.NewReader(bad))
	if err == nil {
		t.Fatal("bad cache accepted")
	}
	for _, want := range []string{
		`c.jsonl:3: history[0].speaker: "robot" is neither persuader nor persuadee`,
		`c.jsonl:4: state: confidence = 1.5 outside [0, 1]`,
		`c.jsonl:5: kind: "mood" is neither session nor turn`,
		`c.jsonl:6: (json): json: unknown field "extra"`,
		`c.jsonl:7: (json)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	_, err = ReadCache("o.jsonl", strings.NewReader(`{"kind":"session","task":"p4g","session":"a","initial":{"belief":"b","desire":"d","intention":"i","receptivity":0.5,"confidence":0.5,"valence":0}}
{"kind":"turn","task":"p4g","session":"zz","turn":0,"history":[],"state":{"belief":"b","desire":"d","intention":"i","receptivity":0.5,"confidence":0.5,"valence":0}}`))
	if err == nil || !strings.Contains(err.Error(), `session "zz"`) {
		t.Errorf("orphan turn: %v", err)
	}

	// An invalid state writes nothing, and an existing file is kept.
	c.Turns[1].State.Valence = 3
	if err := c.WriteFile(path); err == nil || !strings.Contains(err.Error(), "valence") {
		t.Fatalf("invalid write: %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, raw) {
		t.Error("failed write changed the file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left: %d entries", len(ents))
	}
}

// Nearest-neighbour rendering returns the record closest to z-hat: each
// prior record's own vector maps to itself, and a slightly perturbed one
// still does.
func TestPriorNearest(t *testing.T) {
	ctx := context.Background()
	enc := embed.NewHashedTFIDF(0)
	p, err := NewPrior(ctx, testCache(), P4G, enc, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Records) != 2 {
		t.Fatalf("%d P4G records", len(p.Records))
	}
	for _, r := range p.Records {
		got, sim, err := p.Nearest(r.Z)
		if err != nil || got.Session != r.Session {
			t.Errorf("Nearest(%s) = %s, %v", r.Session, got.Session, err)
		}
		near(t, "self similarity", sim, 1, 1e-12)
	}
	// Text weighs in: s2's wording with s1's scalars is still nearer s2.
	q, _ := Vector(ctx, st("The user likes helping children.", 0.1, 0.8, -0.4), enc, DefaultAlpha)
	got, _, _ := p.Nearest(q)
	if got.Session != "s2" {
		t.Errorf("Nearest = %s, want s2", got.Session)
	}
	// Brute force agrees on the cosine for a mixed query.
	mix := make([]float64, len(q))
	for i := range mix {
		mix[i] = 0.55*p.Records[0].Z[i] + 0.45*p.Records[1].Z[i]
	}
	got, sim, _ := p.Nearest(mix)
	c0, c1 := dot(mix, p.Records[0].Z)/norm(mix)/norm(p.Records[0].Z), dot(mix, p.Records[1].Z)/norm(mix)/norm(p.Records[1].Z)
	if want := map[bool]string{true: "s1", false: "s2"}[c0 > c1]; got.Session != want || math.Abs(sim-math.Max(c0, c1)) > 1e-12 {
		t.Errorf("mixed query: %s %v, want %s %v", got.Session, sim, want, math.Max(c0, c1))
	}
	if _, _, err := p.Nearest([]float64{1, 2, 3}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := NewPrior(ctx, testCache(), CB, enc, DefaultAlpha); err == nil {
		t.Error("empty prior accepted")
	}
	ex, err := testCache().Examples(ctx, enc, DefaultAlpha)
	if err != nil || len(ex) != 2 || len(ex[0].Z) != Dim(embed.DefaultHashDim) {
		t.Errorf("Examples: %d %v", len(ex), err)
	}
}
