// Package cidata is the tests' one rule for data that lives outside the
// module (the shared P4G and PPDPP copies beside the clone): a missing
// file or directory skips the test on a developer's machine and fails it
// under CI (CI set in the environment), where the data is always present
// and a skip would hide a broken check. Data embedded in the module (the
// built-in scenario sets) is never optional: its tests call t.Fatal.
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
