// Package wordnetgen derives the compact lexicon that package perception
// embeds from the WordNet 3.0 database files (Princeton University;
// Debian's wordnet-base installs them under /usr/share/wordnet): the
// single-word lemmas, up to MaxSenses most frequent senses per lemma and
// part of speech, each kept synset's single-word members and its
// semantic and lexical relations (hypernym, instance hypernym, similar
// to, antonym, attribute, derivation, pertainym, also see, verb group),
// and the irregular inflections of the exception lists. Hyponyms are the
// inverse of hypernyms and are rebuilt when the lexicon is loaded.
//
// The output format (perception.Lexicon's reader is its one consumer) is
// the magic "PLEX1", then unsigned varints: the word count and
// each word (length, bytes; words sorted), the synset count and per
// synset its part of speech (one byte: n v a r), member count and word
// ids, relation count and per relation its kind (one byte, RelKinds
// order) and target synset id, then per word its sense count and synset
// ids (noun senses first, then verb, adjective, adverb), then the
// exception count and per exception the inflected form (length, bytes)
// and the base word id.
//
// Choice: lexical pointers (derivation, antonym, pertainym), which
// WordNet records between two words, are kept between their synsets;
// the lexicon is used to widen a concern's vocabulary, where the sense
// distinction inside a synset does not matter.
package wordnetgen

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// MaxSenses is the number of most frequent senses kept per lemma and part
// of speech (WordNet's index files list senses by tagged frequency).
const MaxSenses = 3

// RelKinds are the WordNet pointer symbols kept, in the order whose index
// the output stores as the relation kind.
var RelKinds = []string{"@", "@i", "&", "!", "=", "+", "\\", "^", "$"}

var posFiles = []struct{ suffix, pos string }{{"noun", "n"}, {"verb", "v"}, {"adj", "a"}, {"adv", "r"}}

