package fakeengine

import (
	"container/list"
	"encoding/binary"
	"hash/fnv"
)

// BlockSize is the prefix-cache block size in tokens (vLLM's default).
const BlockSize = 16

// prefixCache is a block prefix cache in the manner of vLLM's automatic
// prefix caching: a prompt's full 16-token blocks are keyed by a hash
// chained over all preceding blocks, so a block hits only when the whole
// prefix up to it matches; least recently used blocks are evicted first.
// Not safe for concurrent use (the Server locks).
type prefixCache struct {
	capacity int
	ll       *list.List // front = most recent; values are uint64 keys
	m        map[uint64]*list.Element
}

func newPrefixCache(blocks int) *prefixCache {
	return &prefixCache{capacity: blocks, ll: list.New(), m: map[uint64]*list.Element{}}
}

// process returns how many of ids' leading tokens were cached, then caches
// all of ids' full blocks. As in vLLM, at least the last prompt token is
// always computed, so cached <= BlockSize * floor((len-1) / BlockSize).
func (c *prefixCache) process(ids []int) int {
	if c.capacity <= 0 || len(ids) == 0 {
		return 0
	}
	nblocks := len(ids) / BlockSize
	keys := make([]uint64, nblocks)
	var prev uint64
	var buf [8]byte
	for b := range nblocks {
		h := fnv.New64a()
		binary.LittleEndian.PutUint64(buf[:], prev)
		h.Write(buf[:])
		for _, id := range ids[b*BlockSize : (b+1)*BlockSize] {
			binary.LittleEndian.PutUint64(buf[:], uint64(id))
			h.Write(buf[:])
		}
		prev = h.Sum64()
		keys[b] = prev
	}
	hit := 0
	for _, k := range keys {
		if _, ok := c.m[k]; !ok {
			break
		}
		hit++
	}
	cached := min(hit*BlockSize, (len(ids)-1)/BlockSize*BlockSize)
	for _, k := range keys {
		if e, ok := c.m[k]; ok {
			c.ll.MoveToFront(e)
			continue
		}
		c.m[k] = c.ll.PushFront(k)
		for c.ll.Len() > c.capacity {
			old := c.ll.Back()
			c.ll.Remove(old)
			delete(c.m, old.Value.(uint64))
		}
	}
	return cached
}
