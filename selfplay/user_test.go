package selfplay

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// biasedNet returns a user net that (almost) always picks class a.
func biasedNet(t *testing.T, a Reaction) *Net {
	t.Helper()
	n, err := NewNet(NumFeatures, 4, NumReactions, 1)
	if err != nil {
		t.Fatal(err)
	}
	n.B2[a] = 30
	return n
}

// TestRepliesNeverRepeat: whatever class the policy keeps choosing, and
// for a uniform policy, no reply equals the previous one, over 10-turn
// dialogues on 24 scenarios.
func TestRepliesNeverRepeat(t *testing.T) {
	scs := testScenarios(t, 24)
	uni, err := NewNet(NumFeatures, 4, NumReactions, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Uniform over the four continuing classes only.
	for _, a := range []Reaction{Accept, Conditional, Reject} {
		uni.B2[a] = -30
	}
	nets := map[string]*Net{"uniform": uni}
	for _, a := range []Reaction{VoiceConcern, PushBack, WarmUp, Deflect} {
		nets[a.String()] = biasedNet(t, a)
	}
	per, err := baseline.New("random")
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range nets {
		u, err := NewUser(n, sim.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		pairs := 0
		for i := range scs {
			ep, err := episode.Run(context.Background(), episode.Config{}, &scs[i], per, u, episode.Seed(3, scs[i].ID, 0))
			if err != nil || ep.Terminal == decision.TermFailed {
				t.Fatalf("%s: %v %s", name, err, ep.Error)
			}
			for k := 1; k < len(ep.Turns); k++ {
				pairs++
				if ep.Turns[k].Persuadee == ep.Turns[k-1].Persuadee {
					t.Errorf("%s, %s: turns %d and %d both say %q", name, scs[i].ID, k, k+1, ep.Turns[k].Persuadee)
				}
			}
			for _, tr := range ep.Turns {
				if strings.Contains(tr.Persuadee, marker) || strings.Contains(tr.Persuadee, "{") {
					t.Fatalf("%s: reply %q leaks the persona or a slot", name, tr.Persuadee)
				}
			}
		}
		if pairs < 24*8 {
			t.Errorf("%s: only %d consecutive pairs checked", name, pairs)
		}
	}
}

// TestMimicDecidesAsTheSimulator: a Mimic user with the default mind
// gives, turn for turn, the decisions the simulator gives with the same
// seed, and its class is the simulator reply's label.
func TestMimicDecidesAsTheSimulator(t *testing.T) {
	scs := testScenarios(t, 16)
	n, err := NewNet(NumFeatures, 4, NumReactions, 1)
	if err != nil {
		t.Fatal(err)
	}
	u, err := NewUser(n, sim.DefaultConfig(), Mimic())
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(sim.DefaultConfig())
	// A persuader that ignores the replies, so both persuadees hear the
	// same turns.
	per := fixedPersuader{
		"What worries you most about donating to Save the Children?",
		"Last year 90% of donations went straight to programmes for children, according to the audited report.",
		"Here is how it would work: you pick an amount, the research team deducts it from your payment after this chat, and it goes to Save the Children.",
		"It is entirely your decision, and there is no pressure either way. Would you be willing to donate a small part today?",
	}
	terminal := 0
	for i := range scs {
		seed := episode.Seed(5, scs[i].ID, 0)
		a, err := episode.Run(context.Background(), episode.Config{}, &scs[i], per, u, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, err := episode.Run(context.Background(), episode.Config{}, &scs[i], per, s, seed)
		if err != nil {
			t.Fatal(err)
		}
		if a.Terminal != b.Terminal || len(a.Turns) != len(b.Turns) {
			t.Fatalf("%s: mimic %s after %d turns, simulator %s after %d", scs[i].ID, a.Terminal, len(a.Turns), b.Terminal, len(b.Turns))
		}
		for k := range a.Turns {
			if a.Turns[k].Decision != b.Turns[k].Decision {
				t.Errorf("%s turn %d: %s vs %s", scs[i].ID, k+1, a.Turns[k].Decision, b.Turns[k].Decision)
			}
			if got := LabelOf(a.Turns[k].Decision, a.Turns[k].Persuadee); got != LabelOf(b.Turns[k].Decision, b.Turns[k].Persuadee) {
				t.Errorf("%s turn %d: mimic said %q (%s) for the simulator's %q", scs[i].ID, k+1, a.Turns[k].Persuadee, got, b.Turns[k].Persuadee)
			}
		}
		if a.Terminal != decision.TermPending {
			terminal++
		}
	}
	if terminal == 0 {
		t.Error("no dialogue ended in a decision; the comparison is weak")
	}
}

// TestTemplatesReadAsTheirClass: every continuing template, filled, is
// read by the planner's reaction tagger as its class (LabelOf), so the
// planner sees what the user did and the warm-start labels agree.
func TestTemplatesReadAsTheirClass(t *testing.T) {
	concern := "I'm not sure the money actually reaches the children."
	for bank, class := range map[string]Reaction{"voice": VoiceConcern, "voice_again": VoiceConcern, "voice_none": VoiceConcern,
		"push": PushBack, "warm": WarmUp, "deflect": Deflect} {
		for _, tm := range banks[bank] {
			text := fillTemplate(tm, concern, "donate part of my task payment")
			if got := LabelOf(decision.Continue, text); got != class {
				t.Errorf("%s: %q reads as %s (tags %v)", bank, text, got, planner.TagReaction(text).Strings())
			}
		}
	}
	for bank, ts := range banks {
		seen := map[string]bool{}
		for _, tm := range ts {
			if seen[tm] {
				t.Errorf("%s: duplicate template %q", bank, tm)
			}
			seen[tm] = true
		}
		if len(ts) < 3 {
			t.Errorf("%s: only %d templates", bank, len(ts))
		}
	}
}

// TestUserLatentAndProbe: the session's latent state carries the user's
// own decision, the teacher reads it, and the probes follow the
// documented formulas of the BDI scalars.
func TestUserLatentAndProbe(t *testing.T) {
	scs := testScenarios(t, 1)
	u, err := NewUser(biasedNet(t, Accept), sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	s, err := u.StartSession(context.Background(), &scs[0], 11)
	if err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		st := masp.FromLatent(s.Latent(), scs[0].Proposal)
		as, err := s.Probe(context.Background(), nil, probe.Default)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{"ca": (1 + st.Valence) / 2, "pe": 0.5 + (st.Receptivity-0.5)*(0.5+0.5*st.Confidence),
			"ac": math.Min(math.Max(0.5+st.Receptivity-s.rho0, 0), 1)}
		for k, p := range probe.Default {
			pYes, _ := probe.Pool(as[k])
			if math.Abs(pYes-want[p.ID]) > 1e-9 {
				t.Errorf("probe %s: P(Yes) = %.6f, want %.6f", p.ID, pYes, want[p.ID])
			}
		}
	}
	check()
	if as, _ := s.Probe(context.Background(), nil, probe.Default); math.Abs(mustPool(as[2])-0.5) > 1e-9 {
		t.Errorf("ac before any turn = %v, want 0.5", mustPool(as[2]))
	}
	tr := []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "Would you be willing to donate a small part today?"}}
	r, err := s.Reply(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != decision.Accept || !s.Latent().Ended || s.Latent().Decision != decision.Accept {
		t.Fatalf("accept class: reply %+v, latent %+v", r, s.Latent())
	}
	if !strings.Contains(r.Text, "donate part of my task payment to Save the Children") {
		t.Errorf("accept reply %q does not name the proposal in the first person", r.Text)
	}
	st := masp.FromLatent(s.Latent(), scs[0].Proposal)
	if st.Confidence < 0.8 || !strings.Contains(st.Intention, "now") {
		t.Errorf("the teacher does not read the user's accept: %+v", st)
	}
	check()
	if _, err := s.Reply(context.Background(), tr); err == nil {
		t.Error("a reply after a decision was accepted")
	}
	d := s.Decisions()
	if len(d) != 1 || d[0].Action != Accept || len(d[0].Features) != NumFeatures || d[0].Logp > 0 || d[0].Logp < -1e-6 {
		t.Errorf("decisions %+v", d)
	}
	// masp.Play reads the user's latent state for its judges and teacher.
	u2, _ := NewUser(biasedNet(t, WarmUp), sim.DefaultConfig())
	per, _ := baseline.New("script")
	dl, err := masp.Play(context.Background(), masp.Config{Success: masp.SimSuccessJudge{Rule: masp.DefaultSuccessRule},
		Rationality: masp.SimRationalityJudge{}, Mind: &masp.Mind{}}, masp.ScenarioCases(scs)[0], per, u2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(dl.Turns) != masp.DefaultT || dl.Initial == nil || dl.Turns[0].RS == nil || dl.Turns[0].QRaw == "no latent state" {
		t.Errorf("Play against the user: %d turns, initial %v, first turn %+v", len(dl.Turns), dl.Initial, dl.Turns[0])
	}
}

// fixedPersuader says its lines in turn, whatever the replies.
type fixedPersuader []string

func (fixedPersuader) Name() string { return "fixed" }
func (f fixedPersuader) Start(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) {
	return &fixedSession{lines: f}, nil
}

type fixedSession struct {
	lines []string
	k     int
}

func (s *fixedSession) Say(context.Context, []episode.Message) (episode.Utterance, error) {
	l := s.lines[s.k%len(s.lines)]
	s.k++
	return episode.Utterance{Text: l}, nil
}

func mustPool(a probe.Answer) float64 {
	p, _ := probe.Pool(a)
	return p
}

// TestFeatureNames: one name per feature, none twice.
func TestFeatureNames(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range FeatureNames {
		if n == "" || seen[n] {
			t.Errorf("feature name %q empty or repeated", n)
		}
		seen[n] = true
	}
	if FeatureNames[29] != "prev_voice_concern" || FeatureNames[21] != "act_diagnostic" {
		t.Error("feature names out of place")
	}
}

// TestFirstPerson checks the proposal rewording.
func TestFirstPerson(t *testing.T) {
	for in, want := range map[string]string{
		"Donate part of your task payment to Save the Children: any amount from $0 up to your full $2.": "donate part of my task payment to Save the Children",
		"Get the flu shot this week.": "get the flu shot this week",
		"":                            "go ahead with it",
	} {
		if got := firstPerson(in); got != want {
			t.Errorf("firstPerson(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLoadUserErrors names the file and the problem.
func TestLoadUserErrors(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ body, want string }{
		"unknown.json": {`{"format":"persuarena-user-policy","version":1,"bogus":1}`, "bogus"},
		"format.json":  {`{"format":"other","version":1,"net":{}}`, `format "other"`},
		"syntax.json":  {"{\n\"format\": x}", "syntax.json:2"},
		"shape.json":   {`{"format":"persuarena-user-policy","version":1,"mind":"default","net":{"in":3,"hidden":0,"actions":7,"w2":[],"b2":[]}}`, "w2 has 0 values"},
		"mind.json":    {`{"format":"persuarena-user-policy","version":1,"mind":"odd","net":{"in":1,"hidden":0,"actions":2,"w2":[0,0],"b2":[0,0]}}`, "mind"},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadUser(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want one naming %q", name, err, c.want)
		}
	}
}
