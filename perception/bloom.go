package perception

import "github.com/persuarena/persuarena/prose"

// bloom is a Bloom filter over 64-bit hashes (2048 bits, two probes): a
// session's quick "certainly not said" before it searches the persuadee's
// replies one by one. With the hundred-odd words or 4-word runs of a
// ten-turn episode's replies, under 1% of the hashes never said pass it.
// It lives inline in the session: no allocation.
type bloom [32]uint64

// probes are the two bit positions of h (Fibonacci hashing, so the
// hash's high bits choose them).
func probes(h uint64) (uint64, uint64) {
	x := h * 0x9e3779b97f4a7c15
	return x >> 53, x >> 42 & 2047
}

func (b *bloom) add(h uint64) {
	i, j := probes(h)
	b[i>>6] |= 1 << (i & 63)
	b[j>>6] |= 1 << (j & 63)
}

// mayHave reports false when h was certainly never added.
func (b *bloom) mayHave(h uint64) bool {
	i, j := probes(h)
	return b[i>>6]&(1<<(i&63)) != 0 && b[j>>6]&(1<<(j&63)) != 0
}

// or adds every hash of c to b.
func (b *bloom) or(c *bloom) {
	for i := range b {
		b[i] |= c[i]
	}
}

// sig256 is a set of small hashes (bit256) as 256 bits: a sentence's
// word keys and the keys a frame's item accepts (frameBank.match), a
// scene's phrase heads (scene.phraseHead). Shared bits make it answer
// "maybe", never a wrong "no".
type sig256 [4]uint64

func (s *sig256) add(b uint8)      { s[b>>6] |= 1 << (b & 63) }
func (s *sig256) has(b uint8) bool { return s[b>>6]&(1<<(b&63)) != 0 }

// meets reports whether s and o share a bit.
func (s *sig256) meets(o *sig256) bool {
	return s[0]&o[0]|s[1]&o[1]|s[2]&o[2]|s[3]&o[3] != 0
}

// bit256 is hash h's bit in a sig256.
func bit256(h uint64) uint8 { return uint8(prose.Mix(h) >> 56) }

// hset is a set of 64-bit hashes in an open-addressing table whose size
// is a power of two at least twice the entries (0 stands for empty; the
// hash 0 is stored as 1): built in linear time, probed in constant time.
type hset []uint64

// makeHset returns a set of hs, its table cut from buf when buf has
// room (see hsetSize).
func makeHset(buf []uint64, hs []uint64) hset {
	s := hset(buf[:hsetSize(len(hs))])
	clear(s)
	for _, h := range hs {
		s.add(h)
	}
	return s
}

// hsetSize is the table size for n entries.
func hsetSize(n int) int {
	size := 4
	for size < 2*n {
		size <<= 1
	}
	return size
}

func (s hset) add(h uint64) {
	if h == 0 {
		h = 1
	}
	m := uint64(len(s) - 1)
	for i := prose.Mix(h) & m; ; i = (i + 1) & m {
		switch s[i] {
		case h:
			return
		case 0:
			s[i] = h
			return
		}
	}
}

// has reports whether h is in s.
func (s hset) has(h uint64) bool {
	if len(s) == 0 {
		return false
	}
	if h == 0 {
		h = 1
	}
	m := uint64(len(s) - 1)
	for i := prose.Mix(h) & m; ; i = (i + 1) & m {
		switch s[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// each calls f with every hash of s.
func (s hset) each(f func(h uint64)) {
	for _, h := range s {
		if h != 0 {
			f(h)
		}
	}
}
