package engine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// A GGUF file (llama.cpp's model format, ggml/include/gguf.h) starts with
// its header: the magic "GGUF", a version (2 or 3: 64-bit counts), the
// number of tensors, the number of key/value pairs, then the pairs, each
// a string key, a uint32 type and the value. Tensor infos and the weights
// follow; readGGUF never reads them. A string is a uint64 length and its
// bytes; an array a uint32 element type, a uint64 count and the elements.

// GGUF value types.
const (
	ggufUint8 uint32 = iota
	ggufInt8
	ggufUint16
	ggufInt16
	ggufUint32
	ggufInt32
	ggufFloat32
	ggufBool
	ggufString
	ggufArray
	ggufUint64
	ggufInt64
	ggufFloat64
)

// Bounds on what readGGUF reads, so that a broken or hostile file costs
// little: the key/value section of a real model (its vocabulary and merges
// included) stays well below maxGGUFHeader.
const (
	maxGGUFHeader = 64 << 20 // bytes read at most
	maxGGUFPairs  = 1 << 20
	maxGGUFKey    = 1 << 16
	// Values longer than these are read past, not kept: discovery needs
	// short strings and per-layer arrays, not the vocabulary.
	maxGGUFKeptString = 4 << 10
	maxGGUFKeptArray  = 4 << 10
)

// ggufMagic is "GGUF" read as a little-endian uint32.
const ggufMagic = 0x46554747

// modelMeta is a model's metadata by key, as a GGUF header or Ollama's
// model_info gives it: int64, float64, bool, string or []int64 (numeric and
// boolean arrays, true as 1). Values readGGUF does not keep are absent.
type modelMeta map[string]any

// str is key's string value.
func (m modelMeta) str(key string) string {
	s, _ := m[key].(string)
	return s
}

// num is key's integer value, or an array's first element.
func (m modelMeta) num(key string) (int64, bool) {
	switch v := m[key].(type) {
	case int64:
		return v, true
	case []int64:
		if len(v) > 0 {
			return v[0], true
		}
	}
	return 0, false
}

// perLayer is key's value for each of n layers: an array as it is (when it
// has n elements), a scalar repeated.
func (m modelMeta) perLayer(key string, n int) ([]int64, bool) {
	switch v := m[key].(type) {
	case int64:
		out := make([]int64, n)
		for i := range out {
			out[i] = v
		}
		return out, true
	case []int64:
		if len(v) == n {
			return v, true
		}
	}
	return nil, false
}

// readGGUFFile reads the key/value section of the GGUF file at path.
func readGGUFFile(path string) (modelMeta, error) {
	// The path comes from the engine: a FIFO there would block the open
	// itself, so it is looked at before it is opened.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	m, err := readGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// readGGUF reads a GGUF header's key/value pairs from r, stopping before
// the tensor infos and never reading more than maxGGUFHeader bytes. A
// file that is not GGUF, is truncated or holds impossible sizes is an
// error that says which.
func readGGUF(r io.Reader) (modelMeta, error) {
	g := &ggufReader{r: bufio.NewReaderSize(io.LimitReader(r, maxGGUFHeader+1), 64<<10)}
	magic, err := g.u32()
	if err != nil {
		return nil, fmt.Errorf("not a GGUF file: %w", err)
	}
	if magic != ggufMagic {
		return nil, errors.New("not a GGUF file (no GGUF magic)")
	}
	version, err := g.u32()
	if err != nil {
		return nil, fmt.Errorf("GGUF version: %w", err)
	}
	switch {
	case version == 2 || version == 3:
	case version > 0xffff:
		return nil, errors.New("a big-endian GGUF file, which is not read")
	default:
		return nil, fmt.Errorf("GGUF version %d, which is not read (want 2 or 3)", version)
	}
	if _, err := g.u64(); err != nil { // the tensor count
		return nil, fmt.Errorf("GGUF tensor count: %w", err)
	}
	pairs, err := g.u64()
	if err != nil {
		return nil, fmt.Errorf("GGUF key/value count: %w", err)
	}
	if pairs > maxGGUFPairs {
		return nil, fmt.Errorf("GGUF header claims %d key/value pairs (at most %d are read)", pairs, maxGGUFPairs)
	}
	m := modelMeta{}
	for i := range pairs {
		key, err := g.str(maxGGUFKey)
		if err != nil {
			return nil, fmt.Errorf("GGUF key %d: %w", i, err)
		}
		typ, err := g.u32()
		if err != nil {
			return nil, fmt.Errorf("GGUF key %q: type: %w", key, err)
		}
		v, err := g.value(typ)
		if err != nil {
			return nil, fmt.Errorf("GGUF key %q: %w", key, err)
		}
		if v != nil {
			m[key] = v
		}
	}
	return m, nil
}

// ggufReader reads little-endian values and counts what it consumed.
type ggufReader struct {
	r   *bufio.Reader
	n   int64
	buf [8]byte
}

var errGGUFTooLong = fmt.Errorf("the header is longer than %d MiB", maxGGUFHeader>>20)

func (g *ggufReader) full(p []byte) error {
	if g.n+int64(len(p)) > maxGGUFHeader {
		return errGGUFTooLong
	}
	k, err := io.ReadFull(g.r, p)
	g.n += int64(k)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("truncated")
	}
	return err
}

