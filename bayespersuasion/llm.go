package bayespersuasion

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
)

// LikertQuestion is what an LLM receiver is asked, in a discarded fork,
// before the first turn and after the last.
const LikertQuestion = "On a scale from 1 (strongly disagree) to 7 (strongly agree), how much do you agree with the claim under discussion right now? Answer with one number from 1 to 7."

// asker is implemented by llmagent persuadee sessions (Ask).
type asker interface {
	Ask(ctx context.Context, transcript []episode.Message, question string) (string, episode.Usage, error)
}

// LLMReceiver is the ReceiverRole of an LLM persuadee from package
// llmagent: it plays the claim's Scenario (its hidden profile states the
// prior belief in words), is probed with Basis as usual, and is asked
// LikertQuestion before and after in discarded forks (ParseLikert reads
// the answers). Its belief over states after the episode is Project of
// its last probe belief (the prior when unreadable).
type LLMReceiver struct{ P *llmagent.Persuadee }

// Name is the persuadee's name.
func (r LLMReceiver) Name() string { return r.P.Name() }

// Bind implements ReceiverRole; the LLM does not see the world (it judges
// what it is told).
func (r LLMReceiver) Bind(c *Claim, _ World, _ int) BoundReceiver { return &boundLLM{p: r.P, c: c} }

type boundLLM struct {
	p    *llmagent.Persuadee
	c    *Claim
	sess episode.PersuadeeSession
}

func (b *boundLLM) Name() string { return b.p.Name() }

func (b *boundLLM) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	s, err := b.p.Start(ctx, sc, seed)
	b.sess = s
	return s, err
}

// Readout implements BoundReceiver. A Likert answer that does not parse
// gives 0 (no rating), not an error; an engine error is an error.
func (b *boundLLM) Readout(ctx context.Context, ep *episode.Episode) ([]float64, int, int, error) {
	post := b.c.Prior
	if bt, ok := ep.FinalBelief(); ok {
		post = b.c.Project(bt)
	}
	a, ok := b.sess.(asker)
	if !ok {
		return post, 0, 0, nil
	}
	tr := ep.Transcript()
	ans0, _, err := a.Ask(ctx, nil, LikertQuestion)
	if err != nil {
		return nil, 0, 0, err
	}
	ans1, _, err := a.Ask(ctx, tr, LikertQuestion)
	if err != nil {
		return nil, 0, 0, err
	}
	l0, _ := ParseLikert(ans0)
	l1, _ := ParseLikert(ans1)
	return post, l0, l1, nil
}

var (
	likertOutOf = regexp.MustCompile(`\b([1-7])\s*(?:/|out of|of)\s*7\b`)
	// likertScale matches the scale itself echoed from the question ("on a
	// scale of 1 to 7", "(1-7)", "from 1 to 7"), removed before the digit
	// search so its 1 is not read as the answer.
	likertScale   = regexp.MustCompile(`\b1\s*(?:-|–|to)\s*7\b`)
	likertNegated = regexp.MustCompile(`\b(?:don't|do not|doesn't|does not|can't|cannot|not)\s+agree\b`)
	likertDigit   = regexp.MustCompile(`(?:^|[^0-9.])([1-7])(?:[^0-9.]|\.(?:[^0-9]|$)|$)`)
	likertWords   = []struct {
		phrase string
		point  int
	}{
		{"strongly disagree", 1}, {"completely disagree", 1},
		{"strongly agree", 7}, {"completely agree", 7},
		{"somewhat disagree", 3}, {"slightly disagree", 3}, {"mildly disagree", 3},
		{"somewhat agree", 5}, {"slightly agree", 5}, {"mildly agree", 5},
		{"neither agree nor disagree", 4}, {"neutral", 4}, {"undecided", 4},
		{"disagree", 2}, {"agree", 6},
	}
)

