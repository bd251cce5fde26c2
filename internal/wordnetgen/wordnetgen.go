// Package wordnetgen derives the compact lexicon that package perception
// embeds from the WordNet 3.0 database files (Princeton University;
// Debian's wordnet-base installs them under /usr/share/wordnet): the
// single-word lemmas, up to MaxSenses most frequent senses per lemma and
// part of speech, each kept synset's single-word members and its
// semantic and lexical relations (hypernym, instance hypernym, similar
// to, antonym, attribute, derivation, pertainym, also see, verb group),
// each kept synset's hyponyms (the inverse of its hypernyms and instance
// hypernyms), the irregular inflections of the exception lists, a hash
// table of the words and the spelling Bloom filter of the words
// (package internal/spellbloom).
//
// # Format
//
// The file (perception's loader is its one reader) is read in place:
// fixed-width little-endian arrays that the reader slices without
// decoding, each list of entries per word or per synset one flat array
// with an offset array (entries off[i]..off[i+1]). It starts with the
// magic "PLEX2\x00\x00\x00" (8 bytes) and ten uint32 counts:
//
//	nw      words
//	nwb     bytes of word text
//	nslot   word hash table slots
//	nsense  word senses
//	ns      synsets
//	nmem    synset members
//	nlink   synset links (relations and hyponyms)
//	nexc    irregular inflections
//	nexcb   bytes of inflection text
//	nbloom  uint64 words of the spelling filter (spellbloom.Bits/64)
//
// then these sections, each starting at a multiple of 8 bytes from the
// start of the file (zero bytes pad), the file ending with the last:
//
//	wordOff   uint32[nw+1]   word i is wordText[wordOff[i]:wordOff[i+1]]
//	wordText  byte[nwb]      the words, sorted, lower-case ASCII letters
//	slots     uint32[nslot]  word id + 1, 0 for an empty slot: the smallest power of
//	                         two of slots at least 3/2 nw, word i at
//	                         prose.Hash(word) & (nslot-1) or the first free slot
//	                         after it (linear probing, words inserted in id order)
//	senseOff  uint32[nw+1]   into senses
//	senses    uint32[nsense] synset ids: per word its noun senses, then verb,
//	                         adjective, adverb
//	pos       byte[ns]       part of speech: 'n', 'v', 'a' (satellites too) or 'r'
//	memOff    uint32[ns+1]   into mem
//	mem       uint32[nmem]   member word ids
//	linkOff   uint32[ns+1]   into link
//	link      uint32[nlink]  kind<<24 | target synset id: the relations (kind the
//	                         index in RelKinds) in file order, then the hyponyms
//	                         (kind Hyponym: the synsets whose hypernym or instance
//	                         hypernym it is, in synset order)
//	excOff    uint32[nexc+1] into excText
//	excText   byte[nexcb]    the inflected forms, sorted and distinct
//	excBase   uint32[nexc]   the base word id of each inflection
//	bloom     uint64[nbloom] the spelling filter of every word (spellbloom.AddWord)
//
// Every offset array starts at 0 and ends at its array's length. There
// are fewer than 2^24 synsets, so that a link fits in a uint32 with the
// top bit clear (the reader views the arrays as int32).
//
// Choice: fixed-width arrays, uncompressed (6.6 MB, 2.1 MB of it the
// spelling filter; varints took 2.4 MB without the filter), with the hash
// table, hyponym lists and spelling filter precomputed, so that loading
// the lexicon is viewing the embedded bytes and one bounds check of
// every offset and id, each array scanned flat (under 1 ms warm, about
// 4 ms in a fresh process, most of it the first touch of the pages),
// instead of decoding and building (about 60 ms in a fresh process).
//
// Choice: lexical pointers (derivation, antonym, pertainym), which
// WordNet records between two words, are kept between their synsets;
// the lexicon is used to widen a concern's vocabulary, where the sense
// distinction inside a synset does not matter.
package wordnetgen

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/internal/spellbloom"
	"github.com/persuarena/persuarena/prose"
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
// writes the lexicon file (see Format) to w. Errors name the file and
// line, or the format limit a synset exceeds.
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
	syns := make([]genSynset, len(keys))
	for i, k := range keys {
		s := syn[k]
		g := &syns[i]
		g.pos = s.pos
		for _, m := range s.members {
			if id, ok := wid[m]; ok {
				g.members = append(g.members, uint32(id))
			}
		}
		seen := map[rel]bool{}
		for _, r := range s.rels {
			if t, ok := sid[r.target]; ok && !seen[r] {
				seen[r] = true
				g.links = append(g.links, uint32(r.kind)<<KindShift|uint32(t))
			}
		}
	}
	// hyponyms: the inverse of (instance) hypernyms, in synset order,
	// after every synset's relations
	hypos := make([][]uint32, len(syns))
	for i := range syns {
		for _, r := range syns[i].links {
			if k := r >> KindShift; k == Hypernym || k == Instance {
				t := r & (1<<KindShift - 1)
				hypos[t] = append(hypos[t], Hyponym<<KindShift|uint32(i))
			}
		}
	}
	for i := range syns {
		syns[i].links = append(syns[i].links, hypos[i]...)
	}
	wordSenses := make([][]uint32, len(words))
	for i, wd := range words {
		for _, k := range senses[wd] {
			wordSenses[i] = append(wordSenses[i], uint32(sid[k]))
		}
	}
	infl := make([]string, 0, len(exc))
	for f, base := range exc {
		if _, ok := wid[base]; ok {
			infl = append(infl, f)
		}
	}
	sort.Strings(infl)
	excBase := make([]uint32, len(infl))
	for i, f := range infl {
		excBase[i] = uint32(wid[exc[f]])
	}
	b, err := encode(words, syns, wordSenses, infl, excBase)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Link kinds: a link is kind<<KindShift | target synset id, its kind
