package fakeengine

import (
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// Chaos injects seeded random faults into every request that no queued
// Fault claims, as a flaky engine would: each request draws one uniform
// number from a PCG stream seeded by Seed and gets, by cumulative
// probability, a 5xx (P5xx: 500, 502 or 503 in turn), a 429 with
// Retry-After (P429), a held answer that the client times out on
// (PTimeout: held for TimeoutDelay), a 200 with a truncated JSON body
// (PTruncated), a connection reset (PReset: the connection is closed
// with SO_LINGER 0 before any answer), a permanent 400 (P400), or the
// normal answer. During an Outage every request gets 503.
//
// The draws follow the requests' arrival order, so one seed gives the
// same fault sequence; which request gets which fault depends on the
// order concurrent clients arrive in.
type Chaos struct {
	Seed                                           uint64
	P5xx, P429, PTimeout, PTruncated, PReset, P400 float64
	// RetryAfter is the 429's Retry-After header (default "1").
	RetryAfter string
	// TimeoutDelay is how long a timed-out answer is held (default 5 s;
	// the answer is dropped when the client gives up first).
	TimeoutDelay time.Duration
	// Outages are windows, from the first request, answered 503.
	Outages []Outage
}

// Outage is a window [Start, Start+For) after the first request.
type Outage struct{ Start, For time.Duration }

// ChaosStats counts the faults Chaos injected, by kind.
type ChaosStats struct {
	Status5xx, Status429, Timeouts, Truncated, Resets, Status400, Outage, Clean int
}

// WithChaos turns on seeded random faults (see Chaos).
func WithChaos(c Chaos) Option {
	return func(s *Server) {
		if c.RetryAfter == "" {
			c.RetryAfter = "1"
		}
		if c.TimeoutDelay <= 0 {
			c.TimeoutDelay = 5 * time.Second
		}
		s.chaos = &chaosState{c: c, rng: rand.New(rand.NewPCG(c.Seed, 0x6a09e667f3bcc909))}
	}
}

// chaosState is a Server's Chaos with its stream; guarded by Server.mu.
type chaosState struct {
	c     Chaos
	rng   *rand.Rand
	start time.Time
	n5xx  int
	stats ChaosStats
}

// drawLocked returns the fault of the next request (nil: a clean answer,
// reset: close the connection). Server.mu must be held.
func (cs *chaosState) drawLocked(now time.Time) (f *Fault, reset bool) {
	if cs.start.IsZero() {
		cs.start = now
	}
	since := now.Sub(cs.start)
	for _, o := range cs.c.Outages {
		if since >= o.Start && since < o.Start+o.For {
			cs.stats.Outage++
			return &Fault{Status: http.StatusServiceUnavailable}, false
		}
	}
	u := cs.rng.Float64()
	c := &cs.c
	switch {
	case u < c.P5xx:
		cs.stats.Status5xx++
		cs.n5xx++
		return &Fault{Status: []int{500, 502, 503}[cs.n5xx%3]}, false
	case u < c.P5xx+c.P429:
		cs.stats.Status429++
		return &Fault{Status: http.StatusTooManyRequests, RetryAfter: c.RetryAfter}, false
	case u < c.P5xx+c.P429+c.PTimeout:
		cs.stats.Timeouts++
		return &Fault{Status: http.StatusGatewayTimeout, Delay: c.TimeoutDelay}, false
	case u < c.P5xx+c.P429+c.PTimeout+c.PTruncated:
		cs.stats.Truncated++
		return &Fault{Malformed: true}, false
	case u < c.P5xx+c.P429+c.PTimeout+c.PTruncated+c.PReset:
		cs.stats.Resets++
		return nil, true
	case u < c.P5xx+c.P429+c.PTimeout+c.PTruncated+c.PReset+c.P400:
		cs.stats.Status400++
		return &Fault{Status: http.StatusBadRequest}, false
	}
	cs.stats.Clean++
	return nil, false
}

// ChaosStats returns the counts of the faults Chaos injected so far.
func (s *Server) ChaosStats() ChaosStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chaos == nil {
		return ChaosStats{}
	}
	return s.chaos.stats
}

// resetConn closes the request's connection with a TCP reset.
func resetConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	c, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}
