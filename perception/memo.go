package perception

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// textMemo maps a text to its analysis on one scene, for many readers at
// once: a look-up is a hash, an atomic load and a map read, with no lock
// and no write to shared memory. Each shard's map is immutable once
// published; an insertion copies its shard (a few dozen entries) under the
// shard's lock. Past maxMemo insertions the memo is emptied.
type textMemo struct {
	shards [memoShards]memoShard
	mu     sync.Mutex // guards n
	n      int
}

// memoShards is a power of two: maxMemo/memoShards entries per shard at
// most, so an insertion copies few.
const memoShards = 256

type memoShard struct {
	m  atomic.Pointer[map[string]*textInfo]
	mu sync.Mutex
}

var memoSeed = maphash.MakeSeed()

func (t *textMemo) shard(text string) *memoShard {
	return &t.shards[maphash.String(memoSeed, text)&(memoShards-1)]
}

// load returns the analysis of text, or nil.
func (t *textMemo) load(text string) *textInfo {
	if m := t.shard(text).m.Load(); m != nil {
		return (*m)[text]
	}
	return nil
}

// store records ti as the analysis of text.
func (t *textMemo) store(text string, ti *textInfo) {
	t.mu.Lock()
	if t.n++; t.n > maxMemo {
		for i := range t.shards {
			sh := &t.shards[i]
			sh.mu.Lock() // after any insertion under way, so none survives
			sh.m.Store(nil)
			sh.mu.Unlock()
		}
		t.n = 1
	}
	t.mu.Unlock()
	sh := t.shard(text)
	sh.mu.Lock()
	var m map[string]*textInfo
	if old := sh.m.Load(); old != nil {
		m = make(map[string]*textInfo, len(*old)+1)
		for k, v := range *old {
			m[k] = v
		}
	} else {
		m = make(map[string]*textInfo, 1)
	}
	m[text] = ti
	sh.m.Store(&m)
	sh.mu.Unlock()
}
