package sim

import (
	"strconv"

	"github.com/persuarena/persuarena/scenario"
)

// prep is what a session derives from its scenario alone and never
// changes: the template strings. It is shared, read-only, by every episode
// of one simulator on scenarios of the same content (Persuadee.preps).
type prep struct {
	fill fill
}

// maxPreps bounds a simulator's preps (a few KB each; scenario.Cache).
const maxPreps = 4096

// prepOf returns sc's prep, from p's cache when a scenario with the same
// content (every field newFill reads) was prepared before.
func (p *Persuadee) prepOf(sc *scenario.Scenario) *prep {
	var buf [64]string
	return p.preps.Get(prepFields(buf[:0], sc), func() *prep { return &prep{fill: newFill(sc)} })
}

// prepFields returns, in a fixed order, every scenario string a prep is
// derived from (appended to dst), each list after its length, so that no
// two scenarios share the fields.
func prepFields(dst []string, sc *scenario.Scenario) []string {
	dst = append(dst, sc.Proposal, sc.Persuader.Name, sc.Persuadee.Name, strconv.Itoa(len(sc.Hidden.Constraints)))
	dst = append(dst, sc.Hidden.Constraints...)
	for _, c := range sc.Hidden.Concerns {
		dst = append(dst, c.ID, c.Description, c.Voiced, strconv.Itoa(len(c.Keywords)))
		dst = append(dst, c.Keywords...)
	}
	return dst
}