// word reports whether a WordNet lemma is kept: lower-case ASCII letters
// only, at least two of them (no multi-word lemmas, no abbreviations with
// digits or dots).
func word(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

type synset struct {
	pos     byte
	members []string
	rels    []rel
}

type rel struct {
	kind   byte
	target string // pos + offset
}

// Generate reads the WordNet database in dir (data.*, index.*, *.exc) and
// writes the compressed lexicon to w. Errors name the file and line.
func Generate(dir string, w io.Writer) error {
	syn := map[string]*synset{}
	for _, pf := range posFiles {
		if err := readData(filepath.Join(dir, "data."+pf.suffix), syn); err != nil {
			return err
		}
	}
	senses := map[string][]string{}
	for _, pf := range posFiles {
		if err := readIndex(filepath.Join(dir, "index."+pf.suffix), pf.pos, syn, senses); err != nil {
			return err
		}
	}
	exc := map[string]string{}
	for _, pf := range posFiles {
		if err := readExc(filepath.Join(dir, pf.suffix+".exc"), exc); err != nil {
			return err
		}
	}
	// Words: lemmas with a kept sense; synsets: those senses and the
	// targets of their relations.
	words := make([]string, 0, len(senses))
	for wd := range senses {
		words = append(words, wd)
	}
	sort.Strings(words)
	wid := map[string]int{}
	for i, wd := range words {
		wid[wd] = i
	}
	keep := map[string]bool{}
	for _, ss := range senses {
		for _, k := range ss {
			keep[k] = true
		}
	}
	// one hop from the senses (collected first: adding to a map while
	// ranging over it would make the set depend on iteration order)
	senseKeys := make([]string, 0, len(keep))
	for k := range keep {
		senseKeys = append(senseKeys, k)
	}
	for _, k := range senseKeys {
		for _, r := range syn[k].rels {
			if s := syn[r.target]; s != nil && hasWord(s, wid) {
				keep[r.target] = true
			}
		}
	}
	keys := make([]string, 0, len(keep))
	for k := range keep {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sid := map[string]int{}
	for i, k := range keys {
		sid[k] = i
	}
	var b bytes.Buffer
	b.WriteString("PLEX1")
	uv := func(v int) {
		var t [binary.MaxVarintLen64]byte
		b.Write(t[:binary.PutUvarint(t[:], uint64(v))])
	}
	str := func(s string) { uv(len(s)); b.WriteString(s) }
	uv(len(words))
	for _, wd := range words {
		str(wd)
	}
	uv(len(keys))
	for _, k := range keys {
		s := syn[k]
		b.WriteByte(s.pos)
		var ms []int
		for _, m := range s.members {
			if i, ok := wid[m]; ok {
				ms = append(ms, i)
			}
		}
		uv(len(ms))
		for _, m := range ms {
			uv(m)
		}
		var rs []rel
		seen := map[rel]bool{}
		for _, r := range s.rels {
			if _, ok := sid[r.target]; ok && !seen[r] {
				seen[r] = true
				rs = append(rs, r)
			}
		}
		uv(len(rs))
		for _, r := range rs {
			b.WriteByte(r.kind)
			uv(sid[r.target])
		}
	}
	for _, wd := range words {
		ss := senses[wd]
		uv(len(ss))
		for _, k := range ss {
			uv(sid[k])
		}
	}
	infl := make([]string, 0, len(exc))
	for f, base := range exc {
		if _, ok := wid[base]; ok {
			infl = append(infl, f)
		}
	}
	sort.Strings(infl)
	uv(len(infl))
	for _, f := range infl {
		str(f)
		uv(wid[exc[f]])
	}
	// Choice: uncompressed (2.4 MB; 1.4 MB gzipped), so that loading it
	// costs no decompression at start-up (docs/simulator/performance.md).
	_, err := w.Write(b.Bytes())
	return err
}

func hasWord(s *synset, wid map[string]int) bool {
	for _, m := range s.members {
		if _, ok := wid[m]; ok {
			return true
		}
	}
	return false
}

// readData parses a data.POS file: "offset lexfile pos w_cnt(hex) word
// lex_id ... p_cnt ptr... | gloss"; licence lines start with a space.
func readData(path string, syn map[string]*synset) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if t == "" || t[0] == ' ' {
			continue
		}
		if i := strings.Index(t, " | "); i >= 0 {
			t = t[:i]
		}
		fs := strings.Fields(t)
		bad := func(what string) error { return fmt.Errorf("%s:%d: %s", path, line, what) }
		if len(fs) < 4 {
			return bad("short line")
		}
		pos := fs[2]
		if pos == "s" {
			pos = "a" // adjective satellite
		}
		nw, err := strconv.ParseUint(fs[3], 16, 16)
		if err != nil {
			return bad("w_cnt: " + err.Error())
		}
		s := &synset{pos: pos[0]}
		i := 4
		for k := 0; k < int(nw); k++ {
			if i+1 >= len(fs) {
				return bad("words run past the line")
			}
			m := strings.ToLower(fs[i])
			if j := strings.IndexByte(m, '('); j >= 0 {
				m = m[:j] // adjective marker "(a)", "(p)", "(ip)"
			}
			if word(m) {
				s.members = append(s.members, m)
			}
			i += 2
		}
		if i >= len(fs) {
			return bad("no pointer count")
		}
		np, err := strconv.Atoi(fs[i])
		if err != nil {
			return bad("p_cnt: " + err.Error())
		}
		i++
		for k := 0; k < np; k++ {
			if i+3 >= len(fs) {
				return bad("pointers run past the line")
			}
			sym, off, tpos := fs[i], fs[i+1], fs[i+2]
			if tpos == "s" {
				tpos = "a"
			}
			for kind, want := range RelKinds {
				if sym == want {
					s.rels = append(s.rels, rel{kind: byte(kind), target: tpos + off})
				}
			}
			i += 4
		}
		syn[pos+fs[0]] = s
	}
	return sc.Err()
}

// readIndex parses an index.POS file: "lemma pos synset_cnt p_cnt
// ptr... sense_cnt tagsense_cnt offset...".
func readIndex(path, pos string, syn map[string]*synset, senses map[string][]string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if t == "" || t[0] == ' ' {
			continue
		}
		fs := strings.Fields(t)
		if len(fs) < 6 {
			return fmt.Errorf("%s:%d: short line", path, line)
		}
		if !word(fs[0]) {
			continue
		}
		np, err := strconv.Atoi(fs[3])
		if err != nil {
			return fmt.Errorf("%s:%d: p_cnt: %w", path, line, err)
		}
		offs := fs[4+np+2:]
		for k, off := range offs {
			if k == MaxSenses {
				break
			}
			key := pos + off
			if syn[key] == nil {
				return fmt.Errorf("%s:%d: synset %s not in the data file", path, line, key)
			}
			senses[fs[0]] = append(senses[fs[0]], key)
		}
	}
	return sc.Err()
}

// readExc parses a POS.exc file: "inflected base...".
func readExc(path string, exc map[string]string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && word(fs[0]) && word(fs[1]) {
			if _, dup := exc[fs[0]]; !dup {
				exc[fs[0]] = fs[1]
			}
		}
	}
	return sc.Err()
}
