package baseline

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/prose"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// publics are hand-made public scenario views covering the fill's cases:
// a named persuadee, a proposal with tagger-sensitive words ("schedule",
// a number, a colon), a noun-phrase proposal and empty fields.
var publics = []scenario.Public{
	{ID: "flu", Domain: "preventive care", Family: scenario.Healthcare,
		Proposal: "Get the flu shot at the pharmacy this week.", AcceptMeans: "Books the shot.",
		Persuader: scenario.Party{Name: "Dana", Role: "nurse"}, Persuadee: scenario.Party{Name: "Sam Okafor", Role: "patient"},
		Relationship: "nurse and patient", Closeness: scenario.Professional},
	{ID: "budget", Domain: "personal finance: budgeting", Family: scenario.Financial,
		Proposal:  "Schedule a monthly budget review with me: 30 minutes on the first Monday.",
		Persuader: scenario.Party{Role: "adviser"}, Persuadee: scenario.Party{Role: "client"}},
	{ID: "noun", Domain: "workplace", Family: scenario.Workplace,
		Proposal:  "A four-day trial of the new code review process",
		Persuader: scenario.Party{Name: "Lee", Role: "team lead"}, Persuadee: scenario.Party{Name: "Will", Role: "engineer"}},
	{ID: "empty"},
	{ID: "p4g-like", Domain: "charity donation: Save the Children", Family: scenario.Charity,
		Proposal:  "Donate part of your task payment to Save the Children: any amount from $0 up to your full $2.",
		Persuader: scenario.Party{Role: "a fellow crowd worker"}, Persuadee: scenario.Party{Role: "a crowd worker"}},
}

// replies is a fake persuadee's turns, cycled.
var replies = []string{
	"Honestly? I'm worried about the cost and the side effects.",
	"That helps a bit. My schedule is packed with night shifts.",
	"Hmm, okay.",
	"I would do it only if my partner agrees.",
	"I\u2019m not sure yet.",
	"What about the paperwork?",
}

