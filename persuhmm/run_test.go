package persuhmm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/persuhmm"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/scenario"
)

func registry(t *testing.T) *roles.Registry {
	t.Helper()
	reg, err := roles.New("")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// The first 6 train tasks of p4g and arena in batches of 2, seed 1: what
// "persuarena memory learn --tasks 6 --batch 2" prints on the default
// simulator (the fit to people) with the embedded goal evaluator at
// DefaultTarget.
func TestRunLearnGolden(t *testing.T) {
	ctx := context.Background()
	spec := persuhmm.LearnSpec{Out: filepath.Join(t.TempDir(), "hmm.json"), Scenarios: []string{"p4g", "arena"},
		Split: string(scenario.Train), Tasks: 6, B: 2, Persuadee: "sim", Roles: registry(t), Seed: 1}
	var log bytes.Buffer
	m, err := persuhmm.RunLearn(ctx, spec, &log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "tasks 2/6  accepted 0  pending patterns 5  tokens 0\ntasks 4/6  accepted 0  pending patterns 5  tokens 0\n" +
		"tasks 6/6  accepted 0  pending patterns 5  tokens 0\n"; log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
	var out bytes.Buffer
	if err := m.WriteStats(&out); err != nil {
		t.Fatal(err)
	}
	want := "domains 1  strategies 2 (logical 1, emotional 0, behavioral 1)  patterns 4  macro domains 1  macro-strategies 0  mean validity 1.000  learning tasks 6\n" +
		"learning: 6/6 tasks, 0 accepted, tokens 0 (components 0 requests)\n"
	if out.String() != want {
		t.Errorf("stats:\n%s\nwant:\n%s", out.String(), want)
	}

	// A rerun resumes the saved, finished memory and learns nothing more.
	log.Reset()
	m2, err := persuhmm.RunLearn(ctx, spec, &log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "resuming " + spec.Out + "\n"; log.String() != want {
		t.Errorf("resume log %q, want %q", log.String(), want)
	}
	out.Reset()
	m2.WriteStats(&out)
	if out.String() != want {
		t.Errorf("resumed stats:\n%s", out.String())
	}

	out.Reset()
	if err := m.WriteTree(&out); err != nil {
		t.Fatal(err)
	}
	tree := out.String()
	if !strings.HasPrefix(tree, "macro domain \"charity\": [charity]\nDomain: charity\n") || !strings.HasSuffix(tree, "(validity 1.00)\n(6 learning tasks)\n") ||
		!strings.Contains(tree, "  logical:\n    [s1] ") || !strings.Contains(tree, "  behavioral:\n    [s2] ") {
		t.Errorf("tree:\n%s", tree)
	}

	out.Reset()
	if err := m.WriteJSONL(&out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var row struct {
			ID       string  `json:"id"`
			Category string  `json:"category"`
			NSucc    int     `json:"n_succ"`
			ND       int     `json:"n_d"`
			Validity float64 `json:"validity"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		if row.ND == 0 || row.Validity != float64(row.NSucc)/float64(row.ND) {
			t.Errorf("%s: validity %v, n_succ %d, n_d %d", row.ID, row.Validity, row.NSucc, row.ND)
		}
		got = append(got, row.ID+":"+row.Category)
	}
	if g := strings.Join(got, " "); g != "s1:logical s2:behavioral" {
		t.Errorf("export rows %s", g)
	}
}

func TestRunLearnErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, c := range map[string]struct {
		spec persuhmm.LearnSpec
		want string
	}{
		"no out":        {persuhmm.LearnSpec{Roles: registry(t)}, "no memory file"},
		"no roles":      {persuhmm.LearnSpec{Out: filepath.Join(dir, "a.json")}, "no role resolver"},
		"negative":      {persuhmm.LearnSpec{Out: filepath.Join(dir, "b.json"), Roles: registry(t), B: -1}, "negative size (B -1"},
		"no tasks":      {persuhmm.LearnSpec{Out: filepath.Join(dir, "c.json"), Roles: registry(t), Scenarios: []string{"p4g"}, Split: "bogus"}, `no tasks in [p4g] (split "bogus")`},
		"bad persuadee": {persuhmm.LearnSpec{Out: filepath.Join(dir, "d.json"), Roles: registry(t), Scenarios: []string{"p4g"}, Tasks: 1, Persuadee: "nobody"}, `unknown persuadee "nobody"`},
	} {
		_, err := persuhmm.RunLearn(ctx, c.spec, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
	_, err := persuhmm.RunLearn(ctx, persuhmm.LearnSpec{Out: filepath.Join(dir, "e.json"), Roles: registry(t), Scenarios: []string{"p4g"}, Tasks: 1, Persuadee: "nobody"}, nil)
	if !errors.Is(err, roles.ErrUnknown) {
		t.Errorf("unknown persuadee: %v is not roles.ErrUnknown", err)
	}
}

func TestLoadTasks(t *testing.T) {
	all, err := persuhmm.LoadTasks([]string{"p4g"}, string(scenario.Heldout), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := scenario.ResolveSplit(scenario.Heldout, "p4g")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(ss) || len(all) < 3 || all[0].Scenario.ID != ss[0].ID {
		t.Fatalf("%d tasks, %d scenarios", len(all), len(ss))
	}
	first, err := persuhmm.LoadTasks([]string{"p4g"}, string(scenario.Heldout), "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || first[1].Scenario.ID != ss[1].ID {
		t.Errorf("n=2: %d tasks", len(first))
	}
	if _, err := persuhmm.LoadTasks(nil, "", filepath.Join(t.TempDir(), "missing.json"), 0); err == nil {
		t.Error("missing DailyPersuasion file: no error")
	}
}

// The ablation's header and full-loop row on the first 6 train tasks,
// seed 1, as "persuarena memory ablate --tasks 6" prints on the v7
// simulator, default = the fit to people (sim/fits/people.json).
func TestRunAblate(t *testing.T) {
	cidata.Slow(t, "learns and scores four memories")
	spec := persuhmm.AblateSpec{Scenarios: []string{"p4g", "arena"}, Tasks: 6, Persuadee: "sim", Roles: registry(t), Seed: 1}
	var out bytes.Buffer
	if err := persuhmm.RunAblate(context.Background(), spec, &out, nil); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.HasPrefix(s, "learn 6 tasks, test 640 tasks, persuadee sim, seed 1\n\n") ||
		!strings.Contains(s, "| 4 | full | 0.047 (30/640) | 0 | 0 | 2 | +20 / -65 | 1.03e-06 |\n") ||
		!strings.Contains(s, "| script | 0.117 (75/640) |\n") || strings.Contains(s, "learned on") {
		t.Errorf("ablation:\n%s", s)
	}
	spec.Roles = nil
	if err := persuhmm.RunAblate(context.Background(), spec, &out, nil); err == nil || !strings.Contains(err.Error(), "no role resolver") {
		t.Errorf("nil Roles: %v", err)
	}
}

func TestEncoderNames(t *testing.T) {
	for _, n := range []string{"", "tfidf"} {
		if e, err := persuhmm.Encoder(n, registry(t)); err != nil || e == nil {
			t.Errorf("%q: %v", n, err)
		}
	}
	if _, err := persuhmm.Encoder("bert", registry(t)); err == nil || !strings.Contains(err.Error(), `unknown encoder "bert" (want tfidf or llm:ROLE)`) {
		t.Errorf("unknown: %v", err)
	}
	if _, err := persuhmm.Encoder("llm:e", registry(t)); err == nil || !strings.Contains(err.Error(), "--encoder: llm:e needs --config") {
		t.Errorf("no config: %v", err)
	}
}
