package prose

import (
	"hash/maphash"
	"sync"
)

// Memo is a bounded cache from keys (a text, or a text and what it was
// read against) to values, safe for concurrent use. It holds at most its
// capacity of entries: a shard that is full drops one entry, chosen by
// Go's map order, for each one added. A memo only
// saves work, so what it drops and when never changes a result; whoever
// makes one owns it (a run's reader, not the process), so its memory
// ends with its owner.
type Memo[K comparable, V any] struct {
	shards   [memoShards]memoShard[K, V]
	perShard int
	seed     maphash.Seed
}

const memoShards = 16

type memoShard[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

// NewMemo returns an empty memo holding at most capacity entries
// (at least memoShards).
func NewMemo[K comparable, V any](capacity int) *Memo[K, V] {
	return &Memo[K, V]{perShard: max(1, capacity/memoShards), seed: maphash.MakeSeed()}
}

func (m *Memo[K, V]) shard(k K) *memoShard[K, V] {
	return &m.shards[maphash.Comparable(m.seed, k)&(memoShards-1)]
}

// Get returns the value stored for k.
func (m *Memo[K, V]) Get(k K) (V, bool) {
	sh := m.shard(k)
	sh.mu.Lock()
	v, ok := sh.m[k]
	sh.mu.Unlock()
	return v, ok
}

// Put stores v for k, dropping one entry of k's shard first when it is
// full.
func (m *Memo[K, V]) Put(k K, v V) {
	sh := m.shard(k)
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[K]V, min(m.perShard, 64))
	}
	if _, ok := sh.m[k]; !ok && len(sh.m) >= m.perShard {
		for old := range sh.m {
			delete(sh.m, old)
			break
		}
	}
	sh.m[k] = v
	sh.mu.Unlock()
}

// Len returns the number of entries held.
func (m *Memo[K, V]) Len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}
