package engine

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reika-lsp/reika/agent/engine/llamatest"
)

// kvPair is one metadata entry for writeGGUF: a value of Go type int
// (written as typ), float32, bool, string, []string, []float32, []int32
// or []bool.
type kvPair struct {
	key string
	typ uint32 // for an int: ggufUint32, ggufInt32, ggufUint64, ggufUint8…
	val any
}

// writeGGUF writes a GGUF v3 header of pairs, claiming tensors tensors
// (none follow: the reader must not look for them).
func writeGGUF(pairs []kvPair, tensors uint64) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	w := func(v any) { binary.Write(&b, le, v) }
	str := func(s string) { w(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	w(uint32(3))
	w(tensors)
	w(uint64(len(pairs)))
	for _, p := range pairs {
		str(p.key)
		switch v := p.val.(type) {
		case int:
			w(p.typ)
			switch p.typ {
			case ggufUint8:
				w(uint8(v))
			case ggufUint16:
				w(uint16(v))
			case ggufInt32:
				w(int32(v))
			case ggufUint64:
				w(uint64(v))
			case ggufInt64:
				w(int64(v))
			default:
				w(uint32(v))
			}
		case float32:
			w(ggufFloat32)
			w(v)
		case bool:
			w(ggufBool)
			w(v)
		case string:
			w(ggufString)
			str(v)
		case []string:
			w(ggufArray)
			w(ggufString)
			w(uint64(len(v)))
			for _, s := range v {
				str(s)
			}
		case []float32:
			w(ggufArray)
			w(ggufFloat32)
			w(uint64(len(v)))
			w(v)
		case []int32:
			w(ggufArray)
			w(ggufInt32)
			w(uint64(len(v)))
			w(v)
		case []bool:
			w(ggufArray)
			w(ggufBool)
			w(uint64(len(v)))
			w(v)
		default:
			panic("writeGGUF: unsupported value")
		}
	}
	return b.Bytes()
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// vocab is a vocabulary's worth of arrays, which the reader reads past.
func vocab(n int) []kvPair {
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = strings.Repeat("x", i%7)
	}
	return []kvPair{
		{"tokenizer.ggml.model", 0, "gpt2"},
		{"tokenizer.ggml.tokens", 0, tokens},
		{"tokenizer.ggml.scores", 0, make([]float32, n)},
		{"tokenizer.ggml.token_type", 0, make([]int32, n)},
	}
}

// gemma3Header is a Gemma 3 header: 6 layers (5 slide, the 6th does
// not), window 1024, 2 KV heads of 256.
func gemma3Header() []kvPair {
	return append([]kvPair{
		{"general.architecture", 0, "gemma3"},
		{"general.name", 0, "test gemma3"},
		{"gemma3.block_count", ggufUint32, 6},
		{"gemma3.context_length", ggufUint32, 131072},
		{"gemma3.embedding_length", ggufUint32, 640},
		{"gemma3.attention.head_count", ggufUint32, 4},
		{"gemma3.attention.head_count_kv", ggufUint32, 2},
		{"gemma3.attention.key_length", ggufUint32, 256},
		{"gemma3.attention.value_length", ggufUint32, 256},
		{"gemma3.attention.sliding_window", ggufUint32, 1024},
		{"gemma3.attention.layer_norm_rms_epsilon", 0, float32(1e-6)},
	}, vocab(2000)...)
}

func TestReadGGUFOfLlamatestModel(t *testing.T) {
	var b bytes.Buffer
	if err := llamatest.WriteModel(&b, llamatest.TinyModel); err != nil {
		t.Fatal(err)
	}
	m, err := readGGUF(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("readGGUF(WriteModel) = %v", err)
	}
	m2 := llamatest.TinyModel
	want := modelMeta{
		"general.architecture": "llama", "llama.block_count": int64(m2.Blocks), "llama.attention.head_count": int64(m2.Heads),
		"llama.embedding_length": int64(m2.Embd), "llama.context_length": int64(m2.Context), "tokenizer.ggml.add_bos_token": false,
	}
	for k, v := range want {
		if !cmp.Equal(m[k], v) {
			t.Errorf("readGGUF()[%q] = %v, want %v", k, m[k], v)
		}
	}
	if _, kept := m["tokenizer.ggml.tokens"]; kept {
		t.Errorf("readGGUF kept the vocabulary's strings")
	}
	if v, ok := m["tokenizer.ggml.token_type"].([]int64); !ok || len(v) != 259 || v[3] != 6 {
		t.Errorf("readGGUF()[token_type] = %v, want 259 types, the 4th 6 (byte)", m["tokenizer.ggml.token_type"])
	}
	c, ok := classify(m)
	if !ok || c.arch != "llama" || c.model.Class != "dense" {
		t.Errorf("classify(TinyModel) = %+v, %v; want llama, dense", c, ok)
	}
}

func TestClassify(t *testing.T) {
	base := func(arch string, more ...kvPair) []kvPair {
		return append([]kvPair{{"general.architecture", 0, arch}, {arch + ".block_count", ggufUint32, 4}}, more...)
	}
	for _, tc := range []struct {
		name  string
		pairs []kvPair
		class string
		swa   int
		what  string
	}{
		{"gemma3: a sliding window", gemma3Header(), "checkpointed", 1024, "sliding window 1024"},
		{"gpt-oss: a sliding window", base("gpt-oss", kvPair{"gpt-oss.attention.sliding_window", ggufUint32, 128}), "checkpointed", 128, "sliding window 128"},
		{"mamba: its ssm keys", base("mamba", kvPair{"mamba.ssm.conv_kernel", ggufUint32, 4}), "checkpointed", 0, "recurrent layers (mamba.ssm.*)"},
		{"a hybrid not in the list, by its ssm keys", base("futurehybrid", kvPair{"futurehybrid.ssm.state_size", ggufUint32, 128},
			kvPair{"futurehybrid.attention.sliding_window", ggufUint32, 4096}), "checkpointed", 0, "recurrent layers (futurehybrid.ssm.*)"},
		{"rwkv7: its wkv keys", base("rwkv7", kvPair{"rwkv7.wkv.head_size", ggufUint32, 64}), "checkpointed", 0, "recurrent layers (rwkv7.wkv.*)"},
		{"lfm2: its shortconv keys", base("lfm2", kvPair{"lfm2.shortconv.l_cache", ggufUint32, 3}), "checkpointed", 0, "recurrent layers (lfm2.shortconv.*)"},
		{"qwen35 by its name alone", base("qwen35"), "checkpointed", 0, "recurrent layers (architecture qwen35)"},
		{"phi3's window is not used", base("phi3", kvPair{"phi3.attention.sliding_window", ggufUint32, 2047}), "dense", 0, "no sliding window or recurrent layers"},
		{"a window of 0 is none", base("gemma2", kvPair{"gemma2.attention.sliding_window", ggufUint32, 0}), "dense", 0, "no sliding window or recurrent layers"},
		{"qwen3", base("qwen3", kvPair{"qwen3.attention.head_count", ggufUint32, 8}), "dense", 0, "no sliding window or recurrent layers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := readGGUFFile(writeFile(t, "m.gguf", writeGGUF(tc.pairs, 12)))
			if err != nil {
				t.Fatal(err)
			}
			c, ok := classify(m)
			if !ok || string(c.model.Class) != tc.class || c.model.SWA != tc.swa || c.what != tc.what {
				t.Errorf("classify = %+v (%v), want %s SWA %d, %q", c, ok, tc.class, tc.swa, tc.what)
			}
		})
	}
	if c, ok := classify(modelMeta{"llama.block_count": int64(2)}); ok {
		t.Errorf("classify(no architecture) = %+v, true; want false", c)
	}
}

