package llm

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// Hedged attempts ("The Tail at Scale", Dean and Barroso, CACM 2013): an
// attempt at a chat or completion request that has gone unanswered for
// hedgeFactor times the replica's recent 95th-percentile latency of that
// endpoint is sent once more, on the same replica; the first attempt to
// end wins (a failure goes back to the retry loop) and the other is
// cancelled. The hedge takes over the straggler's
// in-flight slot (Backend.MaxInFlight), so a request the engine or the
// network holds for seconds no longer keeps a slot from the requests
// queued behind it, and the request itself is answered in about the
// hedge delay plus one normal latency. Requests are idempotent, so a
// duplicate changes no result.
//
// Choice: hedgeFactor 3 and the 95th percentile: with latencies of one
// endpoint that vary by less than 3x (a probe, one reply length), fewer
// than 1 in 20 healthy attempts reach the delay; hedgeEvery caps hedges
// at a tenth of the attempts so that an engine that slows down as a whole
// gets at most 10 % more requests, and hedgeMinSamples latencies must be
// known first. A hedge is not a retry: it spends no retry and no budget,
// and the straggler's cancellation says nothing of the replica's health.
const (
	hedgeFactor     = 3
	hedgeQuantile   = 0.95
	hedgeWindow     = 64
	hedgeMinSamples = 16
	// hedgeEvery attempts started earn one hedge; hedgeBurst caps the
	// hedges saved up.
	hedgeEvery = 10
	hedgeBurst = 8
	// hedgeFloor is the shortest hedge delay: below it a duplicate
	// would cost the engine more than waiting does.
	hedgeFloor = 20 * time.Millisecond
)

// latencies is one replica's window of recent successful attempt
// latencies per endpoint key, for the hedge delay.
type latencies struct {
	mu  sync.Mutex
	win map[string]*latencyRing
}

type latencyRing struct {
	d    [hedgeWindow]time.Duration
	n    int // samples held
	next int
}

// add records a successful attempt's latency d at endpoint key.
func (l *latencies) add(key string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.win == nil {
		l.win = map[string]*latencyRing{}
	}
	r := l.win[key]
	if r == nil {
		r = &latencyRing{}
		l.win[key] = r
	}
	r.d[r.next] = d
	r.next = (r.next + 1) % hedgeWindow
	r.n = min(r.n+1, hedgeWindow)
}

// hedgeDelay returns how long an attempt at key waits before its hedge:
// hedgeFactor × the window's 95th percentile, at least hedgeFloor; 0
// (no hedge) with fewer than hedgeMinSamples latencies.
func (l *latencies) hedgeDelay(key string) time.Duration {
	l.mu.Lock()
	r := l.win[key]
	if r == nil || r.n < hedgeMinSamples {
		l.mu.Unlock()
		return 0
	}
	s := slices.Clone(r.d[:r.n])
	l.mu.Unlock()
	slices.Sort(s)
	q := s[min(len(s)-1, int(hedgeQuantile*float64(len(s))))]
	return max(hedgeFloor, hedgeFactor*q)
}

// hedgeTokens is a Client's hedge budget: a token bucket that earns a
// hedge per hedgeEvery attempts, hedgeBurst hedges at most.
type hedgeTokens struct {
	mu     sync.Mutex
	tenths int // attempts earned, in units of 1/hedgeEvery hedge
	sent   int // hedges spent (Client.Hedges)
}

func (h *hedgeTokens) earn() {
	h.mu.Lock()
	h.tenths = min(hedgeBurst*hedgeEvery, h.tenths+1)
	h.mu.Unlock()
}

func (h *hedgeTokens) spend() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tenths < hedgeEvery {
		return false
	}
	h.tenths -= hedgeEvery
	h.sent++
	return true
}

// Hedges returns how many hedged duplicates the client has sent (hedge.go;
// 0 or more). They are not in any Usage.Requests: whether a duplicate is
// sent depends on timing, and an episode's record must not (same seed,
// same episode), so this count is where the extra requests show.
func (c *Client) Hedges() int {
	c.hedges.mu.Lock()
	defer c.hedges.mu.Unlock()
	return c.hedges.sent
}

// attemptResult is one attempt's outcome.
type attemptResult struct {
	v        any
	err      error
	timedOut bool // the attempt's own Timeout passed (ctx still live)
	hedge    bool
	took     time.Duration
}

// attempt runs fn as one attempt on r under Backend.Timeout, hedged after
// r's hedge delay for key when hedge is set (see above); the caller holds
// one of r's slots for it throughout. It returns the result of the first
// attempt to end, success or failure; sent is 1, the attempt (a hedged
// duplicate is counted by Client.Hedges, not here). The attempt still
// running when it returns is cancelled.
func (c *Client) attempt(ctx context.Context, r *replica, key string, hedge bool,
	fn func(context.Context, *replica) (any, error)) (res attemptResult, sent int) {
	c.hedges.earn()
	results := make(chan attemptResult, 2)
	var cancels []context.CancelFunc
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	start := func(isHedge bool) {
		actx, cancel := context.WithTimeout(ctx, c.b.Timeout)
		cancels = append(cancels, cancel)
		if !isHedge {
			sent++
		}
		t0 := c.now()
		go func() {
			v, err := fn(actx, r)
			timedOut := err != nil && errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
			results <- attemptResult{v: v, err: err, timedOut: timedOut, hedge: isHedge, took: c.now().Sub(t0)}
		}()
	}
	start(false)
	var timer <-chan time.Time
	if d := r.lat.hedgeDelay(key); hedge && key != "" && d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	for {
		select {
		case res = <-results:
			// The first attempt to end decides, a failure too: the
			// straggler a hedge was sent for has gone hedgeFactor times
			// the usual latency and is most likely lost, and a failed
			// hedge goes back to the retry loop (backoff, breaker) rather
			// than waiting on it.
			if res.err == nil {
				r.lat.add(key, res.took)
			}
			return res, sent
		case <-timer:
			timer = nil
			if ctx.Err() == nil && c.hedges.spend() {
				start(true)
			}
		}
	}
}
