package lsptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika/lsp"
)

// inbox is an unbounded queue between the reader and the dispatcher, so
// that reading never waits for a write (net.Pipe is synchronous: a reader
// that writes could deadlock with a server that writes).
type inbox struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queue  [][]byte
	closed bool
}

func (e *Editor) readLoop(r *bufio.Reader) {
	for {
		body, err := readMessage(r)
		e.inbox.mu.Lock()
		if err != nil {
			e.inbox.closed = true
			e.inbox.cond.Broadcast()
			e.inbox.mu.Unlock()
			return
		}
		e.inbox.queue = append(e.inbox.queue, body)
		e.inbox.cond.Broadcast()
		e.inbox.mu.Unlock()
	}
}

func (e *Editor) dispatchLoop() {
	defer close(e.dispatched)
	for {
		e.inbox.mu.Lock()
		for len(e.inbox.queue) == 0 && !e.inbox.closed {
			e.inbox.cond.Wait()
		}
		if len(e.inbox.queue) == 0 {
			e.inbox.mu.Unlock()
			e.pmu.Lock()
			for id, ch := range e.pending {
				close(ch)
				delete(e.pending, id)
			}
			e.pmu.Unlock()
			return
		}
		body := e.inbox.queue[0]
		e.inbox.queue = e.inbox.queue[1:]
		e.inbox.mu.Unlock()
		e.dispatch(body)
	}
}

func (e *Editor) write(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if e.cfg.Caps.EscapeSlashes {
		body = escapeSlashes(body)
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	_, err = e.w.Write(frame(body))
	return err
}

func (e *Editor) dispatch(body []byte) {
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		e.violation("the server sent a message that is not JSON-RPC: %v: %.200s", err, body)
		return
	}
	switch {
	case m.isResponse():
		e.pmu.Lock()
		ch := e.pending[idKey(m.ID)]
		delete(e.pending, idKey(m.ID))
		raw := e.rawIDs[idKey(m.ID)]
		delete(e.rawIDs, idKey(m.ID))
		e.pmu.Unlock()
		if ch == nil && (raw || idKey(m.ID) == "null") {
			// An answer to a message sent with Raw (null: to one whose
			// id could not be read) is what the user's editor would log.
			e.record("(answer)", body, describeAnswer(&m))
			return
		}
		if ch == nil {
			e.violation("a response to no request: id %s", m.ID)
			return
		}
		ch <- &m
	case m.isRequest():
		// The request is recorded as it arrives; what the user saw and
		// did about it, once it is answered (after anything the user did
		// first).
		e.record(m.Method, m.Params, "")
		result, rpcErr, line := e.serveRequest(&m)
		if line != "" {
			e.record(m.Method, nil, line)
		}
		if result == errNoAnswer {
			return
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		if rpcErr != nil {
			reply["error"] = rpcErr
		} else {
			reply["result"] = result
		}
		if err := e.write(reply); err != nil && !e.shut {
			e.violation("could not answer %s: %v", m.Method, err)
		}
	case m.Method != "":
		e.record(m.Method, m.Params, describe(m.Method, m.Params))
	default:
		e.violation("a message that is neither request, response nor notification: %.200s", body)
	}
}

func idKey(id json.RawMessage) string { return strings.TrimSpace(string(id)) }

// Pending is a request on its way.
type Pending struct {
	e      *Editor
	Method string
	ID     json.RawMessage
	ch     chan *message
}

// Go sends a request without waiting for its answer.
func (e *Editor) Go(method string, params any) *Pending {
	e.pmu.Lock()
	e.nextID++
	var id json.RawMessage
	if e.cfg.Caps.StringIDs {
		id = json.RawMessage(strconv.Quote(fmt.Sprintf("c%d", e.nextID)))
	} else {
		id = json.RawMessage(strconv.Itoa(e.nextID))
	}
	ch := make(chan *message, 1)
	e.pending[idKey(id)] = ch
	e.pmu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if err := e.write(msg); err != nil {
		// The reader closes every pending channel when the server's
		// output ends, which may be before this write failed: close it
		// only if it is still ours.
		e.pmu.Lock()
		_, ours := e.pending[idKey(id)]
		delete(e.pending, idKey(id))
		e.pmu.Unlock()
		if ours {
			close(ch)
		}
	}
	return &Pending{e: e, Method: method, ID: id, ch: ch}
}

// Wait waits (bounded) for the answer and decodes its result into
// result when not nil. An error answer is returned as *RPCError.
func (p *Pending) Wait(result any) (json.RawMessage, error) {
	p.e.t.Helper()
	return p.wait(result, p.e.timeout, true)
}

func (p *Pending) wait(result any, timeout time.Duration, fatal bool) (json.RawMessage, error) {
	p.e.t.Helper()
	select {
	case m, ok := <-p.ch:
		if !ok {
			return nil, fmt.Errorf("%s: the connection closed before the answer", p.Method)
		}
		if m.Error != nil {
			return nil, m.Error
		}
		if result != nil && len(m.Result) > 0 {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return m.Result, fmt.Errorf("%s: decode %s: %w", p.Method, m.Result, err)
			}
		}
		return m.Result, nil
	case <-time.After(timeout):
		if fatal {
			p.e.t.Fatalf("no answer to %s (id %s) within %v\n%s", p.Method, p.ID, timeout, p.e.Dump())
		}
		return nil, fmt.Errorf("no answer to %s within %v", p.Method, timeout)
	}
}

