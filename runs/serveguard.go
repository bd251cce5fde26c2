package runs

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/server"
)

// ServeGuard is serve's abuse guard (server.Config's fields of the same
// names; docs/server.md, "Abuse guards"). Zero durations and counts are
// refused by Serve except MaxSessionsPerClient, where 0 means the
// server's per-address default (all of MaxSessions for loopback, a
// quarter for other addresses), and MaxConns, where 0 means
// server.DefaultMaxConns or half the open-file limit; both are printed as
// applied.
type ServeGuard struct {
	IdleLease            time.Duration `json:"idle_lease"`
	MaxSessionsPerClient int           `json:"max_sessions_per_client"`
	AllowOrigins         []string      `json:"allow_origins,omitempty"`
	MaxConns             int           `json:"max_conns"`
	ReadTimeout          time.Duration `json:"read_timeout"`
	// token is the bearer token read from ServeSpec.TokenEnv; never
	// serialised.
	token string
}

// MaxServeMessageBytes bounds --max-message-bytes: the HTTP body and
// WebSocket frame limit is 6 times it plus 4 KB, which must not overflow.
const MaxServeMessageBytes = 16 << 20

// Upper bounds of serve's other limits (flags and checkGuard).
//
// Choice: 65,536 sessions and a million connections are far beyond what
// one process serves (each session holds an environment; each connection
// a descriptor), and a day is longer than any timeout, lease or step
// budget means; 2^63-1 or a negative duration is a typo, refused before
// the address is taken.
const (
	MaxServeSessions = 1 << 16
	MaxServeConns    = 1 << 20
	MaxServeDuration = 24 * time.Hour
)

// checkGuard refuses serve flags that are zero or negative where that has
// no meaning, or out of range, and reads the bearer token from TokenEnv.
func (spec *ServeSpec) checkGuard() error {
	for _, n := range []struct {
		name      string
		v, lo, hi int
	}{{"max-sessions", spec.MaxSessions, 1, MaxServeSessions}, {"max-message-bytes", spec.MaxMessageBytes, 1, MaxServeMessageBytes},
		{"max-sessions-per-client", spec.Guard.MaxSessionsPerClient, 0, MaxServeSessions}, {"max-conns", spec.Guard.MaxConns, 0, MaxServeConns},
		{"tmax", spec.Tmax, 1, episode.MaxTmax}} {
		if n.v < n.lo || n.v > n.hi {
			return fmt.Errorf("--%s must be in %d..%d, got %d", n.name, n.lo, n.hi, n.v)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
		zero bool // 0 allowed (the default)
	}{{"idle-timeout", spec.Idle, false}, {"idle-lease", spec.Guard.IdleLease, false}, {"read-timeout", spec.Guard.ReadTimeout, false},
		{"step-budget", spec.StepBudget, true}} {
		if d.v < 0 || d.v == 0 && !d.zero || d.v > MaxServeDuration {
			return fmt.Errorf("--%s must be in 1ns..%v, got %v", d.name, MaxServeDuration, d.v)
		}
	}
	if spec.TokenEnv != "" {
		tok := strings.TrimSpace(os.Getenv(spec.TokenEnv))
		if tok == "" {
			return fmt.Errorf("--token-env %s: the variable is unset or empty", spec.TokenEnv)
		}
		spec.Guard.token = tok
	}
	return nil
}

// guardLine describes the guard as applied, for serve's banner.
func guardLine(srv *server.Server, tokenEnv string) string {
	c := srv.Settings()
	per := fmt.Sprintf("%d", c.MaxSessionsPerClient)
	if c.MaxSessionsPerClient == 0 {
		per = fmt.Sprintf("%d (loopback) / %d (other addresses)", c.MaxSessions, max(1, c.MaxSessions/server.DefaultRemotePerClientDivisor))
	}
	auth := "none (loopback use)"
	if tokenEnv != "" {
		auth = "bearer token from $" + tokenEnv
	}
	origins := "none"
	if len(c.AllowOrigins) > 0 {
		origins = strings.Join(c.AllowOrigins, ", ")
	}
	return fmt.Sprintf("guard: idle lease %v; sessions per client %s; browser origins %s; auth %s; max %d connections (+%d for /health), read timeout %v, connection idle timeout %v",
		c.IdleLease, per, origins, auth, c.MaxConns, c.HealthReserve, c.ReadTimeout, c.ConnIdleTimeout)
}
