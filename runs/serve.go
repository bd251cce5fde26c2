package runs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/buildinfo"
	"github.com/persuarena/persuarena/perception"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runplan"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/server"
)

// ServeSpec is a serve invocation: the OpenEnv-compatible environment
// server (package server) of one persuadee on scenario sets. The tagged
// fields are what a serve run stores (never keys).
type ServeSpec struct {
	Addr      string   `json:"addr"`
	Persuadee string   `json:"persuadee"`
	Scenarios []string `json:"scenarios"`
	Split     string   `json:"split"`
	// Tmax (>= 1) caps persuader turns; Reward is dense, outcome or both.
	Tmax   int    `json:"tmax"`
	Reward string `json:"reward"`
	// RewardSpec, when set (repo:SPEC), scores every finished episode
	// with that reward spec (REPO paper): its vector goes out in the last
	// step's metadata and its R replaces R_out.
	RewardSpec      string      `json:"reward_spec,omitempty"`
	MaxSessions     int         `json:"max_sessions"`
	IdleTimeout     string      `json:"idle_timeout"`
	MaxMessageBytes int         `json:"max_message_bytes"`
	Seed            uint64      `json:"seed"`
	Basis           probe.Basis `json:"basis"`
	// Config is the --config path resolving an llm:ROLE persuadee, and
	// LLM describes that role (never keys).
	Config string          `json:"config,omitempty"`
	LLM    []roles.LLMInfo `json:"llm,omitempty"`
	// Idle closes sessions idle this long; StepBudget is the step latency
	// budget /metadata advertises (server.Config.StepBudget; 0: the
	// default); Probes names the probe basis (probe.Resolve: "" is probe.Default);
	// Verbose logs every session event.
	Idle       time.Duration `json:"-"`
	StepBudget time.Duration `json:"-"`
	Probes     string        `json:"-"`
	Verbose    bool          `json:"-"`
	// Guard is the abuse guard (server.Config's IdleLease,
	// MaxSessionsPerClient, AllowOrigins, MaxConns, ReadTimeout; see
	// serveguard.go); TokenEnv names the variable holding the bearer
	// token (the token itself is never recorded).
	Guard    ServeGuard `json:"guard"`
	TokenEnv string     `json:"token_env,omitempty"`
}

// NewServer builds the environment server of spec: the persuadee through
// the role registry (any persuadee kind, llm:ROLE of spec.Config
// included, its backend preflighted), the scenario sets, and spec's
// limits, with the embedded reader's lexicon loaded (perception.Preload); every
// finished episode goes to sink (may be nil). It records
// the LLM role in spec.LLM. Errors: the registry's, scenario loading's and
// server.New's.
func NewServer(ctx context.Context, spec *ServeSpec, logger *slog.Logger, sink func(*episode.Episode) error) (*server.Server, error) {
	reg, err := roles.New(spec.Config)
	if err != nil {
		return nil, err
	}
	pee, err := reg.Persuadee(spec.Persuadee)
	if err != nil {
		return nil, fmt.Errorf("--persuadee: %w", err)
	}
	if err := reg.Preflight(ctx); err != nil {
		return nil, err
	}
	spec.LLM = reg.LLM()
	perception.Preload()
	rw, err := rewarder(reg, spec.RewardSpec, "", 0)
	if err != nil {
		return nil, fmt.Errorf("--reward-spec: %w", err)
	}
	var sets []server.Set
	for _, ref := range spec.Scenarios {
		ss, err := runplan.ResolveSet(ctx, ref)
		if err != nil {
			return nil, err
		}
		sets = append(sets, server.Set{Name: scenario.SetName(ref), Scenarios: ss})
	}
	split := spec.Split
	if split == "all" {
		split = ""
	}
	return server.New(server.Config{
		Env: server.EnvConfig{Persuadee: pee, Sets: sets, Split: scenario.Split(split), Tmax: spec.Tmax, Basis: spec.Basis,
			Reward: server.RewardMode(spec.Reward), Rewarder: rw, MaxMessageBytes: spec.MaxMessageBytes, Seed: spec.Seed, Sink: sink},
		MaxSessions: spec.MaxSessions, IdleTimeout: spec.Idle, StepBudget: spec.StepBudget, Version: buildinfo.Version(), Logger: logger,
		IdleLease: spec.Guard.IdleLease, MaxSessionsPerClient: spec.Guard.MaxSessionsPerClient, Token: spec.Guard.token,
		AllowOrigins: spec.Guard.AllowOrigins, MaxConns: spec.Guard.MaxConns, ReadTimeout: spec.Guard.ReadTimeout,
	})
}

