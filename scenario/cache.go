package scenario

import (
	"encoding/binary"

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
// use.
type Cache[V any] struct{ m *prose.Memo[string, V] }

// NewCache returns an empty Cache of at most limit values (at least 16).
func NewCache[V any](limit int) *Cache[V] {
	return &Cache[V]{m: prose.NewMemo[string, V](limit)}
}

// Get returns the value derived from the content fields (every string the
// derivation reads, in a fixed order; their boundaries count), calling
// derive on a miss. derive runs without a lock, so episodes that miss
// together may each derive the value; each gets its own, equal in
// content, and the last is kept.
func (c *Cache[V]) Get(fields []string, derive func() V) V {
	k := string(appendKey(make([]byte, 0, 256), fields))
	if v, ok := c.m.Get(k); ok {
		return v
	}
	v := derive()
	c.m.Put(k, v)
	return v
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
