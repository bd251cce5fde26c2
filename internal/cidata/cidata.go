// Package cidata is the tests' one rule for what may be left out on a
// developer's machine but never under CI (CI set in the environment): data
// that lives outside the module (the shared P4G and PPDPP copies beside
// the clone), whose absence skips a test here and fails it under CI, where
// the data is always present and a skip would hide a broken check; and
// slow tests (Slow), which go test -short skips here and CI always runs.
// Data embedded in the module (the built-in scenario sets) is never
// optional: its tests call t.Fatal.
package cidata

import (
	"os"
	"testing"
)

// Under reports whether the tests run under CI: the CI environment
// variable is set to anything non-empty (GitHub Actions, GitLab and
// .ci/run all set it).
func Under() bool { return os.Getenv("CI") != "" }

// Require stops t unless path (a file or directory, relative to the
// test's package directory) exists: t.Fatalf under CI, t.Skipf
// otherwise, both naming path and the stat error. It returns path, so a
// test can write p := cidata.Require(t, filepath.Join(...)).
func Require(t testing.TB, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, path, err)
	}
	return path
}

// Missing stops t because what (a path or a tool, e.g. "python3") is not
// available, err saying why: t.Fatalf under CI, t.Skipf otherwise.
func Missing(t testing.TB, what string, err error) {
	t.Helper()
	if Under() {
		t.Fatalf("%s not available under CI: %v", what, err)
		return
	}
	t.Skipf("%s not available: %v", what, err)
}

// Slow marks t as slow (an integration drill, a repository scan, a
// training run; more than about 5 s on 2 cores): under go test -short it
// is skipped, saying why, so that the short loop stays fast; under CI
// -short is ignored and it always runs.
func Slow(t testing.TB, why string) {
	t.Helper()
	if testing.Short() && !Under() {
		t.Skipf("slow (%s): go test -short leaves it out; go test ./... and CI run it", why)
	}
}
