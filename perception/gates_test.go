package perception_test

// The perception gates (docs/simulator/reader.md, "Perception gates"): the
// embedded reader and the simulator's dynamics together, on hand-written
// answers (testdata/answers.jsonl: for 60 concerns of 16 held-out arena
// scenarios, all four resistance types, an answer that uses the concern's
// keywords and a paraphrase that shares no content word with them) and
// the styles below. Each scripted episode: an open question, then one
// turn per concern in salience order (the type's addressing act, the
// condition's sentence about the concern, and a follow-up question), then
// autonomy and a commitment ask.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/perception"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

type answer struct {
	Scenario   string `json:"scenario"`
	Concern    string `json:"concern"`
	Answer     string `json:"answer"`
	Paraphrase string `json:"paraphrase"`
}

type gateScenario struct {
	sc *scenario.Scenario
	// items[i] is the answer to the scenario's concern i.
	items []answer
}

func loadGates(t testing.TB) []gateScenario {
	t.Helper()
	all, err := scenario.Resolve("arena")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*scenario.Scenario{}
	for i := range all {
		byID[all[i].ID] = &all[i]
	}
	f, err := os.Open("testdata/answers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gateScenario
	idx := map[string]int{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("testdata/answers.jsonl:%d: %v", line, err)
		}
		s := byID[a.Scenario]
		if s == nil {
			t.Fatalf("testdata/answers.jsonl:%d: no scenario %q", line, a.Scenario)
		}
		k, ok := idx[a.Scenario]
		if !ok {
			k = len(out)
			idx[a.Scenario] = k
			out = append(out, gateScenario{sc: s, items: make([]answer, len(s.Hidden.Concerns))})
		}
		found := false
		for i, c := range s.Hidden.Concerns {
			if c.ID == a.Concern {
				out[k].items[i], found = a, true
			}
		}
		if !found {
			t.Fatalf("testdata/answers.jsonl:%d: scenario %s has no concern %q", line, a.Scenario, a.Concern)
		}
	}
	for _, g := range out {
		for i, it := range g.items {
			if it.Answer == "" {
				t.Fatalf("scenario %s: concern %s has no answer", g.sc.ID, g.sc.Hidden.Concerns[i].ID)
			}
		}
	}
	return out
}

const rollouts = 5

var (
	openQuestion = "What worries you most about this?"
	followUp     = "What else is on your mind?"
	finalAsk     = "It's entirely your decision. Would you be willing to give it a try?"
	// addressing acts, rotated by turn so no two turns repeat each other
	evidenceActs = []string{
		"The documented results for people in a similar situation are encouraging.",
		"In similar cases, the outcome has generally been better than people expected.",
		"The evidence from people who did the same is reassuring.",
		"The records from similar situations are encouraging.",
		"The track record of this approach is good.",
		"Research on situations like this points the same way.",
	}
	planActs = []string{
		"Here's a concrete plan: I'll set up the first step on Monday.",
		"Step one would be small, and I'll check in with you after the first week.",
		"I can arrange the first part myself next week.",
		"We could start with a short trial on Thursday.",
		"I'll send you the details on Tuesday and we take it from there.",
		"For the first two weeks we keep it light, with a check-in at the end of each.",
	}
	fabricated = "A 2023 Harvard study of 12,000 people found that 87 percent of them felt exactly the same way at first."
	cueLines   = map[string]string{
		"guilt":        "If you really cared about me, you would have said yes already.",
		"urgency":      "This is your last chance, so decide now.",
		"contempt":     "Honestly, dragging your feet like this is ridiculous.",
		"social_proof": "Anyone sensible would already have said yes.",
		"threat":       "If you keep refusing, you'll regret it.",
		"autonomy_but": "It's your choice, but I expect a yes from you.",
	}
	cueOrder = []string{"guilt", "urgency", "contempt", "social_proof", "threat", "autonomy_but"}
	canned   = "That is exactly why this is worth doing."
)

func actLine(sc *scenario.Scenario, k int) string {
	if sc.Hidden.Resistance == scenario.AmbivalentAvoidance {
		return planActs[k%len(planActs)]
	}
	return evidenceActs[k%len(evidenceActs)]
}

func firstKeyword(sc *scenario.Scenario, i int) string { return sc.Hidden.Concerns[i].Keywords[0] }