// ParseLikert reads a 1-7 rating from an answer: "5", "5/7", "I'd say 5
// out of 7", "Rating: 6.", "On a scale of 1 to 7, I'd say 5" or words such
// as "somewhat agree" (5). It prefers an "N out of 7" / "N/7" form, then
// the first stand-alone digit 1 to 7 once an echoed scale ("1 to 7",
// "1-7") is removed, then the agreement phrases (longest first, so
// "somewhat disagree" is 3, not 2; "don't agree" and "not agree" read as
// disagree, 2). ok is false when none is found.
func ParseLikert(s string) (int, bool) {
	s = strings.ToLower(strings.TrimSpace(decision.StripThink(s)))
	if m := likertOutOf.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, true
	}
	if m := likertDigit.FindStringSubmatch(likertScale.ReplaceAllString(s, " ")); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, true
	}
	s = likertNegated.ReplaceAllString(s, "disagree")
	for _, w := range likertWords {
		if strings.Contains(s, w.phrase) {
			return w.point, true
		}
	}
	return 0, false
}

// LLMSender is the SenderRole of an llmagent.Persuader: its public
// scenario gains the list of evidence items that hold in the world (by
// id and text) and how to cite them, and in the static setting that it
// has a single message.
type LLMSender struct{ P *llmagent.Persuader }

// Name is the persuader's name.
func (s LLMSender) Name() string { return s.P.Name() }

// Bind implements SenderRole.
func (s LLMSender) Bind(c *Claim, w World, st Setting) episode.Persuader {
	return &llmSender{p: s.P, c: c, w: w, st: st}
}

type llmSender struct {
	p  *llmagent.Persuader
	c  *Claim
	w  World
	st Setting
}

func (s *llmSender) Name() string { return s.p.Name() }

func (s *llmSender) Start(ctx context.Context, pub scenario.Public, seed uint64) (episode.PersuaderSession, error) {
	var b strings.Builder
	b.WriteString(pub.Background)
	b.WriteString("\n\nEvidence you can show (checked facts; cite an item by writing its id in brackets, e.g. [e1]; the other person can verify only these, and you may leave any out):\n")
	n := 0
	for i, e := range s.c.Evidence {
		if s.w.Holds[i] {
			fmt.Fprintf(&b, "- [%s] %s\n", e.ID, e.Text)
			n++
		}
	}
	if n == 0 {
		b.WriteString("- (none this time)\n")
	}
	if s.st == Static {
		b.WriteString("You have exactly one message; the other person decides right after it.\n")
	}
	pub.Background = b.String()
	return s.p.Start(ctx, pub, seed)
}

// Agreement compares receivers' Likert ratings with their probe beliefs
// over results that have both (the Strategic Persuasion paper leaves the
// question open): Spearman's rank correlation and the mean absolute
// difference after mapping Likert L to (L-1)/6 in [0, 1], before and
// after the episode.
type Agreement struct {
	N                         int     `json:"n"`
	SpearmanBefore            float64 `json:"spearman_before"`
	SpearmanAfter             float64 `json:"spearman_after"`
	MADBefore, MADAfter       float64 `json:"-"`
	SpearmanChange, MADChange float64 `json:"-"`
}

// LikertAgreement computes Agreement over rs (NaN correlations when
// fewer than 2 results qualify or a side is constant).
func LikertAgreement(rs []Result) Agreement {
	var lb, la, pb, pa, lc, pc []float64
	for _, r := range rs {
		if r.LikertBefore == 0 || r.LikertAfter == 0 || r.ProbeBefore == nil || r.ProbeAfter == nil {
			continue
		}
		lb = append(lb, LikertBelief(r.LikertBefore))
		la = append(la, LikertBelief(r.LikertAfter))
		pb = append(pb, *r.ProbeBefore)
		pa = append(pa, *r.ProbeAfter)
		lc = append(lc, la[len(la)-1]-lb[len(lb)-1])
		pc = append(pc, pa[len(pa)-1]-pb[len(pb)-1])
	}
	a := Agreement{N: len(lb)}
	a.SpearmanBefore, _ = stats.Spearman(lb, pb)
	a.SpearmanAfter, _ = stats.Spearman(la, pa)
	a.SpearmanChange, _ = stats.Spearman(lc, pc)
	a.MADBefore, a.MADAfter, a.MADChange = mad(lb, pb), mad(la, pa), mad(lc, pc)
	return a
}

func mad(x, y []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := 0.0
	for i := range x {
		s += math.Abs(x[i] - y[i])
	}
	return s / float64(len(x))
}
