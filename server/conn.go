package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the connection limits in Config.
const (
	// DefaultMaxConns bounds the open TCP connections of Serve; where the
	// process's open-file limit is lower than twice this, half of it (less
	// DefaultHealthReserve, at least 16) applies.
	//
	// Choice: 4096, far below the file-descriptor limit Go raises itself
	// to on Linux (the hard limit, usually 524288 or more) and 64 times
	// the default MaxSessions, so that 200 trainer connections never meet
	// it while a flood of idle connections cannot exhaust descriptors.
	DefaultMaxConns = 4096
	// DefaultHealthReserve is how many connections beyond MaxConns are
	// accepted for GET /health only, so that a liveness check still gets
	// an answer under a flood.
	DefaultHealthReserve = 32
	// DefaultConnIdleTimeout closes keep-alive connections idle this long.
	DefaultConnIdleTimeout = time.Minute
	// DefaultReadTimeout bounds reading one request body.
	//
	// Choice: 30 s: the largest body (a frame of about 100 KB) takes
	// under a second on any link a trainer uses; a body trickled at one
	// byte every 2 s is cut after 15 bytes.
	DefaultReadTimeout = 30 * time.Second
)

// maxMessageBytesLimit keeps the frame limit (6 × MaxMessageBytes + 4096)
// far from overflow.
const maxMessageBytesLimit = 1 << 30

// guardDefaults fills in the guard and connection defaults of cfg and
// refuses negative values.
func guardDefaults(cfg *Config) error {
	if cfg.IdleLease < 0 || cfg.MaxSessionsPerClient < 0 || cfg.MaxConns < 0 || cfg.HealthReserve < 0 ||
		cfg.ConnIdleTimeout < 0 || cfg.ReadTimeout < 0 {
		return fmt.Errorf("server: negative idle lease %v, sessions per client %d, max connections %d, health reserve %d, connection idle timeout %v or read timeout %v",
			cfg.IdleLease, cfg.MaxSessionsPerClient, cfg.MaxConns, cfg.HealthReserve, cfg.ConnIdleTimeout, cfg.ReadTimeout)
	}
	if cfg.Env.MaxMessageBytes > maxMessageBytesLimit {
		return fmt.Errorf("server: max message bytes %d over the limit of %d (the frame limit is 6 times it plus 4 KB)", cfg.Env.MaxMessageBytes, maxMessageBytesLimit)
	}
	if cfg.IdleLease == 0 {
		cfg.IdleLease = DefaultIdleLease
	}
	if cfg.HealthReserve == 0 {
		cfg.HealthReserve = DefaultHealthReserve
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
		// Half the descriptors at most: the rest are for files, the run
		// database and the engine's connections.
		if n := fdLimit(); n > 0 && cfg.MaxConns > n/2-cfg.HealthReserve {
			cfg.MaxConns = max(16, n/2-cfg.HealthReserve)
		}
	}
	if cfg.ConnIdleTimeout == 0 {
		cfg.ConnIdleTimeout = DefaultConnIdleTimeout
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	return nil
}

// reservedConnKey marks, in a request's context, a connection accepted
// beyond MaxConns: it may only ask GET /health.
type reservedConnKey struct{}

// connLimiter bounds the open connections of one listener. At MaxConns
// a new connection first evicts the oldest one that holds no request (a
// keep-alive connection between requests, else one that has sent nothing
// yet); with none to evict it is accepted for GET /health only, up to
// HealthReserve more, and closed at once beyond that. Keep-alive
// connections are closed after their response while more than half of
// MaxConns are open.
type connLimiter struct {
	net.Listener
	max, reserve int
	refused      atomic.Int64 // connections closed at accept
	evicted      atomic.Int64 // idle connections closed to make room

	mu    sync.Mutex
	conns map[*limitedConn]struct{}
}

// limitedConn is a connection the limiter counts until it is closed.
type limitedConn struct {
	net.Conn
	l        *connLimiter
	born     time.Time
	reserved bool
	state    http.ConnState // guarded by l.mu
}

// Close stops counting the connection and closes it.
func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// limitConns sets hs's connection timeouts and hooks and returns ln
// bounded by cfg.MaxConns (see connLimiter).
func (s *Server) limitConns(hs *http.Server, ln net.Listener) net.Listener {
	l := &connLimiter{Listener: ln, max: s.cfg.MaxConns, reserve: s.cfg.HealthReserve, conns: map[*limitedConn]struct{}{}}
	s.mu.Lock()
	s.lim = l
	s.mu.Unlock()
	hs.IdleTimeout = s.cfg.ConnIdleTimeout
	hs.ConnState = l.connState
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if lc, ok := c.(*limitedConn); ok && lc.reserved {
			return context.WithValue(ctx, reservedConnKey{}, true)
		}
		return ctx
	}
	return l
}

// Accept returns the next connection under the limit.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l, born: time.Now(), state: http.StateNew}
		l.mu.Lock()
		var victim *limitedConn
		if len(l.conns) >= l.max {
			victim = l.evictableLocked()
			if victim != nil {
				delete(l.conns, victim)
			}
		}
		switch {
		case len(l.conns) < l.max:
		case len(l.conns) < l.max+l.reserve:
			lc.reserved = true
		default:
			l.mu.Unlock()
			l.refused.Add(1)
			c.Close()
			continue
		}
		l.conns[lc] = struct{}{}
		l.mu.Unlock()
		if victim != nil {
			l.evicted.Add(1)
			victim.Conn.Close()
		}
		return lc, nil
	}
}

// evictableLocked returns the oldest connection between requests, else
// the oldest that has sent nothing yet, else nil. l.mu must be held.
func (l *connLimiter) evictableLocked() *limitedConn {
	var idle, fresh *limitedConn
	for c := range l.conns {
		switch c.state {
		case http.StateIdle:
			if idle == nil || c.born.Before(idle.born) {
				idle = c
			}
		case http.StateNew:
			if fresh == nil || c.born.Before(fresh.born) {
				fresh = c
			}
		}
	}
	if idle != nil {
		return idle
	}
	return fresh
}

// connState tracks each connection's state and sheds keep-alive
// connections under pressure.
func (l *connLimiter) connState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	lc.state = st
	shed := st == http.StateIdle && (lc.reserved || len(l.conns) > l.max/2)
	l.mu.Unlock()
	if shed {
		lc.Close()
	}
}

// open returns the number of connections held.
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}
