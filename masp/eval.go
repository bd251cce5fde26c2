package masp

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/stats"
)

// User is one user simulator of the evaluation ensemble with its judges.
type User struct {
	// Name labels the user in tables; "" means Persuadee.Name().
	Name        string
	Persuadee   episode.Persuadee
	Success     SuccessJudge
	Rationality RationalityJudge
}

func (u User) name() string {
	if u.Name != "" {
		return u.Name
	}
	return u.Persuadee.Name()
}

// EvalConfig configures Evaluate.
type EvalConfig struct {
	// T is the turn budget; <= 0 means DefaultT.
	T int
	// TauQ is tau_q; <= 0 means DefaultTauQ.
	TauQ float64
	// Seed is the run seed: case i is played with
	// episode.Seed(Seed, case id, 0) by every persuader against every
	// user, so comparisons are paired (common random numbers).
	Seed uint64
	// Workers is the number of concurrent dialogues; <= 0 means 1.
	Workers int
	// Mind adds BDI states, progress and rewards (nil: none).
	Mind *Mind
	// Bootstrap configures every interval; its zero value means 10,000
	// percentile resamples at 95% with seed 0 (stats.BootstrapOptions).
	Bootstrap stats.BootstrapOptions
}

func (c EvalConfig) t() int {
	if c.T <= 0 {
		return DefaultT
	}
	return c.T
}

func (c EvalConfig) tauQ() float64 {
	if c.TauQ <= 0 {
		return DefaultTauQ
	}
	return c.TauQ
}

// Results holds every dialogue of an evaluation: Dialogues[p][u][i] is
// persuader p against user u on case i.
type Results struct {
	Persuaders []string
	Users      []string
	Cases      []string
	Dialogues  [][][]*Dialogue
}

