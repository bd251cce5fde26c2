package fakeengine

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/persuarena/persuarena/llm"
)

// Special tokens of the fake ChatML-style template.
const (
	ImStart    = "<|im_start|>"
	ImEnd      = "<|im_end|>"
	ThinkOpen  = "<think>"
	ThinkClose = "</think>"
)

// fixedIDs are the ids tests rely on: answer words in every casing and
// spacing a probe pools, the template's special tokens and newline.
var fixedIDs = map[string]int{
	"Yes": 9454, " Yes": 7414, "yes": 9693, " yes": 10035, "YES": 14004, " YES": 14331,
	"No": 2753, " No": 2308, "no": 2152, " no": 902, "NO": 8996, " NO": 5664,
	ImStart: 151644, ImEnd: 151645, ThinkOpen: 151667, ThinkClose: 151668,
	"\n": 198,
}

var specials = []string{ImStart, ImEnd, ThinkOpen, ThinkClose}

// vocab maps hashed ids back to pieces seen so far (for /detokenize),
// guarded by vocabMu.
var (
	vocabMu sync.RWMutex
	vocab   = map[int]string{}
)

func init() {
	for p, id := range fixedIDs {
		vocab[id] = p
	}
}

// remember records the pieces of ids in vocab (one read lock for the
// pieces already known, the write lock only for new ones).
func remember(ids []int, pieces []string) {
	vocabMu.RLock()
	missing := -1
	for i, id := range ids {
		if _, ok := vocab[id]; !ok {
			missing = i
			break
		}
	}
	vocabMu.RUnlock()
	if missing < 0 {
		return
	}
	vocabMu.Lock()
	for i := missing; i < len(ids); i++ {
		if _, ok := vocab[ids[i]]; !ok {
			vocab[ids[i]] = pieces[i]
		}
	}
	vocabMu.Unlock()
}

// TokenID returns the id of one piece: a fixed id for the answer words and
// special tokens, else 200000 + FNV-1a(piece) mod 1e6 (stable across runs).
func TokenID(piece string) int {
	id := hashID(piece)
	remember([]int{id}, []string{piece})
	return id
}

// hashID is TokenID without recording the piece.
func hashID(piece string) int {
	if id, ok := fixedIDs[piece]; ok {
		return id
	}
	h := uint32(2166136261) // FNV-1a, 32 bits
	for i := 0; i < len(piece); i++ {
		h ^= uint32(piece[i])
		h *= 16777619
	}
	return 200000 + int(h%1000000)
}

// Piece returns the text of id, if the tokenizer has produced it.
func Piece(id int) (string, bool) {
	vocabMu.RLock()
	p, ok := vocab[id]
	vocabMu.RUnlock()
	return p, ok
}

// Pieces splits text into tokens: special tokens whole; a word (letters,
// digits, apostrophes) with at most one leading space; one punctuation
// mark with at most one leading space; every other whitespace character
// alone. Joining the pieces gives text back.
func Pieces(text string) []string {
	var out []string
	i := 0
	for i < len(text) {
		if sp := special(text[i:]); sp != "" {
			out = append(out, sp)
			i += len(sp)
			continue
		}
		start := i
		if text[i] == ' ' && i+1 < len(text) {
			r, _ := utf8.DecodeRuneInString(text[i+1:])
			if !unicode.IsSpace(r) && special(text[i+1:]) == "" {
				i++
			}
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case isWord(r):
			i += n
			for i < len(text) {
				r, n := utf8.DecodeRuneInString(text[i:])
				if !isWord(r) {
					break
				}
				i += n
			}
		default:
			i += n
		}
		out = append(out, text[start:i])
	}
	return out
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' }

func special(s string) string {
	if len(s) == 0 || s[0] != '<' {
		return ""
	}
	for _, sp := range specials {
		if strings.HasPrefix(s, sp) {
			return sp
		}
	}
	return ""
}

// Tokenize returns the ids of text's pieces.
func Tokenize(text string) []int {
	ps := Pieces(text)
	ids := make([]int, len(ps))
	for i, p := range ps {
		ids[i] = hashID(p)
	}
	remember(ids, ps)
	return ids
}

// Detokenize joins the pieces of ids ("<unk>" for unknown ids).
func Detokenize(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if p, ok := Piece(id); ok {
			b.WriteString(p)
		} else {
			b.WriteString("<unk>")
		}
	}
	return b.String()
}

// Template renders messages in the fake ChatML-style template Qwen3 uses:
// "<|im_start|>ROLE\nCONTENT<|im_end|>\n" per message, then, with
// addGeneration, "<|im_start|>assistant\n" followed by an empty think block
// when thinking is explicitly false. With continueFinal the last message is
// left open (no end marker, no generation prompt).
func Template(msgs []llm.Message, addGeneration bool, thinking *bool, continueFinal bool) string {
	var b strings.Builder
	for i, m := range msgs {
		b.WriteString(ImStart + m.Role + "\n" + m.Content)
		if continueFinal && i == len(msgs)-1 {
			return b.String()
		}
		b.WriteString(ImEnd + "\n")
	}
	if addGeneration {
		b.WriteString(ImStart + "assistant\n")
		if thinking != nil && !*thinking {
			b.WriteString(ThinkOpen + "\n\n" + ThinkClose + "\n\n")
		}
	}
	return b.String()
}
