package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/flagbound"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/server"
)

// newServeCmd returns serve: the OpenEnv-compatible environment server.
func newServeCmd() *cobra.Command {
	var (
		spec   runs.ServeSpec
		dbPath string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve persuadees as an OpenEnv-compatible environment for external trainers (TRL, verl)",
		Long: `Runs an OpenEnv-compatible environment server: a client persuader sends one
utterance per step and gets the persuadee's reply and reward. See docs/server.md.`,
		Example: `  persuarena serve
  persuarena serve --persuadee sim-hard --scenarios arena,p4g --split train --reward both --db serve.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc := runs.Open(dbPath)
			defer svc.Close()
			return svc.Serve(cmd.Context(), spec, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Addr, "addr", "127.0.0.1:8000", "listen address (host:port); keep it on loopback unless the network is trusted")
	f.StringVar(&spec.Persuadee, "persuadee", "sim", "persuadee: "+roles.PersuadeeKinds)
	f.StringVar(&spec.Config, "config", "", "persuarena.yaml naming the backend and role of an llm:ROLE persuadee (docs/llm-roles.md)")
	scenariosFlag(f, &spec.Scenarios, "scenario sets clients may choose (reset's \"set\"; the first is the default)")
	f.StringVar(&spec.Split, "split", "train", "default split resets draw from: train, val, heldout or all")
	tmaxFlag(f, &spec.Tmax, episode.DefaultTmax, "Probe-RPO paper: 10")
	f.StringVar(&spec.Reward, "reward", "dense", "default reward mode: dense (r_t = B_t - B_{t-1}), outcome (R_out at the end) or both")
	f.StringVar(&spec.RewardSpec, "reward-spec", "", "repo:SPEC: score finished episodes with a reward spec (REPO paper; docs/repo.md); its R replaces R_out")
	flagbound.Int(f, &spec.MaxSessions, "max-sessions", server.DefaultMaxSessions, 1, runs.MaxServeSessions, "maximum concurrent sessions (WebSocket connections plus unfinished HTTP episodes)")
	flagbound.Duration(f, &spec.Idle, "idle-timeout", server.DefaultIdleTimeout, time.Second, runs.MaxServeDuration, "close sessions after this long without a message")
	flagbound.Duration(f, &spec.StepBudget, "step-budget", server.DefaultStepBudget, time.Second, runs.MaxServeDuration, "the longest a reset or step may take, advertised in /metadata as limits.step_budget_s (set client timeouts, e.g. OpenEnv's message_timeout_s, at least this high)")
	flagbound.Int(f, &spec.MaxMessageBytes, "max-message-bytes", server.DefaultMaxMessageBytes, 1, runs.MaxServeMessageBytes, "maximum bytes of one persuader message")
	seedFlag(f, &spec.Seed, "base seed for resets that carry none (resets with a seed are reproducible regardless)")
	probesFlag(f, &spec.Probes, "default")
	f.StringVar(&dbPath, "db", "", "store finished episodes in this run database (SQLite file or postgres:// URL), in a run of kind \"serve\"")
	f.BoolVar(&spec.Verbose, "verbose", false, "log every reset, finished episode, close and idle timeout")
	flagbound.Duration(f, &spec.Guard.IdleLease, "idle-lease", server.DefaultIdleLease, time.Second, runs.MaxServeDuration, "when the server (or a client's share) is full, a new session takes the slot of the session that has not reset or stepped for longer than this")
	flagbound.Int(f, &spec.Guard.MaxSessionsPerClient, "max-sessions-per-client", 0, 0, runs.MaxServeSessions, "maximum concurrent sessions of one client (an IPv4 address or IPv6 /64; 0: all of --max-sessions for loopback, a quarter for other addresses)")
	f.StringSliceVar(&spec.Guard.AllowOrigins, "allow-origin", nil, "browser origin (scheme://host[:port]) allowed to call the server; repeatable (default: browsers are refused)")
	f.StringVar(&spec.TokenEnv, "token-env", "", "environment variable holding a bearer token every request but GET /health must carry (use it off loopback)")
	flagbound.Int(f, &spec.Guard.MaxConns, "max-conns", 0, 0, runs.MaxServeConns, "maximum open TCP connections, a few more kept for GET /health (0: 4096, or half the open-file limit when that is lower)")
	flagbound.Duration(f, &spec.Guard.ReadTimeout, "read-timeout", server.DefaultReadTimeout, time.Second, runs.MaxServeDuration, "maximum time to receive one request body")
	return cmd
}