// play runs n turns of p on pub with the fake replies and returns the
// utterances.
func play(t *testing.T, p episode.Persuader, pub scenario.Public, seed uint64, n int) []episode.Utterance {
	t.Helper()
	ctx := context.Background()
	sess, err := p.Start(ctx, pub, seed)
	if err != nil {
		t.Fatal(err)
	}
	var tr []episode.Message
	var out []episode.Utterance
	for i := 0; i < n; i++ {
		u, err := sess.Say(ctx, tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
		tr = append(tr, episode.Message{Speaker: episode.PersuaderSpeaker, Text: u.Text},
			episode.Message{Speaker: episode.PersuadeeSpeaker, Text: replies[i%len(replies)]})
	}
	return out
}

func setOf(names []string) tagger.ActSet {
	var s tagger.ActSet
	for _, n := range names {
		a, ok := tagger.ParseAct(n)
		if !ok {
			panic(n)
		}
		s = s.With(a)
	}
	return s
}

func TestRegistry(t *testing.T) {
	if got, want := Names(), []string{"informer", "pushy", "random", "script"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if got, want := Listed(), []string{"pushy", "informer", "script", "random"}; !slices.Equal(got, want) {
		t.Errorf("Listed() = %v, want %v", got, want)
	}
	if got, want := BaselineFirst(), []string{"script", "informer", "pushy", "random"}; !slices.Equal(got, want) {
		t.Errorf("BaselineFirst() = %v, want %v", got, want)
	}
	for _, n := range Names() {
		p, err := New(n)
		if err != nil || p.Name() != n {
			t.Errorf("New(%q) = %v, %v", n, p, err)
		}
	}
	_, err := New("llm")
	if err == nil || !strings.Contains(err.Error(), `"llm"`) || !strings.Contains(err.Error(), "informer, pushy, random, script") {
		t.Errorf("New(llm) error = %v", err)
	}
}

// TestBanksTagExactly renders every template with the neutral fill used by
// compose's fallback and checks the tagger reads exactly the bank's act.
func TestBanksTagExactly(t *testing.T) {
	fills := []slots{
		{proposal: safeProposal, proposal3: safeProposal, x: "the cost and your schedule"},
		{proposal: safeProposal, proposal3: safeProposal, x: "side effects"},
	}
	for b := bankID(0); b < numBanks; b++ {
		if len(banks[b]) < 6 {
			t.Errorf("bank %d has only %d templates", b, len(banks[b]))
		}
		for i := range banks[b] {
			for _, v := range fills {
				var sb strings.Builder
				banks[b][i].render(&sb, v)
				got := tagger.Tag(sb.String())
				if got.Acts != bankAct[b] || (got.Pressure > 0) != (b == bPressure) {
					t.Errorf("bank %d template %d: %q tags %v pressure %d, want %v",
						b, i, sb.String(), got.Acts.Strings(), got.Pressure, bankAct[b].Strings())
				}
			}
		}
	}
}

// TestUtterancesTagAsIntended runs every persuader for ten turns on each
// hand-made scenario and checks, turn by turn, that the tagger finds
// exactly the intended acts, that pressure appears only from pushy, that
// each persuader keeps to its policy, and that no utterance repeats the
// previous one.
func TestUtterancesTagAsIntended(t *testing.T) {
	for _, name := range Names() {
		p, _ := New(name)
		for _, pub := range publics {
			for seed := uint64(1); seed <= 4; seed++ {
				us := play(t, p, pub, seed, 10)
				for i, u := range us {
					want := setOf(u.Acts)
					got := tagger.Tag(u.Text)
					if got.Acts != want {
						t.Errorf("%s/%s seed %d turn %d: %q tags %v, intended %v", name, pub.ID, seed, i+1, u.Text, got.Acts.Strings(), u.Acts)
					}
					if name != "pushy" && got.Pressure != 0 {
						t.Errorf("%s/%s turn %d: pressure %d in %q", name, pub.ID, i+1, got.Pressure, u.Text)
					}
					if want == 0 {
						t.Errorf("%s/%s turn %d: no act in %q", name, pub.ID, i+1, u.Text)
					}
					switch name {
					case "pushy":
						if want != 1<<tagger.Commitment {
							t.Errorf("pushy turn %d: acts %v", i+1, u.Acts)
						}
					case "informer":
						if want != 1<<tagger.Evidence {
							t.Errorf("informer turn %d: acts %v", i+1, u.Acts)
						}
					case "script":
						if i == 0 && want != 1<<tagger.Diagnostic {
							t.Errorf("script turn 1: acts %v, want diagnostic", u.Acts)
						}
					}
					if i > 0 && u.Text == us[i-1].Text {
						t.Errorf("%s/%s seed %d: turn %d repeats turn %d: %q", name, pub.ID, seed, i+1, i, u.Text)
					}
				}
			}
		}
	}
}

// TestPushyPressures checks that pushy does use pressure in most turns
// (70% by design) over many turns.
func TestPushyPressures(t *testing.T) {
	p, _ := New("pushy")
	n, with := 0, 0
	for seed := uint64(0); seed < 20; seed++ {
		for _, u := range play(t, p, publics[0], seed, 10) {
			n++
			if tagger.Tag(u.Text).Pressure > 0 {
				with++
			}
		}
	}
	if with < n/2 || with == n {
		t.Errorf("pushy pressured in %d of %d turns, want about 70%%", with, n)
	}
}

// TestRandomCoversSubsets checks that random draws varied act sets.
func TestRandomCoversSubsets(t *testing.T) {
	p, _ := New("random")
	seen := map[tagger.ActSet]bool{}
	for seed := uint64(0); seed < 20; seed++ {
		for _, u := range play(t, p, publics[0], seed, 10) {
			seen[setOf(u.Acts)] = true
		}
	}
	if len(seen) < 25 {
		t.Errorf("random drew only %d distinct act sets in 200 turns", len(seen))
	}
}

func TestDeterminism(t *testing.T) {
	for _, name := range Names() {
		p, _ := New(name)
		a := play(t, p, publics[0], 7, 10)
		b := play(t, p, publics[0], 7, 10)
		c := play(t, p, publics[0], 8, 10)
		diff := false
		for i := range a {
			if a[i].Text != b[i].Text || !slices.Equal(a[i].Acts, b[i].Acts) {
				t.Errorf("%s: seed 7 turn %d differs between runs", name, i+1)
			}
			diff = diff || a[i].Text != c[i].Text
		}
		if !diff {
			t.Errorf("%s: seeds 7 and 8 gave the same ten turns", name)
		}
	}
}

// TestSayIsPureInTranscript checks that an utterance depends only on the
// seed and the transcript: a fresh session handed a transcript midway, or
// the same transcript twice, says the same as the session that lived
// through it.
func TestSayIsPureInTranscript(t *testing.T) {
	ctx := context.Background()
	for _, name := range Names() {
		p, _ := New(name)
		live, _ := p.Start(ctx, publics[0], 3)
		var tr []episode.Message
		for i := 0; i < 8; i++ {
			u, _ := live.Say(ctx, tr)
			again, _ := live.Say(ctx, tr)
			fresh, _ := p.Start(ctx, publics[0], 3)
			f, _ := fresh.Say(ctx, tr)
			if u.Text != again.Text || u.Text != f.Text {
				t.Errorf("%s turn %d: live %q, again %q, fresh %q", name, i+1, u.Text, again.Text, f.Text)
			}
			tr = append(tr, episode.Message{Speaker: episode.PersuaderSpeaker, Text: u.Text},
				episode.Message{Speaker: episode.PersuadeeSpeaker, Text: replies[i%len(replies)]})
		}
	}
}

func TestScriptEchoesVoicedConcerns(t *testing.T) {
	ctx := context.Background()
	p, _ := New("script")
	for seed := uint64(0); seed < 10; seed++ {
		s, _ := p.Start(ctx, publics[0], seed)
		tr := []episode.Message{}
		u, _ := s.Say(ctx, tr)
		tr = append(tr, episode.Message{Speaker: episode.PersuaderSpeaker, Text: u.Text},
			episode.Message{Speaker: episode.PersuadeeSpeaker, Text: "I'm worried about the cost and the side effects."})
		u, _ = s.Say(ctx, tr)
		if !strings.Contains(u.Text, "the cost") || !strings.Contains(u.Text, "the side effects") {
			t.Errorf("seed %d: %q does not echo the cost and the side effects", seed, u.Text)
		}
		if !setOf(u.Acts).Has(tagger.Evidence) {
			t.Errorf("seed %d: acts %v, want evidence", seed, u.Acts)
		}
		if d := prose.Parse(u.Text); !(d.Mentions("price") || d.Mentions("cost")) || !d.Mentions("side effect") {
			t.Errorf("seed %d: %q mentions not both the cost (price, cost) and the side effects (side effect)", seed, u.Text)
		}
	}
}

func TestExtract(t *testing.T) {
	stop := stopSet{words: newFill(publics[0]).stop}
	cases := []struct {
		text string
		skip []string
		want []string
	}{
		{"I'm worried about the cost and the side effects.", nil, []string{"the cost", "the side effects"}},
		{"Since you ask, here is what bothers me. My schedule is packed with night shifts.", nil, []string{"your schedule", "night shifts"}},
		{"My schedule is packed with night shifts.", []string{"night shifts"}, []string{"your schedule"}},
		{"It's packed.", nil, nil}, // a bare -ed word is not a topic
		{"This house holds forty years of memories.", nil, []string{"the house", "memories"}},
		{"Your standard of clean isn't mine.", nil, []string{"my standard of clean"}},
		{"Huh. With respect, that's not evidence, it's an opinion.", nil, nil},
		{"Big charities waste a lot on overhead and salaries; I don't really trust them.", nil, []string{"overhead and salaries", "trust"}},
		{"Hmm, okay. I don\u2019t know.", nil, nil},
		{"The pharmacy is far.", nil, []string{"far"}}, // "pharmacy" is a proposal word
		{"Last time the injection left me feverish for two days.", nil, []string{"the injection", "feverish"}},
	}
	for _, c := range cases {
		skip := map[string]bool{}
		for _, k := range c.skip {
			skip[k] = true
		}
		var got []string
		for _, p := range extract(c.text, skip, stop, 2) {
			got = append(got, p.text)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("extract(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestVerbPhrase(t *testing.T) {
	for in, want := range map[string]string{
		"Donate part of your task payment to Save the Children: any amount from $0 up to your full $2.": "donate part of your task payment to Save the Children",
		"Get the flu shot at the pharmacy this week.":                                                   "get the flu shot at the pharmacy this week",
		"A four-day trial of the new process":                                                           "go ahead with A four-day trial of the new process",
		"to walk (daily)":                                                                               "walk",
		"":                                                                                              "",
		"NASA tour":                                                                                     "NASA tour",
	} {
		if got := verbPhrase(in); got != want {
			t.Errorf("verbPhrase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestP4GScenarios runs every persuader on the built-in P4G scenarios'
// public views and checks the tagger agrees with the intended acts.
func TestP4GScenarios(t *testing.T) {
	scs, err := scenario.Resolve("p4g")
	if err != nil || len(scs) == 0 {
		t.Fatalf("built-in p4g set: %d scenarios, %v", len(scs), err)
	}
	if len(scs) > 60 {
		scs = scs[:60]
	}
	for _, name := range Names() {
		p, _ := New(name)
		for i := range scs {
			for k, u := range play(t, p, scs[i].Public(), uint64(i), 10) {
				if got := tagger.Tag(u.Text).Acts; got != setOf(u.Acts) {
					t.Errorf("%s/%s turn %d: %q tags %v, intended %v", name, scs[i].ID, k+1, u.Text, got.Strings(), u.Acts)
				}
			}
		}
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range Names() {
		p, _ := New(name)
		s, err := p.Start(context.Background(), publics[0], 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Say(ctx, nil); err == nil {
			t.Errorf("%s: Say with a cancelled context returned no error", name)
		}
	}
}

// The interface hands a persuader the public view only; these assertions
// fail to compile if a built-in ever takes more.
var (
	_ func(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) = pushy{}.Start
	_ func(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) = informer{}.Start
	_ func(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) = script{}.Start
	_ func(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) = random{}.Start
)
