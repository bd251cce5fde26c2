package maspdata

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

func dataPath(t *testing.T, name string) string {
	t.Helper()
	return cidata.Require(t, filepath.Join("..", "..", "shared", "data", "ppdpp", name))
}

func TestReadCBErrors(t *testing.T) {
	in := strings.Join([]string{
		`{"item_name":"bike","buyer_item_description":"a","buyer_price":50,"seller_item_description":"b","seller_price":100,"dialog":[{"speaker":"usr","text":"hi","strategy":"greet"}]}`,
		`{"item_name":"bike","buyer_price":50,"seller_item_description":"b","dialog":[]}`,
		`{"item_name":"","buyer_price":50,"seller_price":100,"dialog":[]}`,
		`{"item_name":"lamp","buyer_price":80,"seller_price":80,"dialog":[]}`,
		`{"item_name":"lamp","buyer_price":80,"seller_price":90,"dialog":[{"speaker":"bot","text":"x"}]}`,
		`{"item_name":"lamp","price":80}`,
		`[1,2]`,
	}, "\n")
	_, err := ReadCB("cb.txt", strings.NewReader(in))
	if err == nil {
		t.Fatal("bad file accepted")
	}
	for _, want := range []string{
		"cb.txt:2: seller_price: missing",
		"cb.txt:3: item_name: missing or empty",
		"cb.txt:4: buyer_price: equals seller_price 80",
		`cb.txt:5: dialog[0].speaker: "bot" is neither usr nor sys`,
		`cb.txt:6: (json): json: unknown field "price"`,
		"cb.txt:7: (json)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "cb.txt:1:") {
		t.Errorf("good line reported: %v", err)
	}
	recs, err := ReadCB("ok.txt", strings.NewReader(strings.SplitN(in, "\n", 2)[0]+"\n\n"))
	if err != nil || len(recs) != 1 || recs[0].BuyerPrice != 50 || recs[0].Dialog[0].Strategy != "greet" {
		t.Errorf("good line: %+v %v", recs, err)
	}
}

func TestReadESConvErrors(t *testing.T) {
	in := `{"emotion_type":"anxiety","problem_type":"job crisis","situation":"s","dialog":[{"speaker":"sys","text":"hi"}]}
{"emotion_type":"anxiety","problem_type":"","situation":"s","dialog":[]}
{"emotion_type":"anxiety","problem_type":"p","dialog":[]}`
	_, err := ReadESConv("esc.txt", strings.NewReader(in))
	for _, want := range []string{"esc.txt:2: problem_type: missing or empty", "esc.txt:3: situation: missing or empty"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestSplitOf(t *testing.T) {
	for path, want := range map[string]scenario.Split{"/x/cb-test.txt": scenario.Heldout, "esc-valid.txt": scenario.Val, "cb-train.txt": scenario.Train} {
		if got := SplitOf(path); got != want {
			t.Errorf("SplitOf(%s) = %s", path, got)
		}
	}
	if Prefix("/a/b/cb-test.txt") != "cb-test" {
		t.Error(Prefix("/a/b/cb-test.txt"))
	}
}

// The real PPDPP test splits: 188 CraigslistBargain and 130 ESConv
// dialogues; the first records' values; every converted scenario passes
// the scenario schema and checks.
func TestRealFiles(t *testing.T) {
	cbPath := dataPath(t, "cb-test.txt")
	cases, err := LoadCases(bdi.CB, cbPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 188 {
		t.Fatalf("%d CB cases, want 188", len(cases))
	}
	c := cases[0]
	if c.ID != "cb-test-0001" || c.BuyerPrice != 3100 || c.SellerPrice != 6200 || c.Scenario.Split != scenario.Heldout ||
		c.Opening[1].Text != "Hi! It's a good car, and the price is $6200." || c.Opening[0].Speaker != episode.PersuaderSpeaker ||
		c.Item != "car" || c.SellerBottom != 4340 {
		t.Errorf("first CB case %+v", c)
	}
	ss := make([]scenario.Scenario, len(cases))
	for i, c := range cases {
		ss[i] = *c.Scenario
	}
	if err := scenario.Validate("cb", ss); err != nil {
		t.Fatalf("CB scenarios invalid: %v", err)
	}

	escPath := dataPath(t, "esc-test.txt")
	ecases, err := LoadCases(bdi.ESConv, escPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(ecases) != 130 {
		t.Fatalf("%d ESConv cases, want 130", len(ecases))
	}
	e := ecases[0]
	if e.Emotion != "depression" || e.Problem != "sleep problems" || !strings.HasPrefix(e.Opening[0].Text, "Stress induced by a multitude") ||
		e.Opening[0].Speaker != episode.PersuadeeSpeaker || e.Task != bdi.ESConv {
		t.Errorf("first ESConv case %+v", e)
	}
	ss = ss[:0]
	for _, c := range ecases {
		ss = append(ss, *c.Scenario)
	}
	if err := scenario.Validate("esc", ss); err != nil {
		t.Fatalf("ESConv scenarios invalid: %v", err)
	}
	if _, err := LoadCases(bdi.P4G, cbPath); err == nil {
		t.Error("P4G accepted")
	}

	// Both protocols run end to end against the simulator (a smoke test:
	// the simulator is a persuasion model, not a seller or help-seeker).
	per, _ := baseline.New("script")
	for _, cs := range []*masp.Case{cases[0], ecases[0]} {
		d, err := masp.Play(context.Background(), masp.Config{Success: masp.SimSuccessJudge{}, Rationality: masp.SimRationalityJudge{}, Mind: &masp.Mind{}},
			cs, per, sim.New(sim.DefaultConfig()), 3)
		if err != nil || d.Error != "" || len(d.Turns) == 0 || d.Initial == nil {
			t.Fatalf("%s: %v %+v", cs.ID, err, d)
		}
	}
}
