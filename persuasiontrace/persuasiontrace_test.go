package persuasiontrace

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/scenario"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// The hand-made fixture under testdata/rounds, in the upstream exporter's
// format: cond-a/2026-01-26.jsonl holds a persuasion round (person 7), a
// round without messages and a control round (person 8);
// nested/deeper/b.json a persuasion round of person 7 again (its id given
// as a string), a round without serial reports and a mouse-trace round;
// notes.txt is not a round file.
func TestImportFixture(t *testing.T) {
	rs, sum, err := Import(filepath.Join("testdata", "rounds"))
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Dir: filepath.Join("testdata", "rounds"), Files: 2, Read: 6,
		Skipped:    map[string]int{SkipNoMessages: 1, SkipNoReports: 1, SkipMeasure: 1},
		Persuasion: 2, Control: 1, People: 2, PersuasionPeople: 1, ControlPeople: 1,
		// 2 serial + final, final only (control), 2 serial + final.
		Reports: 7}
	if sum.Dir != want.Dir || sum.Files != want.Files || sum.Read != want.Read || sum.Persuasion != want.Persuasion ||
		sum.Control != want.Control || sum.People != want.People || sum.PersuasionPeople != want.PersuasionPeople ||
		sum.ControlPeople != want.ControlPeople || sum.Reports != want.Reports || len(sum.Skipped) != 3 ||
		sum.Skipped[SkipNoMessages] != 1 || sum.Skipped[SkipNoReports] != 1 || sum.Skipped[SkipMeasure] != 1 {
		t.Errorf("summary %+v, want %+v", *sum, want)
	}
	if len(rs) != 3 {
		t.Fatalf("%d rounds, want 3", len(rs))
	}
	ids := []string{rs[0].ID, rs[1].ID, rs[2].ID}
	if !slices.Equal(ids, []string{"pt-cond-a-2026-01-26-000", "pt-cond-a-2026-01-26-002", "pt-nested-deeper-b-000"}) {
		t.Errorf("ids %v", ids)
	}
	type rep = Report
	cases := []struct {
		r                 Round
		file              string
		line, index       int
		person            string
		start, shift      float64
		reports           []rep
		traj              []float64
		persuader         int
		control, personal bool
		resistance        scenario.Resistance
		stance            float64
		proposal          string
		split             scenario.Split
		topic             []string
		moved             bool
		turnLimit         int
	}{
		// Supports the proposition: beliefs as reported. Start 0.3 is 0.2
		// from the middle, a debate claim: EB.
		{r: rs[0], file: "cond-a/2026-01-26.jsonl", line: 2, index: 0, person: "7", start: 0.3, shift: 0.3,
			reports: []rep{{1, 0.4, false}, {2, 0.55, false}, {3, 0.6, true}}, traj: []float64{0.1, 0.15}, persuader: 3,
			resistance: scenario.EntrenchedBelief, stance: -0.4, proposal: `Come to agree with the statement "Cities should ban cars from downtown streets.".`,
			split: scenario.Train, topic: []string{"cities", "cars", "downtown", "streets"}, moved: true, turnLimit: 4},
		// Control, against the proposition: start 1 - 0.45 = 0.55 (AA),
		// final 0.65; the serial report (0.9) is on "Dogs are better than
		// cats." and is left out. The shift 0.65 - 0.55 is 0.1 up to
		// rounding: not more than 0.1.
		{r: rs[1], file: "cond-a/2026-01-26.jsonl", line: 8, index: 2, person: "8", start: 0.55, shift: 0.1,
			reports: []rep{{2, 0.65, true}}, traj: nil, persuader: 2, control: true, personal: true,
			resistance: scenario.AmbivalentAvoidance, stance: 0.1, proposal: `Come to disagree with the statement "I should learn to play the piano this year.".`,
			split: scenario.Val, topic: []string{"learn", "play", "piano", "year"}},
		// Against, the participant's own proposition: start 0.2 (AR).
		{r: rs[2], file: "nested/deeper/b.json", line: 2, index: 0, person: "7", start: 0.2, shift: 0.3,
			reports: []rep{{1, 0.3, false}, {2, 0.4, false}, {3, 0.5, true}}, traj: []float64{0.1, 0.1}, persuader: 3, personal: true,
			resistance: scenario.AutonomyResistance, stance: -0.6, proposal: `Come to disagree with the statement "I should move to a new apartment next month.".`,
			split: scenario.Train, topic: []string{"move", "apartment", "month"}, moved: true, turnLimit: 10},
	}
	for _, c := range cases {
		r := c.r
		if r.File != c.file || r.Line != c.line || r.Index != c.index || r.Person != c.person || r.Control != c.control || r.Personal != c.personal || r.TurnLimit != c.turnLimit {
			t.Errorf("%s: file %s line %d index %d person %s control %v personal %v turn limit %d", r.ID, r.File, r.Line, r.Index, r.Person, r.Control, r.Personal, r.TurnLimit)
		}
		if !near(r.Start(), c.start) || !near(r.Shift(), c.shift) || Moved(r.Shift()) != c.moved {
			t.Errorf("%s: start %v shift %v moved %v", r.ID, r.Start(), r.Shift(), Moved(r.Shift()))
		}
		got := r.Reports()
		if len(got) != len(c.reports) {
			t.Errorf("%s: reports %v, want %v", r.ID, got, c.reports)
		} else {
			for k := range got {
				if got[k].Position != c.reports[k].Position || got[k].Final != c.reports[k].Final || !near(got[k].Belief, c.reports[k].Belief) {
					t.Errorf("%s: report %d %+v, want %+v", r.ID, k, got[k], c.reports[k])
				}
			}
		}
		tr := r.Trajectory()
		if len(tr) != len(c.traj) {
			t.Errorf("%s: trajectory %v, want %v", r.ID, tr, c.traj)
		}
		for k := range min(len(tr), len(c.traj)) {
			if !near(tr[k], c.traj[k]) {
				t.Errorf("%s: trajectory %v, want %v", r.ID, tr, c.traj)
			}
		}
		sc := r.Scenario()
		if sc.ID != r.ID || sc.Family != scenario.Debate || sc.Hidden.Resistance != c.resistance || !near(sc.Hidden.InitialStance, c.stance) ||
			sc.Proposal != c.proposal || sc.Split != c.split || len(sc.Outcome.PersuaderUtterances) != c.persuader || sc.Outcome.Turns != c.persuader ||
			!slices.Equal(sc.Hidden.Concerns[2].Keywords, c.topic) || len(sc.Hidden.Concerns) != 3 {
			t.Errorf("%s: scenario %+v", r.ID, sc)
		}
	}
	if u := rs[0].Scenario().Outcome.PersuaderUtterances; u[1] != "Deliveries run at night, as in Ghent, and shops gained customers." {
		t.Errorf("utterance 1 %q", u[1])
	}
	if rs[1].Topic != "Dogs are better than cats." || !near(rs[1].Serial[0], 0.9) {
		t.Errorf("control topic %q serial %v", rs[1].Topic, rs[1].Serial)
	}
	if p := rs[2].Scenario().Provenance; p.Ref != "file=nested/deeper/b.json round=0 person=7" || p.License != "MIT" {
		t.Errorf("provenance %+v", p)
	}
	if err := scenario.Validate("fixture", Scenarios(rs)); err != nil {
		t.Error(err)
	}
}

