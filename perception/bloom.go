package perception

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
