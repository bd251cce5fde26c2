package llm

import (
	"context"
	"time"
)

// circuitWaitLimit bounds how long one request waits on open circuits
// before it fails with ErrCircuitOpen (transient): four cooldowns plus
// one attempt's Timeout (the half-open probe's own time).
//
// Choice: a request that meets an open or half-open circuit waits for it
// (the remaining cooldown, or until the probe in flight ends) instead of
// failing at once: a failed request fails its episode, whose replays are
// few, while the circuit usually closes within a cooldown. Four cooldowns
// let a probe fail three times in a row before the episode hears of it.
func (c *Client) circuitWaitLimit() time.Duration {
	return 4*c.b.BreakerCooldown + c.b.Timeout
}

// waitCircuit waits for r's circuit: until its cooldown ends or, with a
// probe in flight, until the probe ends (at most min(Timeout, cooldown)),
// whichever comes first, woken early when the circuit closes or reopens,
// then a seeded jitter of up to a twentieth of the cooldown (at most
// 250 ms) so that the waiters woken by a successful probe do not all
// return at once. It adds the time waited to *waited (the planned wait
// unless the circuit woke it early) and reports false, without waiting,
// when the planned wait would pass circuitWaitLimit, or when ctx ends.
func (c *Client) waitCircuit(ctx context.Context, r *replica, waited *time.Duration) bool {
	d := r.br.wait(c.now())
	if d <= 0 {
		d = min(c.b.Timeout, c.b.BreakerCooldown) // the probe's attempt
	}
	jit := c.jitter(min(c.b.BreakerCooldown/20, 250*time.Millisecond))
	if *waited+d+jit > c.circuitWaitLimit() || ctx.Err() != nil {
		return false
	}
	ch := r.br.watch()
	start := c.now()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-ch:
			cancel()
		case <-wctx.Done():
		}
	}()
	c.sleep(wctx, d)
	if ctx.Err() != nil {
		return false
	}
	select {
	case <-ch:
		// Woken by the circuit (a probe ended): only the time waited
		// counts, so that a waiter outlasting several probes of a few
		// milliseconds each is not charged min(Timeout, cooldown) for
		// each of them.
		*waited += min(max(c.now().Sub(start), 0), d) + jit
	default:
		*waited += d + jit
	}
	if jit > 0 && c.sleep(ctx, jit) != nil {
		return false
	}
	return true
}

// jitter returns a seeded random duration in [0, d).
func (c *Client) jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	return time.Duration(c.rng.Float64() * float64(d))
}
