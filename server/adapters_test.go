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

// The trainer adapters in integrations/ against this server:
// integrations/test_adapters.py replays TRL's GRPOTrainer and verl's
// ToolAgentLoop call sequences (see its docstring for the commits) through
// the adapters' own code, using only Python's standard library. Skipped
// only where python3 is not installed.
func TestPythonAdapters(t *testing.T) {
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-B", "../integrations/test_adapters.py")
	cmd.Env = append(os.Environ(),
		"PERSUARENA_URL=ws"+strings.TrimPrefix(ts.URL, "http")+"/ws",
		"PERSUARENA_TEST_CAPACITY="+strconv.Itoa(capacity))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("integrations/test_adapters.py: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