// Serve runs the environment server of spec on spec.Addr until ctx ends
// (graceful shutdown). Inputs are validated (NewServer) and the address
// taken before the run database is touched; with a database (Path or
// Store set) every finished episode is stored in a run of kind serve,
// marked done at the end. errOut gets the listening line, a warning for a
// non-loopback address, and the server's log (warnings; every session
// event with spec.Verbose). Errors: Tmax < 1, probe.Resolve's,
// NewServer's, net.Listen's, the store's and the server's.
func (s *Service) Serve(ctx context.Context, spec ServeSpec, errOut io.Writer) error {
	if err := AtLeast(1, "tmax", spec.Tmax); err != nil {
		return err
	}
	if err := spec.checkGuard(); err != nil {
		return err
	}
	spec.IdleTimeout = spec.Idle.String()
	b, err := probe.Resolve(spec.Probes)
	if err != nil {
		return err
	}
	spec.Basis = b
	level := slog.LevelWarn
	if spec.Verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: level}))
	// The sink is bound to the run database below, once every input has
	// been validated and the address taken: a rejected command creates no
	// file.
	var save func(*episode.Episode) error
	srv, err := NewServer(ctx, &spec, logger, func(ep *episode.Episode) error {
		if save == nil {
			return nil
		}
		return save(ep)
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", spec.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if host, _, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			if spec.Guard.token == "" {
				fmt.Fprintf(errOut, "warning: listening on %s, not loopback: anyone who can reach it can use the server (no --token-env: it has no authentication)\n", ln.Addr())
			}
		}
	}
	var runID string
	if s.Store != nil || s.Path != "" {
		if runID, err = s.Create(ctx, "serve", spec.Seed, spec); err != nil {
			return err
		}
		// Episodes end on session goroutines; saving must not depend on
		// the (cancellable) context. save is set before any session.
		st := s.Store
		save = func(ep *episode.Episode) error {
			err := st.SaveEpisode(context.Background(), runID, ep)
			if err != nil {
				logger.Error("store episode", "run", runID, "scenario", ep.ScenarioID, "err", err)
			}
			return err
		}
		defer s.Finish(context.WithoutCancel(ctx), runID, nil)
	}
	info := srv.Info()
	split := spec.Split
	if split == "all" {
		split = ""
	}
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
		ln.Addr(), ln.Addr(), info.Persuadee, strings.Join(setInfo, ", "), info.Reward, info.Limits.Tmax, info.Limits.MaxSessions, spec.Idle)
	fmt.Fprintln(errOut, guardLine(srv, spec.TokenEnv))
	if limit := server.LimitMemory(info.Limits.MaxSessions, info.Limits.MaxMessageBytes); limit > 0 {
		fmt.Fprintf(errOut, "memory: soft limit %d MB (1.5 x at rest + %d sessions x %d KB; GOMEMLIMIT overrides)\n",
			limit>>20, info.Limits.MaxSessions, server.SessionMemory(info.Limits.MaxMessageBytes)>>10)
	}
	if runID != "" {
		fmt.Fprintf(errOut, "storing finished episodes in run %s of %s\n", runID, s.DBPath())
	}
	return srv.Serve(ctx, ln)
}
