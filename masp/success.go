package masp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
)

// P4G success labels and their rewards (MASP paper, Appendix C.3).
var P4GRewards = map[string]float64{"refused": -1.0, "neutral": -0.5, "positive": 0.1, "agree": 1.0}

// ESConv success labels and their rewards (MASP paper, Appendix C.5).
var ESConvRewards = map[string]float64{"worse": -1.0, "same": -0.5, "somewhat_better": 0.5, "resolved": 1.0}

// CB labels.
const (
	Deal   = "deal"
	NoDeal = "no_deal"
)

// CBNoDealScore is the score of a no-deal outcome, PPDPP's -0.1 (env.py
// compute_reward; also the released MASP judge). It is below the success
// threshold 0, so a no-deal never succeeds.
const CBNoDealScore = -0.1

// SuccessRule holds the success thresholds of the three tasks.
type SuccessRule struct {
	// P4GThreshold: success when the mean label reward is >= it (paper,
	// Appendix C.3: 0.6), or > it when StrictP4G (released p4g_judge.py
	// uses reward > threshold).
	P4GThreshold float64
	StrictP4G    bool
	// ESConvThreshold: success when the mean reward is >= it (paper,
	// Appendix C.5: 0.5, so somewhat_better counts), or > it when
	// StrictESConv (PPDPP env.py and the released esconv_judge.py use >).
	ESConvThreshold float64
	StrictESConv    bool
	// CBThreshold: success when a deal's buyer utility is >= it (Appendix
	// C.7: 0).
	CBThreshold float64
}

// DefaultSuccessRule is the paper's rule: P4G mean >= 0.6, ESConv mean >=
// 0.5, CraigslistBargain utility >= 0.
var DefaultSuccessRule = SuccessRule{P4GThreshold: 0.6, ESConvThreshold: 0.5, CBThreshold: 0}

// Verdict is a success judge's reading of one accumulated dialogue.
type Verdict struct {
	// Labels holds one label per sample ("" for an unreadable sample).
	Labels []string
	// Score is the mean reward of the readable samples (P4G, ESConv; 0
	// when none is readable), or the buyer utility of the deal
	// (CraigslistBargain; CBNoDealScore for no deal, 0 when no price).
	Score float64
	// Success applies the task's threshold to Score (see SuccessRule).
	Success bool
	// Deal, Price and HasPrice are CraigslistBargain's deal reading.
	Deal     bool
	Price    float64
	HasPrice bool
}

// SuccessJudge decides after each exchange whether the task has succeeded,
// reading the whole accumulated dialogue (MASP paper, Appendix C.2). An error
// means no verdict could be had at all; the turn then counts as not
// successful.
type SuccessJudge interface {
	Success(ctx context.Context, ex *Exchange) (Verdict, error)
}

var (
	negBeforeRE = regexp.MustCompile(`(?:\bnot|\bno|\bnever|n't)\s+(?:\w+\s+){0,2}$`)
	refusedRE   = regexp.MustCompile(`\b(?:refus(?:ed|es|e|al)|declined?|rejected|won't donate|will not donate|not (?:going|willing) to donate)\b`)
	undecidedRE = regexp.MustCompile(`\b(?:undecided|(?:not|n't)\s+(?:yet\s+)?decided)\b`)
	agreeRE     = regexp.MustCompile(`\b(?:decided to donate|agree[sd]?|will donate|has donated|committed to donat\w*|pledged?)\b`)
)

// normLabelText lower-cases s, removes <think> blocks, maps typographic
// apostrophes and replaces a JSON object's "label" (or "answer") value for
// the whole text.
func normLabelText(s string) string {
	s = thinkRE.ReplaceAllString(s, " ")
	s = strings.ReplaceAll(s, "’", "'")
	if i := strings.IndexByte(s, '{'); i >= 0 {
		var obj map[string]any
		if j := strings.LastIndexByte(s, '}'); j > i && json.Unmarshal([]byte(s[i:j+1]), &obj) == nil {
			for _, k := range []string{"label", "answer", "outcome"} {
				if v, ok := obj[k].(string); ok {
					s = v
					break
				}
			}
		}
	}
	return strings.ToLower(s)
}

