package llm

import (
	"fmt"
	"sync"
	"time"
)

// breaker is a per-replica circuit breaker: closed until the failure
// rate over the last breakerWindow attempts trips it (see trips), then
// open (allow refuses with ErrCircuitOpen; Client.call waits for the
// circuit rather than failing, see waitCircuit), then half-open: one
// probe request is let through; its success closes the circuit and wakes
// every waiter, its failure reopens it. The circuit stays open for
// breakerFirstWait the first time, and breakerWaitGrowth times longer at
// each failed probe, at most cooldown (openFor).
//
// Choice: only failures that suggest an unhealthy server count (5xx,
// connection errors, timeouts); 429 is flow control handled by Retry-After
// and other 4xx are the request's fault.
type breaker struct {
	threshold int // <= 0: disabled
	cooldown  time.Duration

	mu        sync.Mutex
	window    []bool // the last outcomes, true for a failure (a ring)
	next      int    // the ring's next slot
	n, fails  int    // outcomes held, failures among them
	failures  int    // consecutive failures (for messages)
	openUntil time.Time
	open      bool
	reopened  int           // failed probes since the circuit opened
	probing   bool          // half-open probe in flight
	last      error         // the latest failure, named when the circuit is open
	changed   chan struct{} // closed and replaced when the circuit closes or reopens
}

// breakerWindow is the number of latest attempts whose failure rate
// trips the circuit (at least 4 × the threshold).
//
// Choice: the circuit opens when at least breakerTripRate of the window's
// attempts failed and at least threshold of them did, or when the first
// threshold attempts of a fresh window all failed (an engine that is down
// from the start). Against 38 % random faults (28 % 5xx, 3 % timeouts,
// 4 % 429 that do not count, 3 % truncated bodies that do not count) a
// window of 20 reaches 80 % with probability about 1e-5 per attempt, so
// transient noise does not open it; an outage fills it within 16
// attempts.
const (
	breakerWindow   = 20
	breakerTripRate = 0.8
)

// breakerFirstWait and breakerWaitGrowth set how long an open circuit
// waits before each half-open probe (openFor).
//
// Choice: the first probe after 1 s and each next wait 1.5 times longer,
// up to the cooldown (Backend.BreakerCooldown, 30 s): a probe is one
// request, so probing a down engine costs it nothing worth sparing, while
// a fixed 30 s wait kept every episode waiting up to 30 s after the
// engine was back (a 20 s outage cost 30 s). With growth 1.5 the circuit
// closes at most half the outage's length after it ends (about 1 s after
// a 20 s one: probes at 1, 2.5, 4.8, 8.1, 13.2 and 20.8 s), and the probes
// of a long outage thin out to one per cooldown.
const (
	breakerFirstWait  = time.Second
	breakerWaitGrowth = 1.5
)

// openForLocked is how long the circuit stays open now: breakerFirstWait
// grown by breakerWaitGrowth per failed probe, at most cooldown (all of
// it when cooldown is shorter than breakerFirstWait). b.mu must be held.
func (b *breaker) openForLocked() time.Duration {
	d := min(breakerFirstWait, b.cooldown)
	for range b.reopened {
		if d = time.Duration(float64(d) * breakerWaitGrowth); d >= b.cooldown {
			return b.cooldown
		}
	}
	return d
}

// record adds one outcome to the window; b.mu must be held.
func (b *breaker) recordLocked(failed bool) {
	w := max(breakerWindow, 4*b.threshold)
	if len(b.window) != w {
		b.window, b.next, b.n, b.fails = make([]bool, w), 0, 0, 0
	}
	if b.n == w {
		if b.window[b.next] {
			b.fails--
		}
	} else {
		b.n++
	}
	b.window[b.next] = failed
	if failed {
		b.fails++
	}
	b.next = (b.next + 1) % w
}

// tripsLocked reports whether the window's failures open the circuit;
// b.mu must be held.
func (b *breaker) tripsLocked() bool {
	if b.fails < b.threshold {
		return false
	}
	return b.fails == b.n || b.n == len(b.window) && float64(b.fails) >= breakerTripRate*float64(b.n)
}

// changedLocked wakes the waiters of the circuit; b.mu must be held.
func (b *breaker) changedLocked() {
	if b.changed != nil {
		close(b.changed)
	}
	b.changed = make(chan struct{})
}

// watch returns a channel closed when the circuit next closes or reopens.
func (b *breaker) watch() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed
}

// allow reports whether a request may be sent at now; probe is true when
// the request is the half-open probe (its outcome must be reported).
func (b *breaker) allow(now time.Time) (probe bool, err error) {
	if b.threshold <= 0 {
		return false, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return false, nil
	}
	if now.Before(b.openUntil) || b.probing {
		wait := b.openUntil.Sub(now)
		if wait < 0 {
			wait = 0
		}
		return false, fmt.Errorf("%w after %d of the last %d attempts failed (last: %v); next probe in %s", ErrCircuitOpen, b.fails, b.n, b.last, wait.Round(time.Millisecond))
	}
	b.probing = true
	return true, nil
}

// wait returns how long the circuit stays open from now (0 when closed
// or ready for its half-open probe).
func (b *breaker) wait(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return 0
	}
	return max(b.openUntil.Sub(now), 0)
}

// success records a healthy answer.
func (b *breaker) success() {
	if b.threshold <= 0 {
		return
	}
	b.mu.Lock()
	b.failures = 0
	if b.open {
		// The probe succeeded: a fresh window, and the waiters resume.
		b.open, b.probing, b.reopened = false, false, 0
		b.window = nil
		b.changedLocked()
	} else {
		b.recordLocked(false)
	}
	b.mu.Unlock()
}

// failure records an unhealthy answer err at now.
func (b *breaker) failure(now time.Time, err error) {
	if b.threshold <= 0 {
		return
	}
	b.mu.Lock()
	b.failures++
	b.last = err
	if !b.open {
		b.recordLocked(true)
	}
	if b.probing || !b.open && b.tripsLocked() {
		if b.probing {
			b.reopened++
		}
		b.open, b.probing = true, false
		b.openUntil = now.Add(b.openForLocked())
		b.changedLocked()
	}
	b.mu.Unlock()
}

// release ends a half-open probe whose outcome said nothing about health
// (e.g. the caller cancelled).
func (b *breaker) release(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.changedLocked() // another waiter may probe
	b.mu.Unlock()
}

// State reports the breaker state for diagnostics: "closed", "open" or
// "half-open".
func (b *breaker) state(now time.Time) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !b.open:
		return "closed"
	case now.Before(b.openUntil) && !b.probing:
		return "open"
	}
	return "half-open"
}

// blocked reports whether allow would reject a request at now (the
// circuit is open and cooling down, or its half-open probe is in flight).
func (b *breaker) blocked(now time.Time) bool {
	if b.threshold <= 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open && (now.Before(b.openUntil) || b.probing)
}
