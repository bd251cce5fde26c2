// Package ggufgen writes GGUF model files from the format's specification
// (GGUF v3: header, metadata, tensor infos, aligned data), and builds the
// tiny Qwen3-architecture model that scripts/real-engine serves with
// llama.cpp's llama-server so CI runs the LLM path against a real engine.
//
// # The model
//
// Architecture "qwen3" with Qwen3's real tokenizer (the tokens, merges,
// added tokens and chat template of tokenizer.json and
// tokenizer_config.json; <|im_end|> is end of sequence): hidden size 64,
// 2 blocks, 4 attention heads of 16 dimensions (4 KV heads), feed-forward
// size 128, separate F16 embedding and output matrices (about 39 MB for
// 151,669 tokens, plus the tokenizer).
//
// Its weights are set by hand so it behaves predictably: it is a bigram
// table. Every weight of both blocks is zero (norm weights one), so
// attention and feed-forward add nothing and the residual stream leaving
// the last block is the current token's embedding. A few "state" tokens
// (Design) have one-hot embeddings on their own dimension; every other
// token shares dimension 0 (the default state). The final RMS norm turns
// a one-hot embedding into 8·e_i (sqrt of the hidden size), so the output
// matrix entry W[v][i] = L/8 gives token v the logit L after state i; all
// unlisted logits are 0. With ~151k tokens at logit 0, a token at logit
// 30 has probability 1 - 1.4e-8: the chains below are followed at any
// temperature, and the Yes/No split after the answer position is exact
// enough to assert on (logits 20 and 19: P(Yes) = 0.73 of the pooled mass).
//
// Behaviour that follows (Design lists every transition):
//
//   - After "\n\n" (the end of Qwen3's generation prompt with thinking off,
//     "<|im_start|>assistant\n<think>\n\n</think>\n\n"): Yes (logit 20),
//     No (19), `{"` (14). So a probe reads P(Yes) = e/(e+1) = 0.731 and a
//     reply starts with Yes or No.
//   - Yes / No → ".\n" → "DEC" "ISION" ":" " continue" → <|im_end|>: a
//     text-protocol reply "Yes.\nDECISION: continue".
//   - `{"` → `reply` `":` ` "` `Okay` `","` `decision` `":"` `continue`
//     `"}` → <|im_end|>: under a JSON-schema grammar Yes/No are masked and
//     `{"` wins, giving {"reply": "Okay","decision":"continue"}.
//   - After "\n" (the generation prompt with thinking on ends
//     "assistant\n"): <think> (25) → "Hmm" → </think> → "\n\n" → as
//     above; `{"` (14) when a grammar masks <think>.
//   - Any other token: <|im_end|> (20), so unexpected contexts end at once.
//
// The text is not language; the API shapes, chat template, tokenisation,
// special tokens, log-probs, prefix caching and context limits are real.
package ggufgen

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Hyper-parameters of the tiny model.
const (
	Embd     = 64
	Layers   = 2
	Heads    = 4
	HeadDim  = Embd / Heads
	FF       = 128
	CtxTrain = 40960
)

// Step is one transition of the bigram table: after token From, token To
// gets logit Logit. Tokens are written as text (decoded, e.g. "\n",
// " continue", "<|im_end|>"); each must be one token of the vocabulary.
type Step struct {
	From, To string
	Logit    float32
}

// Default marks the default state (every token not listed as a From).
const Default = ""

// Design is the hand-set bigram table (package doc).
var Design = []Step{
	{"\n\n", "Yes", 20}, {"\n\n", "No", 19}, {"\n\n", `{"`, 14},
	{"Yes", ".\n", 30}, {"No", ".\n", 30},
	{".\n", "DEC", 30}, {"DEC", "ISION", 30}, {"ISION", ":", 30}, {":", " continue", 30},
	{" continue", "<|im_end|>", 30},
	{`{"`, "reply", 30}, {"reply", `":`, 30}, {`":`, ` "`, 30}, {` "`, "Okay", 30},
	{"Okay", `","`, 30}, {`","`, "decision", 30}, {"decision", `":"`, 30},
	{`":"`, "continue", 30}, {"continue", `"}`, 30}, {`"}`, "<|im_end|>", 30},
	{"\n", "<think>", 25}, {"\n", `{"`, 14},
	{"<think>", "Hmm", 30}, {"Hmm", "</think>", 30}, {"</think>", "\n\n", 30},
	{Default, "<|im_end|>", 20},
}

