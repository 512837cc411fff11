package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
)

// raw is a server spoken to in bytes: what the SDK does with input no
// client library would send.
type raw struct {
	in    *io.PipeWriter
	lines *bufio.Scanner
	done  chan error
}

func (w *world) raw(t *testing.T) *raw {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	r := &raw{in: cw, lines: bufio.NewScanner(cr), done: make(chan error, 1)}
	r.lines.Buffer(nil, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(30*time.Second))
	go func() {
		r.done <- Serve(ctx, sr, sw, Options{Getenv: func(k string) string { return w.env[k] }, StateDir: w.stateDir, Log: io.Discard})
		sw.Close()
	}()
	t.Cleanup(func() { cw.Close(); cancel() })
	return r
}

func (r *raw) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(r.in, s+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (r *raw) next(t *testing.T) map[string]any {
	t.Helper()
	if !r.lines.Scan() {
		t.Fatalf("the server closed its output: %v", r.lines.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(r.lines.Bytes(), &m); err != nil {
		t.Fatalf("not JSON: %q", r.lines.Text())
	}
	return m
}

// Defect 1: the SDK gives a line that is not JSON no answer (JSON-RPC
// wants a -32700 with a null id). Reika's reader answers it (lines, in
// server.go) and passes the SDK only JSON; the connection goes on.
func TestALineThatIsNotJSONGetsAParseError(t *testing.T) {
	r := newWorld(t, sim.Config{}, nil).raw(t)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1`)
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`)
	// The two answers in either order: the parse error goes beside the
	// reading, not in its turn.
	parsed, answered := false, false
	for range 2 {
		m := r.next(t)
		e, _ := m["error"].(map[string]any)
		switch {
		case m["id"] == nil && e != nil && e["code"] == float64(-32700):
			parsed = true
		case m["id"] == float64(2) && m["result"] != nil:
			answered = true
		default:
			t.Fatalf("answer %v, want a parse error (-32700) with a null id, and the answer to the next line", m)
		}
	}
	if !parsed || !answered {
		t.Errorf("parse error %v, the next line answered %v", parsed, answered)
	}
}

// Defect 2: a line over 10 MiB ends the connection.
func TestSDKEndsTheConnectionOnAHugeLine(t *testing.T) {
	r := newWorld(t, sim.Config{}, nil).raw(t)
	huge := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"x":"` + strings.Repeat("a", 11<<20) + `"}}}`
	go io.WriteString(r.in, huge+"\n")
	select {
	case <-r.done:
	case <-time.After(testslow.Scale(20 * time.Second)):
		t.Fatal("the connection lives on after a line over 10 MiB: defect 2 is mended")
	}
}

// plainError is a Server whose session/new fails with a plain error.
type plainError struct{ *Server }

func (plainError) NewSession(context.Context, sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	return sdk.NewSessionResponse{}, errors.New("the reason")
}

// Defect 3: an error a handler returns reaches the client as "Internal
// error" with the reason in data; failure makes the reason the message.
func TestSDKHidesTheReason(t *testing.T) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	defer cw.Close()
	defer sw.Close()
	s := &Server{opts: Options{Log: io.Discard}, ctx: context.Background(), sessions: map[sdk.SessionId]*session{}}
	s.conn = sdk.NewAgentSideConnection(plainError{s}, sw, sr)
	cc := sdk.NewClientSideConnection(&client{}, cw, cr)
	ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(10*time.Second))
	defer cancel()
	_, err := cc.NewSession(ctx, sdk.NewSessionRequest{Cwd: "/tmp", McpServers: []sdk.McpServer{}})
	re, ok := err.(*sdk.RequestError)
	if !ok || re.Message != "Internal error" || !strings.Contains(fmt.Sprint(re.Data), "the reason") {
		t.Fatalf("a plain error reached the client as %#v: defect 3 is mended", err)
	}
	if f, ok := failure(errors.New("the reason")).(*sdk.RequestError); !ok || f.Message != "the reason" {
		t.Errorf("failure = %v, want the reason as the message", f)
	}
}

// The engine down: session/new fails with what happened and what to do,
// in one line.
func TestEngineDown(t *testing.T) {
	w := newWorld(t, sim.Config{}, nil)
	w.env["REIKA_ENDPOINT"] = "http://127.0.0.1:1/v1"
	cn := w.connect(&client{})
	_, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: w.ws, McpServers: []sdk.McpServer{}})
	re, ok := err.(*sdk.RequestError)
	if !ok || !strings.Contains(re.Message, "127.0.0.1:1") {
		t.Fatalf("session/new against no engine = %v; want the reason as the message", err)
	}
	t.Logf("engine down: %s", re.Message)
	if strings.Contains(re.Message, "\n") {
		t.Errorf("the message is several lines: %q", re.Message)
	}
}

// The engine goes away after the session started: the prompt fails with
// what happened and what to do, in one line.
func TestEngineGoneMidSession(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "Back."}}}, nil)
	cn := w.connect(&client{})
	id := cn.newSession(t, w.ws)
	w.http.Close()
	_, err := cn.prompt(t, id, "Anything?")
	re, ok := err.(*sdk.RequestError)
	if !ok || !strings.HasPrefix(re.Message, "the run stopped: ") || !strings.Contains(re.Message, "unreachable") || strings.Contains(re.Message, "\n") {
		t.Fatalf("prompt with the engine gone = %v", err)
	}
	t.Logf("engine gone: %s", re.Message)
}
