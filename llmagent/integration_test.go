package llmagent

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
)

// TestRealEngineEpisode plays one episode (Tmax 3) with the LLM persuadee
// and the LLM persuader against a real engine when PERSUARENA_TEST_BASE_URL
// is set (same variables as llm's TestRealEngine: PERSUARENA_TEST_MODEL,
// PERSUARENA_TEST_ENGINE, default vllm, PERSUARENA_TEST_API_KEY). It logs
// the transcript, beliefs and per-turn cost. Skipped otherwise.
func TestRealEngineEpisode(t *testing.T) {
	base := os.Getenv("PERSUARENA_TEST_BASE_URL")
	if base == "" {
		t.Skip("set PERSUARENA_TEST_BASE_URL (and PERSUARENA_TEST_MODEL, PERSUARENA_TEST_ENGINE) to run against a real engine")
	}
	eng := llm.Engine(os.Getenv("PERSUARENA_TEST_ENGINE"))
	if eng == "" {
		eng = llm.VLLM
	}
	b := llm.Backend{Name: "real", BaseURL: base, Engine: eng, Model: os.Getenv("PERSUARENA_TEST_MODEL"), Timeout: 5 * time.Minute}
	if os.Getenv("PERSUARENA_TEST_API_KEY") != "" {
		b.APIKeyEnv = "PERSUARENA_TEST_API_KEY"
	}
	c, err := llm.NewClient(b)
	if err != nil {
		t.Fatal(err)
	}
	off := false
	role := llm.Role{Thinking: &off, Sampling: llm.Sampling{Temperature: ptr(0.7), MaxTokens: 300}}
	pee := NewPersuadee("llm:real", c, role, PersuadeeOptions{})
	per := NewPersuader("llm:real", c, role)
	ep, err := episode.Run(context.Background(), episode.Config{Tmax: 3}, testScenario(), per, pee, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("probe path %s, terminal %s, stats %+v, error %q", pee.Path(), ep.Terminal, pee.Stats(), ep.Error)
	for _, tu := range ep.Turns {
		t.Logf("t=%d\n  persuader: %s\n  persuadee: %s [%s]\n  belief %v probes %+v\n  usage reply %+v probes %+v (%.0f / %.0f ms)",
			tu.T, tu.Persuader, tu.Persuadee, tu.Decision, tu.Belief, tu.Probes, tu.PersuadeeUsage, tu.ProbeUsage, tu.PersuadeeMS, tu.ProbeMS)
	}
	if ep.Error != "" && ep.Terminal != "truncated" {
		t.Errorf("episode failed: %s", ep.Error)
	}
}