// Tokenizer is what the model takes from Qwen3's tokenizer files.
type Tokenizer struct {
	Tokens   []string // by id; byte-level BPE spellings
	Types    []int32  // llama token types: 1 normal, 3 control, 4 user-defined
	Merges   []string // "a b"
	Template string
	ids      map[string]int // spelling -> id
}

// LoadTokenizer reads tokenizer.json and tokenizer_config.json in dir.
func LoadTokenizer(dir string) (*Tokenizer, error) {
	var tj struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Model struct {
			Type   string            `json:"type"`
			Vocab  map[string]int    `json:"vocab"`
			Merges []json.RawMessage `json:"merges"`
		} `json:"model"`
	}
	var tc struct {
		ChatTemplate string `json:"chat_template"`
	}
	if err := readJSON(filepath.Join(dir, "tokenizer.json"), &tj); err != nil {
		return nil, err
	}
	if err := readJSON(filepath.Join(dir, "tokenizer_config.json"), &tc); err != nil {
		return nil, err
	}
	if tj.Model.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer.json: model type %q, want BPE", tj.Model.Type)
	}
	if tc.ChatTemplate == "" {
		return nil, fmt.Errorf("tokenizer_config.json: no chat_template")
	}
	n := len(tj.Model.Vocab)
	for _, a := range tj.AddedTokens {
		n = max(n, a.ID+1)
	}
	t := &Tokenizer{Tokens: make([]string, n), Types: make([]int32, n), Template: tc.ChatTemplate, ids: map[string]int{}}
	for s, id := range tj.Model.Vocab {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("tokenizer.json: token id %d out of range", id)
		}
		t.Tokens[id], t.Types[id] = s, 1
	}
	for _, a := range tj.AddedTokens {
		t.Tokens[a.ID], t.Types[a.ID] = a.Content, 4
		if a.Special {
			t.Types[a.ID] = 3
		}
	}
	for id, s := range t.Tokens {
		if s == "" {
			// A gap in the ids: a placeholder, as llama.cpp's converter pads.
			t.Tokens[id], t.Types[id] = fmt.Sprintf("[PAD%d]", id), 4
		}
		t.ids[t.Tokens[id]] = id
	}
	for i, m := range tj.Model.Merges {
		var pair []string
		if err := json.Unmarshal(m, &pair); err == nil && len(pair) == 2 {
			t.Merges = append(t.Merges, pair[0]+" "+pair[1])
			continue
		}
		var s string
		if err := json.Unmarshal(m, &s); err != nil {
			return nil, fmt.Errorf("tokenizer.json: merge %d: %v", i, err)
		}
		t.Merges = append(t.Merges, s)
	}
	return t, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ID returns the id of the token whose decoded text is text: a special
// token by its content, any other by its byte-level spelling.
func (t *Tokenizer) ID(text string) (int, bool) {
	if id, ok := t.ids[text]; ok && t.Types[id] != 1 {
		return id, true
	}
	id, ok := t.ids[byteLevel(text)]
	return id, ok && t.Types[id] == 1
}

// byteLevel spells text in GPT-2's byte-to-unicode alphabet.
func byteLevel(text string) string {
	var out []rune
	for _, b := range []byte(text) {
		out = append(out, byteRune[b])
	}
	return string(out)
}

