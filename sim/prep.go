package sim

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/persuarena/persuarena/scenario"
)

// prep is what a session derives from its scenario alone and never
// changes: the template strings. It is
// shared, read-only, by every episode on scenarios of the same content.
type prep struct {
	fill fill
	// the scenario fields prep was derived from (copied), compared in full
	// on every lookup so a hash collision or an edited scenario never
	// reuses another scenario's prep
	proposal, persuader, persuadee string
	constraints                    []string
	hidden                         []scenario.Concern
}

// maxPreps bounds the cache; past it the cache is emptied and refilled
// (a run rarely uses more scenarios than this).
const maxPreps = 8192

var (
	preps     sync.Map // uint64 content hash -> *prep
	byPtr     sync.Map // *scenario.Scenario -> *prep, checked with matches
	nPreps    atomic.Int64
	nPtrs     atomic.Int64
	prepsSeed = maphash.MakeSeed()
)

// prepOf returns sc's prep, from the cache when a scenario with the same
// content (every field prep reads) was prepared before. The scenario's
// address, then a hash of its content, key the cache; the full comparison
// (cheap for the same scenario: its strings are the very ones stored)
// decides a hit.
func prepOf(sc *scenario.Scenario) *prep {
	if v, ok := byPtr.Load(sc); ok {
		if p := v.(*prep); p.matches(sc) {
			return p
		}
	}
	p := prepByContent(sc)
	if nPtrs.Add(1) > maxPreps {
		byPtr.Clear() // scenarios made afresh per episode: keep the map bounded
		nPtrs.Store(1)
	}
	byPtr.Store(sc, p)
	return p
}

func prepByContent(sc *scenario.Scenario) *prep {
	h := prepHash(sc)
	if v, ok := preps.Load(h); ok {
		if p := v.(*prep); p.matches(sc) {
			return p
		}
		return newPrep(sc) // collision: not cached
	}
	p := newPrep(sc)
	if nPreps.Add(1) > maxPreps {
		preps.Clear()
		nPreps.Store(1)
	}
	preps.Store(h, p)
	return p
}

func newPrep(sc *scenario.Scenario) *prep {
	p := &prep{
		fill:     newFill(sc),
		proposal: sc.Proposal, persuader: sc.Persuader.Name, persuadee: sc.Persuadee.Name,
		constraints: slices.Clone(sc.Hidden.Constraints),
		hidden:      slices.Clone(sc.Hidden.Concerns),
	}
	for i := range p.hidden {
		p.hidden[i].Keywords = slices.Clone(p.hidden[i].Keywords)
	}
	return p
}

// matches reports whether sc has exactly the content p was derived from.
func (p *prep) matches(sc *scenario.Scenario) bool {
	if p.proposal != sc.Proposal || p.persuader != sc.Persuader.Name || p.persuadee != sc.Persuadee.Name ||
		!slices.Equal(p.constraints, sc.Hidden.Constraints) || len(p.hidden) != len(sc.Hidden.Concerns) {
		return false
	}
	for i, c := range sc.Hidden.Concerns {
		q := &p.hidden[i]
		if q.ID != c.ID || q.Description != c.Description || q.Voiced != c.Voiced || !slices.Equal(q.Keywords, c.Keywords) {
			return false
		}
	}
	return true
}

// prepHash hashes every field prep reads, each length-prefixed.
func prepHash(sc *scenario.Scenario) uint64 {
	var h maphash.Hash
	h.SetSeed(prepsSeed)
	str := func(s string) {
		var n [8]byte
		for i := range n {
			n[i] = byte(len(s) >> (8 * i))
		}
		h.Write(n[:])
		h.WriteString(s)
	}
	str(sc.Proposal)
	str(sc.Persuader.Name)
	str(sc.Persuadee.Name)
	for _, c := range sc.Hidden.Constraints {
		str(c)
	}
	h.WriteByte(0xff)
	for _, c := range sc.Hidden.Concerns {
		str(c.ID)
		str(c.Description)
		str(c.Voiced)
		for _, k := range c.Keywords {
			str(k)
		}
		h.WriteByte(0xfe)
	}
	return h.Sum64()
}
