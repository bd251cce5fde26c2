package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"encoding/json"

	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/llm/fakeengine"
	"github.com/persuarena/persuarena/masp"
)

// Hand-made PPDPP records (ESConv is never vendored): emotion and seller
// description carry markers that must reach only the user's own prompt.
const (
	escRecords = `{"emotion_type": "zqxemo", "problem_type": "job crisis", "situation": "I lost my job last week and I cannot sleep.", "dialog": []}
{"emotion_type": "zqxemo", "problem_type": "breakup", "situation": "My partner left me and I feel lost.", "dialog": []}
`
	cbRecords = `{"item_name": "bike", "buyer_item_description": "A red road bike.", "buyer_price": 123, "seller_item_description": "ZQXSELLER my old road bike, new tyres.", "seller_price": 200, "dialog": []}
{"item_name": "desk", "buyer_item_description": "An oak desk.", "buyer_price": 60, "seller_item_description": "ZQXSELLER solid oak desk.", "seller_price": 100, "dialog": []}
`
)

var (
	listingRE   = regexp.MustCompile(`listed for sale online at \$(\d+)`)
	dollarRE    = regexp.MustCompile(`\$(\d+)`)
	latestUser  = regexp.MustCompile(`(?s)Latest exchange:\nAssistant: .*?\nUser: (.*?)\n\nQuestion`)
	lastPatient = regexp.MustCompile(`Patient: ([^\n]*)\n\nQuestion`)
	lastSeller  = regexp.MustCompile(`Seller: ([^\n]*)\n\nQuestion`)
)

// scriptedRoles answers every LLM role of the ESConv and CB protocols on
// the fake engine and records what the persuader and the users were shown.
type scriptedRoles struct {
	mu                 sync.Mutex
	persuader, userSys []string
}

func (s *scriptedRoles) handle(r fakeengine.Request) fakeengine.Reply {
	p := r.Prompt
	seed := 0
	if v, ok := r.Body["seed"].(float64); ok {
		seed = int(v)
	}
	sample := seed - 10 // the judge role's seed is 10, +1 per sample
	switch {
	case strings.Contains(p, "RATIONAL or NOT_RATIONAL"):
		// Yielding at once ("already", "Sure") is not rational.
		m := latestUser.FindStringSubmatch(p)
		if m != nil && (strings.Contains(m[1], "already") || strings.Contains(m[1], "Sure")) {
			return fakeengine.Reply{Text: "NOT_RATIONAL"}
		}
		return fakeengine.Reply{Text: "RATIONAL"}
	case strings.Contains(p, "has the patient's problem been solved"):
		// Three samples, averaged: "actually helps" / "a bit better" read
		// (0.5 + 0.5 + 1)/3 = 0.67 >= 0.5; a lukewarm "help" reads (0.5 -
		// 0.5 - 0.5)/3 < 0.5; anything else "same".
		last := ""
		if m := lastPatient.FindStringSubmatch(p); m != nil {
			last = m[1]
		}
		switch {
		case strings.Contains(last, "actually helps") || strings.Contains(last, "a bit better"):
			return fakeengine.Reply{Text: []string{"somewhat_better", "No, but the Patient feels better.", "Yes, the Patient's issue has been solved."}[sample%3]}
		case strings.Contains(last, "help"):
			return fakeengine.Reply{Text: []string{"somewhat_better", "same", "No, the Patient feels the same."}[sample%3]}
		}
		return fakeengine.Reply{Text: "same"}
	case strings.Contains(p, "have the buyer and the seller reached a deal"):
		last := ""
		if m := lastSeller.FindStringSubmatch(p); m != nil {
			last = m[1]
		}
		price := ""
		if m := dollarRE.FindStringSubmatch(last); m != nil {
			price = m[1]
		}
		switch {
		case strings.Contains(last, "Deal") || strings.Contains(last, "works for me"):
			return fakeengine.Reply{Text: []string{"They have reached a deal at $" + price + ".", "They have reached a deal at $" + price + ".", "<think>both agreed</think>Yes - they settled at $" + price + " in the end."}[sample%3]}
		case strings.Contains(last, "I can do"):
			// A counter-offer: one sample misreads it as a deal, but any
			// no-deal sample makes it no deal.
			return fakeengine.Reply{Text: []string{"They have reached a deal at $" + price + ".", "They have not reached a deal.", "They have not reached a deal."}[sample%3]}
		}
		return fakeengine.Reply{Text: "They have not reached a deal."}
	case strings.Contains(p, "Your goal: persuade them"):
		s.mu.Lock()
		s.persuader = append(s.persuader, p)
		s.mu.Unlock()
		t := strings.Count(p, "<|im_start|>assistant")
		if m := listingRE.FindStringSubmatch(p); m != nil { // the buyer
			t-- // its opening question is an assistant turn
			l, _ := strconv.ParseFloat(m[1], 64)
			switch t {
			case 1:
				return fakeengine.Reply{Text: fmt.Sprintf("Would you take $%g for it?", 0.75*l)}
			case 2:
				return fakeengine.Reply{Text: fmt.Sprintf("I can pay $%g in cash today and pick it up myself.", 0.75*l)}
			}
			return fakeengine.Reply{Text: fmt.Sprintf("Could we meet at $%g?", 0.85*l)}
		}
		switch t {
		case 1:
			return fakeengine.Reply{Text: "That sounds really hard. What has been weighing on you most?"}
		case 2:
			return fakeengine.Reply{Text: "Many people find a short walk helps with sleep; could you try one tomorrow?"}
		}
		return fakeengine.Reply{Text: "Would writing down one small step for tomorrow help?"}
	}
	if len(r.Messages) == 0 { // capability detection
		return fakeengine.DefaultHandler(r)
	}
	// A user: its turn is the number of user messages less the first
	// (the help-seeker's cue, the buyer's opening question).
	s.mu.Lock()
	s.userSys = append(s.userSys, r.Messages[0].Content)
	s.mu.Unlock()
	t := strings.Count(p, "<|im_start|>user") - 1
	soft := strings.Contains(p, "follow the supporter's lead") || strings.Contains(p, "accommodating seller")
	think := "<think>ZQXTHINK " + r.Messages[0].Content[:40] + "</think>"
	if strings.Contains(p, "emotional-support chat") {
		switch {
		case soft && t >= 2:
			return fakeengine.Reply{Text: think + "Yes, that helps. I feel a bit better already.\nDECISION: continue"}
		case soft:
			return fakeengine.Reply{Text: think + "Thanks for asking. It has been a lot.\nDECISION: continue"}
		case t == 1:
			return fakeengine.Reply{Text: think + "Everyone asks that.\nDECISION: continue"}
		case t == 2:
			return fakeengine.Reply{Text: think + "A walk might help, I suppose, but I doubt it.\nDECISION: continue"}
		}
		return fakeengine.Reply{Text: think + "Writing one step down is concrete. That actually helps.\nDECISION: continue"}
	}
	offer := ""
	if m := dollarRE.FindAllStringSubmatch(r.Messages[len(r.Messages)-1].Content, -1); m != nil {
		offer = m[len(m)-1][1]
	}
	switch {
	case soft:
		return fakeengine.Reply{Text: think + "Sure, $" + offer + " works for me.\nDECISION: accept"}
	case t == 1:
		return fakeengine.Reply{Text: think + "That is too low, it is in great shape.\nDECISION: continue"}
	case t == 2:
		return fakeengine.Reply{Text: think + "Cash and pickup help. I can do a bit more than $" + offer + ", though.\nDECISION: continue"}
	}
	return fakeengine.Reply{Text: think + "Deal at $" + offer + ".\nDECISION: accept"}
}

