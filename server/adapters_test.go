package server

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/cidata"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

// slowPersuadee wraps a persuadee: a persuader message containing
// "[slow]" makes the reply take delay (or until ctx ends).
type slowPersuadee struct {
	episode.Persuadee
	delay time.Duration
}

type slowSession struct {
	episode.PersuadeeSession
	delay time.Duration
}

func (p slowPersuadee) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	s, err := p.Persuadee.Start(ctx, sc, seed)
	return slowSession{s, p.delay}, err
}

func (s slowSession) Reply(ctx context.Context, tr []episode.Message) (episode.Reply, error) {
	if strings.Contains(tr[len(tr)-1].Text, "[slow]") {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return episode.Reply{}, ctx.Err()
		}
	}
	return s.PersuadeeSession.Reply(ctx, tr)
}

func (s slowSession) Probe(ctx context.Context, tr []episode.Message, b probe.Basis) ([]probe.Answer, error) {
	return s.PersuadeeSession.(episode.Prober).Probe(ctx, tr, b)
}

// The trainer adapters of the Python package (python/src/persuarena/verl,
// python/src/persuarena/trl) against this server, standard library only:
// python/tests/test_verl*.py checks the probe_rpo estimator's equations
// and token-reward encoding, test_trl*.py replays TRL's environment_factory
// calls (its docstring cites them) through PersuArenaEnv. This server's
// slow persuadee lets the latter test step timeouts, which it skips against
// a launched binary (cmd/persuarena's TestPythonPackage runs it that way
// too). python/conformance runs both adapters against the real verl and
// TRL. Skipped
// only where python3 is not installed (failed under CI).
func TestPythonAdapters(t *testing.T) {
	cidata.Slow(t, "runs the Python adapters against a server")
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 not installed: CI must run the trainer-adapter replays")
		}
		t.Skip("python3 not installed")
	}
	const capacity = 4
	cfg := simConfig(t)
	cfg.Env.Persuadee = slowPersuadee{sim.New(sim.DefaultConfig()), 3 * time.Second}
	cfg.Env.Reward = Both
	cfg.MaxSessions = capacity
	cfg.CapacityWait = -1 // a leaked session must show as CAPACITY_REACHED
	_, ts := start(t, cfg)
	for _, pattern := range []string{"test_verl*.py", "test_trl*.py"} {
		t.Run(strings.TrimSuffix(pattern, "*.py"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, py, "-B", "-m", "unittest", "discover", "-v", "-s", "../python/tests", "-p", pattern)
			cmd.Env = append(os.Environ(),
				"PERSUARENA_URL=ws"+strings.TrimPrefix(ts.URL, "http")+"/ws",
				"PERSUARENA_TEST_CAPACITY="+strconv.Itoa(capacity),
				"PYTHONPATH=../python/src")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("python/tests/%s: %v\n%s", pattern, err, out)
			}
			if !strings.Contains(string(out), "\nOK") || strings.Contains(string(out), "Ran 0 tests") {
				t.Fatalf("python/tests/%s ran no tests or did not pass:\n%s", pattern, out)
			}
			t.Logf("%s", out)
		})
	}
}
