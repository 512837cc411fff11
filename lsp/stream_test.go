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
	"reflect"
	"runtime"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// wire is a stream's input and what it wrote.
type wire struct {
	in  io.Reader
	out bytes.Buffer
}

func (w *wire) Read(p []byte) (int, error)  { return w.in.Read(p) }
func (w *wire) Write(p []byte) (int, error) { return w.out.Write(p) }
func (w *wire) Close() error                { return nil }

func frameBody(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// answer is one error answer the stream wrote.
type answer struct {
	ID    string
	Code  int
	Error string
}

// readAll reads messages until the stream fails, and returns the methods
// (or "response") passed on, the answers written and the final error.
func readAll(t testing.TB, s *stream, w *wire) (passed []string, answers []answer, err error) {
	t.Helper()
	for {
		msg, _, err := s.Read(context.Background())
		if err != nil {
			return passed, parseAnswers(t, w.out.Bytes()), err
		}
		if req, ok := msg.(jsonrpc2.Request); ok {
			passed = append(passed, req.Method())
		} else {
			passed = append(passed, "response")
		}
	}
}

func parseAnswers(t testing.TB, out []byte) []answer {
	t.Helper()
	var as []answer
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		length, _, err := (&stream{in: r}).readHeader()
		if errors.Is(err, io.EOF) {
			return as
		}
		if err != nil {
			t.Fatalf("the stream wrote a bad frame: %v\n%q", err, out)
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatalf("the stream wrote a short frame: %v\n%q", err, out)
		}
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &m); err != nil || m.JSONRPC != "2.0" || m.Error == nil || m.ID == nil {
			t.Fatalf("the stream wrote %s, want a JSON-RPC error answer", body)
		}
		as = append(as, answer{string(m.ID), m.Error.Code, m.Error.Message})
	}
}

func newTestStream(in string, max int64) (*stream, *wire) {
	w := &wire{in: strings.NewReader(in)}
	return newStream(w, max, max, log.New(io.Discard, "", 0)), w
}

