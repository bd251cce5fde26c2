package prose

// Mentions reports whether keyword kw (any case; one or more words,
// split by the tokenizer's rules, so "side-effects" and "side effects"
// are the same two words) occurs in d as consecutive words of one
// sentence. A keyword with no word characters never matches.
//
// Choice: two words match when equal (case-insensitive), or when one is
// the other plus an inflection suffix: "s", "es", "ed", "d", "ing", "'s",
// or "y" to "ies"/"ied", or a dropped final "e" before "ing" ("cost"
// matches "costs", "costing"; "study" matches "studies"; "commute"
// matches "commuting"; "costs" also matches "cost"); see WordMatch.
func (d *Doc) Mentions(kw string) bool {
	s0, e0, ok := kwNext(kw, 0)
	if !ok {
		return false
	}
	first := kw[s0:e0]
	f0 := lower(first[0])
	for i := range d.Tokens {
		t := d.Tokens[i]
		if t.e == t.s || d.norm[t.s] != f0 || !wordMatch(d.norm[t.s:t.e], first) {
			continue
		}
		sent := d.Clauses[t.Clause].Sent
		j := i + 1
		pos := e0
		matched := true
		for {
			s, e, more := kwNext(kw, pos)
			if !more {
				break
			}
			if j >= len(d.Tokens) || d.Clauses[d.Tokens[j].Clause].Sent != sent || !wordMatch(d.Bytes(j), kw[s:e]) {
				matched = false
				break
			}
			j++
			pos = e
		}
		if matched {
			return true
		}
	}
	return false
}

// WordMatch reports whether the lower-case word w matches the word k (any
// case) under the inflection rule of Mentions.
func WordMatch(w, k string) bool { return wordMatch([]byte(w), k) }

// KeywordWords appends to dst the words of keyword kw, lower-cased, split
// by the tokenizer's rules.
func KeywordWords(dst []string, kw string) []string {
	for pos := 0; ; {
		s, e, ok := kwNext(kw, pos)
		if !ok {
			return dst
		}
		b := []byte(kw[s:e])
		for i := range b {
			b[i] = lower(b[i])
		}
		dst = append(dst, string(b))
		pos = e
	}
}

// kwNext returns the next word of keyword kw at or after byte pos, as the
// byte range [s, e), mirroring the tokenizer's word and number rules; ok is
// false when no word is left.
func kwNext(kw string, pos int) (s, e int, ok bool) {
	n := len(kw)
	i := pos
	for i < n && !isLetter(kw[i]) && !isDigit(kw[i]) {
		i++
	}
	if i >= n {
		return 0, 0, false
	}
	s = i
	if isDigit(kw[i]) {
		for i < n && (isDigit(kw[i]) || (kw[i] == '.' || kw[i] == ',' || kw[i] == ':') && i+1 < n && isDigit(kw[i+1]) && i > s) {
			i++
		}
		return s, i, true
	}
	for i < n && (isLetter(kw[i]) || kw[i] == '\'' && i+1 < n && isLetter(kw[i+1]) && i > s) {
		i++
	}
	return s, i, true
}

// lower folds an ASCII upper-case letter.
func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// foldPrefix reports whether long starts with short (short folded to lower case).
func foldPrefix(long []byte, short string) bool {
	if len(long) < len(short) {
		return false
	}
	for i := 0; i < len(short); i++ {
		if long[i] != lower(short[i]) {
			return false
		}
	}
	return true
}

// wordMatch compares a text word (lower-case) with a keyword word (any
// case) under the inflection tolerance documented on Mentions.
func wordMatch(w []byte, k string) bool {
	// Inflection never changes the first letter: a cheap early exit.
	if len(w) == 0 || len(k) == 0 || w[0] != lower(k[0]) {
		return false
	}
	if len(w) == len(k) {
		return foldPrefix(w, k)
	}
	if len(k) < 3 || len(w) < 3 {
		return false // short words match only exactly
	}
	if len(w) > len(k) {
		return inflects(w, k)
	}
	// The keyword is the inflected form ("costs" vs text "cost"): fold
	// the keyword into a small stack buffer and compare the other way.
	var buf [64]byte
	if len(k) > len(buf) {
		return false
	}
	kb := buf[:len(k)]
	for i := 0; i < len(k); i++ {
		kb[i] = lower(k[i])
	}
	return inflects(kb, string(w))
}

// inflects reports whether long is short plus one inflection suffix.
func inflects(long []byte, short string) bool {
	if foldPrefix(long, short) {
		switch string(long[len(short):]) {
		case "s", "es", "ed", "ing", "'s":
			return true
		case "d":
			return lower(short[len(short)-1]) == 'e'
		}
		return false
	}
	last := lower(short[len(short)-1])
	stem := short[:len(short)-1]
	if !foldPrefix(long, stem) {
		return false
	}
	rest := string(long[len(stem):])
	switch last {
	case 'y':
		return rest == "ies" || rest == "ied"
	case 'e':
		return rest == "ing"
	}
	return false
}
