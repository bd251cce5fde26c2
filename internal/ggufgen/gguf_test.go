package ggufgen

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestF16(t *testing.T) {
	for _, c := range []struct {
		f float32
		h uint16
	}{{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff}, {1e6, 0x7c00}, {2.5, 0x4100}, {6.1035156e-05, 0x0400}, {5.9604645e-08, 0x0001}, {0.1, 0x2e66}} {
		if got := F16(c.f); got != c.h {
			t.Errorf("F16(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
	}
}

// reader reads back what Write wrote, following the GGUF v3 layout.
type reader struct {
	b   []byte
	off int
}

func (r *reader) u32() uint32 { v := binary.LittleEndian.Uint32(r.b[r.off:]); r.off += 4; return v }
func (r *reader) u64() uint64 { v := binary.LittleEndian.Uint64(r.b[r.off:]); r.off += 8; return v }
func (r *reader) str() string {
	n := int(r.u64())
	s := string(r.b[r.off : r.off+n])
	r.off += n
	return s
}

func (r *reader) value(typ uint32) any {
	switch typ {
	case typeUint32:
		return r.u32()
	case typeInt32:
		return int32(r.u32())
	case typeFloat32:
		return math.Float32frombits(r.u32())
	case typeBool:
		r.off++
		return r.b[r.off-1] == 1
	case typeString:
		return r.str()
	case typeArray:
		et, n := r.u32(), int(r.u64())
		var out []any
		for i := 0; i < n; i++ {
			out = append(out, r.value(et))
		}
		return out
	}
	panic("unknown type")
}

func TestWriteLayout(t *testing.T) {
	var buf bytes.Buffer
	kvs := []KV{{"general.architecture", "qwen3"}, {"a.u", uint32(7)}, {"a.f", float32(0.25)}, {"a.b", true},
		{"a.s", []string{"x", "yz"}}, {"a.i", []int32{1, -3}}}
	ts := []Tensor{{Name: "t0", Dims: []uint64{3}, Type: TensorF32, Data: []float32{1, 2, 3}},
		{Name: "t1", Dims: []uint64{2, 2}, Type: TensorF16, Data: []float32{1, -2, 0.5, 0}}}
	if err := Write(&buf, kvs, ts); err != nil {
		t.Fatal(err)
	}
	r := &reader{b: buf.Bytes()}
	if string(r.b[:4]) != Magic {
		t.Fatalf("magic %q", r.b[:4])
	}
	r.off = 4
	if v := r.u32(); v != 3 {
		t.Fatalf("version %d", v)
	}
	nt, nkv := r.u64(), r.u64()
	if nt != 2 || nkv != 6 {
		t.Fatalf("counts %d tensors %d kvs", nt, nkv)
	}
	got := map[string]any{}
	for i := 0; i < int(nkv); i++ {
		k := r.str()
		got[k] = r.value(r.u32())
	}
	if got["general.architecture"] != "qwen3" || got["a.u"] != uint32(7) || got["a.f"] != float32(0.25) || got["a.b"] != true {
		t.Fatalf("kvs %v", got)
	}
	if s := got["a.s"].([]any); len(s) != 2 || s[1] != "yz" {
		t.Fatalf("string array %v", s)
	}
	if s := got["a.i"].([]any); len(s) != 2 || s[1] != int32(-3) {
		t.Fatalf("int array %v", s)
	}
	type info struct {
		dims []uint64
		typ  uint32
		off  uint64
	}
	var infos []info
	for i := 0; i < int(nt); i++ {
		r.str()
		nd := int(r.u32())
		var in info
		for j := 0; j < nd; j++ {
			in.dims = append(in.dims, r.u64())
		}
		in.typ, in.off = r.u32(), r.u64()
		infos = append(infos, in)
	}
	if infos[1].off != 32 || infos[1].typ != TensorF16 || len(infos[1].dims) != 2 {
		t.Fatalf("tensor infos %+v", infos)
	}
	data := (r.off + Alignment - 1) / Alignment * Alignment
	if f := math.Float32frombits(binary.LittleEndian.Uint32(r.b[data+4:])); f != 2 {
		t.Fatalf("t0[1] = %g", f)
	}
	if h := binary.LittleEndian.Uint16(r.b[data+32+2:]); h != 0xc000 {
		t.Fatalf("t1[1] = %#04x", h)
	}
	if len(r.b)%Alignment != 0 || len(r.b) != data+64 {
		t.Fatalf("file size %d (data at %d)", len(r.b), data)
	}
	if err := Write(&buf, nil, []Tensor{{Name: "bad", Dims: []uint64{2}, Data: []float32{1}}}); err == nil {
		t.Fatal("a tensor whose dims disagree with its data was written")
	}
}

// TestBuildDesign builds the model from a small tokenizer and checks the
// bigram logits the design promises, computed from the tensors.
func TestBuildDesign(t *testing.T) {
	dir := t.TempDir()
	vocab := map[string]int{}
	var words []string
	for _, st := range Design {
		for _, s := range []string{st.From, st.To} {
			if s != Default && s[0] != '<' {
				words = append(words, byteLevel(s))
			}
		}
	}
	words = append(words, "Hello")
	for _, w := range words {
		if _, ok := vocab[w]; !ok {
			vocab[w] = len(vocab)
		}
	}
	n := len(vocab)
	added := `[{"id":` + itoa(n) + `,"content":"<|endoftext|>","special":true},{"id":` + itoa(n+1) + `,"content":"<|im_end|>","special":true},` +
		`{"id":` + itoa(n+2) + `,"content":"<think>","special":false},{"id":` + itoa(n+3) + `,"content":"</think>","special":false}]`
	vj, _ := jsonMarshal(vocab)
	tj := `{"added_tokens":` + added + `,"model":{"type":"BPE","vocab":` + vj + `,"merges":[["H","ello"],"a b"]}}`
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(tj), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"chat_template":"{{ x }}"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := LoadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.Merges) != 2 || tok.Merges[0] != "H ello" || tok.Merges[1] != "a b" {
		t.Fatalf("merges %q", tok.Merges)
	}
	kvs, ts, err := Build(tok, Design)
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{}
	for _, kv := range kvs {
		meta[kv.Key] = kv.Value
	}
	eos, _ := tok.ID("<|im_end|>")
	if meta["tokenizer.ggml.eos_token_id"] != uint32(eos) || meta["qwen3.block_count"] != uint32(2) || meta["qwen3.embedding_length"] != uint32(64) {
		t.Fatalf("metadata %v", meta)
	}
	if ty := tok.Types[eos]; ty != 3 {
		t.Fatalf("<|im_end|> type %d, want control", ty)
	}
	if th, _ := tok.ID("<think>"); tok.Types[th] != 4 {
		t.Fatalf("<think> type %d, want user-defined", tok.Types[th])
	}
	emb, out := ts[0].Data, ts[2].Data
	// logits(next | cur): the RMS-normed embedding row dotted with each
	// output row (the blocks are zero, so they add nothing).
	logits := func(cur string) []float64 {
		id, ok := tok.ID(cur)
		if !ok {
			t.Fatalf("no token %q", cur)
		}
		x := emb[id*Embd : (id+1)*Embd]
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		rms := math.Sqrt(ss/Embd + 1e-6)
		l := make([]float64, len(tok.Tokens))
		for v := range l {
			for i := 0; i < Embd; i++ {
				l[v] += float64(x[i]) / rms * float64(F16toF32(F16(out[v*Embd+i])))
			}
		}
		return l
	}
	at := func(l []float64, s string) float64 { id, _ := tok.ID(s); return l[id] }
	near := func(got, want float64) bool { return math.Abs(got-want) < 0.02 }
	if l := logits("\n\n"); !near(at(l, "Yes"), 20) || !near(at(l, "No"), 19) || !near(at(l, `{"`), 14) || !near(at(l, "<|im_end|>"), 0) {
		t.Fatalf("after \\n\\n: Yes %.3f No %.3f {\" %.3f", at(l, "Yes"), at(l, "No"), at(l, `{"`))
	}
	if l := logits(":"); !near(at(l, " continue"), 30) || !near(at(l, "Yes"), 0) {
		t.Fatalf("after ':': continue %.3f", at(l, " continue"))
	}
	if l := logits("Hello"); !near(at(l, "<|im_end|>"), 20) || !near(at(l, "Yes"), 0) {
		t.Fatalf("default state: im_end %.3f", at(l, "<|im_end|>"))
	}
	if _, _, err := Build(tok, []Step{{"\n\n", "Nope", 1}}); err == nil {
		t.Fatal("a design token outside the vocabulary was accepted")
	}
}

// F16toF32 is the inverse of F16 (test helper).
func F16toF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := int(h >> 10 & 0x1f)
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0:
		return math.Float32frombits(sign) + float32(mant)*float32(math.Pow(2, -24))*sgn(sign)
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000)
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | mant<<13)
}

func sgn(sign uint32) float32 {
	if sign != 0 {
		return -1
	}
	return 1
}

func itoa(n int) string { return strconv.Itoa(n) }

func jsonMarshal(v any) (string, error) { b, err := json.Marshal(v); return string(b), err }
