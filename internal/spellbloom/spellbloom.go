// Package spellbloom is the spelling Bloom filter of the embedded reader:
// a set of word hashes (prose.Hash, FNV-1a) answered with "certainly
// not" or "maybe", over every dictionary word and each of its one-letter
// deletions, so that a word with no dictionary word one edit away is told
// apart without trying its candidates. internal/wordnetgen fills a filter
// with the lexicon's words and stores it in the lexicon file; package
// perception adds its global words (Extend) and probes it. Both go
// through this package, so a filter written by the one is read by the
// other bit for bit.
//
// A filter is Bits bits held in Bits/64 uint64 words, bit i of the filter
// being bit i%64 of word i/64; each hash sets or tests Probes bits chosen
// by double hashing of its MurmurHash3 finalisation.
package spellbloom

import "github.com/persuarena/persuarena/prose"

// Bits is a filter's size in bits (a power of two; 2 MiB); Probes its
// probes per hash.
const (
	Bits   = 1 << 24
	Probes = 3
)

// New returns an empty filter (Bits/64 words).
func New() []uint64 { return make([]uint64, Bits/64) }

// probe returns the bit positions of hash h.
func probe(h uint64) [Probes]uint64 {
	h = prose.Mix(h)
	x, y := h, h>>32|1
	var p [Probes]uint64
	for k := range p {
		p[k] = x & (Bits - 1)
		x += y
	}
	return p
}

// Set adds hash h to filter b (Bits/64 words).
func Set(b []uint64, h uint64) {
	for _, i := range probe(h) {
		b[i>>6] |= 1 << (i & 63)
	}
}

// Has reports false when hash h was certainly never added to filter b
// (Bits/64 words).
func Has(b []uint64, h uint64) bool {
	for _, i := range probe(h) {
		if b[i>>6]&(1<<(i&63)) == 0 {
			return false
		}
	}
	return true
}

// DelHash is prose.Hash of w without its byte i.
func DelHash(w string, i int) uint64 {
	h := uint64(14695981039346656037)
	for k := 0; k < len(w); k++ {
		if k != i {
			h = (h ^ uint64(w[k])) * 1099511628211
		}
	}
	return h
}

// AddWord adds dictionary word w to filter b: its hash and the hash of
// each of its one-letter deletions.
func AddWord(b []uint64, w string) {
	Set(b, prose.Hash(w))
	for i := range len(w) {
		Set(b, DelHash(w, i))
	}
}

// Filter is a filter made of a read-only base (Bits/64 words, e.g. a
// filter stored in the binary) and words added to it, whose bits are
// held apart: bit for bit the filter that adding the words to a copy of
// the base would make, without copying the base's 2 MiB or reading it.
//
// Choice: the added bits in a small hash set behind a bitmap of the base
// words they fall in (32 KiB), since the words added at start-up (the
// global spelling words outside the lexicon, a few hundred) set a few
// thousand bits: a probe of a bit the base lacks costs one look at the
// bitmap, rarely one at the set.
type Filter struct {
	base    []uint64
	touched []uint64 // bit j: added holds a bit of base word j
	// added holds each added bit position + 1 (0: empty), at the
	// position's low bits or the first free slot after (the positions
	// are uniform already); len a power of two, at least twice the bits.
	added []uint32
}

// Extend returns the filter of base with words added (AddWord of each).
// base must hold Bits/64 words and is neither read nor written here;
// Extend panics otherwise.
func Extend(base []uint64, words []string) *Filter {
	if len(base) != Bits/64 {
		panic("spellbloom: base filter of the wrong size")
	}
	n := 0
	for _, w := range words {
		n += (len(w) + 1) * Probes
	}
	size := 16
	for size < 2*n {
		size <<= 1
	}
	f := &Filter{base: base, touched: make([]uint64, Bits/64/64), added: make([]uint32, size)}
	m := uint32(size - 1)
	add := func(h uint64) {
		for _, i := range probe(h) {
			f.touched[i>>12] |= 1 << (i >> 6 & 63)
			v := uint32(i) + 1
			for k := v & m; ; k = (k + 1) & m {
				if f.added[k] == v {
					break
				}
				if f.added[k] == 0 {
					f.added[k] = v
					break
				}
			}
		}
	}
	for _, w := range words {
		add(prose.Hash(w))
		for i := range len(w) {
			add(DelHash(w, i))
		}
	}
	return f
}

// Has reports false when hash h was certainly never added to f. It tests
// the positions of probe one at a time, so that the first bit missing
// ends it (TestExtendIsTheUnion checks it against Has).
func (f *Filter) Has(h uint64) bool {
	h = prose.Mix(h)
	x, y := h, h>>32|1
	for range Probes {
		i := x & (Bits - 1)
		if f.base[i>>6]&(1<<(i&63)) == 0 && !f.hasAdded(i) {
			return false
		}
		x += y
	}
	return true
}

// hasAdded reports whether bit i was added (not in base): a look at
// touched, rarely one at added.
func (f *Filter) hasAdded(i uint64) bool {
	return f.touched[i>>12]&(1<<(i>>6&63)) != 0 && f.inAdded(uint32(i)+1)
}

// inAdded reports whether added holds v (a bit position + 1).
func (f *Filter) inAdded(v uint32) bool {
	m := uint32(len(f.added) - 1)
	for k := v & m; ; k = (k + 1) & m {
		switch f.added[k] {
		case v:
			return true
		case 0:
			return false
		}
	}
}

// MayHaveNeighbour reports whether a word added to f may be one edit (a
// deletion, an insertion, a substitution or two neighbours swapped) from
// w; false means certainly none is. Such a word d has w among its
// deletions (w is d less a letter), is a deletion of w (w is d plus a
// letter), or shares a deletion with w (substitution, swap).
func (f *Filter) MayHaveNeighbour(w string) bool {
	if f.Has(prose.Hash(w)) {
		return true
	}
	for i := range len(w) {
		if f.Has(DelHash(w, i)) {
			return true
		}
	}
	return false
}
