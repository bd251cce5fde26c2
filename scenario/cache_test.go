package scenario

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// A Cache derives once per content, tells fields apart by their
// boundaries, and stays within its limit.
func TestCache(t *testing.T) {
	c := NewCache[int](16)
	calls := 0
	derive := func(v int) func() int { return func() int { calls++; return v } }
	if got := c.Get([]string{"ab", "c"}, derive(1)); got != 1 {
		t.Fatalf("first: %d", got)
	}
	if got := c.Get([]string{"ab", "c"}, derive(2)); got != 1 || calls != 1 {
		t.Fatalf("same content: %d after %d derivations, want 1 after 1", got, calls)
	}
	if got := c.Get([]string{"a", "bc"}, derive(3)); got != 3 || calls != 2 {
		t.Fatalf("other boundaries: %d after %d derivations, want 3 after 2", got, calls)
	}
	for i := range 100 {
		c.Get([]string{string(rune('a' + i%26)), string(rune('A' + i/26))}, derive(i))
	}
	if n := c.Len(); n > 16 || n < 1 {
		t.Fatalf("%d values held, want 1..16", n)
	}
}

// Callers that miss one value together derive it once; a derivation
// that panics leaves the waiters to derive their own.
func TestCacheDerivesOnce(t *testing.T) {
	c := NewCache[int](16)
	var calls atomic.Int32
	start, release := make(chan struct{}), make(chan struct{})
	derive := func() int {
		calls.Add(1)
		close(start)
		<-release
		return 7
	}
	got := make(chan int, 3)
	go func() { got <- c.Get([]string{"k"}, derive) }()
	<-start
	for range 2 {
		go func() { got <- c.Get([]string{"k"}, func() int { calls.Add(1); return 8 }) }()
	}
	await(t, func() bool { return c.waiting("k", 2) }, "two callers waiting on the derivation")
	close(release)
	for range 3 {
		if v := <-got; v != 7 {
			t.Fatalf("got %d, want 7 from the one derivation", v)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d derivations, want 1", n)
	}

	boom := make(chan struct{})
	go func() {
		defer func() { recover() }()
		c.Get([]string{"p"}, func() int { <-boom; panic("derive") })
	}()
	await(t, func() bool { return c.inFlight("p") }, "the derivation in flight")
	done := make(chan int)
	go func() { done <- c.Get([]string{"p"}, func() int { return 9 }) }()
	await(t, func() bool { return c.waiting("p", 1) }, "a caller waiting on the derivation")
	close(boom)
	if v := <-done; v != 9 {
		t.Fatalf("after a panicked derivation: %d, want the waiter's own 9", v)
	}
}

// inFlight reports whether the value of the one field k is being derived.
func (c *Cache[V]) inFlight(k string) bool { return c.waiting(k, 0) }

// waiting reports whether the value of the one field k is being derived
// with at least n callers waiting for it.
func (c *Cache[V]) waiting(k string, n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.flight[string(appendKey(nil, []string{k}))]
	return ok && f.waiters >= n
}

// await waits up to 10 s for cond, failing t with what it waited for.
func await(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, still no %s", what)
		}
		runtime.Gosched()
	}
}
