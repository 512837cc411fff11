package llamatest

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Model is the shape of the tiny model WriteModel writes. Its weights
// are random: the model answers gibberish, but llama-server loads it,
// tokenizes, fills its cache and reuses the prompt cache exactly as it
// does for a real model of the same architecture.
type Model struct {
	// Arch is the architecture, which decides what the engine can reuse
	// of a prompt that changed: ArchLlama (the zero value too: a dense
	// transformer), ArchGemma3 (sliding-window attention) or ArchMamba
	// (recurrent).
	Arch string
	// Embd is the width, Blocks the layers; Heads and FF are the
	// attention heads and the feed-forward width (none in a mamba: its
	// inner width is 2×Embd, its state 16, its convolution 4 wide and its
	// time-step rank Embd/16, rounded up, as mamba's own defaults).
	Embd, Blocks, Heads, FF int
	// Window is gemma3's sliding window in tokens
	// (gemma3.attention.sliding_window); only gemma3 has one.
	Window int
	// Context is the trained length the file declares
	// (ARCH.context_length); the server's -c decides the window it serves.
	Context int
	// Seed makes the weights: the same seed writes the same bytes.
	Seed uint64
}

// The architectures WriteModel writes, as general.architecture names
// them.
const (
	ArchLlama  = "llama"
	ArchGemma3 = "gemma3"
	ArchMamba  = "mamba"
)

// TinyModel is 32 wide, one block of 2 heads, a feed-forward of 64, a
// trained length of 131072: about 80 KB. It is half as wide and half as
// deep as the model of the llama.cpp captures
// (testdata/engine-captures/llama.cpp/README.md), because the cost of a
// prefill grows with the width times the square of the prompt: on one
// thread of a busy machine it prefills 7000 tokens in under 2 s (with
// flash attention), where the wider one takes 3.5 s.
var TinyModel = Model{Embd: 32, Blocks: 1, Heads: 2, FF: 64, Context: 131072, Seed: 1}

// TinySWAModel is a gemma3 of TinyModel's size (one block) with a
// sliding window of 512 tokens. llama.cpp 11669 makes every sixth layer
// of a gemma3 global (layers 5, 11, …: swa pattern 6; it reads no
// pattern from the file for gemma3), so its one layer is a sliding one
// and the global cache is empty: the slot keeps the last 512 positions
// (1024 cells), and a 16k prefill costs what a 1k one does (1.0 s on one
// thread, against 8.6 s for TinyModel). With Blocks 6 it has five
// sliding layers and one global (the mix of the real gemma3 models, and
// the cost of a dense model on top); the cache rules are the same, as
// only the sliding layers cannot go back (see TestCheckpointRules).
var TinySWAModel = Model{Arch: ArchGemma3, Embd: 32, Blocks: 1, Heads: 2, FF: 64, Window: 512, Context: 131072, Seed: 1}

// TinyRecurrentModel is a mamba of TinyModel's width and depth: one
// block, an inner width of 64, a state of 16. Its memory is one state per
// sequence, which only goes forward: the slot cannot go back at all
// without a checkpoint.
var TinyRecurrentModel = Model{Arch: ArchMamba, Embd: 32, Blocks: 1, Context: 131072, Seed: 1}

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
	// decay marks a mamba's A: -1, -2, … -state along each row (the
	// decays a mamba starts from), where a random A could grow the state
	// without bound.
	decay bool
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
// bytes. Norm weights and biases (one dimension) are 1, a mamba's A is
// its decays, and every other weight is uniform in ±1/√in, drawn from a
// PCG seeded with m.Seed.
func WriteModel(w io.Writer, m Model) error {
	if err := m.check(); err != nil {
		return err
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

// arch is m's architecture, ArchLlama for the zero value.
func (m Model) arch() string {
	if m.Arch == "" {
		return ArchLlama
	}
	return m.Arch
}

func (m Model) check() error {
	switch m.arch() {
	case ArchLlama, ArchGemma3:
		if m.Embd <= 0 || m.Blocks <= 0 || m.Heads <= 0 || m.FF <= 0 || m.Embd%m.Heads != 0 {
			return fmt.Errorf("model %+v: want positive sizes and a width divisible by the heads", m)
		}
		if m.arch() == ArchGemma3 && m.Window <= 0 {
			return fmt.Errorf("model %+v: a gemma3 wants a positive sliding window", m)
		}
	case ArchMamba:
		if m.Embd <= 0 || m.Blocks <= 0 {
			return fmt.Errorf("model %+v: want positive sizes", m)
		}
	default:
		return fmt.Errorf("model %+v: no architecture %q (want %s, %s or %s)", m, m.Arch, ArchLlama, ArchGemma3, ArchMamba)
	}
	return nil
}

// A mamba's sizes, derived from its width.
const (
	mambaState = 16
	mambaConv  = 4
)

func (m Model) mambaInner() int  { return 2 * m.Embd }
func (m Model) mambaDTRank() int { return (m.Embd + 15) / 16 }

// modelMeta is m's metadata: its architecture's sizes, and the byte
// vocabulary.
func modelMeta(m Model) []kv {
	tokens := make([]string, 0, vocabSize)
	types := make([]int32, 0, vocabSize)
	tokens = append(tokens, "<unk>", "<s>", "</s>")
	types = append(types, tokenUnknown, tokenControl, tokenControl)
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, tokenByte)
	}
	a := m.arch()
	meta := []kv{
		{"general.architecture", a},
		{"general.name", "reika-llamatest-tiny"},
		{"general.alignment", uint32(ggufAlignment)},
		{a + ".context_length", uint32(m.Context)},
		{a + ".embedding_length", uint32(m.Embd)},
		{a + ".block_count", uint32(m.Blocks)},
	}
	switch a {
	case ArchLlama, ArchGemma3:
		meta = append(meta,
			kv{a + ".feed_forward_length", uint32(m.FF)},
			kv{a + ".attention.head_count", uint32(m.Heads)},
			kv{a + ".attention.head_count_kv", uint32(m.Heads)})
		if a == ArchLlama {
			meta = append(meta, kv{a + ".rope.dimension_count", uint32(m.Embd / m.Heads)})
		} else {
			meta = append(meta,
				kv{a + ".attention.key_length", uint32(m.Embd / m.Heads)},
				kv{a + ".attention.value_length", uint32(m.Embd / m.Heads)},
				kv{a + ".attention.sliding_window", uint32(m.Window)})
		}
	case ArchMamba:
		meta = append(meta,
			kv{a + ".feed_forward_length", uint32(0)},
			kv{a + ".attention.head_count", uint32(0)},
			kv{a + ".attention.head_count_kv", uint32(0)},
			kv{a + ".ssm.conv_kernel", uint32(mambaConv)},
			kv{a + ".ssm.inner_size", uint32(m.mambaInner())},
			kv{a + ".ssm.state_size", uint32(mambaState)},
			kv{a + ".ssm.time_step_rank", uint32(m.mambaDTRank())})
	}
	return append(meta,
		kv{a + ".attention.layer_norm_rms_epsilon", float32(1e-5)},
		kv{"tokenizer.ggml.model", "llama"},
		kv{"tokenizer.ggml.tokens", tokens},
		kv{"tokenizer.ggml.scores", make([]float32, vocabSize)},
		kv{"tokenizer.ggml.token_type", types},
		kv{"tokenizer.ggml.unknown_token_id", uint32(0)},
		kv{"tokenizer.ggml.bos_token_id", uint32(1)},
		kv{"tokenizer.ggml.eos_token_id", uint32(2)},
		kv{"tokenizer.ggml.add_bos_token", false},
		kv{"tokenizer.ggml.add_eos_token", false},
	)
}