// The stream passes good messages on, answers each bad body once and
// reads on, and stops only where the framing is broken.
func TestStream(t *testing.T) {
	good := frameBody(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`)
	tests := []struct {
		name    string
		in      string
		passed  []string
		answers []answer
		broken  string // the error that ends the stream; "" for a clean EOF
	}{
		{name: "good", in: good + frameBody(`{"jsonrpc":"2.0","method":"exit"}`), passed: []string{"shutdown", "exit"}},
		{name: "a response", in: frameBody(`{"jsonrpc":"2.0","id":"s1","result":null}`) + good, passed: []string{"response", "shutdown"}},
		{name: "headers in any case, Content-Type, LF only", in: "content-length: 2\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n{}" + good,
			passed: []string{"shutdown"}, answers: []answer{{"null", -32600, "a JSON object with no method, id, result or error is no JSON-RPC message"}}},
		{name: "not JSON", in: frameBody("abc") + good, passed: []string{"shutdown"},
			answers: []answer{{"null", -32700, `the message is not JSON (invalid character 'a' looking for beginning of value): "abc"`}}},
		{name: "empty body", in: "Content-Length: 0\r\n\r\n" + good, passed: []string{"shutdown"},
			answers: []answer{{"null", -32700, `the message is not JSON (unexpected end of JSON input): ""`}}},
		{name: "jsonrpc 1.0", in: frameBody(`{"jsonrpc":"1.0","id":3,"method":"shutdown"}`) + good, passed: []string{"shutdown"},
			answers: []answer{{"3", -32600, `shutdown: "jsonrpc" must be "2.0", not "1.0"`}}},
		{name: "no jsonrpc", in: frameBody(`{"id":"a","method":"shutdown"}`) + good, passed: []string{"shutdown"},
			answers: []answer{{`"a"`, -32600, `shutdown: "jsonrpc" must be "2.0", not missing`}}},
		{name: "batch", in: frameBody(`[{"jsonrpc":"2.0","id":1,"method":"shutdown"}]`) + good, passed: []string{"shutdown"},
			answers: []answer{{"null", -32600, "a batch (a JSON array): LSP sends one message at a time"}}},
		{name: "float id", in: frameBody(`{"jsonrpc":"2.0","id":1.5,"method":"shutdown"}`) + good, passed: []string{"shutdown"},
			answers: []answer{{"1.5", -32600, "shutdown: the id 1.5 is not supported: send a string or an integer of 32 bits"}}},
		{name: "empty string id", in: frameBody(`{"jsonrpc":"2.0","id":"","method":"shutdown"}`) + good, passed: []string{"shutdown"},
			answers: []answer{{`""`, -32600, `shutdown: the id "" is not supported: send a string or an integer of 32 bits`}}},
		{name: "method not a string", in: frameBody(`{"jsonrpc":"2.0","id":"m","method":["x"]}`) + good, passed: []string{"shutdown"},
			answers: []answer{{`"m"`, -32600, "the method must be a non-empty string"}}},
		{name: "a null id", in: frameBody(`{"jsonrpc":"2.0","id":null,"method":"shutdown"}`) + good, passed: []string{"shutdown"},
			answers: []answer{{"null", -32600, `shutdown: the id is null: a request's id is a string or an integer, and a notification has no "id"`}}},
		{name: "a response with a null id is dropped", in: frameBody(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}}`) + good, passed: []string{"shutdown"}},
		{name: "a response with a float id is dropped", in: frameBody(`{"jsonrpc":"2.0","id":2.5,"result":1}`) + good, passed: []string{"shutdown"}},
		{name: "over the limit", in: frameBody(`{"jsonrpc":"2.0","params":{"text":"`+strings.Repeat("x", 200)+`"},"id":"big","method":"textDocument/didOpen"}`) + good,
			passed: []string{"shutdown"}, answers: []answer{{`"big"`, -32600, "textDocument/didOpen: the message is 281 bytes, over reika-lsp's limit of 256 bytes; it was skipped"}}},
		{name: "a response over the limit is dropped", in: frameBody(`{"jsonrpc":"2.0","id":7,"result":"`+strings.Repeat("x", 300)+`"}`) + good, passed: []string{"shutdown"}},
		{name: "EOF in a header", in: good + "Content-Len", passed: []string{"shutdown"}, broken: "the input ended inside a message's header: unexpected EOF"},
		{name: "EOF in a body", in: good + "Content-Length: 10\r\n\r\n{}", passed: []string{"shutdown"}, broken: "the input ended inside a message of 10 bytes: unexpected EOF"},
		{name: "EOF in a body over the limit", in: "Content-Length: 1000\r\n\r\n{\"id\":1", broken: "the input ended inside a message of 1000 bytes: unexpected EOF"},
		{name: "no Content-Length", in: "Content-Type: x\r\n\r\n{}", broken: "a message without Content-Length"},
		{name: "bad Content-Length", in: "Content-Length: ten\r\n\r\n" + good, broken: `a bad Content-Length: "ten"`},
		{name: "negative Content-Length", in: "Content-Length: -1\r\n\r\n" + good, broken: `a bad Content-Length: "-1"`},
		{name: "no colon", in: "hello\r\n\r\n", broken: `a header line without a colon: "hello"`},
		{name: "a header line too long", in: strings.Repeat("x", 5000), broken: "a header line longer than 4096 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, w := newTestStream(tc.in, 256)
			passed, answers, err := readAll(t, s, w)
			if tc.broken == "" && err != io.EOF {
				t.Errorf("the stream ended with %v, want a clean EOF", err)
			}
			if tc.broken != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.broken)) {
				t.Errorf("the stream ended with %v, want %q", err, tc.broken)
			}
			if !reflect.DeepEqual(passed, tc.passed) {
				t.Errorf("passed on %q, want %q", passed, tc.passed)
			}
			if !reflect.DeepEqual(answers, tc.answers) {
				t.Errorf("answered %+v, want %+v", answers, tc.answers)
			}
		})
	}
}

// A body over the limit for requests is taken whole only for a method
// that carries a document's text, wherever its "method" key is; any other
// is refused, with its id, without being decoded.
func TestStreamLimitByMethod(t *testing.T) {
	const bulk, other = 1024, 128
	text := strings.Repeat(`x\"y\\`, 60) // escapes, so that a held string must come out whole
	body := func(head, tail string, n int) string {
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	good := frameBody(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`)
	tests := []struct {
		name    string
		body    string
		passed  []string
		answers []answer
	}{
		{name: "didOpen, method first", body: `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"text":"` + text + `"}}}`,
			passed: []string{"textDocument/didOpen", "shutdown"}},
		{name: "didOpen, method last", body: `{"params":{"textDocument":{"text":"` + text + `"}},"jsonrpc":"2.0","method":"textDocument/didOpen"}`,
			passed: []string{"textDocument/didOpen", "shutdown"}},
		{name: "didChange, method after nested params", body: `{"jsonrpc":"2.0","params":{"contentChanges":[{"text":"` + text + `"},{"range":{"start":{"line":1}}}]},"method":"textDocument/didChange"}`,
			passed: []string{"textDocument/didChange", "shutdown"}},
		{name: "executeCommand, id and method first", body: body(`{"jsonrpc":"2.0","id":5,"method":"workspace/executeCommand","params":{"command":"reika.ask","arguments":[{"instruction":"`, `"}]}}`, 500),
			passed: []string{"shutdown"}, answers: []answer{{"5", -32600, "workspace/executeCommand: the message is 500 bytes, over reika-lsp's limit of 128 bytes for workspace/executeCommand; it was skipped"}}},
		{name: "executeCommand, method first, id last", body: body(`{"jsonrpc":"2.0","method":"workspace/executeCommand","params":{"command":"reika.ask","arguments":[{"instruction":"`, `"}]},"id":"e"}`, 500),
			passed: []string{"shutdown"}, answers: []answer{{`"e"`, -32600, "workspace/executeCommand: the message is 500 bytes, over reika-lsp's limit of 128 bytes for workspace/executeCommand; it was skipped"}}},
		{name: "executeCommand, method last", body: body(`{"jsonrpc":"2.0","params":{"command":"reika.ask","arguments":[{"instruction":"`, `"}]},"method":"workspace/executeCommand","id":6}`, 500),
			passed: []string{"shutdown"}, answers: []answer{{"6", -32600, "workspace/executeCommand: the message is 500 bytes, over reika-lsp's limit of 128 bytes for workspace/executeCommand; it was skipped"}}},
		{name: "a null id", body: body(`{"jsonrpc":"2.0","id":null,"method":"workspace/executeCommand","params":{"command":"`, `"}}`, 500),
			passed: []string{"shutdown"}, answers: []answer{{"null", -32600, "workspace/executeCommand: the message is 500 bytes, over reika-lsp's limit of 128 bytes for workspace/executeCommand; it was skipped"}}},
		{name: "a response is dropped", body: body(`{"jsonrpc":"2.0","id":7,"result":"`, `"}`, 500), passed: []string{"shutdown"}},
		{name: "no method", body: body(`{"jsonrpc":"2.0","params":"`, `"}`, 500),
			passed: []string{"shutdown"}, answers: []answer{{"null", -32600, "the message is 500 bytes, over reika-lsp's limit of 128 bytes for a message without a method; it was skipped"}}},
		{name: "didOpen over its own limit", body: body(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"text":"`, `"}}}`, 2000),
			passed: []string{"shutdown"}, answers: []answer{{"null", -32600, "textDocument/didOpen: the message is 2000 bytes, over reika-lsp's limit of 1024 bytes; it was skipped"}}},
		{name: "two methods, the bulky one first", body: body(`{"jsonrpc":"2.0","id":8,"method":"textDocument/didOpen","method":"workspace/executeCommand","params":"`, `"}`, 500),
			passed: []string{"shutdown"}, answers: []answer{{"8", -32600, "workspace/executeCommand: an ambiguous message of 500 bytes (duplicate method keys?)"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if n := len(tc.body); n <= other || n > bulk && tc.name != "didOpen over its own limit" {
				t.Fatalf("a body of %d bytes tests nothing here", n)
			}
			w := &wire{in: strings.NewReader(frameBody(tc.body) + good)}
			s := newStream(w, bulk, other, log.New(io.Discard, "", 0))
			var passed []string
			for {
				msg, _, err := s.Read(context.Background())
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("Read = %v", err)
				}
				req := msg.(jsonrpc2.Request)
				passed = append(passed, req.Method())
				if want, _ := jsonrpc2.DecodeMessage([]byte(tc.body)); req.Method() != "shutdown" && !reflect.DeepEqual(msg, want) {
					t.Errorf("passed on %#v, the library decodes the body as %#v", msg, want)
				}
			}
			if !reflect.DeepEqual(passed, tc.passed) {
				t.Errorf("passed on %q, want %q", passed, tc.passed)
			}
			if answers := parseAnswers(t, w.out.Bytes()); !reflect.DeepEqual(answers, tc.answers) {
				t.Errorf("answered %+v, want %+v", answers, tc.answers)
			}
		})
	}
}

