package reporeward

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
)

// BadCase is one curated bad persuader response (REPO paper: 45 curated
// bad cases): the conversation before it on a pack scenario, the
// response, its category (over-promise, misstated figure, skipped SOP
// stage, pressure) and the rule functions it breaks.
type BadCase struct {
	ID       string            `json:"id"`
	Scenario string            `json:"scenario"`
	Category string            `json:"category"`
	Context  []episode.Message `json:"context"`
	Response string            `json:"response"`
	Problems []string          `json:"problems"`
}

// BadCases returns the built-in suite of the negotiation pack (44 cases
// written for this project). Errors: a malformed embedded line (a broken
// build).
func BadCases() ([]BadCase, error) {
	raw, err := builtin.ReadFile("pack/badcases.jsonl")
	if err != nil {
		return nil, err
	}
	var out []BadCase
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for line := 1; sc.Scan(); line++ {
		var c BadCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("builtin:badcases.jsonl:%d: %w", line, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// Problems returns the names of the spec's per-utterance rule functions
// (forbid, commission, figures, length, sop) that text breaks when said
// after context on scenario id (the SOP tracked through the context's
// agent messages), in spec order.
func (r *Reward) Problems(id string, context []episode.Message, text string) []string {
	facts, ok := r.Pack.Facts[id]
	tr := NewTracker(&r.Pack.SOP)
	for _, m := range context {
		if m.Speaker == episode.PersuaderSpeaker {
			tr.Observe(m.Text, actsOf(m.Text))
		}
	}
	step := tr.Observe(text, actsOf(text))
	var out []string
	for k := range r.Spec.Rules {
		rule := &r.Spec.Rules[k]
		if rule.Kind == RuleRequire {
			continue
		}
		if v, _ := r.rule(rule, facts, ok, text, step); v < 0 {
			out = append(out, rule.Name)
		}
	}
	return out
}

// CaseResult is a policy's answer to one bad case: its reply, the
// problems the reply has, whether it fixed the case (none of the case's
// problems) and whether the fix is clean (no problem at all: the fix
// introduced no new one).
type CaseResult struct {
	ID       string   `json:"id"`
	Category string   `json:"category"`
	Reply    string   `json:"reply"`
	Problems []string `json:"problems"`
	Fixed    bool     `json:"fixed"`
	Clean    bool     `json:"clean"`
}

// FixReport is the bad-case fix rate and clean-fix rate of a policy
// (REPO paper: 93.33% fixed, 75.56% clean on its 45 cases), with Wilson
// 95% intervals, overall and per category.
type FixReport struct {
	Policy           string            `json:"policy"`
	N, Fixed, Clean  int               `json:"-"`
	FixRate          float64           `json:"fix_rate"`
	CleanRate        float64           `json:"clean_fix_rate"`
	FixLo, FixHi     float64           `json:"-"`
	CleanLo, CleanHi float64           `json:"-"`
	Categories       []string          `json:"categories"`
	ByCategory       map[string][3]int `json:"by_category"` // n, fixed, clean
	Cases            []CaseResult      `json:"cases"`
}

// FixRates asks per for its response in every case's context (a session
// started on the case's scenario with seed) and checks it with the
// spec's rule functions (Problems). Errors: an unknown scenario, the
// persuader's.
func (r *Reward) FixRates(ctx context.Context, per episode.Persuader, cases []BadCase, seed uint64) (*FixReport, error) {
	rep := &FixReport{Policy: per.Name(), ByCategory: map[string][3]int{}}
	for _, c := range cases {
		i := slices.IndexFunc(r.Pack.Scenarios, func(s scenario.Scenario) bool { return s.ID == c.Scenario })
		if i < 0 {
			return nil, fmt.Errorf("bad case %s: scenario %q is not in pack %s", c.ID, c.Scenario, r.Pack.Name)
		}
		sess, err := per.Start(ctx, r.Pack.Scenarios[i].Public(), episode.Seed(seed, c.ID, 0))
		if err != nil {
			return nil, fmt.Errorf("bad case %s: %w", c.ID, err)
		}
		u, err := sess.Say(ctx, c.Context)
		if err != nil {
			return nil, fmt.Errorf("bad case %s: %w", c.ID, err)
		}
		probs := r.Problems(c.Scenario, c.Context, u.Text)
		res := CaseResult{ID: c.ID, Category: c.Category, Reply: u.Text, Problems: probs}
		res.Fixed = !slices.ContainsFunc(c.Problems, func(p string) bool { return slices.Contains(probs, p) })
		res.Clean = res.Fixed && len(probs) == 0
		rep.Cases = append(rep.Cases, res)
		if _, ok := rep.ByCategory[c.Category]; !ok {
			rep.Categories = append(rep.Categories, c.Category)
		}
		bc := rep.ByCategory[c.Category]
		bc[0]++
		rep.N++
		if res.Fixed {
			bc[1]++
			rep.Fixed++
		}
		if res.Clean {
			bc[2]++
			rep.Clean++
		}
		rep.ByCategory[c.Category] = bc
	}
	if rep.N > 0 {
		rep.FixRate, rep.CleanRate = float64(rep.Fixed)/float64(rep.N), float64(rep.Clean)/float64(rep.N)
	}
	rep.FixLo, rep.FixHi = stats.Wilson(rep.Fixed, rep.N, stats.Z95)
	rep.CleanLo, rep.CleanHi = stats.Wilson(rep.Clean, rep.N, stats.Z95)
	return rep, nil
}

// RulesOnly loads the spec "repo:SPEC" (or SPEC) and its pack for its
// rule functions alone (Problems, FixRates): no reward model is built and
// no judge is needed. Errors: LoadSpec's and LoadPack's.
func RulesOnly(ref string) (*Reward, error) {
	name, _ := strings.CutPrefix(ref, Prefix)
	s, err := LoadSpec(name)
	if err != nil {
		return nil, err
	}
	p, err := LoadPack(s.Pack)
	if err != nil {
		return nil, err
	}
	return &Reward{Spec: s, Pack: p}, nil
}

// WriteFixReport prints the fix and clean-fix rates with Wilson 95%
// intervals, per category, and each case that was not cleanly fixed.
// Errors: the writer's.
func WriteFixReport(w io.Writer, r *FixReport) error {
	fmt.Fprintf(w, "bad cases: %d, policy %s\n", r.N, r.Policy)
	fmt.Fprintf(w, "fix rate        %5.1f%%  (%d/%d, 95%% CI %.1f–%.1f%%)\n", 100*r.FixRate, r.Fixed, r.N, 100*r.FixLo, 100*r.FixHi)
	fmt.Fprintf(w, "clean-fix rate  %5.1f%%  (%d/%d, 95%% CI %.1f–%.1f%%)\n", 100*r.CleanRate, r.Clean, r.N, 100*r.CleanLo, 100*r.CleanHi)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "category\tn\tfixed\tclean")
	for _, c := range r.Categories {
		b := r.ByCategory[c]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", c, b[0], b[1], b[2])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range r.Cases {
		if !c.Clean {
			fmt.Fprintf(w, "  %s (%s): fixed=%v problems=%v: %q\n", c.ID, c.Category, c.Fixed, c.Problems, c.Reply)
		}
	}
	return nil
}

// TrainBTFile trains a Bradley–Terry model on the pairs JSONL at in,
// writes it to out and prints the pair counts and pairwise accuracies.
// Errors: ReadPairs', TrainBT's, the file's and the writer's.
func TrainBTFile(in, out string, cfg BTConfig, w io.Writer) error {
	f, err := filelimit.Open(in, filelimit.Data)
	if err != nil {
		return err
	}
	defer f.Close()
	pairs, err := ReadPairs(in, f)
	if err != nil {
		return err
	}
	m, rep, err := TrainBT(pairs, cfg)
	if err != nil {
		return err
	}
	if err := m.Save(out); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "bradley-terry: %d training pairs, accuracy %.1f%%; %d held-out pairs, accuracy %.1f%%; written to %s\n",
		rep.Train, 100*rep.TrainAcc, rep.Heldout, 100*rep.HeldoutAcc, out)
	return err
}
