package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// --scenarios splits on commas only; a backslash escapes a comma or a
// backslash, and quotes are ordinary characters.
func TestScenariosSplitWithoutCSV(t *testing.T) {
	for in, want := range map[string][]string{
		`p4g,arena`:         {"p4g", "arena"},
		`my"set".jsonl,p4g`: {`my"set".jsonl`, "p4g"},
		`a\,b.jsonl`:        {"a,b.jsonl"},
		`c:\\sets\\x.jsonl`: {`c:\sets\x.jsonl`},
		`"quoted, not csv"`: {`"quoted`, ` not csv"`},
	} {
		if got := splitList(in); !slices.Equal(got, want) {
			t.Errorf("splitList(%q) = %q, want %q", in, got, want)
		}
	}
	// A file whose name holds a quote reaches the loader intact: the error
	// names the whole file (it is not valid JSONL).
	dir := t.TempDir()
	p := filepath.Join(dir, `odd"name.jsonl`)
	if err := os.WriteFile(p, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := execEval(t, false, false, "--scenarios", p, "--db", filepath.Join(dir, "r.db"), "--rollouts", "1")
	if err == nil || !strings.Contains(err.Error(), `odd"name.jsonl`) || strings.Contains(err.Error(), "bare \" in non-quoted-field") {
		t.Fatalf("quoted file name: %v", err)
	}
}

// --resume with a flag that would change the stored plan is refused,
// naming it and the stored value; repeating the stored value passes.
func TestResumeRefusesPlanFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	out, errOut, err := execEval(t, false, false, "--db", db, "--split", "heldout", "--tmax", "2", "--rollouts", "1", "--workers", "1")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	_ = out
	id := regexp.MustCompile(`run (\d{8}-\d{6}-[0-9a-f]{4})`).FindStringSubmatch(errOut)
	if id == nil {
		t.Fatalf("no run id in:\n%s", errOut)
	}
	_, _, err = execEval(t, false, false, "--resume", id[1], "--rollouts", "3", "--db", db)
	if err == nil || !strings.Contains(err.Error(), "--resume plays the run's stored plan (rollouts 1); --rollouts 3 would change it") {
		t.Fatalf("--resume --rollouts 3: %v", err)
	}
	if _, errOut, err := execEval(t, false, false, "--resume", id[1], "--rollouts", "1", "--db", db); err != nil || !strings.Contains(errOut, "0 episodes to play") {
		t.Fatalf("--resume --rollouts 1 (the stored value): %v\n%s", err, errOut)
	}
}