// style gives the sentence about concern i for one condition ("" for
// none); hostile and irrelevant mention the concern's first keyword.
type style func(g gateScenario, i int) string

var (
	keyword    style = func(g gateScenario, i int) string { return g.items[i].Answer }
	paraphrase style = func(g gateScenario, i int) string { return g.items[i].Paraphrase }
	noAnswer   style = func(gateScenario, int) string { return "" }
	hostile    style = func(g gateScenario, i int) string {
		return "Frankly, I don't care about your " + firstKeyword(g.sc, i) + " worries."
	}
	irrelevant style = func(g gateScenario, i int) string {
		return "There was a crossword clue about " + firstKeyword(g.sc, i) + " in the paper yesterday."
	}
	withFab style = func(g gateScenario, i int) string { return g.items[i].Answer + " " + fabricated }
)

func withCue(cue string) style {
	return func(g gateScenario, i int) string { return g.items[i].Answer + " " + cueLines[cue] }
}

// script returns the scripted messages of a condition: turn k's message
// given the persuadee's last reply.
func script(g gateScenario, st style) func(k int, last string) string {
	n := len(g.items)
	return func(k int, _ string) string {
		switch {
		case k == 0:
			return openQuestion
		case k <= n:
			parts := []string{actLine(g.sc, k)}
			if s := st(g, k-1); s != "" {
				parts = append(parts, s)
			}
			if k < n {
				parts = append(parts, followUp)
			}
			return strings.Join(parts, " ")
		case k == n+1:
			return finalAsk
		}
		return ""
	}
}

func echoScript(g gateScenario) func(k int, last string) string {
	n := len(g.items)
	return func(k int, last string) string {
		switch {
		case k == 0:
			return openQuestion
		case k <= n:
			return last + " " + canned
		case k == n+1:
			return last + " So will you give it a try?"
		}
		return ""
	}
}

// transform rewrites every message of a script.
func transform(next func(int, string) string, f func(string) string) func(int, string) string {
	return func(k int, last string) string {
		if m := next(k, last); m != "" {
			return f(m)
		}
		return ""
	}
}

type outcome struct {
	terminal decision.Terminal
	b0, bT   float64
	beliefs  []float64 // B_t after each turn
	dense    []float64
}

// play runs the script against pee on sc with seed.
func play(t testing.TB, pee episode.Persuadee, sc *scenario.Scenario, seed uint64, next func(int, string) string) outcome {
	t.Helper()
	ctx := context.Background()
	env := episode.NewEnv(episode.Config{}, sc, pee, seed, episode.EnvOptions{})
	if err := env.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	last := ""
	for k := 0; !env.Done(); k++ {
		m := next(k, last)
		if m == "" {
			break
		}
		if _, err := env.Step(ctx, episode.Utterance{Text: m}); err != nil {
			t.Fatal(err)
		}
		r, err := env.Settle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		last = r.Turn.Persuadee
	}
	ep := env.Episode()
	o := outcome{terminal: ep.Terminal}
	if ep.B0 != nil {
		o.b0 = *ep.B0
	}
	o.bT = o.b0
	for _, tn := range ep.Turns {
		if tn.Belief != nil {
			o.bT = *tn.Belief
		}
		o.beliefs = append(o.beliefs, o.bT)
		d := math.NaN()
		if tn.Dense != nil {
			d = *tn.Dense
		}
		o.dense = append(o.dense, d)
	}
	return o
}

type summary struct {
	accept, gain float64
	n            int
}

func (s summary) String() string {
	return fmt.Sprintf("accept %5.1f%%  gain %+.3f  (%d episodes)", 100*s.accept, s.gain, s.n)
}

// run plays a condition on every gate scenario, rollouts seeds each, and
// summarises full acceptance and the mean belief gain B_T - B_0.
func run(t testing.TB, gs []gateScenario, mk func(gateScenario) func(int, string) string) summary {
	t.Helper()
	return tally(t, len(gs), rollouts, func(i int) (*scenario.Scenario, func(int, string) string) {
		return gs[i].sc, mk(gs[i])
	})
}