var byteRune = func() [256]rune {
	var m [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff) {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

// Build returns the model's metadata and tensors for tokenizer t and the
// bigram table design.
func Build(t *Tokenizer, design []Step) ([]KV, []Tensor, error) {
	nv := len(t.Tokens)
	state := map[int]int{} // token id -> embedding dimension (0 = default)
	look := func(s string) (int, error) {
		id, ok := t.ID(s)
		if !ok {
			return 0, fmt.Errorf("ggufgen: %q is not one token of the vocabulary", s)
		}
		return id, nil
	}
	for _, st := range design {
		if st.From == Default {
			continue
		}
		id, err := look(st.From)
		if err != nil {
			return nil, nil, err
		}
		if _, ok := state[id]; !ok {
			state[id] = len(state) + 1
		}
	}
	if len(state)+1 > Embd {
		return nil, nil, fmt.Errorf("ggufgen: %d states do not fit %d dimensions", len(state)+1, Embd)
	}
	embd := make([]float32, nv*Embd)
	for id := 0; id < nv; id++ {
		embd[id*Embd+state[id]] = 1 // state[id] is 0 for the default
	}
	// RMS norm of a one-hot row: x/sqrt(mean(x²)) = sqrt(Embd)·e_i.
	gain := float32(math.Sqrt(Embd))
	out := make([]float32, nv*Embd)
	for _, st := range design {
		dim := 0
		if st.From != Default {
			id, _ := look(st.From)
			dim = state[id]
		}
		to, err := look(st.To)
		if err != nil {
			return nil, nil, err
		}
		out[to*Embd+dim] = st.Logit / gain
	}
	ones := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	ts := []Tensor{
		{Name: "token_embd.weight", Dims: []uint64{Embd, uint64(nv)}, Type: TensorF16, Data: embd},
		{Name: "output_norm.weight", Dims: []uint64{Embd}, Type: TensorF32, Data: ones(Embd)},
		{Name: "output.weight", Dims: []uint64{Embd, uint64(nv)}, Type: TensorF16, Data: out},
	}
	for l := 0; l < Layers; l++ {
		b := func(n string) string { return fmt.Sprintf("blk.%d.%s.weight", l, n) }
		ts = append(ts,
			Tensor{Name: b("attn_norm"), Dims: []uint64{Embd}, Type: TensorF32, Data: ones(Embd)},
			Tensor{Name: b("attn_q"), Dims: []uint64{Embd, Heads * HeadDim}, Type: TensorF32, Data: make([]float32, Embd*Heads*HeadDim)},
			Tensor{Name: b("attn_k"), Dims: []uint64{Embd, Heads * HeadDim}, Type: TensorF32, Data: make([]float32, Embd*Heads*HeadDim)},
			Tensor{Name: b("attn_v"), Dims: []uint64{Embd, Heads * HeadDim}, Type: TensorF32, Data: make([]float32, Embd*Heads*HeadDim)},
			Tensor{Name: b("attn_output"), Dims: []uint64{Heads * HeadDim, Embd}, Type: TensorF32, Data: make([]float32, Embd*Heads*HeadDim)},
			Tensor{Name: b("attn_q_norm"), Dims: []uint64{HeadDim}, Type: TensorF32, Data: ones(HeadDim)},
			Tensor{Name: b("attn_k_norm"), Dims: []uint64{HeadDim}, Type: TensorF32, Data: ones(HeadDim)},
			Tensor{Name: b("ffn_norm"), Dims: []uint64{Embd}, Type: TensorF32, Data: ones(Embd)},
			Tensor{Name: b("ffn_gate"), Dims: []uint64{Embd, FF}, Type: TensorF32, Data: make([]float32, Embd*FF)},
			Tensor{Name: b("ffn_up"), Dims: []uint64{Embd, FF}, Type: TensorF32, Data: make([]float32, Embd*FF)},
			Tensor{Name: b("ffn_down"), Dims: []uint64{FF, Embd}, Type: TensorF32, Data: make([]float32, Embd*FF)},
		)
	}
	id := func(s string) uint32 { i, _ := t.ID(s); return uint32(i) }
	for _, s := range []string{"<|endoftext|>", "<|im_end|>"} {
		if _, err := look(s); err != nil {
			return nil, nil, err
		}
	}
	kvs := []KV{
		{"general.architecture", "qwen3"},
		{"general.name", "persuarena-tiny-qwen3"},
		{"general.alignment", uint32(Alignment)},
		{"general.file_type", uint32(1)}, // mostly F16
		{"qwen3.context_length", uint32(CtxTrain)},
		{"qwen3.embedding_length", uint32(Embd)},
		{"qwen3.block_count", uint32(Layers)},
		{"qwen3.feed_forward_length", uint32(FF)},
		{"qwen3.attention.head_count", uint32(Heads)},
		{"qwen3.attention.head_count_kv", uint32(Heads)},
		{"qwen3.attention.key_length", uint32(HeadDim)},
		{"qwen3.attention.value_length", uint32(HeadDim)},
		{"qwen3.rope.freq_base", float32(1e6)},
		{"qwen3.attention.layer_norm_rms_epsilon", float32(1e-6)},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", "qwen2"},
		{"tokenizer.ggml.tokens", t.Tokens},
		{"tokenizer.ggml.token_type", t.Types},
		{"tokenizer.ggml.merges", t.Merges},
		{"tokenizer.ggml.eos_token_id", id("<|im_end|>")},
		{"tokenizer.ggml.padding_token_id", id("<|endoftext|>")},
		{"tokenizer.ggml.bos_token_id", id("<|endoftext|>")},
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.chat_template", t.Template},
	}
	return kvs, ts, nil
}