func TestSWAFullBytes(t *testing.T) {
	m, err := readGGUF(bytes.NewReader(writeGGUF(gemma3Header(), 0)))
	if err != nil {
		t.Fatal(err)
	}
	// Five of six layers slide (period 6); each keeps 1024+512 cells, and
	// --swa-full keeps 8192: 6656 more per layer and slot, each of 2 KV
	// heads × (256 + 256) × 2 bytes.
	if got, want := swaFullBytes(m, "gemma3", 1024, 8192, 1), int64(6656*5*2*(256+256)*2); got != want {
		t.Errorf("swaFullBytes(gemma3, 8192) = %d, want %d", got, want)
	}
	if got, want := swaFullBytes(m, "gemma3", 1024, 8192, 2), int64(2*6656*5*2*(256+256)*2); got != want {
		t.Errorf("swaFullBytes(gemma3, 8192, 2 slots) = %d, want %d", got, want)
	}
	if got := swaFullBytes(m, "gemma3", 1024, 1500, 1); got != 0 {
		t.Errorf("swaFullBytes(window+ubatch ≥ n_ctx) = %d, want 0", got)
	}
	// A per-layer head count, a pattern given as flags, the lengths from
	// embedding_length / head_count.
	m2 := modelMeta{
		"general.architecture": "newswa", "newswa.block_count": int64(4), "newswa.embedding_length": int64(512),
		"newswa.attention.head_count": int64(8), "newswa.attention.head_count_kv": []int64{4, 4, 2, 2},
		"newswa.attention.sliding_window_pattern": []int64{1, 0, 1, 0},
	}
	if got, want := swaFullBytes(m2, "newswa", 256, 4096, 1), int64((4096-768)*(4+2)*(64+64)*2); got != want {
		t.Errorf("swaFullBytes(newswa) = %d, want %d", got, want)
	}
	// An unknown pattern, or a missing figure: nothing said.
	delete(m2, "newswa.attention.sliding_window_pattern")
	if got := swaFullBytes(m2, "newswa", 256, 4096, 1); got != 0 {
		t.Errorf("swaFullBytes(no known pattern) = %d, want 0", got)
	}
	delete(m, "gemma3.attention.head_count_kv")
	delete(m, "gemma3.attention.head_count")
	if got := swaFullBytes(m, "gemma3", 1024, 8192, 1); got != 0 {
		t.Errorf("swaFullBytes(no head counts) = %d, want 0", got)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestReadGGUFBadFiles(t *testing.T) {
	le := binary.LittleEndian
	head := func(version uint32, pairs uint64) []byte {
		b := []byte("GGUF")
		b = le.AppendUint32(b, version)
		b = le.AppendUint64(b, 0)
		return le.AppendUint64(b, pairs)
	}
	onePair := func(key string, typ uint32, rest ...byte) []byte {
		b := head(3, 1)
		b = le.AppendUint64(b, uint64(len(key)))
		b = append(b, key...)
		b = le.AppendUint32(b, typ)
		return append(b, rest...)
	}
	arrayOf := func(elem uint32, n uint64) []byte {
		b := le.AppendUint32(nil, elem)
		return le.AppendUint64(b, n)
	}
	for _, tc := range []struct {
		name string
		data io.Reader
		want string
	}{
		{"empty", bytes.NewReader(nil), "not a GGUF file"},
		{"text", strings.NewReader("# not a model at all\n"), "not a GGUF file (no GGUF magic)"},
		{"version 1", bytes.NewReader(head(1, 0)), "GGUF version 1"},
		{"big-endian", bytes.NewReader(binary.BigEndian.AppendUint32([]byte("GGUF"), 3)), "big-endian"},
		{"a billion pairs", bytes.NewReader(head(3, 1<<30)), "claims 1073741824 key/value pairs"},
		{"a key of 2^40 bytes", bytes.NewReader(le.AppendUint64(head(3, 1), 1<<40)), "a string of 1099511627776 bytes"},
		{"an unknown type", bytes.NewReader(onePair("k", 13)), `GGUF key "k": unknown value type 13`},
		{"an array of arrays", bytes.NewReader(onePair("k", ggufArray, arrayOf(ggufArray, 1)...)), "an array of type 9"},
		{"an array longer than the limit", bytes.NewReader(onePair("k", ggufArray, arrayOf(ggufUint32, 1<<62)...)), "longer than 64 MiB"},
		{"a string past the limit", bytes.NewReader(onePair("k", ggufString, le.AppendUint64(nil, 1<<62)...)), "longer than 64 MiB"},
		{"endless empty strings", io.MultiReader(bytes.NewReader(onePair("k", ggufArray, arrayOf(ggufString, math.MaxUint64)...)), zeros{}), "longer than 64 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := &countingReader{r: tc.data}
			m, err := readGGUF(cr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("readGGUF = %v, %v; want an error with %q", m, err, tc.want)
			}
			if cr.n > maxGGUFHeader+1 {
				t.Errorf("readGGUF read %d bytes, more than %d", cr.n, maxGGUFHeader+1)
			}
		})
	}
}

func TestReadGGUFTruncated(t *testing.T) {
	data := writeGGUF(gemma3Header()[:8], 3)
	if _, err := readGGUF(bytes.NewReader(data)); err != nil {
		t.Fatalf("readGGUF(whole header) = %v", err)
	}
	for n := range len(data) {
		if _, err := readGGUF(bytes.NewReader(data[:n])); err == nil {
			t.Fatalf("readGGUF(first %d of %d bytes) = nil error, want one", n, len(data))
		} else if n >= 8 && !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("readGGUF(first %d of %d bytes) = %v, want it to say truncated", n, len(data), err)
		}
	}
}

func TestReadGGUFFileNotAFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := readGGUFFile(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("readGGUFFile(a directory) = %v, want not a regular file", err)
	}
	if _, err := readGGUFFile(filepath.Join(dir, "missing.gguf")); err == nil {
		t.Errorf("readGGUFFile(missing) = nil error")
	}
	// A FIFO named by the engine is refused without being opened: opening
	// one for reading blocks until something writes to it.
	fifo := filepath.Join(dir, "model.gguf")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := readGGUFFile(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("readGGUFFile(a FIFO) = %v, want not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close() // lets the blocked open go
		}
		t.Fatal("readGGUFFile(a FIFO) blocked")
	}
}