// notNegated reports whether the match at [i, ...) of s is not preceded by
// a negation within two words ("not", "no", "never", "n't").
func notNegated(s string, i int) bool { return !negBeforeRE.MatchString(s[:i]) }

// firstFree returns whether re matches s somewhere not negated.
func firstFree(re *regexp.Regexp, s string) bool {
	for _, m := range re.FindAllStringIndex(s, -1) {
		if notNegated(s, m[0]) {
			return true
		}
	}
	return false
}

// ParseP4GLabel reads one P4G success-judge answer into refused, neutral,
// positive or agree (MASP paper, Appendix C.3); ok is false when none can be
// read. It accepts the bare labels, the four answer sentences ("The
// persuadee has explicitly refused." ... "has decided to donate."), a JSON
// object's "label", and <think> blocks. Order of tests: refusal words
// first; then positive (the positive sentence also says "hasn't decided
// yet"); then "not decided"/"undecided" or "neutral" as neutral; then
// agreement ("decided to donate", "agree", "will donate", "pledge").
func ParseP4GLabel(s string) (string, bool) {
	t := normLabelText(s)
	switch {
	case firstFree(refusedRE, t):
		return "refused", true
	case strings.Contains(t, "positive"):
		return "positive", true
	case undecidedRE.MatchString(t) || strings.Contains(t, "neutral"):
		return "neutral", true
	case firstFree(agreeRE, t):
		return "agree", true
	}
	return "", false
}

var (
	solvedRE = regexp.MustCompile(`\b(?:re)?solved\b`)
	worseRE  = regexp.MustCompile(`\bworse\b`)
	betterRE = regexp.MustCompile(`\b(?:better|improved)\b`)
	sameRE   = regexp.MustCompile(`\b(?:same|unchanged|no change)\b`)
)

// ParseESConvLabel reads one ESConv success-judge answer into worse, same,
// somewhat_better or resolved (MASP paper, Appendix C.5); ok is false when
// none can be read. It accepts the bare labels (with "_", "-" or a
// space), the four answer sentences ("No, the Patient feels worse." ...
// "Yes, the Patient's issue has been solved."), a JSON "label" and <think>
// blocks. Tests, in order: "solved"/"resolved" not negated; "worse" not
// negated; "better"/"improved" not negated; "same"/"unchanged"/"no change"
// or a negated "better" ("not better", "no better").
//
// Note: PPDPP (env.py) takes the first of worse, same, better, solved
// found anywhere, so "has not been solved" counts as solved there; here it
// is unreadable unless another cue is present.
func ParseESConvLabel(s string) (string, bool) {
	t := strings.NewReplacer("_", " ", "-", " ").Replace(normLabelText(s))
	switch {
	case firstFree(solvedRE, t):
		return "resolved", true
	case firstFree(worseRE, t):
		return "worse", true
	case firstFree(betterRE, t):
		return "somewhat_better", true
	case sameRE.MatchString(t) || betterRE.MatchString(t):
		return "same", true
	}
	return "", false
}

var (
	noDealRE    = regexp.MustCompile(`\b(?:(?:have|has|had|did)\s*(?:not|n't)\s+(?:yet\s+)?(?:reach|reached|made|make|come|agreed)|not\s+(?:yet\s+)?(?:reached|agreed)|no\s+deal|no\s+agreement|without\s+(?:a\s+)?deal|walked\s+away|not\s+a\s+deal)`)
	dealRE      = regexp.MustCompile(`\b(?:reached\s+(?:a|an)\s+(?:deal|agreement)|have\s+a\s+deal|deal\s+(?:at|for|was)|agreed|settled|sold)\b`)
	amountRE    = regexp.MustCompile(`(\$\s*)?(\d+(?:\.\d+)?)(\s*k\b)?`)
	thousandsRE = regexp.MustCompile(`(\d),(\d{3})`)
	anchorRE    = regexp.MustCompile(`(?:deal|agreed|agreement|settled|sold)\s+(?:at|on|upon|for)\s+(?:a\s+(?:final\s+)?price\s+of\s+|the\s+price\s+of\s+)?$`)
)

