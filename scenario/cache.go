package scenario

import (
	"encoding/binary"
	"sync"

	"github.com/persuarena/persuarena/prose"
)

// Cache holds what a role compiles from a scenario once — the simulator's
// template fill, its reader's scene, a built-in persuader's slot fills —
// so that the episodes on scenarios of the same content share one
// compiled form. A value is found by content: the strings its derivation
// reads, compared in full on every look-up, so an edited scenario never
// gets another's value and no hash collision can mix two. It is bounded
// (a prose.Memo: past its limit it drops entries; a cache only, the next
// episode on a dropped scenario derives its value again), and its owner
// decides its lifetime: a simulator, a reader or a persuader keeps one
// per instance, so a run's caches go with the run. Safe for concurrent
// use: episodes that miss one value together derive it once (a run plays
// a scenario's episodes side by side).
type Cache[V any] struct {
	m      *prose.Memo[string, V]
	mu     sync.Mutex
	flight map[string]*derivation[V] // values being derived, by key
}

// derivation is a value being derived; done is closed when it is set
// (ok false when derive panicked).
type derivation[V any] struct {
	done    chan struct{}
	v       V
	ok      bool
	waiters int // callers waiting on done (under Cache.mu; read by the tests)
}

// NewCache returns an empty Cache of at most limit values (at least 16).
func NewCache[V any](limit int) *Cache[V] {
	return &Cache[V]{m: prose.NewMemo[string, V](limit), flight: map[string]*derivation[V]{}}
}

// Get returns the value derived from the content fields (every string the
// derivation reads, in a fixed order; their boundaries count), calling
// derive on a miss. derive runs without a lock; callers that miss while
// it runs wait for its value (or, should it panic, derive their own).
func (c *Cache[V]) Get(fields []string, derive func() V) V {
	k := string(appendKey(make([]byte, 0, 256), fields))
	if v, ok := c.m.Get(k); ok {
		return v
	}
	c.mu.Lock()
	if f, ok := c.flight[k]; ok {
		f.waiters++
		c.mu.Unlock()
		<-f.done
		if f.ok {
			return f.v
		}
		return derive()
	}
	if v, ok := c.m.Get(k); ok { // derived since the first look
		c.mu.Unlock()
		return v
	}
	f := &derivation[V]{done: make(chan struct{})}
	c.flight[k] = f
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.flight, k)
		c.mu.Unlock()
		close(f.done)
	}()
	f.v = derive()
	f.ok = true
	c.m.Put(k, f.v)
	return f.v
}

// Len returns the number of values held.
func (c *Cache[V]) Len() int { return c.m.Len() }

// appendKey appends fields to dst, each length-prefixed, so that no two
// lists of fields share a key.
func appendKey(dst []byte, fields []string) []byte {
	for _, f := range fields {
		dst = binary.AppendUvarint(dst, uint64(len(f)))
		dst = append(dst, f...)
	}
	return dst
}
