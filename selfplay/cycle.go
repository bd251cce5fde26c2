package selfplay

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/train"
)

// Metrics are one cycle's figures, by name (docs/masp.md, "Self-play"):
// for each side (prefix "sys_" for the system phase's dialogues, "user_"
// for the user phase's) mean discounted return from turn 1 ("return",
// J_S or J_U), success share ("sr", the P4G success judge), terminal
// shares ("accept", "conditional", "reject", "pending"), mean turns, mean
// final progress s ("progress"), mean q and NOT_RATIONAL share of user
// turns ("q", "not_rational"), the share of user turns judged to withhold
// a yes the mind had reached ("withheld", WithheldYesJudge), the user's reaction shares ("react_<class>")
// and agreement with its mind ("mind_agree"), and the update's batch
// means at its first Adam step ("loss", "kl", "entropy") and clip share
// at the last ("clip"); for the student refresh the number of examples
// ("student_n") and the mean ||ẑ - z||²_A over the cycle's self-play
// states before and after it ("student_err_before", "student_err_after").
type Metrics map[string]float64

// Cycle runs the next cycle (Algorithm 1 lines 5-19): the system phase
// (SystemSteps update steps of the planner against the frozen user), the
// user phase (UserSteps steps of the user against the frozen planner;
// none when UserSteps is 0) and the student refresh, then stores the metrics and writes the checkpoints.
// Errors: ctx cancelled (nothing of the cycle is kept), a rollout, graph,
// store or checkpoint error.
func (r *Runner) Cycle(ctx context.Context) (Metrics, error) {
	k := r.cycle
	met := Metrics{}
	var all []rollout
	for _, ph := range []Phase{PhaseSystem, PhaseUser} {
		steps := r.cfg.SystemSteps
		if ph == PhaseUser {
			steps = r.cfg.UserSteps
		}
		if steps == 0 {
			continue
		}
		if r.onPhase != nil {
			r.onPhase(k, ph)
		}
		var rolls []rollout
		var first, lastClip train.LossTerms
		for s := range steps {
			rs, lt, clip, err := r.updateStep(ctx, k, ph, s)
			if err != nil {
				return nil, err
			}
			if s == 0 {
				first = lt
			}
			lastClip = clip
			rolls = append(rolls, rs...)
		}
		pre := "sys_"
		if ph == PhaseUser {
			pre = "user_"
		}
		dialogueMetrics(met, pre, rolls, r.cfg.Weights.Gamma, r.cfg.T)
		met[pre+"loss"], met[pre+"kl"], met[pre+"entropy"], met[pre+"clip"] = first.Loss, first.KL, first.Entropy, lastClip.ClipFrac
		all = append(all, rolls...)
		if r.o.Log != nil {
			fmt.Fprintln(r.o.Log, formatPhase(k+1, r.cfg.Cycles, ph, met))
		}
	}
	if r.onPhase != nil {
		r.onPhase(k, PhaseStudent)
	}
	if err := r.refreshStudent(ctx, all, met); err != nil {
		return nil, err
	}
	if r.o.Log != nil {
		fmt.Fprintf(r.o.Log, "cycle %d/%d student  examples %.0f  err %.4f -> %.4f\n", k+1, r.cfg.Cycles,
			met["student_n"], met["student_err_before"], met["student_err_after"])
	}
	r.cycle++
	bg := context.WithoutCancel(ctx)
	if r.o.Store != nil {
		if err := r.o.Store.SaveMetrics(bg, r.o.RunID, k, finite(met)); err != nil {
			return met, err
		}
	}
	if r.o.Dir != "" {
		if err := r.Save(r.o.Dir); err != nil {
			return met, err
		}
	}
	return met, nil
}

