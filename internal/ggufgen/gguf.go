package ggufgen

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// GGUF value types (GGUF specification, version 3).
const (
	typeUint32  uint32 = 4
	typeInt32   uint32 = 5
	typeFloat32 uint32 = 6
	typeBool    uint32 = 7
	typeString  uint32 = 8
	typeArray   uint32 = 9
)

// Tensor element types (ggml_type).
const (
	TensorF32 uint32 = 0
	TensorF16 uint32 = 1
)

// Alignment is the data alignment written (general.alignment default).
const Alignment = 32

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// Version is the GGUF version written.
const Version = 3

// KV is one metadata key and its value: uint32, int32, float32, bool,
// string, []string or []int32.
type KV struct {
	Key   string
	Value any
}

// Tensor is one tensor: Dims in ggml order (ne0, the contiguous dimension,
// first), Type TensorF32 or TensorF16, Data the values in that order
// (len = product of Dims).
type Tensor struct {
	Name string
	Dims []uint64
	Type uint32
	Data []float32
}

func (t *Tensor) size() uint64 {
	n := uint64(len(t.Data))
	if t.Type == TensorF16 {
		return 2 * n
	}
	return 4 * n
}

// Write writes a GGUF v3 file: header, metadata, tensor infos, padding to
// Alignment, then each tensor's data at an aligned offset.
func Write(w io.Writer, kvs []KV, tensors []Tensor) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	e := &enc{w: bw}
	e.raw([]byte(Magic))
	e.u32(Version)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		if err := e.value(kv.Value); err != nil {
			return fmt.Errorf("gguf: key %s: %w", kv.Key, err)
		}
	}
	var off uint64
	for i := range tensors {
		t := &tensors[i]
		n := uint64(1)
		for _, d := range t.Dims {
			n *= d
		}
		if n != uint64(len(t.Data)) {
			return fmt.Errorf("gguf: tensor %s: dims %v hold %d values, data has %d", t.Name, t.Dims, n, len(t.Data))
		}
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(t.Type)
		e.u64(off)
		off = align(off + t.size())
	}
	e.pad()
	for i := range tensors {
		t := &tensors[i]
		buf := make([]byte, 0, t.size())
		for _, v := range t.Data {
			if t.Type == TensorF16 {
				buf = binary.LittleEndian.AppendUint16(buf, F16(v))
			} else {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
		}
		e.raw(buf)
		e.pad()
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

func align(n uint64) uint64 { return (n + Alignment - 1) / Alignment * Alignment }

type enc struct {
	w   *bufio.Writer
	n   uint64
	err error
}

func (e *enc) raw(b []byte) {
	if e.err != nil {
		return
	}
	m, err := e.w.Write(b)
	e.n += uint64(m)
	e.err = err
}

func (e *enc) u32(v uint32) { e.raw(binary.LittleEndian.AppendUint32(nil, v)) }
func (e *enc) u64(v uint64) { e.raw(binary.LittleEndian.AppendUint64(nil, v)) }
func (e *enc) str(s string) { e.u64(uint64(len(s))); e.raw([]byte(s)) }
func (e *enc) pad() {
	if p := align(e.n) - e.n; p > 0 {
		e.raw(make([]byte, p))
	}
}

func (e *enc) value(v any) error {
	switch x := v.(type) {
	case uint32:
		e.u32(typeUint32)
		e.u32(x)
	case int32:
		e.u32(typeInt32)
		e.u32(uint32(x))
	case float32:
		e.u32(typeFloat32)
		e.u32(math.Float32bits(x))
	case bool:
		e.u32(typeBool)
		if x {
			e.raw([]byte{1})
		} else {
			e.raw([]byte{0})
		}
	case string:
		e.u32(typeString)
		e.str(x)
	case []string:
		e.u32(typeArray)
		e.u32(typeString)
		e.u64(uint64(len(x)))
		for _, s := range x {
			e.str(s)
		}
	case []int32:
		e.u32(typeArray)
		e.u32(typeInt32)
		e.u64(uint64(len(x)))
		for _, n := range x {
			e.u32(uint32(n))
		}
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return nil
}

// F16 converts f to IEEE 754 half precision, rounding to nearest even;
// values beyond the half range become ±Inf.
func F16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff == 0:
		return sign
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		h := mant >> shift
		if rem := mant & (1<<shift - 1); rem > 1<<(shift-1) || (rem == 1<<(shift-1) && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | mant>>13
	if rem := mant & 0x1fff; rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is still correct
	}
	return sign | uint16(h)
}
