package llm

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"time"
)

// replica is one engine URL of a backend (Backend.URLs) with its own
// concurrency cap (Backend.MaxInFlight) and circuit breaker. Its load,
// guarded by Client.lmu, is the number of its requests in flight (sent or
// waiting for the cap) plus the affinities pinned to it that have not sent
// their first request yet.
type replica struct {
	idx  int
	url  string // as configured
	base string // url without trailing slash
	root string // base without a trailing /v1
	oa   oaServices
	sem  chan struct{}
	br   breaker
	load int
	lat  latencies // recent successful latencies per endpoint (hedge.go)
}

// nativeURL resolves an engine endpoint: under the replica's base URL when
// underV1, else under it without /v1.
func (r *replica) nativeURL(path string, underV1 bool) string {
	if underV1 {
		return r.base + path
	}
	return r.root + path
}

// pickLocked returns the replica with the least load, ties to the lowest
// index, skipping except and replicas whose circuit is open (rejecting
// requests); nil when none is left. c.lmu must be held.
func (c *Client) pickLocked(now time.Time, except *replica) *replica {
	var best *replica
	for _, r := range c.reps {
		if r == except || r.br.blocked(now) {
			continue
		}
		if best == nil || r.load < best.load {
			best = r
		}
	}
	return best
}

// Affinity pins one episode's requests to one replica of a Client's
// backend, so the engine's prefix cache keeps the episode's shared prefix
// (its replies and probe forks). It is made by Client.Affinity and
// attached to a context with WithAffinity; the Client's requests made with
// that context go to the pinned replica. Safe for concurrent use.
type Affinity struct{ *pin }

// pin is an Affinity's state, apart from it so that a cleanup can release
// the reservation of an affinity dropped before its first request.
type pin struct {
	c     *Client
	mu    sync.Mutex
	r     *replica
	fresh bool // holds one unit of r.load until the first request
	moves int
}

// Affinity pins a new episode to the replica with the fewest requests in
// flight (a replica's load also counts the affinities pinned to it that
// have not sent their first request, so episodes starting together
// spread), ties to the lowest index, skipping replicas whose circuit is
// open (when all are open: the least loaded of all). A backend with one
// URL (including a router URL such as the SGLang router's) always pins
// replica 0, and requests behave exactly as without an affinity.
//
// Choice: when the pinned replica fails (a transport error such as
// connection refused, or its circuit opens), the affinity moves to the
// next least-loaded healthy replica for the following attempts and
// requests; the episode loses its prefix cache, the other episodes keep
// theirs. An affinity never moves back. An affinity dropped before its
// first request gives its reservation back when it is garbage-collected.
func (c *Client) Affinity() *Affinity {
	c.lmu.Lock()
	defer c.lmu.Unlock()
	r := c.pickLocked(c.now(), nil)
	if r == nil {
		r = c.reps[0]
		for _, q := range c.reps[1:] {
			if q.load < r.load {
				r = q
			}
		}
	}
	r.load++
	a := &Affinity{&pin{c: c, r: r, fresh: true}}
	runtime.AddCleanup(a, (*pin).release, a.pin)
	return a
}

// release gives back the reservation of a pin that never sent a request.
func (p *pin) release() {
	p.c.lmu.Lock()
	defer p.c.lmu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fresh {
		p.r.load--
		p.fresh = false
	}
}

// Replica returns the index in Backend.URLs of the replica the affinity
// is pinned to now.
func (a *Affinity) Replica() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.r.idx
}

// Moves returns how many times the affinity moved off a failed replica.
func (a *Affinity) Moves() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.moves
}

type affinityKey struct{}

// WithAffinity returns ctx carrying a: requests of a's Client made with
// the returned context go to a's replica (other Clients ignore it). A nil
// a returns ctx unchanged.
func WithAffinity(ctx context.Context, a *Affinity) context.Context {
	if a == nil {
		return ctx
	}
	return context.WithValue(ctx, affinityKey{}, a)
}

// affinityFor returns the affinity of ctx that belongs to c, or nil.
func (c *Client) affinityFor(ctx context.Context) *Affinity {
	a, _ := ctx.Value(affinityKey{}).(*Affinity)
	if a == nil || a.c != c {
		return nil
	}
	return a
}

// enter chooses the replica of one attempt and counts the attempt in its
// load: a's replica (moved first when its circuit is open and another
// replica is healthy), or without an affinity the least-loaded healthy
// replica (replica 0 when every circuit is open).
func (c *Client) enter(a *Affinity) *replica {
	now := c.now()
	c.lmu.Lock()
	defer c.lmu.Unlock()
	if a == nil {
		r := c.pickLocked(now, nil)
		if r == nil {
			r = c.reps[0]
		}
		r.load++
		return r
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.r.br.blocked(now) {
		a.moveLocked(now)
	}
	if a.fresh {
		a.fresh = false // the reservation becomes this request
	} else {
		a.r.load++
	}
	return a.r
}

// leave ends an attempt on r.
func (c *Client) leave(r *replica) {
	c.lmu.Lock()
	r.load--
	c.lmu.Unlock()
}

// failed records that an attempt on r failed in a way that suggests r is
// down (a transport error, or its circuit is now open): a's later attempts
// go to another healthy replica when there is one.
func (c *Client) failed(a *Affinity, r *replica) {
	if a == nil || len(c.reps) < 2 {
		return
	}
	now := c.now()
	c.lmu.Lock()
	defer c.lmu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.r == r {
		a.moveLocked(now)
	}
}

// moveLocked moves a off its replica to the least-loaded healthy other
// one (kept when there is none). c.lmu and a.mu must be held.
func (a *pin) moveLocked(now time.Time) {
	nr := a.c.pickLocked(now, a.r)
	if nr == nil {
		return
	}
	if a.fresh {
		a.r.load--
		nr.load++
	}
	a.r = nr
	a.moves++
}

// URLs returns the backend's engine URLs: BaseURLs, or BaseURL alone.
func (b Backend) URLs() []string {
	if len(b.BaseURLs) > 0 {
		return b.BaseURLs
	}
	return []string{b.BaseURL}
}

// urlList names the backend's URLs for messages: one URL, or the list
// joined by commas.
func (b Backend) urlList() string { return strings.Join(b.URLs(), ",") }