// Run plays the remaining cycles up to Config.Cycles and returns their
// metrics. A cancelled ctx stops it; the last checkpoint stays valid.
func (r *Runner) Run(ctx context.Context) ([]Metrics, error) {
	var out []Metrics
	for r.cycle < r.cfg.Cycles {
		m, err := r.Cycle(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

// updateStep plays one step's dialogues of phase ph (the learning side
// against the frozen other side) and updates the learning side. It
// returns the rollouts, the loss terms before the first update and those
// of the last update.
func (r *Runner) updateStep(ctx context.Context, cycle int, ph Phase, s int) ([]rollout, train.LossTerms, train.LossTerms, error) {
	var none train.LossTerms
	pl, err := planner.New(r.sys)
	if err != nil {
		return nil, none, none, err
	}
	var per episode.Persuader = pl
	if r.wrapSystem != nil {
		per = r.wrapSystem(pl)
	}
	user, err := NewUser(r.usr, r.mind)
	if err != nil {
		return nil, none, none, err
	}
	idx := r.step(cycle, ph, s)
	rolls, err := r.play(ctx, idx, r.cfg.G, per, user, rolloutBase(cycle, ph, s), true)
	if err != nil {
		return nil, none, none, err
	}
	system := ph == PhaseSystem
	G := r.cfg.G
	var batch []train.Sample
	var lp []float64
	for gi := range idx {
		group := rolls[gi*G : (gi+1)*G]
		side := r.cfg.User
		if system {
			side = r.cfg.System
		}
		adv, err := Advantages(rewardsOf(group, system), r.cfg.Weights.Gamma, side)
		if err != nil {
			return nil, none, none, fmt.Errorf("selfplay: cycle %d %s step %d: %w", cycle+1, ph, s, err)
		}
		for i, ro := range group {
			for t := range adv[i] {
				if system {
					if t >= len(ro.sys) {
						break
					}
					d := ro.sys[t]
					lp = r.sysRef.LogProbs(lp, d.Features)
					batch = append(batch, train.Sample{Features: d.Features, Action: d.Action, OldLogp: d.Logp, RefLogp: lp[d.Action], Adv: adv[i][t]})
				} else {
					if t >= len(ro.usr) {
						break
					}
					d := ro.usr[t]
					lp = r.usrRef.LogProbs(lp, d.Features)
					batch = append(batch, train.Sample{Features: d.Features, Action: int(d.Action), OldLogp: d.Logp, RefLogp: lp[d.Action], Adv: adv[i][t]})
				}
			}
		}
	}
	if len(batch) == 0 {
		return rolls, none, none, nil
	}
	opt := r.usrOpt
	if system {
		opt = r.sysOpt
	}
	first, last, err := opt.Steps(ctx, batch, r.cfg.Updates)
	if err != nil {
		return nil, none, none, err
	}
	if system {
		opt.WeightsInto(r.sys.Weights())
	} else {
		opt.WeightsInto(r.usr.Weights())
	}
	return rolls, first, last, nil
}

// refreshStudent refits the student (Algorithm 1 lines 16-18) on the
// real-dialogue examples plus the teacher states of this cycle's
// self-play dialogues. Choice: only the current cycle's self-play prefixes
// are mixed in (not all earlier ones), so the student follows the current
// policies while the real prefixes keep it from drifting.
func (r *Runner) refreshStudent(ctx context.Context, rolls []rollout, met Metrics) error {
	var ds []*masp.Dialogue
	for _, ro := range rolls {
		if ro.dl != nil && ro.dl.Error == "" {
			ds = append(ds, ro.dl)
		}
	}
	sp, err := examples(ctx, masp.CacheRecords(r.caseMap(), ds), r.enc)
	if err != nil {
		return fmt.Errorf("selfplay: student refresh: %w", err)
	}
	errOf := func(st *bdi.Student) float64 {
		if len(sp) == 0 {
			return math.NaN()
		}
		s := 0.0
		for _, ex := range sp {
			s += bdi.DistA(st.Predict(ex.History), ex.Z, st.D)
		}
		return s / float64(len(sp))
	}
	met["student_err_before"] = errOf(r.student)
	all := append(append(make([]bdi.Example, 0, len(r.base)+len(sp)), r.base...), sp...)
	st, err := bdi.FitStudent(all, bdi.DefaultAlpha, r.cfg.StudentLambda)
	if err != nil {
		return fmt.Errorf("selfplay: student refresh: %w", err)
	}
	r.student = st
	met["student_n"] = float64(len(all))
	met["student_err_after"] = errOf(st)
	return nil
}

// dialogueMetrics adds the dialogue figures of one phase under prefix.
func dialogueMetrics(met Metrics, pre string, rolls []rollout, gamma float64, T int) {
	var n, turns, uturns, notRat, withheld float64
	var ret, sr, prog, nprog, q float64
	counts := map[decision.Decision]float64{}
	react := make([]float64, NumReactions)
	agree, labelled := 0.0, 0.0
	for _, ro := range rolls {
		d := ro.dl
		if d == nil || d.Error != "" {
			continue
		}
		n++
		rs := make([]float64, len(d.Turns))
		for t, tr := range d.Turns {
			p := tr.RU
			if pre == "sys_" {
				p = tr.RS
			}
			if p != nil {
				rs[t] = *p
			}
			q += float64(tr.Q)
			if tr.Q == masp.NotRational {
				notRat++
			}
			if strings.HasPrefix(tr.QRaw, "withheld") {
				withheld++
			}
			uturns++
		}
		ret += masp.Discounted(rs, gamma)
		if d.SuccessTurn >= 1 && d.SuccessTurn <= T {
			sr++
		}
		last := decision.Continue
		if len(d.Turns) > 0 {
			last = d.Turns[len(d.Turns)-1].Decision
		}
		counts[last]++
		turns += float64(len(d.Turns))
		for k := len(d.Turns) - 1; k >= 0; k-- {
			if p := d.Turns[k].Progress; p != nil {
				prog += *p
				nprog++
				break
			}
		}
		for _, u := range ro.usr {
			react[u.Action]++
			if u.Label >= 0 {
				labelled++
				if u.Label == u.Action {
					agree++
				}
			}
		}
	}
	div := func(a, b float64) float64 {
		if b == 0 {
			return math.NaN()
		}
		return a / b
	}
	met[pre+"dialogues"] = n
	met[pre+"return"] = div(ret, n)
	met[pre+"sr"] = div(sr, n)
	met[pre+"accept"] = div(counts[decision.Accept], n)
	met[pre+"conditional"] = div(counts[decision.Conditional], n)
	met[pre+"reject"] = div(counts[decision.Reject], n)
	met[pre+"pending"] = div(counts[decision.Continue], n)
	met[pre+"turns"] = div(turns, n)
	met[pre+"progress"] = div(prog, nprog)
	met[pre+"q"] = div(q, uturns)
	met[pre+"not_rational"] = div(notRat, uturns)
	met[pre+"withheld"] = div(withheld, uturns)
	for a := range NumReactions {
		met[pre+"react_"+Reaction(a).String()] = div(react[a], uturns)
	}
	met[pre+"mind_agree"] = div(agree, labelled)
}

// finite drops NaN and infinite values (the store refuses them).
func finite(m Metrics) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}

// formatPhase is the live line of one phase.
func formatPhase(cycle, total int, ph Phase, m Metrics) string {
	pre := "sys_"
	if ph == PhaseUser {
		pre = "user_"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cycle %d/%d %-6s  dialogues %.0f  return %+.3f  SR %5.1f%%  acc %5.1f%%  rej %5.1f%%  turns %.2f  progress %+.3f  q %+.2f  withheld %.3f  KL %.4f  H %.3f",
		cycle, total, ph, m[pre+"dialogues"], m[pre+"return"], 100*m[pre+"sr"], 100*m[pre+"accept"], 100*m[pre+"reject"],
		m[pre+"turns"], m[pre+"progress"], m[pre+"q"], m[pre+"withheld"], math.Max(m[pre+"kl"], 0), m[pre+"entropy"])
	if ph == PhaseUser {
		var parts []string
		for a := range NumReactions {
			parts = append(parts, fmt.Sprintf("%s %.2f", Reaction(a), m[pre+"react_"+Reaction(a).String()]))
		}
		fmt.Fprintf(&b, "  mind-agree %.2f  [%s]", m[pre+"mind_agree"], strings.Join(parts, ", "))
	}
	return b.String()
}

// MetricNames returns m's names sorted.
func (m Metrics) MetricNames() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
