package runs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/atomicfile"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/maspdata"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
)

// DialoguesArtifact names the stored artifact (store.Store.SaveArtifact)
// holding a masp eval run's dialogues as JSON Lines, one masp.Dialogue
// per line in persuader, user, case order.
const DialoguesArtifact = "dialogues.jsonl"

// MASPSpec is a masp eval invocation: the MASP paper's closed-loop
// evaluation (Appendix C.2) of Persuaders against the user ensemble Users
// on Task's cases. The tagged fields are what the run stores (never keys);
// the untagged ones are per invocation.
type MASPSpec struct {
	Task       string   `json:"task"`
	From       string   `json:"from,omitempty"`
	Split      string   `json:"split"`
	Users      []string `json:"users"`
	Persuaders []string `json:"persuaders"`
	// T is the turn budget (>= 1; MASP paper: 8) and TauQ the rationality
	// threshold tau_q of RCSR (MASP paper: 0.70).
	T         int     `json:"tmax"`
	Seed      uint64  `json:"seed"`
	TauQ      float64 `json:"tau_q"`
	StrictP4G bool    `json:"strict_p4g,omitempty"`
	// NoBDI skips teacher states and progress; Student is a BDI cache the
	// student mentalizer is fitted on, with ridge penalty Ridge.
	NoBDI   bool    `json:"no_bdi,omitempty"`
	Student string  `json:"student,omitempty"`
	Ridge   float64 `json:"ridge"`
	// Config resolves the llm:ROLE names of Users, Judge (rationality),
	// SuccessJudge (JudgeSamples samples a verdict) and Teacher.
	Config       string          `json:"config,omitempty"`
	Judge        string          `json:"judge,omitempty"`
	SuccessJudge string          `json:"success_judge,omitempty"`
	Teacher      string          `json:"teacher,omitempty"`
	JudgeSamples int             `json:"judge_samples"`
	LLM          []roles.LLMInfo `json:"llm,omitempty"`
	// Resamples (>= 1) is the bootstrap size, Workers (>= 1) the
	// concurrent dialogues, Out an optional JSONL file of the dialogues.
	Resamples int    `json:"-"`
	Workers   int    `json:"-"`
	Out       string `json:"-"`
}

// MASPResult is a finished masp eval run.
type MASPResult struct {
	RunID   string
	Spec    MASPSpec
	Cases   int
	Results *masp.Results
	Report  *masp.Report
}

// Write prints the run line (run, task, cases and their source,
// persuaders, users, seed) and the report (masp.Report.WriteText; curves
// adds RCSR@t for t = 1..T).
func (r *MASPResult) Write(w io.Writer, curves bool) error {
	s := r.Spec
	tk, _ := bdi.ParseTask(s.Task)
	fmt.Fprintf(w, "run %s: task %s, %d cases (%s), persuaders %s, users %s, seed %d\n",
		r.RunID, tk, r.Cases, caseSource(tk, s.From, s.Split), strings.Join(r.Results.Persuaders, ","), strings.Join(r.Results.Users, ","), s.Seed)
	return r.Report.WriteText(w, curves)
}