// tally plays, for each of n scenarios, rollouts episodes of the
// persuader at gives for it (a fresh one per episode, seeds
// episode.Seed(11, id, r)) against the default simulator, and summarises
// full acceptance and the mean belief gain B_T - B_0.
func tally(t testing.TB, n, rollouts int, at func(i int) (*scenario.Scenario, func(int, string) string)) summary {
	t.Helper()
	pee := sim.New(sim.DefaultConfig())
	var s summary
	for i := range n {
		for r := range rollouts {
			sc, next := at(i)
			o := play(t, pee, sc, episode.Seed(11, sc.ID, r), next)
			if o.terminal == decision.TermAccept {
				s.accept++
			}
			s.gain += o.bT - o.b0
			s.n++
		}
	}
	s.accept /= float64(s.n)
	s.gain /= float64(s.n)
	return s
}

func cond(st style) func(gateScenario) func(int, string) string {
	return func(g gateScenario) func(int, string) string { return script(g, st) }
}

// TestGateConcernAnswering: hostile and irrelevant mentions of a
// concern's words gain no more than no answer at all; paraphrased answers
// keep at least half of the keyword answers' belief gain, and gain more
// than no answer.
func TestGateConcernAnswering(t *testing.T) {
	gs := loadGates(t)
	ctrl := run(t, gs, cond(noAnswer))
	kw := run(t, gs, cond(keyword))
	para := run(t, gs, cond(paraphrase))
	host := run(t, gs, cond(hostile))
	irr := run(t, gs, cond(irrelevant))
	t.Logf("no answer:  %v", ctrl)
	t.Logf("keyword:    %v", kw)
	t.Logf("paraphrase: %v", para)
	t.Logf("hostile:    %v", host)
	t.Logf("irrelevant: %v", irr)
	for _, c := range []struct {
		name string
		s    summary
	}{{"hostile", host}, {"irrelevant", irr}} {
		if c.s.accept > ctrl.accept+0.05 || c.s.gain > ctrl.gain+0.05 {
			t.Errorf("%s: %v, above the no-answer control %v by more than 5 pp", c.name, c.s, ctrl)
		}
	}
	if kw.gain-ctrl.gain <= 0 {
		t.Fatalf("keyword answers gain no more than no answer: %v vs %v", kw, ctrl)
	}
	// The measure: mean belief gain B_T - B_0 of the paraphrases
	// against the keyword answers; the stricter gain over the no-answer
	// control is reported beside it, and must be positive.
	ratio := para.gain / kw.gain
	over := (para.gain - ctrl.gain) / (kw.gain - ctrl.gain)
	t.Logf("paraphrase / keyword mean belief gain: %.2f (gain over no answer: %.2f)", ratio, over)
	if ratio < 0.5 {
		t.Errorf("paraphrases keep %.2f of the keyword answers' belief gain, want >= 0.5", ratio)
	}
	if over <= 0 {
		t.Errorf("paraphrases gain no more than no answer (%.2f of the keyword answers' gain over it)", over)
	}
}

// TestGateHonesty: fabricated figures and sources, and each manipulation
// cue, get at least 20 pp less acceptance than the same honest answers.
func TestGateHonesty(t *testing.T) {
	gs := loadGates(t)
	honest := run(t, gs, cond(keyword))
	t.Logf("honest:      %v", honest)
	check := func(name string, s summary) {
		t.Logf("%-12s %v", name+":", s)
		if s.accept > honest.accept-0.20 {
			t.Errorf("%s: %v, want at least 20 pp below honest %v", name, s, honest)
		}
	}
	check("fabricated", run(t, gs, cond(withFab)))
	for _, c := range cueOrder {
		check(c, run(t, gs, cond(withCue(c))))
	}
}

// TestGateEchoAndRepeat: quoting the persuadee's last reply plus a canned
// sentence gets at most 10 % acceptance; one message sent again and again
// gains nothing after its second use.
func TestGateEchoAndRepeat(t *testing.T) {
	gs := loadGates(t)
	echo := run(t, gs, echoScript)
	t.Logf("echo exploit: %v", echo)
	if echo.accept > 0.10 {
		t.Errorf("echo exploit: %v, want <= 10%% acceptance", echo)
	}
	pee := sim.New(sim.DefaultConfig())
	worst := math.Inf(-1)
	for _, g := range gs {
		msg := actLine(g.sc, 1) + " " + g.items[0].Answer
		for r := range rollouts {
			o := play(t, pee, g.sc, episode.Seed(11, g.sc.ID, r), func(k int, _ string) string {
				if k == 0 {
					return openQuestion
				}
				if k <= 9 {
					return msg
				}
				return ""
			})
			// beliefs[k] follows use k of msg (k >= 1); gains from use 3 on
			for k := 3; k < len(o.beliefs); k++ {
				worst = max(worst, o.beliefs[k]-o.beliefs[k-1])
			}
		}
	}
	t.Logf("repeated message: largest belief gain from its third use on %+.6f", worst)
	if worst > 0 {
		t.Errorf("a message repeated gains %+.6f after its second use, want <= 0", worst)
	}
}

