package llamatest

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Model is the shape of the tiny llama model WriteModel writes. Its
// weights are random: the model answers gibberish, but llama-server loads
// it, tokenizes, fills its KV cache and reuses the prompt cache exactly as
// it does for a real model.
type Model struct {
	Embd, Blocks, Heads, FF int
	// Context is the trained length the file declares (llama.context_length);
	// the server's -c decides the window it serves.
	Context int
	// Seed makes the weights: the same seed writes the same bytes.
	Seed uint64
}

// TinyModel is 32 wide, one block of 2 heads, a feed-forward of 64, a
// trained length of 131072: about 80 KB. It is half as wide and half as
// deep as the model of the llama.cpp captures
// (testdata/engine-captures/llama.cpp/README.md), because the cost of a
// prefill grows with the width times the square of the prompt: on one
// thread of a busy machine it prefills 7000 tokens in under 2 s (with
// flash attention), where the wider one takes 3.5 s.
var TinyModel = Model{Embd: 32, Blocks: 1, Heads: 2, FF: 64, Context: 131072, Seed: 1}

// The vocabulary: <unk>, <s>, </s>, then the 256 byte tokens <0x00>…<0xFF>
// (token type 6, "byte"), every score 0. llama.cpp's SentencePiece
// tokenizer finds no piece longer than a byte in it, so it falls back to
// one token per UTF-8 byte (spaces are first written as U+2581, three
// bytes, and one is put in front of the text): a pessimistic tokenizer,
// and one whose tokens of a text are a prefix of the tokens of any text
// that extends it.
const (
	vocabSize     = 3 + 256
	tokenNormal   = 1
	tokenUnknown  = 2
	tokenControl  = 3
	tokenByte     = 6
	ggufAlignment = 32
)

// GGUF value types (ggml/include/gguf.h).
const (
	ggufUint32  = 4
	ggufInt32   = 5
	ggufFloat32 = 6
	ggufBool    = 7
	ggufString  = 8
	ggufArray   = 9
)

// ggmlF32 is the tensor type of every weight.
const ggmlF32 = 0

// kv is one metadata entry; value is a string, uint32, float32, bool,
// []string, []float32 or []int32.
type kv struct {
	key   string
	value any
}

// tensor is one weight: dims innermost first, as GGUF stores them (a
// matrix numpy holds as (out, in) is {in, out} here).
type tensor struct {
	name string
	dims []uint64
}

func (t tensor) elems() uint64 {
	n := uint64(1)
	for _, d := range t.dims {
		n *= d
	}
	return n
}

// WriteModel writes m as a GGUF version 3 file: the header, the metadata,
// the tensor infos, then every tensor's f32 data, each aligned to 32
// bytes. Norm weights are 1; every other weight is uniform in ±1/√in,
// drawn from a PCG seeded with m.Seed.
func WriteModel(w io.Writer, m Model) error {
	if m.Embd <= 0 || m.Blocks <= 0 || m.Heads <= 0 || m.FF <= 0 || m.Embd%m.Heads != 0 {
		return fmt.Errorf("model %+v: want positive sizes and a width divisible by the heads", m)
	}
	meta, tensors := modelMeta(m), modelTensors(m)
	bw := bufio.NewWriter(w)
	gw := &ggufWriter{w: bw}
	gw.header(meta, tensors)
	gw.weights(tensors, m.Seed)
	if gw.err != nil {
		return gw.err
	}
	return bw.Flush()
}

// modelMeta is m's metadata: a llama architecture of m's sizes, and the
// byte vocabulary.
func modelMeta(m Model) []kv {
	tokens := make([]string, 0, vocabSize)
	types := make([]int32, 0, vocabSize)
	tokens = append(tokens, "<unk>", "<s>", "</s>")
	types = append(types, tokenUnknown, tokenControl, tokenControl)
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, tokenByte)
	}
	return []kv{
		{"general.architecture", "llama"},
		{"general.name", "reika-llamatest-tiny"},
		{"general.alignment", uint32(ggufAlignment)},
		{"llama.context_length", uint32(m.Context)},
		{"llama.embedding_length", uint32(m.Embd)},
		{"llama.block_count", uint32(m.Blocks)},
		{"llama.feed_forward_length", uint32(m.FF)},
		{"llama.attention.head_count", uint32(m.Heads)},
		{"llama.attention.head_count_kv", uint32(m.Heads)},
		{"llama.rope.dimension_count", uint32(m.Embd / m.Heads)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.scores", make([]float32, vocabSize)},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.unknown_token_id", uint32(0)},
		{"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.ggml.eos_token_id", uint32(2)},
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.ggml.add_eos_token", false},
	}
}

