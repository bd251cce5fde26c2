package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/llm"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/train"
)

// serve validates its whole configuration (split, reward mode, limits,
// listen address) before it creates the run database: a rejected command
// leaves no file.
func TestServeRejectedInputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--split", "bogus"}, `unknown split "bogus"`},
		{[]string{"--reward", "lots"}, `unknown reward mode "lots"`},
		{[]string{"--max-sessions", "-1"}, `invalid argument "-1" for "--max-sessions" flag: want an integer in 1..65536`},
		// Zero limits are refused, not silently the defaults; so are
		// negative durations and numbers no server can hold.
		{[]string{"--max-sessions", "0"}, `"--max-sessions" flag: want an integer in 1..65536`},
		{[]string{"--max-sessions", "9223372036854775807"}, `"--max-sessions" flag: want an integer in 1..65536`},
		{[]string{"--idle-timeout", "0"}, `"--idle-timeout" flag: want a duration in 1s..24h0m0s`},
		{[]string{"--step-budget", "-1s"}, `"--step-budget" flag: want a duration in 1s..24h0m0s`},
		{[]string{"--max-message-bytes", "0"}, `"--max-message-bytes" flag: want an integer in 1..16777216`},
		{[]string{"--max-message-bytes", "4611686018427387904"}, `"--max-message-bytes" flag: want an integer in 1..16777216`},
		{[]string{"--idle-lease", "0"}, `"--idle-lease" flag: want a duration in 1s..24h0m0s`},
		{[]string{"--max-conns", "-1"}, `"--max-conns" flag: want an integer in 0..1048576`},
		{[]string{"--max-conns", "9223372036854775807"}, `"--max-conns" flag: want an integer in 0..1048576`},
		{[]string{"--max-sessions-per-client", "9223372036854775807"}, `"--max-sessions-per-client" flag: want an integer in 0..65536`},
		{[]string{"--tmax", "9223372036854775807"}, `"--tmax" flag: want an integer in 1..1000`},
		{[]string{"--token-env", "PERSUARENA_TEST_UNSET_TOKEN"}, "--token-env PERSUARENA_TEST_UNSET_TOKEN: the variable is unset or empty"},
		{[]string{"--addr", "256.0.0.1:1"}, "256.0.0.1"},
	} {
		db := filepath.Join(dir, "serve.db")
		// Every flag is given each time: the root command keeps values
		// between executions.
		args := append([]string{"serve", "--db", db, "--split", "train", "--reward", "dense", "--max-sessions", "4",
			"--addr", "127.0.0.1:0", "--idle-timeout", "10m", "--max-message-bytes", "16384", "--idle-lease", "30s",
			"--max-conns", "0", "--token-env", ""}, tc.args...)
		_, _, err := execRoot(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("%v: the rejected command created %s (%v)", tc.args, db, err)
		}
	}
}

// train validates its inputs before it creates the run database; --resume
// needs an existing one.
func TestTrainRejectedInputWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	base := trainRunConfig{Train: train.DefaultConfig(), Scenarios: []string{"arena"}, Split: "train", Persuadee: "sim",
		Checkpoint: filepath.Join(dir, "p.json")}
	bad := []struct {
		edit   func(*trainRunConfig)
		resume bool
		want   string
	}{
		{func(rc *trainRunConfig) { rc.Split = "bogus" }, false, `unknown split "bogus"`},
		{func(rc *trainRunConfig) { rc.Judge, rc.JudgeSamples = "llm:judge", 1 }, false, "needs --config"},
		{func(rc *trainRunConfig) { rc.Train.GRPO.ScenariosPerStep = 0 }, false, "scenarios_per_step = 0"},
		{func(rc *trainRunConfig) {}, true, "no run database"},
	}
	for i, tc := range bad {
		rc := base
		tc.edit(&rc)
		err := runTrain(ctx, rc, "", 1, db, tc.resume, -1, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %d: err %v, want %q", i, err, tc.want)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("case %d: the rejected command created %s (%v)", i, db, err)
		}
	}
}