// modelTensors are m's weights in file order: the token embedding, each
// block's, the output norm and (in a llama; the others tie it to the
// embedding) the output.
func modelTensors(m Model) []tensor {
	e, ff, v := uint64(m.Embd), uint64(m.FF), uint64(vocabSize)
	tensors := []tensor{{name: "token_embd.weight", dims: []uint64{e, v}}}
	for i := range m.Blocks {
		blk := func(name string, dims ...uint64) tensor {
			return tensor{name: fmt.Sprintf("blk.%d.%s", i, name), dims: dims}
		}
		switch m.arch() {
		case ArchLlama:
			tensors = append(tensors,
				blk("attn_norm.weight", e),
				blk("attn_q.weight", e, e), blk("attn_k.weight", e, e), blk("attn_v.weight", e, e), blk("attn_output.weight", e, e),
				blk("ffn_norm.weight", e),
				blk("ffn_gate.weight", e, ff), blk("ffn_up.weight", e, ff), blk("ffn_down.weight", ff, e))
		case ArchGemma3:
			head := e / uint64(m.Heads)
			tensors = append(tensors,
				blk("attn_norm.weight", e),
				blk("attn_q.weight", e, e), blk("attn_k.weight", e, e), blk("attn_v.weight", e, e),
				blk("attn_q_norm.weight", head), blk("attn_k_norm.weight", head),
				blk("attn_output.weight", e, e),
				blk("post_attention_norm.weight", e),
				blk("ffn_norm.weight", e),
				blk("ffn_gate.weight", e, ff), blk("ffn_up.weight", e, ff), blk("ffn_down.weight", ff, e),
				blk("post_ffw_norm.weight", e))
		case ArchMamba:
			in, st, cv, dt := uint64(m.mambaInner()), uint64(mambaState), uint64(mambaConv), uint64(m.mambaDTRank())
			a := blk("ssm_a", st, in)
			a.decay = true
			tensors = append(tensors,
				blk("attn_norm.weight", e),
				blk("ssm_in.weight", e, 2*in),
				blk("ssm_conv1d.weight", cv, in), blk("ssm_conv1d.bias", in),
				blk("ssm_x.weight", in, dt+2*st),
				blk("ssm_dt.weight", dt, in), blk("ssm_dt.bias", in),
				a, blk("ssm_d", in),
				blk("ssm_out.weight", in, e))
		}
	}
	tensors = append(tensors, tensor{name: "output_norm.weight", dims: []uint64{e}})
	if m.arch() == ArchLlama {
		tensors = append(tensors, tensor{name: "output.weight", dims: []uint64{e, v}})
	}
	return tensors
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
// a norm or a bias (one dimension), the decays for a mamba's A, else
// uniform in ±1/√in from a PCG seeded with seed.
func (g *ggufWriter) weights(tensors []tensor, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x5265696b61)) // "Reika"
	for _, t := range tensors {
		norm := len(t.dims) == 1
		limit := 1 / math.Sqrt(float64(t.dims[0]))
		for i := range t.elems() {
			x := float32(1)
			switch {
			case t.decay:
				x = -float32(i%t.dims[0] + 1)
			case !norm:
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