// Evaluate plays every persuader against every user on every case with
// Play (closed-loop protocol, MASP paper, Appendix C.2). Results do not
// depend on Workers. progress, when non-nil, is called after each dialogue
// with the number done and the total (from several goroutines, serially).
// Errors: no cases, persuaders or users, duplicate names, a user without a
// success judge, a cancelled ctx, or a Play error.
func Evaluate(ctx context.Context, cfg EvalConfig, cases []*Case, pers []episode.Persuader, users []User, progress func(done, total int)) (*Results, error) {
	if len(cases) == 0 || len(pers) == 0 || len(users) == 0 {
		return nil, fmt.Errorf("masp: Evaluate needs cases (%d), persuaders (%d) and users (%d)", len(cases), len(pers), len(users))
	}
	res := &Results{}
	seen := map[string]bool{}
	for _, p := range pers {
		if seen["p:"+p.Name()] {
			return nil, fmt.Errorf("masp: persuader %q given twice", p.Name())
		}
		seen["p:"+p.Name()] = true
		res.Persuaders = append(res.Persuaders, p.Name())
	}
	for _, u := range users {
		if seen["u:"+u.name()] {
			return nil, fmt.Errorf("masp: user %q given twice", u.name())
		}
		if u.Success == nil {
			return nil, fmt.Errorf("masp: user %q has no success judge", u.name())
		}
		seen["u:"+u.name()] = true
		res.Users = append(res.Users, u.name())
	}
	for i, c := range cases {
		id := c.ID
		if id == "" && c.Scenario != nil {
			id = c.Scenario.ID
		}
		if seen["c:"+id] {
			return nil, fmt.Errorf("masp: case id %q appears twice (case %d)", id, i)
		}
		seen["c:"+id] = true
		res.Cases = append(res.Cases, id)
	}
	err := res.fill(ctx, len(pers), len(users), len(cases), cfg.Workers, func(ctx context.Context, p, ui, i int) (*Dialogue, error) {
		u := users[ui]
		pc := Config{T: cfg.T, Success: u.Success, Rationality: u.Rationality, Mind: cfg.Mind}
		d, err := Play(ctx, pc, cases[i], pers[p], u.Persuadee, episode.Seed(cfg.Seed, res.Cases[i], 0))
		if err == nil {
			d.User = u.name()
		}
		return d, err
	}, progress)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Traces returns the traces of persuader p against user u, in case order.
func (r *Results) Traces(p, u int) []Trace {
	out := make([]Trace, len(r.Dialogues[p][u]))
	for i, d := range r.Dialogues[p][u] {
		out[i] = d.Trace()
	}
	return out
}

// Row is one persuader-user line of a report.
type Row struct {
	Persuader, User string
	// N is the number of cases.
	N int
	// SR, AT and RCSR are SR@T, AT and RCSR@T with bootstrap intervals.
	SR, AT, RCSR stats.CI
	// MeanQ is the mean rationality signal over all judged turns.
	MeanQ float64
	// Progress is the mean final progress s of the dialogues with BDI
	// states (NaN without a Mind).
	Progress float64
	// MentalErr is the mean mentalization error ||z-hat - z||_A^2 over the
	// turns that have one (NaN without a student).
	MentalErr float64
	// Errors counts dialogues that ended on a role error.
	Errors int
	// Curve is RCSR@t for t = 1..T.
	Curve []float64
}

// WorstRow is a persuader's worst case over the users (MASP paper, §4).
type WorstRow struct {
	Persuader        string
	SR, RCSR         stats.CI
	SRUser, RCSRUser string
	Users            int
}

// DiffRow is a paired difference between a persuader and the baseline
// (the first persuader) against one user: positive SR and RCSR and
// negative AT favour the persuader.
type DiffRow struct {
	Persuader, Baseline, User string
	SR, AT, RCSR              stats.CI
}

// Report is the table of an evaluation.
type Report struct {
	// Title opens the text output; "" means "MASP closed-loop
	// evaluation".
	Title     string
	T         int
	TauQ      float64
	Bootstrap stats.BootstrapOptions
	Rows      []Row
	Worst     []WorstRow
	Diffs     []DiffRow
}

// Report computes the metrics of r with cfg's T, tau_q and bootstrap
// options: per persuader and user SR@T, AT, RCSR@T with intervals, mean q,
// mean final progress and the RCSR@t curve; per persuader WorstSR and
// WorstRCSR over the users; and paired differences of every other
// persuader against the first. Errors are those of the bootstrap.
func (r *Results) Report(cfg EvalConfig) (*Report, error) {
	T, tq, o := cfg.t(), cfg.tauQ(), cfg.Bootstrap
	rep := &Report{T: T, TauQ: tq, Bootstrap: o}
	for p := range r.Persuaders {
		var byUser [][]Trace
		for u := range r.Users {
			trs := r.Traces(p, u)
			byUser = append(byUser, trs)
			row := Row{Persuader: r.Persuaders[p], User: r.Users[u], N: len(trs), MeanQ: MeanQ(trs), Curve: RCSRCurve(trs, T, tq), Progress: math.NaN(), MentalErr: math.NaN()}
			var err error
			if row.SR, err = CI(trs, MetricSR, T, tq, o); err != nil {
				return nil, err
			}
			if row.AT, err = CI(trs, MetricAT, T, tq, o); err != nil {
				return nil, err
			}
			if row.RCSR, err = CI(trs, MetricRCSR, T, tq, o); err != nil {
				return nil, err
			}
			ps, n := 0.0, 0
			me, nm := 0.0, 0
			for _, d := range r.Dialogues[p][u] {
				if d.Error != "" {
					row.Errors++
				}
				for _, t := range d.Turns {
					if t.MentalErr != nil {
						me += *t.MentalErr
						nm++
					}
				}
				for k := len(d.Turns) - 1; k >= 0; k-- {
					if pr := d.Turns[k].Progress; pr != nil {
						ps += *pr
						n++
						break
					}
				}
			}
			if n > 0 {
				row.Progress = ps / float64(n)
			}
			if nm > 0 {
				row.MentalErr = me / float64(nm)
			}
			rep.Rows = append(rep.Rows, row)
		}
		w := WorstRow{Persuader: r.Persuaders[p], Users: len(r.Users)}
		var err error
		if w.SR, err = WorstCI(byUser, MetricSR, T, tq, o); err != nil {
			return nil, err
		}
		if w.RCSR, err = WorstCI(byUser, MetricRCSR, T, tq, o); err != nil {
			return nil, err
		}
		_, su := WorstSR(byUser, T)
		_, ru := WorstRCSR(byUser, T, tq)
		w.SRUser, w.RCSRUser = r.Users[su], r.Users[ru]
		rep.Worst = append(rep.Worst, w)
	}
	for p := 1; p < len(r.Persuaders); p++ {
		for u := range r.Users {
			a, b := r.Traces(p, u), r.Traces(0, u)
			d := DiffRow{Persuader: r.Persuaders[p], Baseline: r.Persuaders[0], User: r.Users[u]}
			var err error
			if d.SR, err = PairedDiffCI(a, b, MetricSR, T, tq, o); err != nil {
				return nil, err
			}
			if d.AT, err = PairedDiffCI(a, b, MetricAT, T, tq, o); err != nil {
				return nil, err
			}
			if d.RCSR, err = PairedDiffCI(a, b, MetricRCSR, T, tq, o); err != nil {
				return nil, err
			}
			rep.Diffs = append(rep.Diffs, d)
		}
	}
	return rep, nil
}

func ciText(c stats.CI, prec int) string {
	return fmt.Sprintf("%.*f [%.*f, %.*f]", prec, c.Estimate, prec, c.Lo, prec, c.Hi)
}

func numText(x float64, prec int) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, x)
}

