package fakeengine

import (
	"encoding/binary"
	"hash/fnv"
)

// EmbeddingDim is the length of the fake engine's embeddings.
const EmbeddingDim = 16

// Embedding returns the fake engine's embedding of text: EmbeddingDim
// components in [-1, 1), component i read from the FNV-1a hash of i and
// the text, so equal texts get equal vectors and different texts
// (almost surely) different ones. The vector is not normalised.
func Embedding(text string) []float64 {
	v := make([]float64, EmbeddingDim)
	var b [8]byte
	for i := range v {
		h := fnv.New64a()
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		h.Write(b[:])
		h.Write([]byte(text))
		v[i] = float64(h.Sum64()>>11)/float64(1<<52) - 1
	}
	return v
}

// embeddings answers POST /v1/embeddings in the OpenAI shape: input a
// string or a list of strings, one Embedding per input with its index,
// usage counting the inputs' tokens (Tokenize).
func (s *Server) embeddings(body map[string]any) (any, error) {
	var inputs []string
	switch in := body["input"].(type) {
	case string:
		inputs = []string{in}
	case []any:
		for i, x := range in {
			t, ok := x.(string)
			if !ok {
				return nil, badRequest("input[%d] is not a string", i)
			}
			inputs = append(inputs, t)
		}
	default:
		return nil, badRequest("input must be a string or a list of strings")
	}
	data := make([]any, len(inputs))
	tokens := 0
	for i, t := range inputs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Embedding(t)}
		tokens += len(Tokenize(t))
	}
	s.mu.Lock()
	s.stats.PromptTokens += tokens
	s.mu.Unlock()
	return map[string]any{"object": "list", "data": data, "model": s.Model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}}, nil
}