func (g *ggufReader) skip(n uint64) error {
	if n > uint64(maxGGUFHeader-g.n) {
		return errGGUFTooLong
	}
	k, err := g.r.Discard(int(n))
	g.n += int64(k)
	if errors.Is(err, io.EOF) {
		return errors.New("truncated")
	}
	return err
}

func (g *ggufReader) u32() (uint32, error) {
	if err := g.full(g.buf[:4]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(g.buf[:4]), nil
}

func (g *ggufReader) u64() (uint64, error) {
	if err := g.full(g.buf[:8]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(g.buf[:8]), nil
}

// str reads a string of at most limit bytes.
func (g *ggufReader) str(limit uint64) (string, error) {
	n, err := g.u64()
	if err != nil {
		return "", err
	}
	if n > limit {
		return "", fmt.Errorf("a string of %d bytes (at most %d)", n, limit)
	}
	b := make([]byte, n)
	if err := g.full(b); err != nil {
		return "", err
	}
	return string(b), nil
}

// scalarSize is the size in bytes of a fixed-size type, 0 for others.
func scalarSize(typ uint32) uint64 {
	switch typ {
	case ggufUint8, ggufInt8, ggufBool:
		return 1
	case ggufUint16, ggufInt16:
		return 2
	case ggufUint32, ggufInt32, ggufFloat32:
		return 4
	case ggufUint64, ggufInt64, ggufFloat64:
		return 8
	}
	return 0
}

// scalar reads one fixed-size value: an int64, a float64 or a bool.
func (g *ggufReader) scalar(typ uint32) (any, error) {
	size := scalarSize(typ)
	if err := g.full(g.buf[:size]); err != nil {
		return nil, err
	}
	b := g.buf[:size]
	le := binary.LittleEndian
	switch typ {
	case ggufUint8:
		return int64(b[0]), nil
	case ggufInt8:
		return int64(int8(b[0])), nil
	case ggufBool:
		return b[0] != 0, nil
	case ggufUint16:
		return int64(le.Uint16(b)), nil
	case ggufInt16:
		return int64(int16(le.Uint16(b))), nil
	case ggufUint32:
		return int64(le.Uint32(b)), nil
	case ggufInt32:
		return int64(int32(le.Uint32(b))), nil
	case ggufFloat32:
		return float64(math.Float32frombits(le.Uint32(b))), nil
	case ggufUint64:
		u := le.Uint64(b)
		if u > math.MaxInt64 {
			return float64(u), nil
		}
		return int64(u), nil
	case ggufInt64:
		return int64(le.Uint64(b)), nil
	default: // ggufFloat64
		return math.Float64frombits(le.Uint64(b)), nil
	}
}

// value reads a value of type typ; nil when it is read past, not kept.
func (g *ggufReader) value(typ uint32) (any, error) {
	switch {
	case scalarSize(typ) > 0:
		return g.scalar(typ)
	case typ == ggufString:
		n, err := g.u64()
		if err != nil {
			return nil, err
		}
		if n > maxGGUFKeptString {
			return nil, g.skip(n)
		}
		b := make([]byte, n)
		if err := g.full(b); err != nil {
			return nil, err
		}
		return string(b), nil
	case typ == ggufArray:
		return g.array()
	}
	return nil, fmt.Errorf("unknown value type %d", typ)
}

// array reads an array: a short one of numbers or booleans is kept as
// []int64 (floats are read past); others are read past.
func (g *ggufReader) array() (any, error) {
	elem, err := g.u32()
	if err != nil {
		return nil, err
	}
	n, err := g.u64()
	if err != nil {
		return nil, err
	}
	size := scalarSize(elem)
	switch {
	case elem == ggufString:
		for range n {
			if _, err := g.strPast(); err != nil {
				return nil, err
			}
		}
		return nil, nil
	case size == 0:
		return nil, fmt.Errorf("an array of type %d, which cannot be read", elem)
	case n > uint64(maxGGUFHeader)/size:
		return nil, errGGUFTooLong
	case n > maxGGUFKeptArray || elem == ggufFloat32 || elem == ggufFloat64:
		return nil, g.skip(n * size)
	}
	out := make([]int64, n)
	keep := true
	for i := range out {
		v, err := g.scalar(elem)
		if err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case int64:
			out[i] = v
		case bool:
			if v {
				out[i] = 1
			}
		default: // a uint64 past MaxInt64: not a layer's figure
			keep = false
		}
	}
	if !keep {
		return nil, nil
	}
	return out, nil
}

// strPast reads past one string.
func (g *ggufReader) strPast() (uint64, error) {
	n, err := g.u64()
	if err != nil {
		return 0, err
	}
	return n, g.skip(n)
}