// MASPEval runs masp eval: it resolves the cases (MASPCases), the roles
// (package roles: built-in and planner persuaders; sim, sim-soft,
// sim-hard and llm:NAME users), the LLM judges and teacher, fits the
// student when asked, preflights every LLM backend, creates the run (kind
// masp), plays every dialogue (masp.Evaluate; progress, when set, gets
// the total and returns the counter), stores the dialogues with the run
// (DialoguesArtifact; MASPDialogues reads them back), writes spec.Out and
// computes the MASP paper's report with bootstrap intervals. Notes (the
// student's fit, users without a rationality judge, the dialogue count)
// go to log. Errors: bad input (naming the flag), the registry's,
// preflight's, the student fit's, masp.Evaluate's (the run is then
// failed) and the store's.
func (s *Service) MASPEval(ctx context.Context, spec MASPSpec, log io.Writer, progress func(total int) func(int)) (*MASPResult, error) {
	logf := func(format string, args ...any) {
		if log != nil {
			fmt.Fprintf(log, format, args...)
		}
	}
	rule := masp.DefaultSuccessRule
	rule.StrictP4G = spec.StrictP4G
	cases, reg, pers, us, err := maspRoles(spec.Task, spec.From, spec.Split, spec.Config, spec.Persuaders, spec.Users, rule)
	if err != nil {
		return nil, err
	}
	if err := maspLLMJudges(us, reg, spec.Judge, spec.SuccessJudge, spec.JudgeSamples, rule); err != nil {
		return nil, err
	}
	if err := AtLeast(1, "tmax", spec.T, "workers", spec.Workers, "resamples", spec.Resamples); err != nil {
		return nil, err
	}
	cfg := masp.EvalConfig{T: spec.T, TauQ: spec.TauQ, Seed: spec.Seed, Workers: spec.Workers,
		Bootstrap: stats.BootstrapOptions{Resamples: spec.Resamples, Seed: spec.Seed}}
	if !spec.NoBDI {
		cfg.Mind = &masp.Mind{Encoder: embed.NewMemo(embed.NewHashedTFIDF(0))}
		if spec.Teacher != "" {
			role, c, err := reg.Role(spec.Teacher)
			if err != nil {
				return nil, err
			}
			lt := &masp.LLMTeacher{Engine: c, Sampling: role.Sampling, Thinking: role.Thinking}
			cfg.Mind.Teacher = func(episode.PersuadeeSession) bdi.Teacher { return lt }
		}
		if spec.Student != "" {
			st, n, err := fitStudent(ctx, spec.Student, cfg.Mind.Encoder, spec.Ridge)
			if err != nil {
				return nil, err
			}
			cfg.Mind.Student = st
			logf("student fitted on %d cached turns of %s\n", n, spec.Student)
		}
	} else if spec.Student != "" {
		return nil, fmt.Errorf("--student needs the BDI side (drop --no-bdi)")
	}
	for _, u := range us {
		if u.Rationality == nil {
			logf("note: %s has no rationality judge (--judge llm:ROLE): its q is 0, so its RCSR is 0\n", u.Name)
		}
	}
	if err := reg.Preflight(ctx); err != nil {
		return nil, err
	}
	spec.LLM = reg.LLM()
	runID, err := s.Create(ctx, "masp", spec.Seed, spec)
	if err != nil {
		return nil, err
	}
	total := len(cases) * len(pers) * len(us)
	logf("run %s: %d dialogues to play\n", runID, total)
	var count func(int)
	if progress != nil {
		count = progress(total)
	}
	res, err := masp.Evaluate(ctx, cfg, cases, pers, us, func(done, total int) {
		if count != nil {
			count(1)
		}
	})
	if err == nil {
		var buf bytes.Buffer
		if err = writeDialogues(&buf, res); err == nil {
			err = s.Store.SaveArtifact(context.WithoutCancel(ctx), runID, DialoguesArtifact, buf.Bytes())
		}
		if err == nil && spec.Out != "" {
			err = atomicfile.Write(spec.Out, buf.Bytes())
		}
	}
	if err := s.Finish(ctx, runID, err); err != nil {
		return nil, err
	}
	rep, err := res.Report(cfg)
	if err != nil {
		return nil, err
	}
	return &MASPResult{RunID: runID, Spec: spec, Cases: len(cases), Results: res, Report: rep}, nil
}

// MASPDialogues reads back the dialogues a masp eval run stored
// (DialoguesArtifact), in the order written. Errors: store.ErrNotFound
// for an unknown run or a run without dialogues; a line that does not
// decode (naming it).
func (s *Service) MASPDialogues(ctx context.Context, runID string) ([]*masp.Dialogue, error) {
	if err := s.ensure(ctx, true); err != nil {
		return nil, err
	}
	b, err := s.Store.Artifact(ctx, runID, DialoguesArtifact)
	if err != nil {
		return nil, err
	}
	var out []*masp.Dialogue
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for line := 1; sc.Scan(); line++ {
		d := new(masp.Dialogue)
		if err := json.Unmarshal(sc.Bytes(), d); err != nil {
			return nil, fmt.Errorf("run %s: %s line %d: %w", runID, DialoguesArtifact, line, err)
		}
		out = append(out, d)
	}
	return out, sc.Err()
}

