package persuhmm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/stats"
)

// Judged is one persuader's test dialogues (a Result) as one LLM judge
// rated them: the PersuHMM paper's binary Win Rate judge and its
// persuasiveness, empathy and helpfulness scores (llmagent.Judge.Won and
// Scores), per task in the Result's order.
type Judged struct {
	Persuader, Judge string
	Won              []bool
	Scores           []llmagent.DialogueScores
	// Usage is the judge's engine usage over these dialogues.
	Usage episode.Usage
}

// WinRate returns the share of dialogues the judge called a success, in
// [0, 1] (0 for none).
func (j Judged) WinRate() float64 { return Result{Won: j.Won}.WinRate() }

// Mean returns the mean scores over the dialogues, each in [1, 5] (zero
// for none).
func (j Judged) Mean() llmagent.DialogueScores {
	var m llmagent.DialogueScores
	for _, s := range j.Scores {
		m.Persuasiveness += s.Persuasiveness
		m.Empathy += s.Empathy
		m.Helpfulness += s.Helpfulness
	}
	if n := float64(len(j.Scores)); n > 0 {
		m = llmagent.DialogueScores{Persuasiveness: m.Persuasiveness / n, Empathy: m.Empathy / n, Helpfulness: m.Helpfulness / n}
	}
	return m
}

// JudgeResult asks j for the win and the three scores of every dialogue
// of r, played on tasks (r.Transcripts[i] on tasks[i]). Errors: a Result
// without transcripts for every task, or the judge's (engine errors,
// llmagent.ErrJudgeUnparsed), naming the task.
func JudgeResult(ctx context.Context, j *llmagent.Judge, tasks []Task, r Result) (Judged, error) {
	out := Judged{Persuader: r.Name, Judge: j.Name()}
	if len(r.Transcripts) != len(tasks) {
		return out, fmt.Errorf("persuhmm: judge: %s has %d dialogues for %d tasks", r.Name, len(r.Transcripts), len(tasks))
	}
	for i, t := range tasks {
		pub := t.Scenario.Public()
		won, u, err := j.Won(ctx, pub, r.Transcripts[i])
		out.Usage = out.Usage.Add(u)
		if err != nil {
			return out, fmt.Errorf("persuhmm: judge %s on %s, task %s: %w", j.Name(), r.Name, t.Scenario.ID, err)
		}
		s, u, err := j.Scores(ctx, pub, r.Transcripts[i])
		out.Usage = out.Usage.Add(u)
		if err != nil {
			return out, fmt.Errorf("persuhmm: judge %s on %s, task %s: %w", j.Name(), r.Name, t.Scenario.ID, err)
		}
		out.Won, out.Scores = append(out.Won, won), append(out.Scores, s)
	}
	return out, nil
}

// Preference is the PersuHMM paper's pairwise preference study of two
// persuaders A and B on the same tasks by one judge: Labels[i] is +1 when
// the judge preferred A's dialogue of task i, -1 when it preferred B's, 0
// for a tie (llmagent.Judge.Prefer, both orders).
type Preference struct {
	A, B, Judge string
	Labels      []int
	Usage       episode.Usage
}

// Counts returns the numbers of tasks A won, tied and lost.
func (p Preference) Counts() (win, tie, lose int) {
	for _, l := range p.Labels {
		switch {
		case l > 0:
			win++
		case l < 0:
			lose++
		default:
			tie++
		}
	}
	return win, tie, lose
}

// PreferResults asks j which of a's and b's dialogues of each task is the
// better persuasion. Errors: results without transcripts for every task,
// or the judge's, naming the task.
func PreferResults(ctx context.Context, j *llmagent.Judge, tasks []Task, a, b Result) (Preference, error) {
	p := Preference{A: a.Name, B: b.Name, Judge: j.Name()}
	if len(a.Transcripts) != len(tasks) || len(b.Transcripts) != len(tasks) {
		return p, fmt.Errorf("persuhmm: preference: %d and %d dialogues for %d tasks", len(a.Transcripts), len(b.Transcripts), len(tasks))
	}
	for i, t := range tasks {
		v, u, err := j.Prefer(ctx, t.Scenario.Public(), a.Transcripts[i], b.Transcripts[i])
		p.Usage = p.Usage.Add(u)
		if err != nil {
			return p, fmt.Errorf("persuhmm: preference by %s, task %s: %w", j.Name(), t.Scenario.ID, err)
		}
		p.Labels = append(p.Labels, v)
	}
	return p, nil
}

// PreferenceKappa is the agreement of two judges' preferences on the same
// pairs: Cohen's quadratic-weighted kappa over lose < tie < win, as the
// PersuHMM paper measures judge-human consistency (stats.WeightedKappaScale
// on -1..1). NaN when both judges gave one label throughout. Errors:
// preferences of different lengths or none.
func PreferenceKappa(x, y Preference) (float64, error) {
	return stats.WeightedKappaScale(x.Labels, y.Labels, -1, 1, stats.Quadratic)
}

