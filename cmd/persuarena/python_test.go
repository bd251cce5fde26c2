package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/persuarena/persuarena/internal/cidata"
)

// asMainEnv makes this test binary act as the persuarena command (see
// TestMain), so that the Python package's tests can launch `persuarena
// serve` without a separate build.
const asMainEnv = "PERSUARENA_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The Python package (python/, persuarena.client and the environment
// adapters) against this binary: python/tests run with the package from
// python/src and PERSUARENA_BIN set to this test binary, which then runs
// main (TestMain), so launch() starts the real `persuarena serve`. CI also
// runs the same tests from the built wheel in a fresh venv (.ci/run).
// Skipped only where python3 is not installed, and never under CI.
func TestPythonPackage(t *testing.T) {
	cidata.Slow(t, "runs the Python package's tests")
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 not installed: CI must run the Python package's tests")
		}
		t.Skip("python3 not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-B", "-m", "unittest", "discover", "-v", "-s", filepath.Join(root, "python", "tests"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "PERSUARENA_BIN="+self,
		"PYTHONPATH="+filepath.Join(root, "python", "src"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest discover -s python/tests: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