func TestImportErrors(t *testing.T) {
	round := func(over string) string {
		return `[
{"proposition": "P is true.", "target_initial_belief": 0.5, "target_final_belief": 0.5, "persuader_supports_proposition": true, "human_target_id": 1,
 "condition": {"continuous_measure": "serial-questions"}, "messages": [{"role": "persuader", "content": "a"}, {"role": "target", "content": "b"}, {"role": "persuader", "content": "c"}],
 "serial_questions": [0.5]` + over + `}
]`
	}
	for _, c := range []struct{ name, body, want string }{
		{"array", `{"proposition": "x"}`, "x.jsonl:1: want a JSON array of rounds"},
		{"serial range", round(`, "serial_questions": [1.5]`), "x.jsonl:2: round 0: serial_questions[0]: 1.5 outside [0, 1]"},
		{"final missing", round(`, "target_final_belief": null`), "x.jsonl:2: round 0: target_final_belief: missing"},
		{"person", round(`, "human_target_id": null`), "x.jsonl:2: round 0: human_target_id: missing"},
		{"side", round(`, "persuader_supports_proposition": null`), "x.jsonl:2: round 0: persuader_supports_proposition: missing"},
		{"role", round(`, "messages": [{"role": "judge", "content": "a"}]`), `x.jsonl:2: round 0: messages[0].role: "judge"`},
		{"too many reports", round(`, "serial_questions": [0.5, 0.6]`), "x.jsonl:2: round 0: serial_questions: 2 reports for 1 replies and 2 persuader messages"},
		{"truncated", `[{"proposition": "x"`, "x.jsonl:1: round 0: unexpected EOF"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := Import(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	var fe *FieldError
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(round(`, "target_initial_belief": -0.1`)), 0o644)
	if _, _, err := Import(dir); !errors.As(err, &fe) || fe.Field != "target_initial_belief" || fe.Line != 2 {
		t.Errorf("field error %v", err)
	}
	// x.json and x.jsonl would both give pt-x-000.
	dir = t.TempDir()
	for _, name := range []string{"x.json", "x.jsonl"} {
		os.WriteFile(filepath.Join(dir, name), []byte(round("")), 0o644)
	}
	if _, _, err := Import(dir); err == nil || !strings.Contains(err.Error(), "x.json and x.jsonl both give round id pt-x-000") {
		t.Errorf("duplicate ids: %v", err)
	}
	if _, _, err := Import(t.TempDir()); !errors.Is(err, ErrNoRounds) {
		t.Errorf("empty dir: %v", err)
	}
}

func TestResistanceAndTopic(t *testing.T) {
	for _, c := range []struct {
		start    float64
		personal bool
		want     scenario.Resistance
	}{
		{0.35, false, scenario.AmbivalentAvoidance}, {0.65, true, scenario.AmbivalentAvoidance},
		{0.34, true, scenario.AutonomyResistance}, {0.9, false, scenario.EntrenchedBelief}, {0, false, scenario.EntrenchedBelief},
	} {
		if got := Resistance(c.start, c.personal); got != c.want {
			t.Errorf("Resistance(%v, %v) = %s, want %s", c.start, c.personal, got, c.want)
		}
	}
	if got := TopicKeywords("The U.S. government's budget should fund NASA's Mars missions, and Mars rovers more than ever."); !slices.Equal(got, []string{"governments", "budget", "fund", "nasas", "mars", "missions"}) {
		t.Errorf("topic keywords %v", got)
	}
	if got := Concerns("Is it so?")[2].Keywords; !slices.Equal(got, []string{"reason"}) {
		t.Errorf("fallback keywords %v", got)
	}
}

// dataDir is the shared PersuasionTrace copy beside the repository (CI
// copies shared/ next to the clone, as for package p4g's tests).
var dataDir = filepath.Join("..", "..", "shared", "data", "persuasiontrace")

// TestImportRealData pins the importer's counts and the people's figures
// on the 345 rounds given, against the reference figures (272 persuasion rounds with
// reports, 58 control; mean shift +0.135, 41.2 % moved > 0.1, constant
// MAE 0.220; control +0.065, 22.4 %).
func TestImportRealData(t *testing.T) {
	if _, err := os.Stat(filepath.Join(dataDir, "results")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PersuasionTrace data not available at %s under CI: %v", dataDir, err)
		}
		t.Skipf("PersuasionTrace data not available at %s: %v", dataDir, err)
	}
	rs, sum, err := Import(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files != 15 || sum.Read != 345 || sum.Persuasion != 272 || sum.Control != 58 || sum.People != 194 ||
		sum.PersuasionPeople != 163 || sum.ControlPeople != 48 || sum.Reports != 1149 ||
		sum.Skipped[SkipNoMessages] != 5 || sum.Skipped[SkipNoReports] != 10 || len(sum.Skipped) != 2 {
		t.Errorf("summary %+v", *sum)
	}
	type agg struct {
		n, moved   int
		shift, mae float64
		reports    int
	}
	var arms [2]agg
	mix := map[scenario.Resistance]int{}
	for i := range rs {
		r := &rs[i]
		a := &arms[0]
		if r.Control {
			a = &arms[1]
		}
		a.n++
		a.shift += r.Shift()
		if Moved(r.Shift()) {
			a.moved++
		}
		var e float64
		for _, rp := range r.Reports() {
			e += math.Abs(rp.Belief - r.Start())
		}
		a.mae += e / float64(len(r.Reports()))
		a.reports += len(r.Reports())
		mix[r.Scenario().Hidden.Resistance]++
	}
	p, c := arms[0], arms[1]
	if p.n != 272 || p.moved != 112 || p.reports != 1091 || math.Abs(p.shift/272-0.13536) > 5e-6 || math.Abs(p.mae/272-0.22004) > 5e-6 {
		t.Errorf("persuasion: %d rounds, %d moved, %d reports, shift %.5f, constant MAE %.5f", p.n, p.moved, p.reports, p.shift/272, p.mae/272)
	}
	if c.n != 58 || c.moved != 13 || c.reports != 58 || math.Abs(c.shift/58-0.06450) > 5e-6 {
		t.Errorf("control: %d rounds, %d moved, %d reports, shift %.5f", c.n, c.moved, c.reports, c.shift/58)
	}
	if mix[scenario.EntrenchedBelief] != 183 || mix[scenario.AutonomyResistance] != 55 || mix[scenario.AmbivalentAvoidance] != 92 {
		t.Errorf("resistance mix %v", mix)
	}
	if err := scenario.Validate(dataDir, Scenarios(rs)); err != nil {
		t.Error(err)
	}
}

// A round with fewer serial reports than the replies that had one to give
// (every reply but one to the last persuader message) is skipped: upstream
// as_round leaves a reply without a report out of serial_questions, so
// which reply a report belongs to is no longer known. Here: three
// persuader messages, three replies, one report (two expected).
func TestImportSkipsAmbiguousPositions(t *testing.T) {
	body := `[
{"proposition": "P is true.", "target_initial_belief": 0.5, "target_final_belief": 0.6, "persuader_supports_proposition": true, "human_target_id": 1,
 "condition": {"continuous_measure": "serial-questions"},
 "messages": [{"role": "persuader", "content": "a"}, {"role": "target", "content": "b"}, {"role": "persuader", "content": "c"}, {"role": "target", "content": "d"}, {"role": "persuader", "content": "e"}, {"role": "target", "content": "f"}],
 "serial_questions": [0.7]},
{"proposition": "P is true.", "target_initial_belief": 0.5, "target_final_belief": 0.6, "persuader_supports_proposition": true, "human_target_id": 1,
 "condition": {"continuous_measure": "serial-questions"},
 "messages": [{"role": "persuader", "content": "a"}, {"role": "target", "content": "b"}, {"role": "persuader", "content": "c"}, {"role": "target", "content": "d"}, {"role": "persuader", "content": "e"}, {"role": "target", "content": "f"}],
 "serial_questions": [0.7, 0.8]}
]`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, sum, err := Import(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Index != 1 || sum.Read != 2 || sum.Skipped[SkipAmbiguous] != 1 {
		t.Fatalf("rounds %+v, summary %+v", rs, *sum)
	}
}
