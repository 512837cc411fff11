package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// maxMessage bounds the body of a message that carries a document's
// text (textDocument/didOpen, textDocument/didChange): a document of up to
// maxDocumentSize written as JSON. A larger one is skipped without being
// held in memory and refused.
const maxMessage = 64 << 20

// maxRequest bounds the body of every other message: the requests and
// notifications that carry no document and the client's responses. The
// longest of them is reika.ask's instruction (maxInstruction, up to six
// times as long written as JSON), which gets the handler's own advice up
// to this size. A longer body is skipped, never decoded (issue 21: a
// 50 MB executeCommand was read whole, checked, and decoded by the
// library and again by the handler before reika.ask refused it; the
// server kept 300 MB).
const maxRequest = 4 << 20

// bigMessage is the body past which the memory a message took (its bytes,
// the library's decoding, a document refused or kept) is handed back to
// the system soon after, rather than when the runtime gets to it: a 50 MB
// didOpen left the server at 238 MB for good.
const bigMessage = 4 << 20

// releaseWaits are the waits after a big message at which the memory the
// runtime no longer uses is handed back: the message is garbage only once
// its handler is done with it, which takes seconds for tens of megabytes
// of JSON on a busy machine.
var releaseWaits = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}

// releasing is set while a release is under way.
var releasing atomic.Bool

// releaseSoon hands the memory the runtime no longer uses back to the
// system at each of releaseWaits, once for any number of big messages
// meanwhile.
func releaseSoon() {
	if !releasing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer releasing.Store(false)
		for _, d := range releaseWaits {
			time.Sleep(d)
			debug.FreeOSMemory()
		}
	}()
}

// bulky are the methods whose messages may be up to maxMessage.
var bulky = map[string]bool{
	protocol.MethodTextDocumentDidOpen:   true,
	protocol.MethodTextDocumentDidChange: true,
}

// stream frames JSON-RPC messages with Content-Length headers, as
// jsonrpc2.NewStream does, and checks every body before the library sees
// it: go.lsp.dev/jsonrpc2 ends the connection on the first body it cannot
// decode (defect 8 in doc.go). A body that is not JSON is answered with
// ParseError, one that is not a request the library can take (a batch,
// "jsonrpc" other than "2.0", an id that is null or not a string or a
// 32-bit integer, a method that is not a string) with InvalidRequest, a
// body over its method's limit with InvalidRequest too; the stream then
// reads on. A response from the client that the library cannot take is
// logged and dropped: answering an answer could start a loop. Only broken
// framing (a missing or bad Content-Length, a header line over 4 KiB, the
// input ending inside a message) ends the stream.
//
// Read is called by the connection's reader only; Write may be called
// from any goroutine.
type stream struct {
	rwc io.ReadWriteCloser
	in  *bufio.Reader
	// bulk bounds a body whose method is in bulky, other any other body.
	bulk, other int64
	log         *log.Logger

	wmu sync.Mutex      // serializes writes: the library's and the stream's own answers
	out jsonrpc2.Stream // the library's stream, used only to write
}

// newStream reads bodies of up to bulk bytes for the bulky methods and
// of up to other bytes (at most bulk) for the rest.
func newStream(rwc io.ReadWriteCloser, bulk, other int64, log *log.Logger) *stream {
	return &stream{rwc: rwc, in: bufio.NewReaderSize(rwc, maxHeaderLine), bulk: bulk, other: min(other, bulk), log: log, out: jsonrpc2.NewStream(rwc)}
}

// maxHeaderLine bounds one header line, and so the memory a header takes.
const maxHeaderLine = 4096

// Read returns the next message the library can take, answering the bad
// ones before it.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, total, err
		}
		length, n, err := s.readHeader()
		total += n
		if err != nil {
			return nil, total, err
		}
		body, r, err := s.readBody(length)
		total += length
		if err != nil {
			return nil, total, err
		}
		if length > bigMessage {
			releaseSoon()
		}
		if r != nil {
			if err := s.refuse(r); err != nil {
				return nil, total, err
			}
			continue
		}
		msg, r := check(body)
		if req, ok := msg.(jsonrpc2.Request); ok && length > s.other && !bulky[req.Method()] {
			// readBody took it whole for the first of two "method" keys.
			r = &refusal{id: answerableID(idOf(req)), code: jsonrpc2.InvalidRequest,
				message: fmt.Sprintf("%s: an ambiguous message of %d bytes (duplicate method keys?)", req.Method(), length)}
		}
		if r == nil {
			return msg, total, nil
		}
		if err := s.refuse(r); err != nil {
			return nil, total, err
		}
	}
}

// readHeader reads a message's header up to its blank line and returns
// its Content-Length. Other headers (Content-Type) are ignored: LSP has
// only UTF-8.
func (s *stream) readHeader() (length, n int64, err error) {
	length = -1
	for first := true; ; first = false {
		line, err := s.in.ReadSlice('\n')
		n += int64(len(line))
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return 0, n, fmt.Errorf("a header line longer than %d bytes: %.40q…", maxHeaderLine, line)
		case err == io.EOF && first && len(line) == 0:
			return 0, n, io.EOF // the client closed the stream between messages
		case err != nil:
			return 0, n, fmt.Errorf("the input ended inside a message's header: %w", unexpected(err))
		}
		text := strings.TrimSpace(string(line))
		if text == "" {
			if length < 0 {
				return 0, n, fmt.Errorf("a message without Content-Length")
			}
			return length, n, nil
		}
		name, value, ok := strings.Cut(text, ":")
		if !ok {
			return 0, n, fmt.Errorf("a header line without a colon: %.40q", text)
		}
		if strings.EqualFold(strings.TrimSpace(name), jsonrpc2.HdrContentLength) {
			value = strings.TrimSpace(value)
			length, err = strconv.ParseInt(value, 10, 64)
			if err != nil || length < 0 {
				return 0, n, fmt.Errorf("a bad Content-Length: %.40q", value)
			}
		}
	}
}