// serve resolves its persuadee through the role registry: an llm:ROLE
// persuadee of --config is served against the fake engine over HTTP (its
// reply is the fake engine's, it accepts on the second step as fakeReply
// scripts), and a persuader kind (planner:) or an unknown name is refused
// with the registry's list of kinds.
func TestServeLLMPersuadee(t *testing.T) {
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	cfg := serveConfig{Config: cfgPath, Idle: time.Minute, Persuadee: "llm:q", Scenarios: []string{"arena"}, Split: "train", Tmax: 10, Reward: "both",
		MaxSessions: 2, MaxMessageBytes: 4096, Seed: 3, Basis: probe.Default}
	var stored []*episode.Episode
	srv, err := runs.NewServer(context.Background(), &cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(ep *episode.Episode) error { stored = append(stored, ep); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.LLM) != 1 || cfg.LLM[0].Ref != "llm:q" || cfg.LLM[0].Backend != "fake" {
		t.Errorf("stored role info %+v", cfg.LLM)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	post := func(path, body string) map[string]any { t.Helper(); return postJSON(t, ts.URL+path, body) }
	r := post("/reset", `{"seed": 5}`)
	id := r["observation"].(map[string]any)["metadata"].(map[string]any)["episode_id"].(string)
	step := func() map[string]any {
		return post("/step", `{"episode_id": "`+id+`", "action": {"message": "Would you consider it? It is your call."}}`)
	}
	r = step()
	if obs := r["observation"].(map[string]any); r["done"] != false || obs["reply"] != "Tell me more." {
		t.Fatalf("step 1: %v", r)
	}
	r = step()
	if obs := r["observation"].(map[string]any); r["done"] != true || obs["reply"] != "Fair enough, I'll do it." || obs["decision"] != "accept" {
		t.Fatalf("step 2: %v", r)
	}
	if len(stored) != 1 || stored[0].Persuadee != "llm:q" || len(stored[0].Turns) != 2 {
		t.Fatalf("stored episodes %+v", stored)
	}
	for _, bad := range []string{"planner:p.json", "gpt"} {
		c := cfg
		c.Persuadee = bad
		if _, err := runs.NewServer(context.Background(), &c, nil, nil); err == nil ||
			!strings.Contains(err.Error(), "unknown persuadee") || !strings.Contains(err.Error(), "llm:ROLE") {
			t.Errorf("--persuadee %s: %v", bad, err)
		}
	}
}

// serve --reward-spec repo:negotiation on the negotiation pack with an
// LLM persuadee on the fake engine: the last step's metadata carries the
// spec's reward vector, whose R is the outcome reward, and the stored
// episode keeps it.
func TestServeRewardSpec(t *testing.T) {
	cfgPath, _ := startFakeEngine(t, llm.VLLM)
	cfg := serveConfig{Config: cfgPath, Idle: time.Minute, Persuadee: "llm:q", Scenarios: []string{"repo:negotiation"}, Split: "all", Tmax: 10,
		Reward: "outcome", RewardSpec: "repo:negotiation", MaxSessions: 2, MaxMessageBytes: 4096, Seed: 3, Basis: probe.Default}
	var stored []*episode.Episode
	srv, err := runs.NewServer(context.Background(), &cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(ep *episode.Episode) error { stored = append(stored, ep); return nil })
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	post := func(path, body string) map[string]any { t.Helper(); return postJSON(t, ts.URL+path, body) }
	r := post("/reset", `{"seed": 5}`)
	id := r["observation"].(map[string]any)["metadata"].(map[string]any)["episode_id"].(string)
	for range 2 {
		r = post("/step", `{"episode_id": "`+id+`", "action": {"message": "Would a 12% commission work for you? It is your call."}}`)
	}
	md := r["observation"].(map[string]any)["metadata"].(map[string]any)
	vec, ok := md["reward_vector"].(map[string]any)
	if r["done"] != true || !ok || vec["spec"] != "negotiation" || md["r_out"] != vec["r"] || r["reward"] != vec["r"] {
		t.Fatalf("last step: done %v, reward %v, metadata %v", r["done"], r["reward"], md)
	}
	if len(stored) != 1 || stored[0].Reward == nil || stored[0].Reward.R != vec["r"].(float64) {
		t.Fatalf("stored %+v", stored)
	}
	c := cfg
	c.RewardSpec = "repo:nope"
	if _, err := runs.NewServer(context.Background(), &c, nil, nil); err == nil || !strings.Contains(err.Error(), "--reward-spec") {
		t.Errorf("--reward-spec repo:nope: %v", err)
	}
}

// postJSON posts body to url and decodes the JSON answer, failing the
// test on a transport error or a status other than 200.
func postJSON(t *testing.T, url, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v %v", url, resp.StatusCode, m, err)
	}
	return m
}