// ExtractPrice returns the price a text names. Thousands separators
// ("1,200") are removed and a "k" suffix multiplies by 1,000. Preference:
// the first amount right after "deal at/for", "agreed at/on/upon",
// "settled at/on", "sold for" (optionally "a (final) price of"); else the
// last "$"-prefixed amount; else the last number. ok is false when the
// text has no number.
//
// Notes on earlier implementations: PPDPP (env.py) takes the first number
// in the judge's answer (regex [-+]?\d*\.?\d+ after removing commas), so
// "reached a deal at 150 after the seller asked 200" reads 150 there and
// here, but "the seller came down from 200 and they reached a deal at 150"
// reads 200 there; the released MASP judge takes the last number, which
// fails the first example. Neither handles "1.2k".
func ExtractPrice(s string) (float64, bool) {
	t := strings.ToLower(thinkRE.ReplaceAllString(s, " "))
	t = thousandsRE.ReplaceAllString(t, "$1$2")
	t = thousandsRE.ReplaceAllString(t, "$1$2") // 1,000,000: the second group
	ms := amountRE.FindAllStringSubmatchIndex(t, -1)
	if len(ms) == 0 {
		return 0, false
	}
	val := func(m []int) float64 {
		v, _ := strconv.ParseFloat(t[m[4]:m[5]], 64)
		if m[6] >= 0 {
			v *= 1000
		}
		return v
	}
	for _, m := range ms {
		if anchorRE.MatchString(t[:m[0]]) {
			return val(m), true
		}
	}
	for k := len(ms) - 1; k >= 0; k-- {
		if ms[k][2] >= 0 {
			return val(ms[k]), true
		}
	}
	return val(ms[len(ms)-1]), true
}

// ParseCBLabel reads one CraigslistBargain judge answer ("They have reached a
// deal at [price]." or "They have not reached a deal.", MASP paper, Appendix
// C.7) into Deal or NoDeal with the deal price when one is named; ok is false
// when neither reading applies. No-deal wording is tested first ("have not
// reached a deal" contains "reached a deal").
func ParseCBLabel(s string) (label string, price float64, hasPrice, ok bool) {
	t := normLabelText(s)
	switch {
	case noDealRE.MatchString(t):
		return NoDeal, 0, false, true
	case dealRE.MatchString(t):
		p, hp := ExtractPrice(t)
		return Deal, p, hp, true
	}
	return "", 0, false, false
}

// BuyerUtility returns (p_deal - p_seller) / (p_buyer - p_seller) (MASP
// paper, Appendix C.7; PPDPP env.py): 0 at the seller's listed price, 1 at
// the buyer's target, negative above the listing. It returns an error when
// the two targets are equal (undefined).
func BuyerUtility(deal, buyer, seller float64) (float64, error) {
	if buyer == seller {
		return 0, fmt.Errorf("masp: buyer utility undefined: buyer and seller prices are both %g", buyer)
	}
	return (deal - seller) / (buyer - seller), nil
}