// unexpected names an end of input inside a message as such.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Write sends a message; it may be called from any goroutine.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.out.Write(ctx, msg)
}

// Close closes the underlying stream.
func (s *stream) Close() error { return s.rwc.Close() }

// refusal is the stream's own answer to a body it does not pass on.
type refusal struct {
	id      json.RawMessage // the request's id as it came; nil for null
	code    jsonrpc2.Code
	message string
	// drop: the body looks like a response, which is never answered;
	// the refusal is only logged.
	drop bool
	// release: the body was held before it was refused; once answered,
	// the memory it took goes back to the system.
	release bool
}

// refuse logs r and answers it unless it is dropped.
func (s *stream) refuse(r *refusal) error {
	if r.release {
		defer debug.FreeOSMemory()
	}
	id := r.id
	if id == nil {
		id = json.RawMessage("null")
	}
	if r.drop {
		s.log.Printf("dropped a response from the client: %s", r.message)
		return nil
	}
	s.log.Printf("refused a message (id %s): %s", id, r.message)
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc2.Error  `json:"error"`
	}{"2.0", id, jsonrpc2.Error{Code: r.code, Message: r.message}})
	if err != nil {
		return fmt.Errorf("answering a bad message: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = fmt.Fprintf(s.rwc, "%s: %d\r\n\r\n%s", jsonrpc2.HdrContentLength, len(body), body)
	return err
}

// check decides whether body goes to the library: it returns the decoded
// message, or why not.
func check(body []byte) (jsonrpc2.Message, *refusal) {
	if !json.Valid(body) {
		err := json.Unmarshal(body, new(json.RawMessage)) // for the syntax error's text
		return nil, &refusal{code: jsonrpc2.ParseError, message: fmt.Sprintf("the message is not JSON (%v): %.40q", err, body)}
	}
	switch b := bytes.TrimLeft(body, " \t\r\n"); b[0] {
	case '{':
	case '[':
		return nil, &refusal{code: jsonrpc2.InvalidRequest, message: "a batch (a JSON array): LSP sends one message at a time"}
	default:
		return nil, &refusal{code: jsonrpc2.InvalidRequest, message: "the message is not a JSON object"}
	}
	var m struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, &refusal{code: jsonrpc2.InvalidRequest, message: "the message is not a JSON-RPC message: " + err.Error()}
	}
	id := answerableID(m.ID)
	if m.Method == nil && m.ID == nil && m.Result == nil && m.Error == nil {
		return nil, &refusal{code: jsonrpc2.InvalidRequest, message: "a JSON object with no method, id, result or error is no JSON-RPC message"}
	}
	if m.Method == nil {
		// A response: the library matches it to the server's call, or
		// ignores it; one it cannot decode is dropped.
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			return nil, &refusal{drop: true, message: fmt.Sprintf("%v: %.200s", err, body)}
		}
		return msg, nil
	}
	var method string
	if json.Unmarshal(m.Method, &method) != nil || method == "" {
		return nil, &refusal{id: id, code: jsonrpc2.InvalidRequest, message: "the method must be a non-empty string"}
	}
	if string(m.JSONRPC) != `"2.0"` {
		got := string(m.JSONRPC)
		if got == "" {
			got = "missing"
		}
		return nil, &refusal{id: id, code: jsonrpc2.InvalidRequest, message: fmt.Sprintf(`%s: "jsonrpc" must be "2.0", not %.20s`, method, got)}
	}
	if string(m.ID) == "null" {
		// JSON-RPC 2.0 allows it, and the library takes it for a
		// notification (defect 9): the handler runs and its answer is
		// never sent. LSP's ids are strings or integers, and a
		// notification has no id at all.
		return nil, &refusal{code: jsonrpc2.InvalidRequest, message: method + `: the id is null: a request's id is a string or an integer, and a notification has no "id"`}
	}
	if m.ID != nil {
		var lib jsonrpc2.ID
		if lib.UnmarshalJSON(m.ID) != nil || string(m.ID) == `""` {
			return nil, &refusal{id: id, code: jsonrpc2.InvalidRequest, message: fmt.Sprintf("%s: the id %.40s is not supported: send a string or an integer of 32 bits", method, m.ID)}
		}
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	if err != nil {
		return nil, &refusal{id: id, code: jsonrpc2.InvalidRequest, message: fmt.Sprintf("%s: %v", method, err)}
	}
	// The library decodes with another JSON package; a body the two read
	// differently (duplicate keys, keys in other cases) is refused rather
	// than taken for something else.
	if req, ok := msg.(jsonrpc2.Request); !ok || req.Method() != method {
		return nil, &refusal{id: id, code: jsonrpc2.InvalidRequest, message: fmt.Sprintf("%s: an ambiguous message (duplicate or miscased keys?)", method)}
	}
	return msg, nil
}

// idOf is a call's id as JSON; nil for a notification.
func idOf(req jsonrpc2.Request) json.RawMessage {
	call, ok := req.(*jsonrpc2.Call)
	if !ok {
		return nil
	}
	id := call.ID()
	raw, err := json.Marshal(&id) // ID marshals itself through a pointer
	if err != nil {
		return nil
	}
	return raw
}

// answerableID is raw when it is an id a client can match its answer by
// (a string or a number, even one the library cannot hold), else nil.
func answerableID(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return raw
	}
	return nil
}
