package tagger

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 5e-4 }

func TestAgreementHandComputed(t *testing.T) {
	units := []LabelledUnit{
		{Text: "What worries you?", Gold: acts(D), Labels: []string{"personal-related-inquiry"}},
		{Text: "What concerns you most?", Gold: acts(D), Labels: []string{"task-related-inquiry"}},
		{Text: "What matters to you?", Labels: []string{"other"}},
		{Text: "Hello.", Labels: []string{"greeting", "greeting"}},
	}
	r := Agreement(units)
	d := r.Acts[Diagnostic]
	// TP 2, FP 1, FN 0, TN 1: po = 3/4, pe = 3/4*1/2 + 1/4*1/2 = 1/2,
	// kappa = (3/4 - 1/2)/(1 - 1/2) = 1/2; P = 2/3, R = 1, F1 = 4/5.
	if d.TP != 2 || d.FP != 1 || d.FN != 0 || d.TN != 1 {
		t.Fatalf("diagnostic table %+v", d)
	}
	if !near(d.Precision, 2.0/3) || !near(d.Recall, 1) || !near(d.F1, 0.8) || !near(d.Kappa, 0.5) {
		t.Errorf("diagnostic rates %+v", d)
	}
	e := r.Acts[Evidence]
	if e.TN != 4 || !math.IsNaN(e.Precision) || !math.IsNaN(e.Recall) || !math.IsNaN(e.F1) || !math.IsNaN(e.Kappa) {
		t.Errorf("evidence with no positives: %+v", e)
	}
	if r.Units != 4 || len(r.Labels) != 4 || r.Labels[0].Label != "greeting" || r.Labels[0].Units != 1 {
		t.Errorf("labels %+v", r.Labels)
	}
	var b strings.Builder
	if err := r.Format(&b); err != nil || !strings.Contains(b.String(), "diagnostic       2      1      0      1     0.667  1.000  0.800  0.500") {
		t.Errorf("Format: %v\n%s", err, b.String())
	}
}

func TestKappaOpposite(t *testing.T) {
	// Perfect disagreement on a balanced table: kappa = -1.
	if k := kappa(0, 2, 2, 0); !near(k, -1) {
		t.Errorf("kappa = %v", k)
	}
	if k := kappa(3, 0, 0, 5); !near(k, 1) {
		t.Errorf("kappa = %v", k)
	}
}

func TestP4GAct(t *testing.T) {
	for label, want := range map[string]Act{
		"personal-related-inquiry": Diagnostic, "Non-Personal-Task-related-inquiry": Diagnostic,
		"credibility-appeal": Evidence, "donation-information": Plan, "foot-in-the-door": Commitment,
	} {
		if a, ok := P4GAct(label); !ok || a != want {
			t.Errorf("P4GAct(%q) = %v, %v", label, a, ok)
		}
	}
	for _, l := range []string{"emotion-appeal", "personal-story", "self-modeling", "greeting", "other", ""} {
		if _, ok := P4GAct(l); ok {
			t.Errorf("P4GAct(%q) mapped", l)
		}
	}
	if n := len(P4GLabels()); n != 13 {
		t.Errorf("P4GLabels: %d", n)
	}
}

func TestReadP4GErrors(t *testing.T) {
	good := ",B2,B4,Turn,Unit,er_label_1,ee_label_1,er_label_2,ee_label_2\n" +
		"0,d1,0,0,Hello.,greeting,,,\n" +
		"1,d1,1,0,Hi!,,greeting,,\n" +
		"2,d1,0,1,\"Would you be willing to donate, say $1?\",proposition-of-donation,,foot-in-the-door,\n"
	units, err := ReadP4G(strings.NewReader(good), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 2 || units[1].Ref != "x.csv:4" || units[1].Gold != acts(C) || len(units[1].Labels) != 2 {
		t.Fatalf("units %+v", units)
	}
	for _, c := range []struct{ in, want string }{
		{"", "x.csv: empty file"},
		{"B4,Unit,er_label_1\n", `x.csv:1: header lacks field "er_label_2"`},
		{"B4,Unit,er_label_1,er_label_2\n0,a\n", `x.csv:2: field "er_label_1" missing`},
		{"B4,Unit,er_label_1,er_label_2\nX,a,b,c\n", `x.csv:2: field "B4": role "X"`},
		{"B4,Unit,er_label_1,er_label_2\n0,\"a,b,c\n", "x.csv: parse error on line 2"},
	} {
		_, err := ReadP4G(strings.NewReader(c.in), "x.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadP4G(%q) error %v, want %q", c.in, err, c.want)
		}
	}
}

// TestAgreementP4G pins the figures recorded in docs/tagger.md for the 300
// annotated PersuasionForGood dialogues (persuader units of
// 300_dialog.csv). Regenerate with `persuarena tag agreement --from DIR`.
func TestAgreementP4G(t *testing.T) {
	needP4G(t)
	f, err := os.Open(filepath.Join(p4gDir, "300_dialog.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	units, err := ReadP4G(f, "300_dialog.csv")
	if err != nil {
		t.Fatal(err)
	}
	r := Agreement(units)
	want := [NumActs]struct {
		tp, fp, fn, tn int
		p, r, f1, k    float64
	}{
		{90, 50, 461, 5416, 0.6429, 0.1633, 0.2605, 0.2320},
		{106, 130, 1447, 4334, 0.4492, 0.0683, 0.1185, 0.0541},
		{2, 7, 489, 5519, 0.2222, 0.0041, 0.0080, 0.0051},
		{293, 48, 397, 5279, 0.8592, 0.4246, 0.5684, 0.5330},
		{0, 19, 0, 5998, 0.000, math.NaN(), 0.000, 0.000},
	}
	if r.Units != 6017 {
		t.Errorf("units = %d, want 6017", r.Units)
	}
	for a, w := range want {
		g := r.Acts[a]
		if g.TP != w.tp || g.FP != w.fp || g.FN != w.fn || g.TN != w.tn {
			t.Errorf("%v: TP/FP/FN/TN = %d/%d/%d/%d, want %d/%d/%d/%d", Act(a), g.TP, g.FP, g.FN, g.TN, w.tp, w.fp, w.fn, w.tn)
		}
		for i, pair := range [][2]float64{{g.Precision, w.p}, {g.Recall, w.r}, {g.F1, w.f1}, {g.Kappa, w.k}} {
			if math.IsNaN(pair[1]) {
				if !math.IsNaN(pair[0]) {
					t.Errorf("%v rate %d = %v, want NaN", Act(a), i, pair[0])
				}
			} else if !near(pair[0], pair[1]) {
				t.Errorf("%v rate %d = %.4f, want %.3f", Act(a), i, pair[0], pair[1])
			}
		}
	}
}