// Aggregate turns the judge's sampled answers for one dialogue into a
// Verdict (MASP paper, Appendix C.3, C.5, C.7):
//
//   - P4G, ESConv: the mean reward of the readable samples, 0 when none
//     is readable (unreadable samples are skipped, as in PPDPP and the
//     released code); success by the rule's threshold.
//   - CB: any no-deal sample makes the outcome no deal (score -0.1);
//     otherwise the deal price is the most frequent price among the deal
//     samples (ties: the earliest), and the score its buyer utility for c's
//     buyer and seller prices; success when utility >= CBThreshold.
//     Choice: deal samples that name no price, or only unreadable samples,
//     give no success (PPDPP scores that case 0, which passes its >= 0
//     test); c == nil or equal prices give no success.
func (r SuccessRule) Aggregate(task bdi.Task, samples []string, c *Case) Verdict {
	v := Verdict{Labels: make([]string, len(samples))}
	switch task {
	case bdi.P4G, bdi.ESConv:
		parse, rewards, thr, strict := ParseP4GLabel, P4GRewards, r.P4GThreshold, r.StrictP4G
		if task == bdi.ESConv {
			parse, rewards, thr, strict = ParseESConvLabel, ESConvRewards, r.ESConvThreshold, r.StrictESConv
		}
		n, sum := 0, 0.0
		for i, s := range samples {
			if l, ok := parse(s); ok {
				v.Labels[i] = l
				sum += rewards[l]
				n++
			}
		}
		if n > 0 {
			v.Score = sum / float64(n)
			v.Success = v.Score >= thr && !(strict && v.Score == thr)
		}
	case bdi.CB:
		var prices []float64
		noDeal, deal := false, false
		for i, s := range samples {
			l, p, hp, ok := ParseCBLabel(s)
			if !ok {
				continue
			}
			v.Labels[i] = l
			if l == NoDeal {
				noDeal = true
				continue
			}
			deal = true
			if hp {
				prices = append(prices, p)
			}
		}
		switch {
		case noDeal:
			v.Score = CBNoDealScore
		case deal:
			v.Deal = true
			if p, ok := mode(prices); ok {
				v.Price, v.HasPrice = p, true
				if c != nil {
					if u, err := BuyerUtility(p, c.BuyerPrice, c.SellerPrice); err == nil {
						v.Score = u
						v.Success = u >= r.CBThreshold
					}
				}
			}
		}
	}
	return v
}

// mode returns the most frequent value (ties: the earliest); ok is false
// for no values.
func mode(xs []float64) (float64, bool) {
	best, bestN := 0.0, 0
	for i, x := range xs {
		n := 0
		for _, y := range xs[i:] {
			if y == x {
				n++
			}
		}
		if n > bestN {
			best, bestN = x, n
		}
	}
	return best, bestN > 0
}

// SimSuccessJudge is the rule-based success judge for persuadees with a
// decision protocol (the simulator): it maps the reply's decision to one
// label sample and aggregates it with Rule (zero Rule: DefaultSuccessRule).
//
//	P4G:    accept -> agree, conditional -> positive, continue -> neutral, reject -> refused
//	ESConv: accept -> resolved, conditional -> somewhat_better, continue -> same, reject -> worse
//	CB:     accept or conditional -> a deal at the last price named in the
//	        dialogue (ExtractPrice on the latest message that names one);
//	        continue or reject -> no deal
//
// Choice: with the paper's thresholds a P4G conditional (0.1) is not a
// success, an ESConv conditional (0.5) is.
type SimSuccessJudge struct{ Rule SuccessRule }

// Success implements SuccessJudge; it never fails.
func (j SimSuccessJudge) Success(_ context.Context, ex *Exchange) (Verdict, error) {
	rule := j.Rule
	if rule == (SuccessRule{}) {
		rule = DefaultSuccessRule
	}
	d := ex.Reply.Decision
	var label string
	switch ex.Case.Task {
	case bdi.P4G:
		label = map[decision.Decision]string{decision.Accept: "agree", decision.Conditional: "positive", decision.Continue: "neutral", decision.Reject: "refused"}[d]
	case bdi.ESConv:
		label = map[decision.Decision]string{decision.Accept: "resolved", decision.Conditional: "somewhat_better", decision.Continue: "same", decision.Reject: "worse"}[d]
	case bdi.CB:
		label = "They have not reached a deal."
		if d == decision.Accept || d == decision.Conditional {
			label = "They have reached a deal."
			for i := len(ex.History) - 1; i >= 0; i-- {
				if p, ok := ExtractPrice(ex.History[i].Text); ok {
					label = fmt.Sprintf("They have reached a deal at $%g.", p)
					break
				}
			}
		}
	default:
		return Verdict{}, fmt.Errorf("masp: no success rule for task %q", ex.Case.Task)
	}
	return rule.Aggregate(ex.Case.Task, []string{label}, ex.Case), nil
}