// swapMarks turns '?' into '.' and '.' into '?'.
func swapMarks(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '?':
			return '.'
		case '.':
			return '?'
		}
		return r
	}, s)
}

// typo swaps two inner letters of the longest word (five letters or more)
// of each sentence: one typo per sentence.
func typo(s string) string {
	b := []byte(s)
	start := 0
	for i := 0; i <= len(b); i++ {
		if i < len(b) && b[i] != '.' && b[i] != '?' && b[i] != '!' {
			continue
		}
		bs, bl := -1, 0
		for j := start; j < i; {
			for j < i && !isLetter(b[j]) {
				j++
			}
			k := j
			for k < i && isLetter(b[k]) {
				k++
			}
			if k-j > bl {
				bs, bl = j, k-j
			}
			j = k
		}
		if bl >= 5 {
			b[bs+1], b[bs+2] = b[bs+2], b[bs+1]
		}
		start = i + 1
	}
	return string(b)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// TestGateSurfaceForm: swapping '?' and '.', and one typo per sentence,
// keep acceptance within 10 pp of the clean text.
func TestGateSurfaceForm(t *testing.T) {
	gs := loadGates(t)
	clean := run(t, gs, cond(keyword))
	marks := run(t, gs, func(g gateScenario) func(int, string) string { return transform(script(g, keyword), swapMarks) })
	typos := run(t, gs, func(g gateScenario) func(int, string) string { return transform(script(g, keyword), typo) })
	t.Logf("clean:    %v", clean)
	t.Logf("? <-> .:  %v", marks)
	t.Logf("typos:    %v", typos)
	for _, c := range []struct {
		name string
		s    summary
	}{{"? <-> .", marks}, {"typos", typos}} {
		if math.Abs(c.s.accept-clean.accept) > 0.10 {
			t.Errorf("%s: %v, more than 10 pp from clean %v", c.name, c.s, clean)
		}
	}
}

// TestGateMinimalPairs: from the same history, r_t of the better of two
// next turns is strictly higher (a tie counts as wrong) in at least 85 %
// of the pairs, over 12 kinds of pair on every gate concern; and adding a
// fabricated claim or a manipulation cue to an answer never raises r_t on
// its turn (pairs where it does not lower it are logged).
func TestGateMinimalPairs(t *testing.T) {
	gs := loadGates(t)
	pee := sim.New(sim.DefaultConfig())
	type kind struct {
		name          string
		better, worse func(g gateScenario, i int, last string) string
	}
	act := func(g gateScenario, i int) string { return actLine(g.sc, i+1) }
	honest := func(g gateScenario, i int, _ string) string { return act(g, i) + " " + g.items[i].Answer }
	kinds := []kind{
		{"answer vs dismissal", honest, func(g gateScenario, i int, _ string) string { return act(g, i) + " " + hostile(g, i) }},
		{"answer vs irrelevant mention", honest, func(g gateScenario, i int, _ string) string { return act(g, i) + " " + irrelevant(g, i) }},
		{"paraphrase vs no answer", func(g gateScenario, i int, _ string) string { return act(g, i) + " " + g.items[i].Paraphrase },
			func(g gateScenario, i int, _ string) string { return act(g, i) }},
		{"answer vs answer + fabrication", honest, func(g gateScenario, i int, l string) string { return honest(g, i, l) + " " + fabricated }},
		{"answer vs echo", honest, func(_ gateScenario, _ int, l string) string { return l + " " + canned }},
		{"answer vs acknowledgement only", honest, func(g gateScenario, i int, _ string) string {
			return act(g, i) + " I hear you, that's a fair point."
		}},
	}
	for _, c := range cueOrder {
		kinds = append(kinds, kind{"answer vs answer + " + c, honest, func(g gateScenario, i int, l string) string {
			return honest(g, i, l) + " " + cueLines[c]
		}})
	}
	right, total, raised := 0, 0, 0
	perKind := make([]int, len(kinds))
	perTotal := make([]int, len(kinds))
	for _, g := range gs {
		seed := episode.Seed(11, g.sc.ID, 0)
		for i := range g.items {
			// history: the open question, then keyword answers to the
			// concerns before i, each with a follow-up question
			prefix := func(k int, _ string) string {
				if k == 0 {
					return openQuestion
				}
				return actLine(g.sc, k) + " " + g.items[k-1].Answer + " " + followUp
			}
			for ki, kd := range kinds {
				rt := func(f func(gateScenario, int, string) string) (float64, bool) {
					o := play(t, pee, g.sc, seed, func(k int, last string) string {
						switch {
						case k < i+1:
							return prefix(k, last)
						case k == i+1:
							return f(g, i, last)
						}
						return ""
					})
					if len(o.dense) != i+2 {
						return 0, false // the history ended the episode
					}
					return o.dense[i+1], true
				}
				b, okb := rt(kd.better)
				w, okw := rt(kd.worse)
				if !okb || !okw {
					continue
				}
				total++
				perTotal[ki]++
				if strings.HasPrefix(kd.name, "answer vs answer + ") && w >= b {
					if w > b {
						raised++
					}
					t.Logf("%s, %s: %s: r_t %+.4f, honest %+.4f", g.sc.ID, g.items[i].Concern, kd.name, w, b)
				}
				if b > w {
					right++
					perKind[ki]++
				}
			}
		}
	}
	for ki, kd := range kinds {
		t.Logf("%-34s %3d / %3d", kd.name, perKind[ki], perTotal[ki])
	}
	share := float64(right) / float64(total)
	t.Logf("r_t orders %d of %d pairs correctly (%.1f%%); a fabrication or cue raised r_t in %d pairs", right, total, 100*share, raised)
	if total < 200 {
		t.Errorf("only %d pairs played, want >= 200", total)
	}
	if share < 0.85 {
		t.Errorf("r_t orders %.1f%% of minimal pairs correctly, want >= 85%%", 100*share)
	}
	if raised > 0 {
		t.Errorf("a fabrication or cue raised r_t on its turn in %d pairs, want none", raised)
	}
}

// TestGateActs: on natural, LLM-style persuader sentences with gold act
// labels (testdata/acts.jsonl, hand-labelled), the embedded reader's acts
// reach a macro-F1 of at least 0.8 over the five acts.
func TestGateActs(t *testing.T) {
	f, err := os.Open("testdata/acts.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tp, fp, fn [5]int
	n := 0
	names := []string{"diagnostic", "evidence", "plan", "commitment", "autonomy"}
	sc := bufio.NewScanner(f)
	all, err := scenario.Resolve("arena")
	if err != nil {
		t.Fatal(err)
	}
	for line := 1; sc.Scan(); line++ {
		var row struct {
			Text string   `json:"text"`
			Acts []string `json:"acts"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("testdata/acts.jsonl:%d: %v", line, err)
		}
		s, err := perception.NewEmbedded().Start(context.Background(), &all[0])
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Read(context.Background(), perception.Input{Transcript: []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: row.Text}}})
		if err != nil {
			t.Fatal(err)
		}
		n++
		for a, name := range names {
			gold := slices.Contains(row.Acts, name)
			got := p.Acts.Has(tagger.Act(a))
			switch {
			case gold && got:
				tp[a]++
			case got:
				fp[a]++
				t.Logf("line %d: %s: false %s", line, row.Text, name)
			case gold:
				fn[a]++
				t.Logf("line %d: %s: missed %s", line, row.Text, name)
			}
		}
	}
	macro := 0.0
	for a, name := range names {
		f1 := 2 * float64(tp[a]) / float64(2*tp[a]+fp[a]+fn[a])
		t.Logf("%-10s tp %3d fp %3d fn %3d F1 %.3f", name, tp[a], fp[a], fn[a], f1)
		macro += f1 / 5
	}
	t.Logf("%d sentences, macro-F1 %.3f", n, macro)
	if n < 100 {
		t.Errorf("%d sentences, want >= 100", n)
	}
	if macro < 0.8 {
		t.Errorf("macro-F1 %.3f, want >= 0.8", macro)
	}
}
