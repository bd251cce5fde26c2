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

// DefaultCachedScenes and DefaultCachedTexts are the process-wide cache
// limits of SetCacheLimits: past DefaultCachedScenes scenes (about 110 KB
// each) the scene cache is emptied, and past DefaultCachedTexts units of
// memoised text analyses (a text costs 1 + len/256 units; an analysis
// holds about 30 times its text, 27 KB for a sentence) every scene's memo
// is, so a run over thousands of scenarios holds a bounded cache rather
// than one per scenario. A cache only: emptying it changes no reading.
const (
	DefaultCachedScenes = 8192
	DefaultCachedTexts  = 1 << 15
)

var (
	maxScenes  atomic.Int64
	memoBudget atomic.Int64
	memoTotal  atomic.Int64
)

func init() { SetCacheLimits(DefaultCachedScenes, DefaultCachedTexts) }

// SetCacheLimits sets the process-wide limits of the embedded reader's
// caches, scenes (>= 1 scenes) and texts (>= 1 units, see
// DefaultCachedTexts), and returns the previous ones. A long-lived server
// whose sessions each hold their own scene and analyses (persuarena serve)
// keeps them small, so that its memory does not grow with every scenario
// and text its clients ever used; an evaluation over thousands of
// scenarios keeps the defaults. Values below 1 are taken as 1.
func SetCacheLimits(scenes, texts int) (prevScenes, prevTexts int) {
	return int(maxScenes.Swap(int64(max(scenes, 1)))), int(memoBudget.Swap(int64(max(texts, 1))))
}

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

// store records ti as the analysis of text.
func (t *textMemo) store(text string, ti *textInfo) {
	cost := int64(1 + len(text)/256)
	if memoTotal.Add(cost) > memoBudget.Load() {
		memoTotal.Store(cost)
		clearSceneMemos()
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
