package scenario

import "testing"

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
