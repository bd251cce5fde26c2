package prose

// Negated reports whether token i is in a negator's scope: a Negator
// stands before it in its clause ("I don't think your worry about the
// cost is silly": silly is negated; "it is not cheap, but it is worth
// it": worth is not). A negative imperative right before it ("don't be
// ridiculous", "do not be silly") does not negate it: it says the thing.
//
// Choice: the scope is the rest of the clause, as polarity scopes over a
// clause; clause boundaries (commas, dashes, brackets) end it, and in a
// text without sentence marks so does a capitalised word after a
// lower-case one ("I don't want to brush that aside Studies show ...":
// Studies is not negated; see capitalBreak).
func (d *Doc) Negated(i int) bool {
	ts := d.Tokens
	c := ts[i].Clause
	if i >= 2 && d.is(i-1, "be") && ts[i-2].Clause == c && (d.is(i-2, "don't") || d.is(i-2, "dont") ||
		i >= 3 && d.is(i-2, "not") && d.is(i-3, "do") && ts[i-3].Clause == c) {
		return false
	}
	for k := i; k >= 0; k-- {
		if ts[k].Clause != c {
			return false
		}
		if k < i && ts[k].Flags&Negator != 0 {
			return true
		}
		if d.unmarked && ts[k].Flags&Upper != 0 && !d.is(k, "i") && capitalAfter(d, k) {
			return false // k opens a new scope
		}
	}
	return false
}

// is reports whether token i's word is w.
func (d *Doc) is(i int, w string) bool {
	t := &d.Tokens[i]
	return string(d.norm[t.s:t.e]) == w
}