// masp eval --task esconv and --task cb with an LLM persuader, soft and
// hard LLM users (role variants), the sampled LLM success judges and the
// LLM rationality judge, end to end on the fake engine, on hand-designed
// dialogues:
//
//   - ESConv: the soft help-seeker feels better at turn 2, "already" (the
//     judge calls that NOT_RATIONAL: RCSR 0); the hard one only at turn 3,
//     after a lukewarm turn 2 whose samples average below 0.5 (RCSR 1).
//   - CB: the soft seller accepts the first offer, 0.75 of the listing
//     (utility (150 - 200)/(123 - 200) = 0.649 for the bike); the hard one
//     counters at turn 2 (one sample reads a deal, two no deal: no deal)
//     and closes at 0.85 of the listing at turn 3 (utility 0.390).
func TestMASPEvalESConvAndCBWithLLMs(t *testing.T) {
	roles := &scriptedRoles{}
	srv := fakeengine.New(llm.VLLM, fakeengine.WithHandler(roles.handle))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`backends:
  - name: fake
    base_url: %s
    engine: vllm
    model: %s
roles:
  per:
    backend: fake
  soft:
    backend: fake
    variant: soft
  hard:
    backend: fake
    variant: hard
  j:
    backend: fake
    sampling:
      seed: 10
`, srv.URL, srv.Model)
	cfgPath := filepath.Join(dir, "persuarena.yaml")
	esc, cb := filepath.Join(dir, "esc-test.txt"), filepath.Join(dir, "cb-test.txt")
	for path, body := range map[string]string{cfgPath: cfg, esc: escRecords, cb: cbRecords} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(task, from, dl string) string {
		t.Helper()
		out, err := runMASP(t, "masp", "eval", "--task", task, "--from", from, "--persuader", "llm:per", "--users", "llm:soft,llm:hard",
			"--config", cfgPath, "--success-judge", "llm:j", "--judge", "llm:j", "--resamples", "200", "--no-bdi", "--workers", "2", "--out", dl)
		if err != nil {
			t.Fatalf("%s: %v\n%s", task, err, out)
		}
		return out
	}

	escOut := filepath.Join(dir, "esc.jsonl")
	out := squeeze(run("esconv", esc, escOut))
	for _, want := range []string{"task esconv, 2 cases (esc-test.txt)",
		"llm:per llm:soft 2 1.000 [1.000, 1.000] 2.00 [2.00, 2.00] 0.000 [0.000, 0.000] 0.00 0",
		"llm:per llm:hard 2 1.000 [1.000, 1.000] 3.00 [3.00, 3.00] 1.000 [1.000, 1.000] 1.00 0",
		"llm:per 2 1.000 [1.000, 1.000] llm:soft 0.000 [0.000, 0.000] llm:soft"} {
		if !strings.Contains(out, want) {
			t.Errorf("esconv output lacks %q:\n%s", want, out)
		}
	}
	ds := readDialogues(t, escOut)
	if h := ds["llm:hard"][0]; len(h.Turns) != 3 || h.Turns[1].Score > 0 || math.Abs(h.Turns[1].Score-(-1.0/6)) > 1e-12 ||
		math.Abs(h.Turns[2].Score-2.0/3) > 1e-12 || strings.Join(h.Turns[2].Labels, ",") != "somewhat_better,somewhat_better,resolved" {
		t.Errorf("hard help-seeker: %+v", h.Turns)
	}

	cbOut := filepath.Join(dir, "cb.jsonl")
	out = squeeze(run("cb", cb, cbOut))
	for _, want := range []string{"task cb, 2 cases (cb-test.txt)",
		"llm:per llm:soft 2 1.000 [1.000, 1.000] 1.00 [1.00, 1.00] 0.000 [0.000, 0.000] -1.00 0",
		"llm:per llm:hard 2 1.000 [1.000, 1.000] 3.00 [3.00, 3.00] 1.000 [1.000, 1.000] 1.00 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("cb output lacks %q:\n%s", want, out)
		}
	}
	ds = readDialogues(t, cbOut)
	for _, tc := range []struct {
		user    string
		turn    int
		price   float64
		utility float64
	}{
		{"llm:soft", 1, 150, (150.0 - 200) / (123 - 200)},
		{"llm:hard", 3, 170, (170.0 - 200) / (123 - 200)},
	} {
		d := ds[tc.user][0]
		last := d.Turns[len(d.Turns)-1]
		if d.Case != "cb-test-0001" || d.SuccessTurn != tc.turn || last.Price == nil || *last.Price != tc.price || math.Abs(last.Score-tc.utility) > 1e-12 {
			t.Errorf("%s bike: success turn %d, last turn %+v; want turn %d at $%g, utility %.4f", tc.user, d.SuccessTurn, last, tc.turn, tc.price, tc.utility)
		}
	}
	if h := ds["llm:hard"][0].Turns[1]; h.Success || h.Score != masp.CBNoDealScore || strings.Join(h.Labels, ",") != "deal,no_deal,no_deal" {
		t.Errorf("counter-offer: %+v", h)
	}
	if d := ds["llm:hard"][1]; d.SuccessTurn != 3 || math.Abs(d.Turns[2].Score-(85.0-100)/(60-100)) > 1e-12 {
		t.Errorf("hard desk: %+v", d)
	}

	// What each side saw: the persuader never the hidden profile, the
	// framing, the users' reasoning or decision lines; each user its own
	// framing and variant, never the buyer's private price.
	for _, p := range roles.persuader {
		for _, bad := range []string{"zqxemo", "ZQXSELLER", "ZQXTHINK", "DECISION", "$140", "$70", "bottom line", "I want to feel less"} {
			if strings.Contains(p, bad) {
				t.Fatalf("persuader saw %q:\n%s", bad, p)
			}
		}
	}
	var sawSoftSeller, sawHardSupport bool
	for _, sys := range roles.userSys {
		if strings.Contains(sys, "$123") || strings.Contains(sys, "$60") {
			t.Fatalf("seller saw the buyer's price:\n%s", sys)
		}
		if strings.Contains(sys, "negotiating the price") {
			if !strings.Contains(sys, "ZQXSELLER") || !(strings.Contains(sys, "you will not sell for less than $140") || strings.Contains(sys, "you will not sell for less than $70")) {
				t.Errorf("seller prompt lacks its profile or bottom line:\n%s", sys)
			}
			sawSoftSeller = sawSoftSeller || strings.Contains(sys, "accommodating seller")
		}
		if strings.Contains(sys, "emotional-support chat") {
			if !strings.Contains(sys, "You feel zqxemo about") || !strings.Contains(sys, `"accept" once you feel clearly better`) {
				t.Errorf("help-seeker prompt:\n%s", sys)
			}
			sawHardSupport = sawHardSupport || strings.Contains(sys, "You are hard to reach")
		}
	}
	if !sawSoftSeller || !sawHardSupport {
		t.Errorf("variants not in the prompts: soft seller %v, hard help-seeker %v", sawSoftSeller, sawHardSupport)
	}
}

// readDialogues reads masp eval --out, by user, in file order.
func readDialogues(t *testing.T, path string) map[string][]masp.Dialogue {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]masp.Dialogue{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var d masp.Dialogue
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		out[d.User] = append(out[d.User], d)
	}
	return out
}
