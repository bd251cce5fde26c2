package persuhmm_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/persuhmm"
)

// A hand-made comparison of A and B on 4 tasks by two judges.
func TestWriteComparisonByHand(t *testing.T) {
	s := func(p, e, h float64) llmagent.DialogueScores {
		return llmagent.DialogueScores{Persuasiveness: p, Empathy: e, Helpfulness: h}
	}
	c := persuhmm.Comparison{
		Results: [2]persuhmm.Result{{Name: "A", Won: []bool{true, true, false, false}}, {Name: "B", Won: []bool{true, false, false, false}}},
		Judged: [][2]persuhmm.Judged{
			{{Persuader: "A", Judge: "j1", Won: []bool{true, true, true, false}, Scores: []llmagent.DialogueScores{s(5, 4, 3), s(4, 4, 3), s(3, 2, 1), s(2, 2, 1)}},
				{Persuader: "B", Judge: "j1", Won: []bool{false, false, false, false}, Scores: []llmagent.DialogueScores{s(1, 1, 1), s(2, 2, 2), s(3, 3, 3), s(4, 4, 4)}}},
			{{Persuader: "A", Judge: "j2", Won: []bool{true, false, false, false}, Scores: []llmagent.DialogueScores{s(5, 4, 3), s(4, 4, 3), s(3, 2, 1), s(2, 2, 1)}},
				{Persuader: "B", Judge: "j2", Won: []bool{false, false, false, false}, Scores: []llmagent.DialogueScores{s(1, 1, 1), s(2, 2, 2), s(3, 3, 3), s(4.5, 4, 4)}}},
		},
		// j1: A, A, tie, B; j2: A, tie, tie, B.
		Preferences: []persuhmm.Preference{{A: "A", B: "B", Judge: "j1", Labels: []int{1, 1, 0, -1}}, {A: "A", B: "B", Judge: "j2", Labels: []int{1, 0, 0, -1}}},
	}
	if w, ti, l := c.Preferences[0].Counts(); w != 2 || ti != 1 || l != 1 {
		t.Errorf("j1 counts %d/%d/%d", w, ti, l)
	}
	// Preference kappa, rows j1, columns j2 over lose, tie, win:
	// O = [[1 0 0] [0 1 0] [0 1 1]], rows (1, 1, 2), columns (1, 2, 1),
	// n = 4. sum w O = 1 (win/tie). E = row col / 4: [[.25 .5 .25]
	// [.25 .5 .25] [.5 1 .5]]; sum w E = .5 + 4*.25 + .25 + .25 + 4*.5 + 1
	// = 5. kappa_w = 1 - 1/5 = 0.8.
	if k, err := persuhmm.PreferenceKappa(c.Preferences[0], c.Preferences[1]); err != nil || math.Abs(k-0.8) > 1e-12 {
		t.Errorf("preference kappa %v, %v; want 0.8", k, err)
	}
	// Ratings: the judges agree everywhere but on B's last
	// persuasiveness, 4 against 4.5 (rounded to 5). Pooled persuasiveness,
	// j1 = 5 4 3 2 1 2 3 4, j2 = 5 4 3 2 1 2 3 5: rows over 1..5 (1 2 2 2
	// 1), columns (1 2 2 1 2), n = 8; sum w O = (4-5)^2 = 1; sum w E =
	// sum_ij (i-j)^2 row_i col_j / 8 = 216/8 = 27; kappa_w = 1 - 1/27 =
	// 26/27. Empathy and helpfulness agree fully: 1.
	rk, err := persuhmm.RatingKappa(c.Judged[0][:], c.Judged[1][:])
	if err != nil || math.Abs(rk[0]-26.0/27) > 1e-12 || rk[1] != 1 || rk[2] != 1 {
		t.Errorf("rating kappa %v, %v", rk, err)
	}
	var out bytes.Buffer
	if err := persuhmm.WriteComparison(&out, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| A | j1 | 0.500 (2/4) | 0.750 (3/4) | 3.50 | 3.00 | 2.00 | 0 |\n",
		"| B | j2 | 0.250 (1/4) | 0.000 (0/4) | 2.62 | 2.50 | 2.50 | 0 |\n",
		"| judge | A wins | ties | B wins |\n|---|---|---|---|\n| j1 | 2 | 1 | 1 |\n| j2 | 1 | 2 | 1 |\n",
		"quadratic-weighted kappa, j1 vs j2: preference 0.800, persuasiveness 0.963, empathy 1.000, helpfulness 1.000\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