// RatingKappa is the agreement of two judges' ratings of the same
// dialogues (x[k] and y[k] rate one persuader's dialogues each, k over
// persuaders): per criterion in llmagent.Criteria order, Cohen's
// quadratic-weighted kappa over the scale 1..5, pooling every dialogue.
// Choice: a mean of several samples is rounded half up to the nearest
// rating. Errors: unequal numbers of ratings, or none.
func RatingKappa(x, y []Judged) ([3]float64, error) {
	var out [3]float64
	if len(x) != len(y) {
		return out, fmt.Errorf("persuhmm: rating kappa: %d and %d rated persuaders", len(x), len(y))
	}
	var a, b [3][]int
	for k := range x {
		if len(x[k].Scores) != len(y[k].Scores) {
			return out, fmt.Errorf("persuhmm: rating kappa: %s: %d and %d ratings", x[k].Persuader, len(x[k].Scores), len(y[k].Scores))
		}
		for i := range x[k].Scores {
			vx, vy := x[k].Scores[i].Values(), y[k].Scores[i].Values()
			for c := range vx {
				a[c] = append(a[c], int(math.Floor(vx[c]+0.5)))
				b[c] = append(b[c], int(math.Floor(vy[c]+0.5)))
			}
		}
	}
	for c := range out {
		k, err := stats.WeightedKappaScale(a[c], b[c], llmagent.MinRating, llmagent.MaxRating, stats.Quadratic)
		if err != nil {
			return out, fmt.Errorf("persuhmm: rating kappa: %w", err)
		}
		out[c] = k
	}
	return out, nil
}

// Comparison is the evaluation of two persuaders A and B on the same
// tasks by one or more LLM judges (Compare).
type Comparison struct {
	// Results are A's and B's test runs (Win Rate from the persuadee's
	// accept; on the simulator the PersuHMM paper's win judge).
	Results [2]Result
	// Judged[k] holds judge k's ratings of A and of B.
	Judged [][2]Judged
	// Preferences[k] is judge k's pairwise preference of A over B.
	Preferences []Preference
}

// Compare plays a and b against pee on tasks (Test, seed seed, episode
// configuration cfg) and has every judge rate both runs (JudgeResult) and
// compare them pairwise (PreferResults). Errors: no judge, Test's and the
// judges'.
func Compare(ctx context.Context, a, b episode.Persuader, tasks []Task, pee episode.Persuadee, judges []*llmagent.Judge, cfg episode.Config, seed uint64) (Comparison, error) {
	var c Comparison
	if len(judges) == 0 {
		return c, errors.New("persuhmm: compare: no judge")
	}
	for i, p := range []episode.Persuader{a, b} {
		r, err := Test(ctx, p, tasks, pee, cfg, seed)
		if err != nil {
			return c, err
		}
		c.Results[i] = r
	}
	for _, j := range judges {
		var pair [2]Judged
		for i, r := range c.Results {
			jr, err := JudgeResult(ctx, j, tasks, r)
			if err != nil {
				return c, err
			}
			pair[i] = jr
		}
		p, err := PreferResults(ctx, j, tasks, c.Results[0], c.Results[1])
		if err != nil {
			return c, err
		}
		c.Judged, c.Preferences = append(c.Judged, pair), append(c.Preferences, p)
	}
	return c, nil
}

// WriteComparison prints c as Markdown: per persuader and judge the win
// rate by the persuadee's accept and by the judge, the mean scores and
// the judge's tokens; per judge the win / tie / lose table of A against
// B; and, with two judges or more, the quadratic-weighted kappa of each
// later judge against the first on the preferences and on each rating.
// Errors: the kappa's, w's.
func WriteComparison(w io.Writer, c Comparison) error {
	var b strings.Builder
	b.WriteString("| persuader | judge | win rate (accept) | win rate (judge) | persuasiveness | empathy | helpfulness | judge tokens |\n|---|---|---|---|---|---|---|---|\n")
	for _, pair := range c.Judged {
		for i, jr := range pair {
			r, m := c.Results[i], jr.Mean()
			fmt.Fprintf(&b, "| %s | %s | %.3f (%d/%d) | %.3f (%d/%d) | %.2f | %.2f | %.2f | %d |\n", r.Name, jr.Judge, r.WinRate(), wins(r), len(r.Won),
				jr.WinRate(), wins(Result{Won: jr.Won}), len(jr.Won), m.Persuasiveness, m.Empathy, m.Helpfulness, jr.Usage.PromptTokens+jr.Usage.CompletionTokens)
		}
	}
	a, bn := c.Results[0].Name, c.Results[1].Name
	fmt.Fprintf(&b, "\n| judge | %s wins | ties | %s wins |\n|---|---|---|---|\n", a, bn)
	for _, p := range c.Preferences {
		x, y, z := p.Counts()
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", p.Judge, x, y, z)
	}
	for k := 1; k < len(c.Preferences); k++ {
		pk, err := PreferenceKappa(c.Preferences[0], c.Preferences[k])
		if err != nil {
			return err
		}
		rk, err := RatingKappa(c.Judged[0][:], c.Judged[k][:])
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "\nquadratic-weighted kappa, %s vs %s: preference %.3f, persuasiveness %.3f, empathy %.3f, helpfulness %.3f\n",
			c.Preferences[0].Judge, c.Preferences[k].Judge, pk, rk[0], rk[1], rk[2])
	}
	_, err := io.WriteString(w, b.String())
	return err
}
