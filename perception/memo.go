package perception

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// textMemo maps a text to its analysis on one scene, for many readers at
// once. Each shard has a published map, immutable once published and read
// with no lock and no write to shared memory, and under its lock the
// entries added since; those join a new published map once they are as
// many as the published ones or have been asked for as many times, so
// copying costs O(1) per insertion and a text asked for often soon needs
// no lock. Past maxMemo insertions the memo is emptied.
type textMemo struct {
	shards [memoShards]memoShard
	mu     sync.Mutex // guards n
	n      int
}

// memoShards is a power of two; look-ups of one text by many workers
// contend on one shard only until it is published.
const memoShards = 64

type memoShard struct {
	read  atomic.Pointer[map[string]*textInfo]
	mu    sync.Mutex
	dirty map[string]*textInfo // not in read
	hits  int                  // look-ups dirty answered since the last publishing
}

var memoSeed = maphash.MakeSeed()

func (t *textMemo) shard(text string) *memoShard {
	return &t.shards[maphash.String(memoSeed, text)&(memoShards-1)]
}

// load returns the analysis of text, or nil.
func (t *textMemo) load(text string) *textInfo {
	sh := t.shard(text)
	if m := sh.read.Load(); m != nil {
		if ti, ok := (*m)[text]; ok {
			return ti
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	// a store may have published the text between the look-up above and
	// the lock
	if m := sh.read.Load(); m != nil {
		if ti, ok := (*m)[text]; ok {
			return ti
		}
	}
	ti := sh.dirty[text]
	if ti != nil {
		if sh.hits++; sh.hits >= len(sh.dirty) {
			sh.publish()
		}
	}
	return ti
}

// memoBudget bounds the texts memoised over all scenes of one reader
// (about 5 KB each): past it every scene's memo is emptied, so a run over
// thousands of scenarios holds a bounded cache rather than one per
// scenario. A memo is a cache only: emptying it changes no reading.
const memoBudget = 1 << 13

// clear empties t.
func (t *textMemo) clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emptyLocked()
}

// emptyLocked empties every shard; t.mu is held.
func (t *textMemo) emptyLocked() {
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		sh.read.Store(nil)
		sh.dirty, sh.hits = nil, 0
		sh.mu.Unlock()
	}
	t.n = 0
}

// store records ti as the analysis of text; own is the reader whose
// memo budget it counts against.
func (t *textMemo) store(own *embCache, text string, ti *textInfo) {
	if own.memoTotal.Add(1) > memoBudget {
		own.memoTotal.Store(1)
		own.clearMemos()
	}
	t.mu.Lock()
	if t.n++; t.n > maxMemo {
		t.emptyLocked()
		t.n = 1
	}
	t.mu.Unlock()
	sh := t.shard(text)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.dirty == nil {
		sh.dirty = map[string]*textInfo{}
	}
	sh.dirty[text] = ti
	if m := sh.read.Load(); m == nil || len(sh.dirty) >= len(*m) {
		sh.publish()
	}
}

// publish makes read the union of read and dirty; sh.mu is held.
func (sh *memoShard) publish() {
	n := len(sh.dirty)
	old := sh.read.Load()
	if old != nil {
		n += len(*old)
	}
	m := make(map[string]*textInfo, n)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	for k, v := range sh.dirty {
		m[k] = v
	}
	sh.read.Store(&m)
	sh.dirty, sh.hits = nil, 0
}