// LLMSuccessJudge asks an engine the task's success question Samples times
// and aggregates the answers with Rule (MASP paper, Appendix C.2-C.7; the
// paper samples three judgements). The prompts are the project's wording
// of the paper's: the conversation so far, then the question and its
// labels. A sample whose call fails counts as unreadable; if every call
// fails, Success returns the last error.
type LLMSuccessJudge struct {
	Engine llm.Chatter
	// Samples per verdict; <= 0 means 3.
	Samples int
	// Sampling; zero means temperature 1.0 and 48 tokens. Sampling.Seed,
	// when set, is incremented per sample.
	Sampling llm.Sampling
	Thinking *bool
	// Rule; zero means DefaultSuccessRule.
	Rule SuccessRule
}

// SuccessPrompt returns the success question for ex's task: the
// conversation (with the task's role names) and the labels to choose from.
func SuccessPrompt(ex *Exchange) string {
	sys, usr := "Assistant", "User"
	var q string
	switch ex.Case.Task {
	case bdi.P4G:
		sys, usr = "Persuader", "Persuadee"
		q = `Question: at the end of this conversation, has the persuadee been convinced to donate to Save the Children?
Answer with one label:
refused - the persuadee has clearly said no;
neutral - the persuadee is still neutral about donating;
positive - the persuadee feels positive about donating but has not decided;
agree - the persuadee has decided to donate.`
	case bdi.ESConv:
		sys, usr = "Therapist", "Patient"
		q = `Question: has the patient's problem been solved by the end of this conversation?
Answer with one label:
worse - the patient feels worse;
same - the patient feels the same;
somewhat_better - the patient feels better but the problem is not solved;
resolved - the patient's problem has been solved.`
	case bdi.CB:
		sys, usr = "Buyer", "Seller"
		q = `Question: have the buyer and the seller reached a deal by the end of this conversation?
If they have, answer exactly: They have reached a deal at [price].
If not, answer exactly: They have not reached a deal.`
	}
	var b strings.Builder
	if ex.Case.Task == bdi.ESConv && (ex.Case.Emotion != "" || ex.Case.Problem != "") {
		fmt.Fprintf(&b, "The patient feels %s about %s.\n", orDash(ex.Case.Emotion), orDash(ex.Case.Problem))
	}
	b.WriteString("Conversation:\n")
	for _, m := range ex.History {
		who := usr
		if m.Speaker == episode.PersuaderSpeaker {
			who = sys
		}
		fmt.Fprintf(&b, "%s: %s\n", who, strings.TrimSpace(m.Text))
	}
	b.WriteString("\n")
	b.WriteString(q)
	return b.String()
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "something"
	}
	return s
}

// Success implements SuccessJudge.
func (j *LLMSuccessJudge) Success(ctx context.Context, ex *Exchange) (Verdict, error) {
	n := j.Samples
	if n <= 0 {
		n = 3
	}
	rule := j.Rule
	if rule == (SuccessRule{}) {
		rule = DefaultSuccessRule
	}
	p := SuccessPrompt(ex)
	samples := make([]string, n)
	var lastErr error
	fails := 0
	for i := range n {
		sm := j.Sampling
		if sm.Temperature == nil {
			one := 1.0
			sm.Temperature = &one
		}
		if sm.MaxTokens <= 0 {
			sm.MaxTokens = 48
		}
		if sm.Seed != nil {
			s := *sm.Seed + int64(i)
			sm.Seed = &s
		}
		resp, err := j.Engine.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: p}}, Sampling: sm, Thinking: j.Thinking})
		if err != nil {
			lastErr = err
			fails++
			continue
		}
		samples[i] = resp.Content
	}
	if fails == n {
		return Verdict{}, lastErr
	}
	return rule.Aggregate(ex.Case.Task, samples, ex.Case), nil
}