// WriteText writes the report as aligned text tables: the per-user table,
// the worst case over users (when Worst is not empty), and (with several persuaders) the paired
// differences against the baseline; curves when curves is true.
func (rep *Report) WriteText(w io.Writer, curves bool) error {
	resamples, level := rep.Bootstrap.Resamples, rep.Bootstrap.Level
	if resamples == 0 {
		resamples = 10000
	}
	if level == 0 {
		level = 0.95
	}
	var b strings.Builder
	title := rep.Title
	if title == "" {
		title = "MASP closed-loop evaluation"
	}
	fmt.Fprintf(&b, "%s: T = %d, tau_q = %.2f; intervals: %g%% percentile bootstrap, %d resamples over cases\n\n", title, rep.T, rep.TauQ, 100*level, resamples)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	ment, prog := false, false
	for _, r := range rep.Rows {
		ment = ment || !math.IsNaN(r.MentalErr)
		prog = prog || !math.IsNaN(r.Progress)
	}
	// The progress and mentalization columns appear only when measured.
	head := ""
	if prog {
		head += "\tprogress"
	}
	if ment {
		head += "\tment. err"
	}
	fmt.Fprintf(tw, "persuader\tuser\tn\tSR@%d\tAT\tRCSR@%d\tmean q%s\terrors\n", rep.T, rep.T, head)
	for _, r := range rep.Rows {
		m := ""
		if prog {
			m += "\t" + numText(r.Progress, 3)
		}
		if ment {
			m += "\t" + numText(r.MentalErr, 4)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s%s\t%d\n", r.Persuader, r.User, r.N, ciText(r.SR, 3), ciText(r.AT, 2), ciText(r.RCSR, 3), numText(r.MeanQ, 2), m, r.Errors)
	}
	tw.Flush()
	if len(rep.Worst) > 0 {
		b.WriteString("\nWorst case over users (min over the ensemble; cases resampled jointly):\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "persuader\tusers\tWorstSR@%d\tworst user\tWorstRCSR@%d\tworst user\n", rep.T, rep.T)
		for _, r := range rep.Worst {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", r.Persuader, r.Users, ciText(r.SR, 3), r.SRUser, ciText(r.RCSR, 3), r.RCSRUser)
		}
		tw.Flush()
	}
	if len(rep.Diffs) > 0 {
		fmt.Fprintf(&b, "\nPaired differences against %s (persuader - baseline, same cases and seeds):\n", rep.Diffs[0].Baseline)
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "persuader\tuser\tdSR@%d\tdAT\tdRCSR@%d\n", rep.T, rep.T)
		for _, d := range rep.Diffs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Persuader, d.User, ciText(d.SR, 3), ciText(d.AT, 2), ciText(d.RCSR, 3))
		}
		tw.Flush()
	}
	if curves {
		b.WriteString("\nRCSR@t curves:\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "persuader\tuser")
		for t := 1; t <= rep.T; t++ {
			fmt.Fprintf(tw, "\tt=%d", t)
		}
		fmt.Fprintln(tw)
		for _, r := range rep.Rows {
			fmt.Fprintf(tw, "%s\t%s", r.Persuader, r.User)
			for _, v := range r.Curve {
				fmt.Fprintf(tw, "\t%.3f", v)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fill allocates r.Dialogues as np persuaders × nu users × nc cases and
// fills every cell [p][u][i] with play, on max(workers, 1) goroutines in
// persuader, user, case order (parallel.Each). A failure cancels the
// cells not yet started; the error returned is that of the first cell in
// that order that failed, else ctx's error, if any. progress, when not
// nil, is called after each filled cell with (cells done, cells in all),
// one call at a time.
func (r *Results) fill(ctx context.Context, np, nu, nc, workers int, play func(ctx context.Context, p, u, i int) (*Dialogue, error), progress func(done, total int)) error {
	type job struct{ p, u, i int }
	var jobs []job
	r.Dialogues = make([][][]*Dialogue, np)
	for p := range np {
		r.Dialogues[p] = make([][]*Dialogue, nu)
		for u := range nu {
			r.Dialogues[p][u] = make([]*Dialogue, nc)
			for i := range nc {
				jobs = append(jobs, job{p, u, i})
			}
		}
	}
	var mu sync.Mutex
	done := 0
	return parallel.Each(ctx, len(jobs), workers, func(ctx context.Context, k int) error {
		j := jobs[k]
		d, err := play(ctx, j.p, j.u, j.i)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		r.Dialogues[j.p][j.u][j.i] = d
		done++
		if progress != nil {
			progress(done, len(jobs))
		}
		return nil
	})
}
