package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llmagent"
	"github.com/persuarena/persuarena/masp"
	"github.com/persuarena/persuarena/ppdpp"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
	"github.com/persuarena/persuarena/store"
)

// newMASPCmd returns the "masp" command group (seed 003, SPEC §3); a
// fresh tree each call, so tests do not share flag state.
func newMASPCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "masp",
		Short: "MASP: BDI progress, rationality-constrained success and worst-case evaluation (seed 003)",
	}
	c.AddCommand(maspEvalCmd(), maspImportCmd(), maspCacheCmd())
	return c
}

func init() { rootCmd.AddCommand(newMASPCmd()) }

func maspEvalCmd() *cobra.Command {
	var (
		task, from, split, out   string
		users, persuaders        []string
		T, workers, resamples    int
		seed                     uint64
		tauQ                     float64
		strictP4G, curves, noBDI bool
		studentFrom              string
		ridge                    float64
		config, judge, succJudge string
		teacher                  string
		judgeSamples             int
		dbPath                   string
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Closed-loop MASP evaluation: SR@T, AT, RCSR@T and worst case over users, with bootstrap CIs",
		Long: `Plays each persuader against each user simulator on every case of the task
(seed 003 Appendix C.2: up to T = 8 exchanges; after each, a success judge
reads the whole dialogue and a rationality judge scores the user's reply),
then prints SR@T, AT (failures count T), RCSR@T (success with mean
rationality >= tau_q up to the success turn), and WorstSR / WorstRCSR over the
user ensemble, each with a 95% percentile bootstrap interval over cases, and
paired differences of every persuader against the first.

Users are the seeded simulator's variants: sim (default), sim-soft and
sim-hard. With them the success judge reads the simulator's decision and the
rationality judge its latent state (rule-based; docs/masp.md). The teacher
mentalizer reads the latent state too, so the table also shows mean final
BDI progress toward the task's target state. LLM users are llm:NAME roles of
--config (their decisions give success; pass --judge llm:ROLE for rationality,
--success-judge llm:ROLE for the paper's sampled success judge and --teacher
llm:ROLE for BDI states). A role with "variant: soft" or "variant: hard" is a
soft (cooperative) or hard (rationally resisting) LLM user; on esconv and cb
an LLM user is framed as the help-seeker or the seller (docs/llm-roles.md).

Tasks: p4g reads PersuArena scenarios (--from: a built-in set name or a JSONL
file; default the built-in p4g set, --split heldout). esconv and cb read a
PPDPP file given with --from (e.g. esc-test.txt, cb-test.txt; ESConv is
CC BY-NC and is never shipped). Against the simulator these two only check
that the protocol runs end to end; meaningful numbers need an LLM user.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tk, err := bdi.ParseTask(task)
			if err != nil {
				return err
			}
			cases, err := maspCases(tk, from, split)
			if err != nil {
				return err
			}
			reg, err := roles.New(config)
			if err != nil {
				return err
			}
			pers, err := reg.Persuaders(persuaders)
			if err != nil {
				return err
			}
			rule := masp.DefaultSuccessRule
			rule.StrictP4G = strictP4G
			us, err := reg.MASPUsers(users, rule)
			if err != nil {
				return err
			}
			if err := maspLLMJudges(us, reg, judge, succJudge, judgeSamples, rule); err != nil {
				return err
			}
			if err := atLeast(1, "tmax", T, "workers", workers, "resamples", resamples); err != nil {
				return err
			}
			cfg := masp.EvalConfig{T: T, TauQ: tauQ, Seed: seed, Workers: workers,
				Bootstrap: stats.BootstrapOptions{Resamples: resamples, Seed: seed}}
			if !noBDI {
				cfg.Mind = &masp.Mind{Encoder: bdi.NewMemo(bdi.NewHashedTFIDF(0))}
				if teacher != "" {
					role, c, err := reg.Role(teacher)
					if err != nil {
						return err
					}
					lt := &llmagent.LLMTeacher{Engine: c, Sampling: role.Sampling, Thinking: role.Thinking}
					cfg.Mind.Teacher = func(episode.PersuadeeSession) bdi.Teacher { return lt }
				}
				if studentFrom != "" {
					st, n, err := fitStudent(cmd.Context(), studentFrom, cfg.Mind.Encoder, ridge)
					if err != nil {
						return err
					}
					cfg.Mind.Student = st
					fmt.Fprintf(cmd.ErrOrStderr(), "student fitted on %d cached turns of %s\n", n, studentFrom)
				}
			} else if studentFrom != "" {
				return fmt.Errorf("--student needs the BDI side (drop --no-bdi)")
			}
			for _, u := range us {
				if u.Rationality == nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "note: %s has no rationality judge (--judge llm:ROLE): its q is 0, so its RCSR is 0\n", u.Name)
				}
			}
			if err := reg.Preflight(cmd.Context()); err != nil {
				return err
			}
			db, err := store.Open(cmd.Context(), dbPath)
			if err != nil {
				return err
			}
			defer db.Close()
			svc := runs.New(db)
			runID, err := svc.Create(cmd.Context(), "masp", seed, maspRunConfig{Task: task, From: from, Split: split, Users: users,
				Persuaders: persuaders, T: T, Seed: seed, TauQ: tauQ, StrictP4G: strictP4G, NoBDI: noBDI, Student: studentFrom,
				Ridge: ridge, Config: config, Judge: judge, SuccessJudge: succJudge, Teacher: teacher, JudgeSamples: judgeSamples, LLM: reg.LLM()})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "run %s: %d dialogues to play\n", runID, len(cases)*len(pers)*len(us))
			bar := newProgress(cmd.ErrOrStderr(), len(cases)*len(pers)*len(us), "masp eval")
			res, err := masp.Evaluate(cmd.Context(), cfg, cases, pers, us, func(done, total int) { bar.Increment() })
			bar.Wait()
			if err := svc.Finish(cmd.Context(), runID, err); err != nil {
				return err
			}
			if out != "" {
				if err := writeDialogues(out, res); err != nil {
					return err
				}
			}
			rep, err := res.Report(cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "run %s: task %s, %d cases (%s), persuaders %s, users %s, seed %d\n",
				runID, tk, len(cases), caseSource(tk, from, split), strings.Join(res.Persuaders, ","), strings.Join(res.Users, ","), seed)
			return rep.WriteText(cmd.OutOrStdout(), curves)
		},
	}
	f := cmd.Flags()
	f.StringVar(&task, "task", "p4g", "task: p4g, esconv or cb")
	f.StringVar(&from, "from", "", "cases: p4g: scenario set name or JSONL file (default p4g); esconv, cb: PPDPP file (esc-*.txt, cb-*.txt)")
	f.StringVar(&split, "split", "heldout", "p4g split: train, val, heldout or all (PPDPP files are one split each)")
	f.StringSliceVar(&users, "users", []string{"sim-soft", "sim-hard", "sim"}, "users (the ensemble): sim, sim-soft, sim-hard, llm:NAME roles of --config")
	f.StringSliceVar(&persuaders, "persuader", []string{"script", "informer", "pushy", "random"}, "persuaders to evaluate (built-in names); the first is the baseline of the paired differences")
	f.IntVar(&T, "tmax", masp.DefaultT, "turn budget T (MASP paper: 8)")
	seedFlag(f, &seed, "episode seeds and bootstrap")
	f.IntVar(&resamples, "resamples", 10000, "bootstrap resamples")
	f.Float64Var(&tauQ, "tau-q", masp.DefaultTauQ, "rationality threshold tau_q of RCSR (seed 003: 0.70)")
	f.BoolVar(&strictP4G, "strict-p4g", false, "P4G success needs mean > 0.6 (released code) instead of >= 0.6 (paper)")
	f.BoolVar(&curves, "curves", false, "also print RCSR@t for t = 1..T")
	f.BoolVar(&noBDI, "no-bdi", false, "skip teacher states and progress")
	workersFlag(f, &workers)
	f.StringVar(&out, "out", "", "also write every dialogue as JSON Lines to this file")
	f.StringVar(&studentFrom, "student", "", "fit the history-only student mentalizer on this BDI cache (persuarena masp cache) and report its error ||z-hat - z||_A^2")
	f.Float64Var(&ridge, "ridge", bdi.DefaultLambda, "ridge penalty of the student mentalizer's fit")
	f.StringVar(&dbPath, "db", defaultDB, "run database (SQLite): the run record (kind masp) with its configuration and status")
	f.StringVar(&config, "config", "", "persuarena.yaml with the LLM backends and roles named by llm:NAME")
	f.StringVar(&judge, "judge", "", "llm:ROLE: LLM rationality judge for every user (default: rule-based for sim users, none for LLM users)")
	f.StringVar(&succJudge, "success-judge", "", "llm:ROLE: LLM success judge for every user (default: read the user's decision)")
	f.IntVar(&judgeSamples, "judge-samples", 3, "samples per LLM success verdict (seed 003: 3)")
	f.StringVar(&teacher, "teacher", "", "llm:ROLE: LLM teacher mentalizer for BDI states (default: the simulator's latent state, sim users only)")
	return cmd
}

// maspRunConfig is what a masp eval run stores (never keys).
type maspRunConfig struct {
	Task         string          `json:"task"`
	From         string          `json:"from,omitempty"`
	Split        string          `json:"split"`
	Users        []string        `json:"users"`
	Persuaders   []string        `json:"persuaders"`
	T            int             `json:"tmax"`
	Seed         uint64          `json:"seed"`
	TauQ         float64         `json:"tau_q"`
	StrictP4G    bool            `json:"strict_p4g,omitempty"`
	NoBDI        bool            `json:"no_bdi,omitempty"`
	Student      string          `json:"student,omitempty"`
	Ridge        float64         `json:"ridge"`
	Config       string          `json:"config,omitempty"`
	Judge        string          `json:"judge,omitempty"`
	SuccessJudge string          `json:"success_judge,omitempty"`
	Teacher      string          `json:"teacher,omitempty"`
	JudgeSamples int             `json:"judge_samples"`
	LLM          []roles.LLMInfo `json:"llm,omitempty"`
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
func fitStudent(ctx context.Context, path string, enc bdi.Encoder, lambda float64) (*bdi.Student, int, error) {
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

func maspCacheCmd() *cobra.Command {
	var (
		task, from, split, out string
		users, persuaders      []string
		T, workers             int
		seed                   uint64
	)
	cmd := &cobra.Command{
		Use:   "cache --out FILE.jsonl",
		Short: "Build a BDI cache from simulated dialogues labelled by the teacher (for the student mentalizer)",
		Long: `Plays the persuaders against the simulator users on the chosen cases (by default
the p4g train split), labels the initial context and every turn with the
teacher mentalizer (the simulator's latent state mapped to BDI; docs/masp.md),
and writes a BDI cache: one session record per dialogue (initial state and
profile text) and one turn record per turn (history prefix and state). Fit
the student on it with "persuarena masp eval --student FILE".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("masp cache needs --out")
			}
			if err := atLeast(1, "tmax", T, "workers", workers); err != nil {
				return err
			}
			tk, err := bdi.ParseTask(task)
			if err != nil {
				return err
			}
			cases, err := maspCases(tk, from, split)
			if err != nil {
				return err
			}
			reg, err := roles.New("")
			if err != nil {
				return err
			}
			pers, err := reg.Persuaders(persuaders)
			if err != nil {
				return err
			}
			us, err := reg.MASPUsers(users, masp.DefaultSuccessRule)
			if err != nil {
				return err
			}
			cfg := masp.EvalConfig{T: T, Seed: seed, Workers: workers, Mind: &masp.Mind{}}
			res, err := masp.Evaluate(cmd.Context(), cfg, cases, pers, us, nil)
			if err != nil {
				return err
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
			if err := c.WriteFile(out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d session and %d turn records to %s\n", len(c.Sessions), len(c.Turns), out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&task, "task", "p4g", "task: p4g, esconv or cb")
	f.StringVar(&from, "from", "", "cases (as for masp eval)")
	f.StringVar(&split, "split", "train", "p4g split: train, val, heldout or all")
	f.StringSliceVar(&users, "users", []string{"sim"}, "simulator users: sim, sim-soft, sim-hard")
	f.StringSliceVar(&persuaders, "persuader", []string{"script", "random"}, "persuaders that generate the dialogues")
	f.IntVar(&T, "tmax", masp.DefaultT, "turn budget T")
	seedFlag(f, &seed, "episode seeds")
	workersFlag(f, &workers)
	f.StringVar(&out, "out", "", "BDI cache file to write (JSON Lines)")
	return cmd
}

func caseSource(t bdi.Task, from, split string) string {
	if t == bdi.P4G {
		if from == "" {
			from = "p4g"
		}
		return from + " " + split
	}
	return filepath.Base(from)
}

// maspCases loads the task's cases.
func maspCases(t bdi.Task, from, split string) ([]*masp.Case, error) {
	switch t {
	case bdi.P4G:
		if from == "" {
			from = "p4g"
		}
		ss, err := scenario.Resolve(from)
		if err != nil {
			return nil, err
		}
		if err := runs.CheckSplit(split); err != nil {
			return nil, err
		}
		if split != "all" {
			ss = scenario.Filter(ss, scenario.Split(split))
		}
		if len(ss) == 0 {
			return nil, fmt.Errorf("%s has no %s scenarios", from, split)
		}
		return masp.ScenarioCases(ss), nil
	case bdi.ESConv, bdi.CB:
		if from == "" {
			return nil, fmt.Errorf("--task %s needs --from PATH (a PPDPP %s file)", t, map[bdi.Task]string{bdi.ESConv: "esc-*.txt", bdi.CB: "cb-*.txt"}[t])
		}
		return ppdpp.LoadCases(t, from)
	}
	return nil, fmt.Errorf("masp eval has no protocol for task %q", t)
}

// writeDialogues writes every dialogue as one JSON line, atomically.
func writeDialogues(path string, res *masp.Results) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
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
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func maspImportCmd() *cobra.Command {
	var from, out string
	cmd := &cobra.Command{
		Use:   "import esconv|cb --from PATH --out FILE.jsonl",
		Short: "Convert a PPDPP ESConv or CraigslistBargain file into PersuArena scenarios (JSONL)",
		Long: `Reads a PPDPP file (esc-*.txt or cb-*.txt) and writes one validated PersuArena
scenario per dialogue (docs/masp.md lists the field choices), so other
commands can play them. ESConv is CC BY-NC 4.0: keep the output out of
anything you redistribute commercially.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tk, err := bdi.ParseTask(args[0])
			if err != nil {
				return err
			}
			if from == "" || out == "" {
				return fmt.Errorf("masp import needs --from and --out")
			}
			cases, err := ppdpp.LoadCases(tk, from)
			if err != nil {
				return err
			}
			ss := make([]scenario.Scenario, len(cases))
			for i, c := range cases {
				ss[i] = *c.Scenario
			}
			if err := scenario.WriteFile(out, ss); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d scenarios to %s\n", len(ss), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "PPDPP file to read")
	cmd.Flags().StringVar(&out, "out", "", "scenario JSONL file to write")
	return cmd
}