// Call sends a request and waits (bounded) for its answer.
func (e *Editor) Call(method string, params, result any) (json.RawMessage, error) {
	e.t.Helper()
	return e.Go(method, params).Wait(result)
}

func (e *Editor) callTimeout(method string, params, result any, d time.Duration) (json.RawMessage, error) {
	return e.Go(method, params).wait(result, d, false)
}

// Sync returns once the server has handled everything sent before it,
// and everything it sent while doing so has been recorded: the server
// handles notifications in order, so the answer to a request sent after
// them (one it does not know, answered at once with MethodNotFound)
// follows whatever they made it send.
func (e *Editor) Sync() {
	e.t.Helper()
	if _, err := e.Call("reika-lsptest/sync", nil, nil); err == nil {
		e.t.Fatalf("reika-lsptest/sync: the server answered a method it cannot know")
	}
}

// Notify sends a notification.
func (e *Editor) Notify(method string, params any) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if err := e.write(msg); err != nil && !e.shut {
		e.t.Errorf("notify %s: %v", method, err)
	}
}

// Raw writes data to the server as it is: garbage, or messages the
// editor would not send. The answers to the requests in it (those framed
// well enough to read their id) and the answers with a null id are
// recorded as lines, "answer id ID: error CODE: MESSAGE"; a second answer
// to one id is a violation.
func (e *Editor) Raw(data []byte) {
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		body, err := readMessage(r)
		if err != nil {
			break
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil && len(m.ID) > 0 && idKey(m.ID) != "null" && m.Method != nil {
			e.pmu.Lock()
			e.rawIDs[idKey(m.ID)] = true
			e.pmu.Unlock()
		}
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if _, err := e.w.Write(data); err != nil && !e.shut {
		e.t.Errorf("raw write: %v", err)
	}
}

// describeAnswer is the one-line form of an answer to a raw message.
func describeAnswer(m *message) string {
	if m.Error != nil {
		return fmt.Sprintf("answer id %s: error %d: %s", m.ID, m.Error.Code, m.Error.Message)
	}
	return fmt.Sprintf("answer id %s: %s", m.ID, m.Result)
}

// CancelRequest sends $/cancelRequest for a request, with its id as it
// was sent (a number unless Caps.StringIDs).
func (e *Editor) CancelRequest(p *Pending) {
	e.Notify("$/cancelRequest", map[string]any{"id": p.ID})
}

// Exec runs workspace/executeCommand and returns its result.
func (e *Editor) Exec(command string, args ...any) (json.RawMessage, error) {
	e.t.Helper()
	return e.ExecAsync(command, args...).Wait(nil)
}

// ExecAsync sends workspace/executeCommand without waiting.
func (e *Editor) ExecAsync(command string, args ...any) *Pending {
	if args == nil {
		args = []any{}
	}
	return e.Go("workspace/executeCommand", map[string]any{"command": command, "arguments": args})
}

// ServerPID is the process id of the server started from Config.Binary;
// 0 for a server in the test's own process.
func (e *Editor) ServerPID() int { return e.pid }

// connectInProcess serves lsp.Serve on one end of a net.Pipe, with env as
// its environment, and returns the editor's end to read from.
func (e *Editor) connectInProcess(env map[string]string) io.Reader {
	client, server := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() {
		e.serveDone <- lsp.Serve(ctx, server, lsp.Options{
			Getenv:        func(k string) string { return env[k] },
			StateDir:      e.StateDir,
			Log:           e.serverLog,
			ApplyTimeout:  e.cfg.ApplyTimeout,
			ClientTimeout: e.cfg.ClientTimeout,
			RetryQuiet:    e.cfg.RetryQuiet,
			RetryWait:     e.cfg.RetryWait,
			VerifyTimeout: e.cfg.VerifyTimeout,
		})
	}()
	e.w, e.conn = client, client
	return client
}

// connectBinary starts cfg.Binary in the workspace with env (and PATH and
// HOME) as its whole environment, its stderr into the server log, and
// returns its stdout.
func (e *Editor) connectBinary(env map[string]string) io.Reader {
	t := e.t
	cmd := exec.Command(e.cfg.Binary)
	cmd.Dir = e.Root
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = e.serverLog
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", e.cfg.Binary, err)
	}
	e.cancel = func() { cmd.Process.Kill() }
	e.pid = cmd.Process.Pid
	go func() { e.serveDone <- cmd.Wait() }()
	e.w, e.conn = stdin, stdin
	return stdout
}