// modelTensors are m's weights in file order: the token embedding, each
// block's norms, attention and feed-forward, the output norm and output.
func modelTensors(m Model) []tensor {
	e, ff, v := uint64(m.Embd), uint64(m.FF), uint64(vocabSize)
	tensors := []tensor{{"token_embd.weight", []uint64{e, v}}}
	for i := range m.Blocks {
		blk := func(name string, dims ...uint64) tensor {
			return tensor{fmt.Sprintf("blk.%d.%s.weight", i, name), dims}
		}
		tensors = append(tensors,
			blk("attn_norm", e),
			blk("attn_q", e, e), blk("attn_k", e, e), blk("attn_v", e, e), blk("attn_output", e, e),
			blk("ffn_norm", e),
			blk("ffn_gate", e, ff), blk("ffn_up", e, ff), blk("ffn_down", ff, e))
	}
	return append(tensors, tensor{"output_norm.weight", []uint64{e}}, tensor{"output.weight", []uint64{e, v}})
}

// header writes the magic, the version, the metadata and the tensor
// infos (each tensor's data offset aligned), padded to the alignment.
func (g *ggufWriter) header(meta []kv, tensors []tensor) {
	g.raw([]byte("GGUF"))
	g.u32(3)
	g.u64(uint64(len(tensors)))
	g.u64(uint64(len(meta)))
	for _, m := range meta {
		g.str(m.key)
		g.value(m.value)
	}
	offset := uint64(0)
	for _, t := range tensors {
		g.str(t.name)
		g.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			g.u64(d)
		}
		g.u32(ggmlF32)
		g.u64(offset)
		offset = align(offset + 4*t.elems())
	}
	g.pad()
}

// weights writes every tensor's data, each padded to the alignment: 1 for
// a norm (one dimension), else uniform in ±1/√in from a PCG seeded with
// seed.
func (g *ggufWriter) weights(tensors []tensor, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x5265696b61)) // "Reika"
	for _, t := range tensors {
		norm := len(t.dims) == 1
		limit := 1 / math.Sqrt(float64(t.dims[0]))
		for range t.elems() {
			x := float32(1)
			if !norm {
				x = float32((2*rng.Float64() - 1) * limit)
			}
			g.u32(math.Float32bits(x))
		}
		g.pad()
	}
}

func align(n uint64) uint64 { return (n + ggufAlignment - 1) / ggufAlignment * ggufAlignment }

// ggufWriter writes little-endian GGUF values, keeping the first error
// and the count of bytes written (for the alignment).
type ggufWriter struct {
	w   io.Writer
	n   uint64
	err error
}

func (g *ggufWriter) raw(b []byte) {
	if g.err != nil {
		return
	}
	n, err := g.w.Write(b)
	g.n += uint64(n)
	g.err = err
}

func (g *ggufWriter) u32(v uint32) { g.raw(binary.LittleEndian.AppendUint32(nil, v)) }
func (g *ggufWriter) u64(v uint64) { g.raw(binary.LittleEndian.AppendUint64(nil, v)) }

func (g *ggufWriter) str(s string) {
	g.u64(uint64(len(s)))
	g.raw([]byte(s))
}

// pad writes zeros up to the next multiple of the alignment.
func (g *ggufWriter) pad() { g.raw(make([]byte, align(g.n)-g.n)) }

// value writes a metadata value with its type.
func (g *ggufWriter) value(v any) {
	switch v := v.(type) {
	case string:
		g.u32(ggufString)
		g.str(v)
	case uint32:
		g.u32(ggufUint32)
		g.u32(v)
	case float32:
		g.u32(ggufFloat32)
		g.u32(math.Float32bits(v))
	case bool:
		g.u32(ggufBool)
		b := byte(0)
		if v {
			b = 1
		}
		g.raw([]byte{b})
	case []string:
		g.u32(ggufArray)
		g.u32(ggufString)
		g.u64(uint64(len(v)))
		for _, s := range v {
			g.str(s)
		}
	case []float32:
		g.u32(ggufArray)
		g.u32(ggufFloat32)
		g.u64(uint64(len(v)))
		for _, f := range v {
			g.u32(math.Float32bits(f))
		}
	case []int32:
		g.u32(ggufArray)
		g.u32(ggufInt32)
		g.u64(uint64(len(v)))
		for _, i := range v {
			g.u32(uint32(i))
		}
	default:
		panic(fmt.Sprintf("llamatest: no GGUF type for %T", v))
	}
}
