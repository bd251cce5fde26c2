package llm

import (
	"fmt"
	"sync"
	"time"
)

// breaker is a per-backend circuit breaker: closed until threshold
// consecutive failures, then open for cooldown (every request fails fast
// with ErrCircuitOpen), then half-open: one probe request is let through;
// its success closes the circuit, its failure reopens it for another
// cooldown.
//
// Choice: only failures that suggest an unhealthy server count (5xx,
// connection errors, timeouts); 429 is flow control handled by Retry-After
// and other 4xx are the request's fault.
type breaker struct {
	threshold int // <= 0: disabled
	cooldown  time.Duration

	mu        sync.Mutex
	failures  int
	openUntil time.Time
	open      bool
	probing   bool  // half-open probe in flight
	last      error // the latest failure, named when the circuit is open
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
		return false, fmt.Errorf("%w after %d consecutive failures (last: %v); next probe in %s", ErrCircuitOpen, b.failures, b.last, wait.Round(time.Millisecond))
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
	b.failures, b.open, b.probing = 0, false, false
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
	if b.probing || b.failures >= b.threshold {
		b.open, b.probing = true, false
		b.openUntil = now.Add(b.cooldown)
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
