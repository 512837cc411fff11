package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"go.lsp.dev/jsonrpc2"
)

// readBody reads a body of length bytes and returns it, or the refusal
// of a body over its method's limit. A body within s.other is read whole.
// A longer one is skimmed as it comes, its bytes held only until its
// top-level "method" is read: a bulky method within s.bulk gets the body
// whole; any other body is skipped to its end, and refused with its
// "id" and "method" (when it is a JSON object that has them: clients
// put params anywhere among the keys). It fails only when the input ends
// before the body does.
func (s *stream) readBody(length int64) ([]byte, *refusal, error) {
	ended := func(err error) error {
		return fmt.Errorf("the input ended inside a message of %d bytes: %w", length, unexpected(err))
	}
	if length <= s.other {
		body := make([]byte, length)
		if _, err := io.ReadFull(s.in, body); err != nil {
			return nil, nil, ended(err)
		}
		return body, nil, nil
	}
	k := &skimmer{r: s.in, left: length, hold: length <= s.bulk}
	whole, decided := false, false
	k.object(func() bool {
		if k.sawMethod && !decided {
			decided = true
			var name string
			json.Unmarshal(k.method, &name)
			whole = bulky[name] && length <= s.bulk
			if !whole {
				k.drop()
			}
		}
		return whole || k.sawMethod && k.sawID
	})
	if k.err == nil && whole {
		body := slices.Grow(k.held, int(k.left))[:length]
		k.held = nil
		if _, err := io.ReadFull(s.in, body[length-k.left:]); err != nil {
			return nil, nil, ended(err)
		}
		return body, nil, nil
	}
	k.drop()
	if k.err == nil && k.left > 0 {
		var n int64
		n, k.err = io.CopyN(io.Discard, s.in, k.left)
		k.left -= n
	}
	if k.err != nil {
		return nil, nil, ended(k.err)
	}
	var name string
	json.Unmarshal(k.method, &name)
	limit := size(s.bulk)
	switch {
	case length <= s.bulk && name != "":
		limit = size(s.other) + " for " + name
	case length <= s.bulk:
		limit = size(s.other) + " for a message without a method"
	}
	r := &refusal{
		id:      answerableID(k.id),
		code:    jsonrpc2.InvalidRequest,
		message: fmt.Sprintf("%sthe message is %d bytes, over reika-lsp's limit of %s; it was skipped", prefix(name), length, limit),
		release: k.dropped > releaseAfter,
	}
	// A body with an id and no method is a response: never answered.
	r.drop = k.method == nil && r.id != nil
	return nil, r, nil
}

// releaseAfter is the size of a held body past which refusing it hands
// the process's free memory back to the system at once: Go does it
// lazily, and an idle server would keep the body's pages for minutes.
const releaseAfter = 16 << 20

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
// only short top-level values, and the bytes it read while hold is set.
// It never fails on bad JSON: it stops looking, and the caller discards
// the rest.
type skimmer struct {
	r    *bufio.Reader
	left int64 // bytes of the body not read yet
	err  error // a read error: the input ended early

	// id and method are the raw top-level values (nil when absent or
	// too long), once sawID and sawMethod.
	id, method       []byte
	sawID, sawMethod bool
	hold             bool   // keep what is read in held
	held             []byte // the body's bytes read while holding
	dropped          int    // the most bytes held and then dropped
}

// keepValue bounds the raw id and method kept; longer ones are dropped.
const keepValue = 256

// holdExact is how much of a body is held by doubling; a body whose
// method has not come in so many bytes is held at its whole length.
const holdExact = 1 << 20

// drop stops holding, and lets go of what was held.
func (k *skimmer) drop() {
	k.dropped = max(k.dropped, len(k.held))
	k.hold, k.held = false, nil
}

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
	if k.hold {
		k.keep([]byte{c})
	}
	k.left--
	return c, true
}

// keep holds p, read from the body and not yet counted off k.left.
func (k *skimmer) keep(p []byte) {
	if len(k.held)+len(p) > cap(k.held) && len(k.held) >= holdExact {
		k.held = slices.Grow(k.held, int(k.left))
	}
	k.held = append(k.held, p...)
}

// toQuoteOrEscape reads on, in bulk, up to the body's next quote or
// backslash, which it leaves unread: the inside of a string, which is
// most of a large body.
func (k *skimmer) toQuoteOrEscape() {
	for k.left > 0 && k.err == nil {
		if _, err := k.r.Peek(1); err != nil {
			k.err = err
			return
		}
		b, _ := k.r.Peek(int(min(int64(k.r.Buffered()), k.left)))
		n := len(b)
		if i := bytes.IndexByte(b, '"'); i >= 0 {
			n = i
		}
		if i := bytes.IndexByte(b[:n], '\\'); i >= 0 {
			n = i
		}
		if k.hold {
			k.keep(b[:n])
		}
		k.r.Discard(n)
		k.left -= int64(n)
		if n < len(b) {
			return
		}
	}
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

// object reads a top-level object's members into k.id and k.method,
// calling enough after each member: it stops when enough says so.
func (k *skimmer) object(enough func() bool) {
	if c, ok := k.nonSpace(); !ok || c != '{' {
		return
	}
	for {
		c, ok := k.nonSpace()
		if !ok || c != '"' {
			return // '}' or bad JSON
		}
		key := k.str(16)
		if c, ok := k.nonSpace(); !ok || c != ':' {
			return
		}
		c, ok = k.nonSpace()
		if !ok {
			return
		}
		keep := 0
		if string(key) == `"id"` || string(key) == `"method"` {
			keep = keepValue
		}
		raw, end := k.value(c, keep)
		switch string(key) {
		case `"id"`:
			k.id, k.sawID = raw, true
		case `"method"`:
			k.method, k.sawMethod = raw, true
		}
		if enough() || end != ',' {
			return
		}
	}
}

// str reads the rest of a string whose opening quote was read, and
// returns it raw, quotes included, when it is at most keep bytes long.
func (k *skimmer) str(keep int) []byte {
	buf := []byte{'"'}
	for {
		if buf == nil {
			k.toQuoteOrEscape()
		}
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
