package cidata

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how it was stopped instead of
// stopping, so Require's two outcomes can be checked from one test.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Fatalf(f string, a ...any) { r.fatal = fmt.Sprintf(f, a...) }
func (r *recorder) Skipf(f string, a ...any)  { r.skip = fmt.Sprintf(f, a...) }

func TestRequire(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "absent.csv")
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		if got := Require(r, dir); got != dir || r.fatal != "" || r.skip != "" {
			t.Errorf("CI=%q, present dir: returned %q, fatal %q, skip %q", ci, got, r.fatal, r.skip)
		}
		r = &recorder{TB: t}
		Require(r, missing)
		stopped := r.skip
		if ci != "" {
			stopped = r.fatal
			if r.skip != "" {
				t.Errorf("CI=%q: skipped (%q), want a failure", ci, r.skip)
			}
		} else if r.fatal != "" {
			t.Errorf("CI unset: failed (%q), want a skip", r.fatal)
		}
		if !strings.Contains(stopped, missing) || !strings.Contains(stopped, "no such file") {
			t.Errorf("CI=%q: message %q does not name the path and the error", ci, stopped)
		}
	}
}

// Slow skips only under -short and never under CI.
func TestSlow(t *testing.T) {
	was := testing.Short()
	t.Cleanup(func() { flag.Set("test.short", fmt.Sprint(was)) })
	for _, c := range []struct {
		short    bool
		ci, want string
	}{
		{false, "", ""},
		{false, "true", ""},
		{true, "true", ""},
		{true, "", "slow (a drill): go test -short leaves it out; go test ./... and CI run it"},
	} {
		flag.Set("test.short", fmt.Sprint(c.short))
		t.Setenv("CI", c.ci)
		r := &recorder{TB: t}
		Slow(r, "a drill")
		if r.skip != c.want || r.fatal != "" {
			t.Errorf("short %v, CI=%q: skip %q, fatal %q; want skip %q", c.short, c.ci, r.skip, r.fatal, c.want)
		}
	}
}