// writeDialogues writes every dialogue of res as one JSON line, in
// persuader, user, case order.
func writeDialogues(w io.Writer, res *masp.Results) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for p := range res.Dialogues {
		for u := range res.Dialogues[p] {
			for _, d := range res.Dialogues[p][u] {
				if err := enc.Encode(d); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// MASPCacheSpec is a masp cache invocation: the dialogues of Persuaders
// against the simulator Users on Task's cases, labelled by the teacher
// mentalizer, written to Out as a BDI cache (bdi.Cache).
type MASPCacheSpec struct {
	Task, From, Split, Out string
	Users, Persuaders      []string
	T, Workers             int
	Seed                   uint64
}

// MASPCache plays the spec's dialogues (masp.Evaluate with the teacher
// only), writes one session record per dialogue and one turn record per
// turn (masp.CacheRecords) to Out, and returns the cache. Errors: no Out,
// T or Workers < 1, MASPCases', the registry's and masp.Evaluate's.
func MASPCache(ctx context.Context, spec MASPCacheSpec) (*bdi.Cache, error) {
	if spec.Out == "" {
		return nil, fmt.Errorf("masp cache needs --out")
	}
	if err := AtLeast(1, "tmax", spec.T, "workers", spec.Workers); err != nil {
		return nil, err
	}
	cases, _, pers, us, err := maspRoles(spec.Task, spec.From, spec.Split, "", spec.Persuaders, spec.Users, masp.DefaultSuccessRule)
	if err != nil {
		return nil, err
	}
	cfg := masp.EvalConfig{T: spec.T, Seed: spec.Seed, Workers: spec.Workers, Mind: &masp.Mind{}}
	res, err := masp.Evaluate(ctx, cfg, cases, pers, us, nil)
	if err != nil {
		return nil, err
	}
	byID := map[string]*masp.Case{}
	for i, c := range cases {
		byID[res.Cases[i]] = c
	}
	var ds []*masp.Dialogue
	for p := range res.Dialogues {
		for u := range res.Dialogues[p] {
			ds = append(ds, res.Dialogues[p][u]...)
		}
	}
	c := masp.CacheRecords(byID, ds)
	return c, c.WriteFile(spec.Out)
}

// MASPImport converts a PPDPP ESConv or CraigslistBargain file (task
// esconv or cb) into validated PersuArena scenarios written to out
// (scenario.WriteFile) and returns their number. Errors: an unknown task,
// a missing path, maspdata.LoadCases' and the writer's.
func MASPImport(task, from, out string) (int, error) {
	tk, err := bdi.ParseTask(task)
	if err != nil {
		return 0, err
	}
	if from == "" || out == "" {
		return 0, fmt.Errorf("masp import needs --from and --out")
	}
	cases, err := maspdata.LoadCases(tk, from)
	if err != nil {
		return 0, err
	}
	ss := make([]scenario.Scenario, len(cases))
	for i, c := range cases {
		ss[i] = *c.Scenario
	}
	return len(ss), scenario.WriteFile(out, ss)
}

// MASPCases loads a task's cases: p4g reads PersuArena scenarios (from: a
// set name or JSONL file, default the built-in p4g set; split train, val,
// heldout or all), esconv and cb a PPDPP file (from required). Errors: an
// unknown split, no scenarios of the split, a missing PPDPP path, the
// loaders'.
func MASPCases(t bdi.Task, from, split string) ([]*masp.Case, error) {
	switch t {
	case bdi.P4G:
		if from == "" {
			from = "p4g"
		}
		ss, err := scenario.Resolve(from)
		if err != nil {
			return nil, err
		}
		sp, err := scenario.ParseSplit(split)
		if err != nil {
			return nil, err
		}
		ss = scenario.Filter(ss, sp)
		if len(ss) == 0 {
			return nil, fmt.Errorf("%s has no %s scenarios", from, split)
		}
		return masp.ScenarioCases(ss), nil
	case bdi.ESConv, bdi.CB:
		if from == "" {
			return nil, fmt.Errorf("--task %s needs --from PATH (a PPDPP %s file)", t, map[bdi.Task]string{bdi.ESConv: "esc-*.txt", bdi.CB: "cb-*.txt"}[t])
		}
		return maspdata.LoadCases(t, from)
	}
	return nil, fmt.Errorf("masp eval has no protocol for task %q", t)
}

// caseSource names where the cases came from: "SET SPLIT" for p4g, the
// file's base name otherwise.
func caseSource(t bdi.Task, from, split string) string {
	if t == bdi.P4G {
		if from == "" {
			from = "p4g"
		}
		return from + " " + split
	}
	return filepath.Base(from)
}

// maspRoles resolves a MASP job's cases (MASPCases of the task) and its
// persuaders and users through the role registry of config.
func maspRoles(task, from, split, config string, persuaders, users []string, rule masp.SuccessRule) ([]*masp.Case, *roles.Registry, []episode.Persuader, []masp.User, error) {
	tk, err := bdi.ParseTask(task)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	cases, err := MASPCases(tk, from, split)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	reg, err := roles.New(config)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	pers, err := reg.Persuaders(persuaders)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	us, err := reg.MASPUsers(users, rule)
	return cases, reg, pers, us, err
}

// maspLLMJudges replaces the users' judges with LLM judges when asked.
func maspLLMJudges(us []masp.User, reg *roles.Registry, judge, succ string, samples int, rule masp.SuccessRule) error {
	if judge != "" {
		role, c, err := reg.Role(judge)
		if err != nil {
			return err
		}
		j := &masp.LLMRationalityJudge{Engine: c, Sampling: role.Sampling, Thinking: role.Thinking}
		for i := range us {
			us[i].Rationality = j
		}
	}
	if succ != "" {
		role, c, err := reg.Role(succ)
		if err != nil {
			return err
		}
		j := &masp.LLMSuccessJudge{Engine: c, Samples: samples, Sampling: role.Sampling, Thinking: role.Thinking, Rule: rule}
		for i := range us {
			us[i].Success = j
		}
	}
	return nil
}

// fitStudent fits a student on the turn records of a BDI cache file.
func fitStudent(ctx context.Context, path string, enc embed.Encoder, lambda float64) (*bdi.Student, int, error) {
	c, err := bdi.LoadCache(path)
	if err != nil {
		return nil, 0, err
	}
	ex, err := c.Examples(ctx, enc, bdi.DefaultAlpha)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	st, err := bdi.FitStudent(ex, bdi.DefaultAlpha, lambda)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return st, len(ex), nil
}
