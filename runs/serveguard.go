package runs

import (
	"fmt"
	"os"
	"strings"
	"time"

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

// checkGuard refuses serve flags that are zero or negative where that has
// no meaning, or out of range, and reads the bearer token from TokenEnv.
func (spec *ServeSpec) checkGuard() error {
	if err := AtLeast(1, "max-sessions", spec.MaxSessions, "max-message-bytes", spec.MaxMessageBytes); err != nil {
		return err
	}
	if err := AtLeast(0, "max-sessions-per-client", spec.Guard.MaxSessionsPerClient, "max-conns", spec.Guard.MaxConns); err != nil {
		return err
	}
	if spec.MaxMessageBytes > MaxServeMessageBytes {
		return fmt.Errorf("--max-message-bytes must be <= %d (16 MiB), got %d", MaxServeMessageBytes, spec.MaxMessageBytes)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"idle-timeout", spec.Idle}, {"idle-lease", spec.Guard.IdleLease}, {"read-timeout", spec.Guard.ReadTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("--%s must be > 0, got %v", d.name, d.v)
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