// generated is a body of n bytes made as it is read: an object whose
// params (a long string) come before its id and method.
type generated struct {
	head, tail string
	n, off     int64
}

func (g *generated) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	i := 0
	for ; i < len(p) && g.off < g.n; i++ {
		switch {
		case g.off < int64(len(g.head)):
			p[i] = g.head[g.off]
		case g.off >= g.n-int64(len(g.tail)):
			p[i] = g.tail[g.off-(g.n-int64(len(g.tail)))]
		default:
			p[i] = 'x'
		}
		g.off++
	}
	return i, nil
}

// A message over the limit is skipped in constant memory, and answered
// with the id that came after its params.
func TestStreamSkipsLargeMessage(t *testing.T) {
	const limit, size = 8 << 20, 32 << 20 // the real 64 MiB and a 100 MiB message took five seconds under -race
	body := &generated{head: `{"jsonrpc":"2.0","params":{"text":"`, tail: `"},"method":"workspace/executeCommand","id":41}`, n: size}
	good := frameBody(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`)
	w := &wire{in: io.MultiReader(strings.NewReader(fmt.Sprintf("Content-Length: %d\r\n\r\n", size)), body, strings.NewReader(good))}
	s := newStream(w, limit, limit/16, log.New(io.Discard, "", 0))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	msg, _, err := s.Read(context.Background())
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if req, ok := msg.(jsonrpc2.Request); !ok || req.Method() != "shutdown" {
		t.Errorf("the message after the large one = %v, want shutdown", msg)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("skipping a message of %d MiB allocated %d bytes, want under 1 MiB", size>>20, alloc)
	}
	want := []answer{{"41", -32600, fmt.Sprintf("workspace/executeCommand: the message is %d bytes, over reika-lsp's limit of 8 MiB; it was skipped", size)}}
	if got := parseAnswers(t, w.out.Bytes()); !reflect.DeepEqual(got, want) {
		t.Errorf("answered %+v, want %+v", got, want)
	}
}

// FuzzStreamBody frames any body, followed by a good message: the stream
// must not panic, must pass a body the library takes on unchanged and
// answer nothing, must answer any other body exactly once (a response
// never), and must read the good message after it. With limits below
// the body's size, the body is refused the same way, skimmed; with only
// the limit for requests below it, only didOpen or didChange may pass,
// unchanged (held while it is skimmed). The seeds
// (testdata/fuzz/FuzzStreamBody) are good messages and the garbage
// clients were seen to send.
func FuzzStreamBody(f *testing.F) {
	const after = `{"jsonrpc":"2.0","id":"after","method":"shutdown"}`
	good := frameBody(after)
	f.Fuzz(func(t *testing.T, body []byte) {
		in := fmt.Sprintf("Content-Length: %d\r\n\r\n%s%s", len(body), body, good)
		want, wantErr := jsonrpc2.DecodeMessage(body)
		short := int64(len(body)) - 1
		for _, lim := range []struct{ bulk, other int64 }{{maxMessage, maxRequest}, {short, short}, {maxMessage, short}} {
			if lim.other < int64(len(after)) {
				continue // the good message must pass
			}
			w := &wire{in: strings.NewReader(in)}
			s := newStream(w, lim.bulk, lim.other, log.New(io.Discard, "", 0))
			msg, _, err := s.Read(context.Background())
			if err != nil {
				t.Fatalf("limits %+v: Read = %v after a well-framed body", lim, err)
			}
			answers := parseAnswers(t, w.out.Bytes())
			passed := !isAfter(msg)
			if passed {
				if req, _ := msg.(jsonrpc2.Request); int64(len(body)) > lim.bulk || int64(len(body)) > lim.other && (req == nil || !bulky[req.Method()]) {
					t.Fatalf("limits %+v: a body of %d bytes was passed on: %#v", lim, len(body), msg)
				}
				if wantErr != nil || !reflect.DeepEqual(msg, want) {
					t.Fatalf("passed on %#v, the library decodes %#v, %v", msg, want, wantErr)
				}
				if len(answers) != 0 {
					t.Fatalf("a body passed on was answered too: %+v", answers)
				}
				if msg, _, err = s.Read(context.Background()); err != nil || !isAfter(msg) {
					t.Fatalf("after a good body: %v, %v; want the next message", msg, err)
				}
				continue
			}
			// A skimmed body is read by key as it comes, not checked:
			// one that starts as an object may read as a response.
			skimmed := lim.other < int64(len(body))
			if len(answers) > 1 || len(answers) == 0 && !looksLikeResponse(body) && (!skimmed || !startsObject(body)) {
				t.Fatalf("limits %+v: %q got %d answers, want one (none for a response)", lim, body, len(answers))
			}
		}
	})
}

func isAfter(msg jsonrpc2.Message) bool {
	c, ok := msg.(*jsonrpc2.Call)
	return ok && fmt.Sprint(c.ID()) == "after"
}

func startsObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// looksLikeResponse is a JSON object with no "method".
func looksLikeResponse(body []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	_, method := m["method"]
	return !method
}

// FuzzStreamWire feeds any bytes as the wire: the stream must not panic,
// must end (every input ends), and must answer at most once per message
// it read past. The seeds (testdata/fuzz/FuzzStreamWire) are good
// messages, garbage between them and broken framing.
func FuzzStreamWire(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		s, w := newTestStream(string(in), 256)
		reads := 0
		for {
			_, _, err := s.Read(context.Background())
			if err != nil {
				break
			}
			reads++
			if reads > len(in) {
				t.Fatalf("more messages than bytes")
			}
		}
		if n := len(parseAnswers(t, w.out.Bytes())); n > strings.Count(string(in), "\n") {
			t.Fatalf("%d answers to %q", n, in)
		}
	})
}

// BenchmarkStreamRefusesHugeBody reads a 50 MiB workspace/executeCommand
// body and the message after it: B/op is what refusing it allocates. The
// method before the params (VS Code, Helix, eglot) is read first and the
// body never held; after them (a Lua table from Neovim's encoder may come
// out so), the body is held once, at its length, until the method is read.
func BenchmarkStreamRefusesHugeBody(b *testing.B) {
	const size = 50 << 20
	good := frameBody(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`)
	for _, tc := range []struct{ name, head, tail string }{
		{"method first", `{"jsonrpc":"2.0","id":41,"method":"workspace/executeCommand","params":{"command":"reika.ask","arguments":[{"instruction":"`, `"}]}}`},
		{"method last", `{"jsonrpc":"2.0","params":{"command":"reika.ask","arguments":[{"instruction":"`, `"}]},"method":"workspace/executeCommand","id":41}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				w := &wire{in: io.MultiReader(strings.NewReader(fmt.Sprintf("Content-Length: %d\r\n\r\n", size)),
					&generated{head: tc.head, tail: tc.tail, n: size}, strings.NewReader(good))}
				s := newStream(w, maxMessage, maxRequest, log.New(io.Discard, "", 0))
				if msg, _, err := s.Read(context.Background()); err != nil || msg.(jsonrpc2.Request).Method() != "shutdown" {
					b.Fatalf("after the huge body: %v, %v", msg, err)
				}
				if w.out.Len() == 0 {
					b.Fatal("the huge body was not answered")
				}
			}
		})
	}
}