// the index in RelKinds of its relation, or Hyponym.
const (
	Hypernym   = iota // "@"
	Instance          // "@i"
	Similar           // "&"
	Antonym           // "!"
	Attribute         // "="
	Derivation        // "+"
	Pertainym         // "\\"
	Also              // "^"
	VerbGroup         // "$"
	// Hyponym is the link kind of a hyponym (after the kinds of RelKinds).
	Hyponym
	// NumLinkKinds is the number of link kinds.
	NumLinkKinds
)

// KindShift is the bit position of a link's kind (its target synset id
// is the bits below).
const KindShift = 24

// magic starts a file of this format (version 2).
const magic = "PLEX2\x00\x00\x00"

// genSynset is a kept synset as written: part of speech, member word ids
// and links (kind<<24 | target synset id).
type genSynset struct {
	pos            byte
	members, links []uint32
}

// maxSynsets bounds the synsets, so that a link's target fits in 24 bits.
const maxSynsets = 1 << 24

// numCounts is the number of counts in the header.
const numCounts = 10

// encode lays out the lexicon file (see Format).
func encode(words []string, syns []genSynset, wordSenses [][]uint32, infl []string, excBase []uint32) ([]byte, error) {
	if len(syns) >= maxSynsets {
		return nil, fmt.Errorf("%d synsets: the format holds fewer than %d", len(syns), maxSynsets)
	}
	flat := func(lists [][]uint32) (off, all []uint32) {
		off = []uint32{0}
		for _, l := range lists {
			all = append(all, l...)
			off = append(off, uint32(len(all)))
		}
		return off, all
	}
	text := func(ss []string) (off []uint32, blob []byte) {
		off = []uint32{0}
		for _, s := range ss {
			blob = append(blob, s...)
			off = append(off, uint32(len(blob)))
		}
		return off, blob
	}
	wordOff, wordText := text(words)
	slots := wordSlots(words)
	senseOff, senseIDs := flat(wordSenses)
	pos := make([]byte, len(syns))
	mems := make([][]uint32, len(syns))
	links := make([][]uint32, len(syns))
	for i, s := range syns {
		pos[i], mems[i], links[i] = s.pos, s.members, s.links
	}
	memOff, mem := flat(mems)
	linkOff, link := flat(links)
	excOff, excText := text(infl)
	bloom := spellbloom.New()
	for _, w := range words {
		spellbloom.AddWord(bloom, w)
	}

	var b []byte
	le := binary.LittleEndian
	b = append(b, magic...)
	for _, n := range [numCounts]int{len(words), len(wordText), len(slots), len(senseIDs), len(syns), len(mem), len(link), len(infl), len(excText), len(bloom)} {
		if uint64(n) >= 1<<31 {
			return nil, fmt.Errorf("a section of %d entries: the format holds fewer than 2^31", n)
		}
		b = le.AppendUint32(b, uint32(n))
	}
	pad := func() {
		for len(b)%8 != 0 {
			b = append(b, 0)
		}
	}
	u32s := func(vs []uint32) {
		pad()
		for _, v := range vs {
			b = le.AppendUint32(b, v)
		}
	}
	bytes := func(bs []byte) {
		pad()
		b = append(b, bs...)
	}
	u32s(wordOff)
	bytes(wordText)
	u32s(slots)
	u32s(senseOff)
	u32s(senseIDs)
	bytes(pos)
	u32s(memOff)
	u32s(mem)
	u32s(linkOff)
	u32s(link)
	u32s(excOff)
	bytes(excText)
	u32s(excBase)
	pad()
	for _, v := range bloom {
		b = le.AppendUint64(b, v)
	}
	return b, nil
}

// wordSlots is the word hash table: the smallest power of two of slots
// at least 3/2 the words, each word id + 1 placed at prose.Hash(word)
// modulo the size or the first free slot after it (words in id order).
//
// Choice: a load of at most 2/3 (77,477 words in 131,072 slots, 1.7
// probes for a word found) rather than 1/2, for 0.5 MB less.
func wordSlots(words []string) []uint32 {
	n := 1
	for 2*n < 3*len(words) {
		n <<= 1
	}
	slots := make([]uint32, n)
	for i, w := range words {
		h := prose.Hash(w) & uint64(n-1)
		for slots[h] != 0 {
			h = (h + 1) & uint64(n-1)
		}
		slots[h] = uint32(i + 1)
	}
	return slots
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
