package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runs"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/server"
	"github.com/persuarena/persuarena/store"
)

// serveConfig is what a serve run stores in the run database.
type serveConfig struct {
	Addr            string      `json:"addr"`
	Persuadee       string      `json:"persuadee"`
	Scenarios       []string    `json:"scenarios"`
	Split           string      `json:"split"`
	Tmax            int         `json:"tmax"`
	Reward          string      `json:"reward"`
	MaxSessions     int         `json:"max_sessions"`
	IdleTimeout     string      `json:"idle_timeout"`
	MaxMessageBytes int         `json:"max_message_bytes"`
	Seed            uint64      `json:"seed"`
	Basis           probe.Basis `json:"basis"`
	// Config is the --config path resolving an llm:ROLE persuadee, and
	// LLM describes that role (never keys).
	Config string          `json:"config,omitempty"`
	LLM    []roles.LLMInfo `json:"llm,omitempty"`
}

func init() {
	var (
		cfg     serveConfig
		idle    time.Duration
		probes  string
		dbPath  string
		verbose bool
		config  string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve persuadees as an OpenEnv-compatible environment for external trainers (TRL, verl)",
		Long: `Serve runs an OpenEnv-compatible environment server: the client (an LLM
persuader being trained by TRL, verl or any OpenEnv client) sends one utterance
per step and gets the persuadee's visible reply, the turn, the decision and the
public scenario; the reward is the dense probe reward r_t = B_t - B_{t-1}, the
terminal outcome reward R_out, or both. The hidden profile never leaves the
server.

Endpoints: GET /health, /metadata, /schema, /state; POST /reset, /step; and the
stateful episode channel WS /ws. See docs/server.md for the protocol.

The server listens on loopback by default. Ctrl-C shuts it down gracefully.
With --db, every finished episode is stored in a run of kind "serve", so it can
be analysed like an eval run.`,
		Example: `  persuarena serve
  persuarena serve --persuadee sim-hard --scenarios arena,p4g --split train --reward both --db serve.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			errOut := cmd.ErrOrStderr()
			if err := atLeast(1, "tmax", cfg.Tmax); err != nil {
				return err
			}
			cfg.IdleTimeout = idle.String()
			basis := probe.Default
			if probes != "" {
				b, err := probe.LoadBasis(probes)
				if err != nil {
					return err
				}
				basis = b
			}
			cfg.Basis = basis
			level := slog.LevelWarn
			if verbose {
				level = slog.LevelInfo
			}
			logger := slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: level}))
			// The sink is bound to the run database below, after every
			// input has been validated (server.New) and the address
			// taken: a rejected command creates no file.
			var save func(*episode.Episode) error
			srv, err := newServeServer(ctx, &cfg, config, idle, logger, func(ep *episode.Episode) error {
				if save == nil {
					return nil
				}
				return save(ep)
			})
			if err != nil {
				return err
			}
			split := cfg.Split
			if split == "all" {
				split = ""
			}
			ln, err := net.Listen("tcp", cfg.Addr)
			if err != nil {
				return err
			}
			defer ln.Close()
			if host, _, err := net.SplitHostPort(ln.Addr().String()); err == nil {
				if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
					fmt.Fprintf(errOut, "warning: listening on %s, not loopback: anyone who can reach it can use the server (it has no authentication)\n", ln.Addr())
				}
			}
			var runID string
			if dbPath != "" {
				db, err := store.Open(ctx, dbPath)
				if err != nil {
					return err
				}
				defer db.Close()
				if runID, err = runs.New(db).Create(ctx, "serve", cfg.Seed, cfg); err != nil {
					return err
				}
				// Episodes end on session goroutines; saving must not depend
				// on the command's (cancellable) context. save is set before
				// Serve starts any session.
				save = func(ep *episode.Episode) error {
					err := db.SaveEpisode(context.Background(), runID, ep)
					if err != nil {
						logger.Error("store episode", "run", runID, "scenario", ep.ScenarioID, "err", err)
					}
					return err
				}
				defer db.SetRunStatus(context.Background(), runID, store.StatusDone)
			}
			info := srv.Info()
			var setInfo []string
			for _, si := range info.Sets {
				n := 0
				if split == "" {
					for _, c := range si.Splits {
						n += c
					}
				} else {
					n = si.Splits[split]
				}
				setInfo = append(setInfo, fmt.Sprintf("%s (%d %s)", si.Name, n, info.DefaultSplit))
			}
			fmt.Fprintf(errOut, "persuarena serve: http://%s (WebSocket ws://%s/ws); persuadee %s; scenarios %s; reward %s; tmax %d; max %d sessions, idle timeout %v\n",
				ln.Addr(), ln.Addr(), info.Persuadee, strings.Join(setInfo, ", "), info.Reward, info.Limits.Tmax, info.Limits.MaxSessions, idle)
			if runID != "" {
				fmt.Fprintf(errOut, "storing finished episodes in run %s of %s\n", runID, dbPath)
			}
			return srv.Serve(ctx, ln)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Addr, "addr", "127.0.0.1:8000", "listen address (host:port); keep it on loopback unless the network is trusted")
	f.StringVar(&cfg.Persuadee, "persuadee", "sim", "persuadee: "+roles.PersuadeeKinds)
	f.StringVar(&config, "config", "", "persuarena.yaml naming the backend and role of an llm:ROLE persuadee (docs/llm-roles.md)")
	scenariosFlag(f, &cfg.Scenarios, "scenario sets clients may choose (reset's \"set\"; the first is the default)")
	f.StringVar(&cfg.Split, "split", "train", "default split resets draw from: train, val, heldout or all")
	tmaxFlag(f, &cfg.Tmax, episode.DefaultTmax, "Probe-RPO paper: 10")
	f.StringVar(&cfg.Reward, "reward", "dense", "default reward mode: dense (r_t = B_t - B_{t-1}), outcome (R_out at the end) or both")
	f.IntVar(&cfg.MaxSessions, "max-sessions", server.DefaultMaxSessions, "maximum concurrent sessions (WebSocket connections plus unfinished HTTP episodes)")
	f.DurationVar(&idle, "idle-timeout", server.DefaultIdleTimeout, "close sessions after this long without a message")
	f.IntVar(&cfg.MaxMessageBytes, "max-message-bytes", server.DefaultMaxMessageBytes, "maximum bytes of one persuader message")
	seedFlag(f, &cfg.Seed, "base seed for resets that carry none (resets with a seed are reproducible regardless)")
	f.StringVar(&probes, "probes", "", "probe basis JSON file (default: the CA/PE/AC basis of seed 000 Table 1)")
	f.StringVar(&dbPath, "db", "", "store finished episodes in this run database (SQLite), in a run of kind \"serve\"")
	f.BoolVar(&verbose, "verbose", false, "log every reset, finished episode, close and idle timeout")
	rootCmd.AddCommand(cmd)
}

// newServeServer builds serve's environment server: the persuadee through
// the role registry (any persuadee kind, llm:ROLE of config included, its
// backend preflighted), the scenario sets, and cfg's limits; every
// finished episode goes to sink. It records the LLM role in cfg.LLM.
// Errors: the registry's, scenario loading's and server.New's.
func newServeServer(ctx context.Context, cfg *serveConfig, config string, idle time.Duration, logger *slog.Logger, sink func(*episode.Episode) error) (*server.Server, error) {
	reg, err := roles.New(config)
	if err != nil {
		return nil, err
	}
	pee, err := reg.Persuadee(cfg.Persuadee)
	if err != nil {
		return nil, fmt.Errorf("--persuadee: %w", err)
	}
	if err := reg.Preflight(ctx); err != nil {
		return nil, err
	}
	cfg.LLM = reg.LLM()
	var sets []server.Set
	for _, ref := range cfg.Scenarios {
		ss, err := scenario.Resolve(ref)
		if err != nil {
			return nil, err
		}
		sets = append(sets, server.Set{Name: setName(ref), Scenarios: ss})
	}
	split := cfg.Split
	if split == "all" {
		split = ""
	}
	return server.New(server.Config{
		Env: server.EnvConfig{Persuadee: pee, Sets: sets, Split: scenario.Split(split), Tmax: cfg.Tmax, Basis: cfg.Basis,
			Reward: server.RewardMode(cfg.Reward), MaxMessageBytes: cfg.MaxMessageBytes, Seed: cfg.Seed, Sink: sink},
		MaxSessions: cfg.MaxSessions, IdleTimeout: idle, Version: version(), Logger: logger,
	})
}
