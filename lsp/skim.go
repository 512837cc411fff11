package lsp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"go.lsp.dev/jsonrpc2"
)

// skip reads past a body over the limit without holding it, keeping only
// what its answer needs: the top-level "id" and "method", when the body
// is a JSON object that has them (clients put params anywhere among the
// keys, so the whole body is skimmed). It fails only when the input ends
// before the body does.
func (s *stream) skip(length int64) (*refusal, error) {
	k := &skimmer{r: s.in, left: length}
	id, method := k.object()
	if k.err == nil && k.left > 0 {
		var n int64
		n, k.err = io.CopyN(io.Discard, s.in, k.left)
		k.left -= n
	}
	if k.err != nil {
		return nil, fmt.Errorf("the input ended inside a message of %d bytes: %w", length, unexpected(k.err))
	}
	var name string
	json.Unmarshal(method, &name)
	r := &refusal{
		id:      answerableID(id),
		code:    jsonrpc2.InvalidRequest,
		message: fmt.Sprintf("%sthe message is %d bytes, over reika-lsp's limit of %s; it was skipped", prefix(name), length, size(s.max)),
	}
	// A body with an id and no method is a response: never answered.
	r.drop = method == nil && r.id != nil
	return r, nil
}

// size names a byte count in MiB when it is whole MiB.
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

func prefix(method string) string {
	if method == "" {
		return ""
	}
	return method + ": "
}

// skimmer reads one JSON value of a known length byte by byte, keeping
// only short top-level values. It never fails on bad JSON: it stops
// looking, and skip discards the rest.
type skimmer struct {
	r    *bufio.Reader
	left int64 // bytes of the body not read yet
	err  error // a read error: the input ended early
}

// keepValue bounds the raw id and method kept; longer ones are dropped.
const keepValue = 256

// next is the body's next byte; false at its end or on a read error.
func (k *skimmer) next() (byte, bool) {
	if k.left <= 0 || k.err != nil {
		return 0, false
	}
	c, err := k.r.ReadByte()
	if err != nil {
		k.err = err
		return 0, false
	}
	k.left--
	return c, true
}

// nonSpace is the next byte that is not JSON whitespace.
func (k *skimmer) nonSpace() (byte, bool) {
	for {
		c, ok := k.next()
		if !ok || (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
			return c, ok
		}
	}
}

// object reads a top-level object's members and returns the raw values of
// "id" and "method" (nil when absent or too long).
func (k *skimmer) object() (id, method []byte) {
	if c, ok := k.nonSpace(); !ok || c != '{' {
		return nil, nil
	}
	for {
		c, ok := k.nonSpace()
		if !ok || c != '"' {
			return id, method // '}' or bad JSON
		}
		key := k.str(16)
		if c, ok := k.nonSpace(); !ok || c != ':' {
			return id, method
		}
		c, ok = k.nonSpace()
		if !ok {
			return id, method
		}
		keep := 0
		if string(key) == `"id"` || string(key) == `"method"` {
			keep = keepValue
		}
		raw, end := k.value(c, keep)
		switch string(key) {
		case `"id"`:
			id = raw
		case `"method"`:
			method = raw
		}
		if end != ',' {
			return id, method
		}
	}
}

// str reads the rest of a string whose opening quote was read, and
// returns it raw, quotes included, when it is at most keep bytes long.
func (k *skimmer) str(keep int) []byte {
	buf := []byte{'"'}
	for {
		c, ok := k.next()
		if !ok {
			return nil
		}
		if buf != nil {
			buf = append(buf, c)
		}
		switch c {
		case '\\':
			e, ok := k.next()
			if !ok {
				return nil
			}
			if buf != nil {
				buf = append(buf, e)
			}
		case '"':
			return buf
		}
		if len(buf) > keep {
			buf = nil
		}
	}
}

// value reads a value that starts with c and the structural byte after it
// (',' or '}' in an object; 0 at the end); it returns the value raw when
// keep allows.
func (k *skimmer) value(c byte, keep int) (raw []byte, end byte) {
	switch c {
	case '"':
		raw = k.str(keep)
	case '{', '[':
		for depth := 1; depth > 0; {
			c, ok := k.next()
			if !ok {
				return nil, 0
			}
			switch c {
			case '"':
				k.str(0)
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
		}
	default:
		// A number, true, false or null: up to the next delimiter.
		raw = []byte{c}
		for {
			c, ok := k.next()
			if !ok {
				return raw, 0
			}
			switch c {
			case ',', '}', ']':
				return raw, c
			case ' ', '\t', '\r', '\n':
				c, _ := k.nonSpace()
				return raw, c
			}
			if raw != nil {
				raw = append(raw, c)
			}
			if len(raw) > keep {
				raw = nil
			}
		}
	}
	end, _ = k.nonSpace()
	return raw, end
}
