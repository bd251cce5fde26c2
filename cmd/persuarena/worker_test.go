package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/persuarena/persuarena/store/storetest"
)

// execEval runs eval of persuader script against sim on the p4g
// scenarios, every other flag at its default. The three are set as
// defaults, not given, so that args may replace them (a list flag given
// twice appends).
func execEval(t *testing.T, enqueue, wait bool, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	c, _, err := root.Find([]string{"eval"})
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"persuader": "script", "persuadee": "sim", "scenarios": "p4g"} {
		if err := c.Flags().Lookup(name).Value.(pflag.SliceValue).Replace([]string{v}); err != nil {
			t.Fatal(err)
		}
	}
	return execTree(t, root, append([]string{"eval", "--enqueue=" + strconv.FormatBool(enqueue), "--wait=" + strconv.FormatBool(wait)}, args...)...)
}

// eval --enqueue needs a PostgreSQL --db and --wait needs --enqueue; on
// PostgreSQL it prints the run ID and how many episodes it queued, and
// runs show reads the run's progress.
func TestEvalEnqueue(t *testing.T) {
	dir := t.TempDir()
	sqlite := filepath.Join(dir, "runs.db")
	base := []string{"--split", "heldout", "--tmax", "4", "--workers", "1"}
	if _, _, err := execEval(t, true, false, append(base, "--db", sqlite)...); err == nil || !strings.Contains(err.Error(), "--enqueue needs --db postgres://") {
		t.Fatalf("SQLite --enqueue: %v", err)
	}
	if _, _, err := execEval(t, false, true, append(base, "--db", sqlite)...); err == nil || err.Error() != "--wait needs --enqueue" {
		t.Fatalf("--wait alone: %v", err)
	}
	if _, err := os.Stat(sqlite); !os.IsNotExist(err) {
		t.Fatalf("a rejected command left %s behind (%v)", sqlite, err)
	}
	if _, _, err := execRoot(t, "worker", "--db", sqlite, "--workers", "1"); err == nil || !strings.Contains(err.Error(), "needs a PostgreSQL run database") {
		t.Fatalf("worker on SQLite: %v", err)
	}
	db := storetest.PostgresURL(t)
	out, errOut, err := execEval(t, true, false, append(base, "--db", db)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	id := strings.TrimSpace(out)
	if !regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]{4}$`).MatchString(id) {
		t.Fatalf("stdout %q, want the run ID", out)
	}
	if want := "run " + id + ": 120 episodes queued (120 missing, 0 already stored)"; !strings.Contains(errOut, want) {
		t.Fatalf("stderr lacks %q:\n%s", want, errOut)
	}
	out, _, err = execRoot(t, "runs", "show", id, "--db", db)
	if err != nil || !regexp.MustCompile(`status +running, 0/120 episodes stored`).MatchString(out) {
		t.Fatalf("runs show: %v\n%s", err, out)
	}
}
