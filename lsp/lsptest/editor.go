package lsptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp"
)

// DefaultTimeout bounds every wait of the harness.
const DefaultTimeout = 10 * time.Second

// Caps are what the fake editor tells the server it can do.
type Caps struct {
	// Name is clientInfo.name.
	Name string
	// Progress: window.workDoneProgress.
	Progress bool
	// ApplyEdit: workspace.applyEdit.
	ApplyEdit bool
	// DocumentChanges, Annotations, ResourceOperations:
	// workspace.workspaceEdit.{documentChanges, changeAnnotationSupport,
	// resourceOperations}.
	DocumentChanges    bool
	Annotations        bool
	ResourceOperations []string
	// CodeActionLiteral: textDocument.codeAction.codeActionLiteralSupport.
	CodeActionLiteral bool
	// ShowDocument: window.showDocument.support.
	ShowDocument bool
	// MessageActions: window.showMessage.messageActionItem.
	MessageActions bool
	// PositionEncodings are offered in general.positionEncodings; nil
	// offers nothing (UTF-16, as LSP says).
	PositionEncodings []string
	// StringIDs sends request ids as strings ("c1"); else as numbers, as
	// VS Code and Neovim do.
	StringIDs bool
	// EscapeSlashes writes "/" as "\/" in every message, as Neovim 0.7.
	EscapeSlashes bool
	// JunkValueSet sends Neovim 0.7's codeActionKind.valueSet, which mixes
	// the kinds' names with their values.
	JunkValueSet bool
	// Neovim behaves as Neovim does with workspace edits (0.7 to 0.11):
	// it reads documentChanges though it does not advertise them, skips a
	// text document edit for a version its buffer has passed and still
	// answers applied:true, and sends the user's typing only with its
	// next didChange (TypePending), together with what an edit changed.
	// It opens buffers at version 0 and checks only versions above 0.
	Neovim bool
	// Eglot behaves as eglot does: it sends every change (typing and the
	// edits it applied) 0.5 s after the last one
	// (eglot-send-changes-idle-time), and answers an edit for a version
	// it has passed with an error, as "1.9" (Emacs 28) does: it counts a
	// version at each change. "1.17" (Emacs 30) counts a version only
	// when it sends the change, so it applies an edit over typing it has
	// not sent yet, at the positions it was sent for. eglot 1.9 sends no
	// clientInfo; later ones send Name "Eglot" and their version.
	Eglot string
	// Version is clientInfo.version ("1" when empty).
	Version string
	// HierarchicalSymbols:
	// textDocument.documentSymbol.hierarchicalDocumentSymbolSupport.
	HierarchicalSymbols bool
}

// Full is a client that supports everything the server can use, as VS
// Code does.
func Full() Caps {
	return Caps{Name: "lsptest-full", Progress: true, ApplyEdit: true, DocumentChanges: true, Annotations: true,
		ResourceOperations: []string{"create", "rename", "delete"}, CodeActionLiteral: true, ShowDocument: true,
		MessageActions: true}
}

// Bare is a client with none of the optional capabilities (as Vim's ALE):
// no progress, no applyEdit, no code action literals, no showDocument.
func Bare() Caps { return Caps{Name: "lsptest-bare"} }

// Config describes the editor, its workspace and the engine behind the
// server.
type Config struct {
	Caps Caps
	// Files are the workspace's files, by slash-separated relative path.
	Files map[string]string
	// SaveAll writes every open document to disk after each workspace
	// edit it applies, as a user who saves everything (:wa) at once.
	SaveAll bool
	// Root, when set, is the workspace folder (an absolute path the test
	// laid out); else a fresh "ws" directory.
	Root string
	// Engine configures the simulated engine (window, script, faults);
	// its Log is taken by the harness. A zero Ctx means 16384.
	Engine sim.Config
	// Env adds to the server's environment (after the harness's own
	// REIKA_ENDPOINT, XDG_* and REIKA_WARMUP=0).
	Env map[string]string
	// InitializationOptions are sent with initialize.
	InitializationOptions map[string]any
	// Front, when set, is given the simulated engine's base URL (without
	// /v1) and returns the base URL the server is pointed at instead: a
	// proxy in front of the engine.
	Front func(engineURL string) string
	// Binary, when set, is a built reika-lsp started over stdio instead
	// of lsp.Serve over net.Pipe.
	Binary string
	// Timeout bounds every wait; zero means DefaultTimeout.
	Timeout time.Duration
	// After, when set, is an earlier editor of the same test whose
	// workspace, state directory and engine this one takes over: a
	// restart of the editor (and so of the server) over the same state.
	// Files are written over the workspace as usual.
	After *Editor
	// NewEngine, with After, starts a new engine from Engine instead of
	// taking the earlier editor's: the engine restarted too, its cache
	// gone (but for what it saved under Engine.SlotSavePath).
	NewEngine bool
	// Ignore names server requests the editor never answers (a client
	// that advertises a capability and then hangs).
	Ignore []string
	// ApplyTimeout is the server's bound on applyEdit and
	// showMessageRequest, ClientTimeout on its other requests (in-process
	// only); zero leaves the server's.
	ApplyTimeout, ClientTimeout time.Duration
}

// Event is something the server sent, or a note a test added.
type Event struct {
	Seq    int
	At     time.Time
	Method string          // "" for a note
	Params json.RawMessage // as received
	// Line is what the user saw, in one line; "" for what does not show
	// (reika/status, workDoneProgress/create).
	Line string
}

// ApplyAnswer is how the editor answers one workspace/applyEdit.
type ApplyAnswer struct {
	// Before runs first, on the editor's goroutine: the user typing while
	// the edit was on its way. It must not fail the test (use TryEdit).
	Before func(e *Editor) error
	// Refuse, when set, answers applied:false with this reason and
	// applies nothing, as a user declining the edit.
	Refuse string
	// Ignore never answers, as Vim's ALE does with every request.
	Ignore bool
	// Undo is the user undoing the edit at once: the undo goes in the
	// same didChange as the edit (Neovim's debounce, eglot's idle time
	// merge them), after the edit's own content changes.
	Undo bool
	// Revert is the user reverting the buffer from disk before the
	// editor sent the edit: a didClose and a didOpen of the file's text,
	// as eglot does around revert-buffer; the edit's changes are never
	// sent.
	Revert bool
}

// Editor is a fake LSP client connected to a real server over a real
// transport. It keeps its own copies of the documents it opened, applies
// the workspace edits it receives to them (checking versions, ranges and
// its own capabilities), answers the server's requests, and records
// everything the server sends. Its methods are for the test's goroutine;
// the server's messages are handled on the editor's own.
type Editor struct {
	t        testing.TB
	cfg      Config
	timeout  time.Duration
	Root     string // the workspace folder
	StateDir string // where the server keeps transcripts
	Engine   *Engine
	dir      string // the temporary directory that holds them all
	// Encoding is the position encoding the server chose.
	Encoding string
	// InitializeResult is the server's answer to initialize.
	InitializeResult json.RawMessage

	w    io.Writer
	wmu  sync.Mutex
	conn io.Closer

	pmu     sync.Mutex
	nextID  int
	pending map[string]chan *message
	rawIDs  map[string]bool // ids of requests sent with Raw, not answered yet

	inbox inbox

	mu         sync.Mutex
	docs       map[string]*Document // by absolute path
	events     []Event
	changed    chan struct{}
	applyQ     []ApplyAnswer
	choose     func(message string, actions []string) string
	tokens     []string // progress tokens the server created
	shown      []string // paths the server opened with showDocument
	violations []string

	serverLog  *LockedBuffer
	serveDone  chan error
	serveErr   error
	served     bool
	cancel     context.CancelFunc
	dispatched chan struct{}
	shut       bool
	idle       *time.Timer // eglot's: sends the pending changes
	undoing    bool        // the edit being applied is undone at once (ApplyAnswer.Undo)
}

// Document is the editor's copy of an open document.
type Document struct {
	Path    string // absolute
	URI     string
	Version int32
	Text    string
	// pending are changes made and not yet sent (TypePending): the next
	// didChange carries them first.
	pending []map[string]any
	// sent is the version of the last didOpen or didChange sent.
	sent int32
}

// Start creates the workspace, starts the engine and the server, and
// initializes the connection; the test's cleanup shuts everything down.
func Start(t testing.TB, cfg Config) *Editor {
	t.Helper()
	e := &Editor{
		t: t, cfg: cfg, timeout: cfg.Timeout,
		pending: map[string]chan *message{}, rawIDs: map[string]bool{}, docs: map[string]*Document{},
		changed: make(chan struct{}), serverLog: &LockedBuffer{},
		serveDone: make(chan error, 1), dispatched: make(chan struct{}),
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	e.inbox.cond = sync.NewCond(&e.inbox.mu)
	tmp := t.TempDir()
	if cfg.After != nil {
		tmp = cfg.After.dir
	}
	e.dir = tmp
	e.Root = filepath.Join(tmp, "ws")
	if cfg.Root != "" {
		e.Root = cfg.Root
	}
	xdgState := filepath.Join(tmp, "xdg-state")
	e.StateDir = filepath.Join(xdgState, "reika", "sessions")
	for _, dir := range []string{e.Root, e.StateDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range cfg.Files {
		abs := filepath.Join(e.Root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ecfg := cfg.Engine
	if ecfg.Ctx == 0 {
		ecfg.Ctx = 16384
	}
	if cfg.After != nil && !cfg.NewEngine {
		e.Engine = cfg.After.Engine
	} else {
		e.Engine = StartEngine(t, ecfg, e.timeout)
	}

	endpoint := e.Engine.URL
	if cfg.Front != nil {
		endpoint = cfg.Front(endpoint)
	}
	env := map[string]string{
		"REIKA_ENDPOINT":  endpoint + "/v1",
		"XDG_CONFIG_HOME": filepath.Join(tmp, "xdg-config"),
		"XDG_STATE_HOME":  xdgState,
		"XDG_CACHE_HOME":  filepath.Join(tmp, "xdg-cache"),
		"XDG_DATA_HOME":   filepath.Join(tmp, "xdg-data"),
		"REIKA_WARMUP":    "0",
	}
	for k, v := range cfg.Env {
		env[k] = v
	}

	var r io.Reader
	if cfg.Binary == "" {
		client, server := net.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		e.cancel = cancel
		go func() {
			e.serveDone <- lsp.Serve(ctx, server, lsp.Options{
				Getenv:        func(k string) string { return env[k] },
				StateDir:      e.StateDir,
				Log:           e.serverLog,
				ApplyTimeout:  cfg.ApplyTimeout,
				ClientTimeout: cfg.ClientTimeout,
			})
		}()
		r, e.w, e.conn = client, client, client
	} else {
		cmd := exec.Command(cfg.Binary)
		cmd.Dir = e.Root
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp}
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
			t.Fatalf("start %s: %v", cfg.Binary, err)
		}
		e.cancel = func() { cmd.Process.Kill() }
		go func() { e.serveDone <- cmd.Wait() }()
		r, e.w, e.conn = stdout, stdin, stdin
	}
	go e.readLoop(bufio.NewReader(r))
	go e.dispatchLoop()
	t.Cleanup(e.cleanup)

	e.initialize()
	return e
}

func (e *Editor) initialize() {
	e.t.Helper()
	c := e.cfg.Caps
	general := map[string]any{}
	if c.PositionEncodings != nil {
		general["positionEncodings"] = c.PositionEncodings
	}
	window := map[string]any{"workDoneProgress": c.Progress, "showDocument": map[string]any{"support": c.ShowDocument}}
	if c.MessageActions {
		window["showMessage"] = map[string]any{"messageActionItem": map[string]any{"additionalPropertiesSupport": false}}
	} else {
		window["showMessage"] = map[string]any{}
	}
	wsEdit := map[string]any{"documentChanges": c.DocumentChanges}
	if c.ResourceOperations != nil {
		wsEdit["resourceOperations"] = c.ResourceOperations
	}
	if c.Annotations {
		wsEdit["changeAnnotationSupport"] = map[string]any{"groupsOnLabel": true}
	}
	codeAction := map[string]any{"dynamicRegistration": false}
	if c.CodeActionLiteral {
		valueSet := []string{"", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source", "source.organizeImports"}
		if c.JunkValueSet {
			valueSet = []string{"Empty", "", "QuickFix", "quickfix", "Refactor", "refactor", "RefactorRewrite", "refactor.rewrite", "Source", "source"}
		}
		codeAction["codeActionLiteralSupport"] = map[string]any{"codeActionKind": map[string]any{"valueSet": valueSet}}
	}
	caps := map[string]any{
		"general":   general,
		"window":    window,
		"workspace": map[string]any{"applyEdit": c.ApplyEdit, "workspaceEdit": wsEdit, "workspaceFolders": true, "configuration": false},
		"textDocument": map[string]any{
			"synchronization": map[string]any{"didSave": true, "dynamicRegistration": false},
			"codeAction":      codeAction,
			"documentSymbol":  map[string]any{"hierarchicalDocumentSymbolSupport": c.HierarchicalSymbols},
		},
	}
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       clientInfo(c),
		"rootUri":          FileURI(e.Root),
		"workspaceFolders": []any{map[string]any{"uri": FileURI(e.Root), "name": "ws"}},
		"capabilities":     caps,
	}
	if e.cfg.InitializationOptions != nil {
		params["initializationOptions"] = e.cfg.InitializationOptions
	}
	var res struct {
		Capabilities struct {
			PositionEncoding string `json:"positionEncoding"`
		} `json:"capabilities"`
	}
	raw, err := e.Call("initialize", params, &res)
	if err != nil {
		e.t.Fatalf("initialize: %v\n%s", err, e.Dump())
	}
	e.InitializeResult = raw
	e.Encoding = res.Capabilities.PositionEncoding
	if e.Encoding == "" {
		e.Encoding = UTF16
	}
	if len(c.PositionEncodings) == 0 && e.Encoding != UTF16 {
		e.violation("the server chose position encoding %q, which the client did not offer", e.Encoding)
	} else if len(c.PositionEncodings) > 0 && !contains(c.PositionEncodings, e.Encoding) {
		e.violation("the server chose position encoding %q, not among %v", e.Encoding, c.PositionEncodings)
	}
	e.Notify("initialized", map[string]any{})
	// The server connects to the engine in the background; what it says
	// then must not race with the test's first steps.
	e.WaitFor("the server's first reika/status (the session is up) or an error", 0, func(ev Event) bool {
		return ev.Method == lsp.StatusNotification ||
			(ev.Method == "window/showMessage" || ev.Method == "window/logMessage") && messageType(ev.Params) == 1
	})
}

// clientInfo is initialize's clientInfo: none for eglot 1.9.
func clientInfo(c Caps) any {
	if c.Name == "" {
		return nil
	}
	v := c.Version
	if v == "" {
		v = "1"
	}
	return map[string]any{"name": c.Name, "version": v}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cleanup ends the connection if the test did not, and reports protocol
// violations the editor saw.
func (e *Editor) cleanup() {
	if !e.shut {
		e.shut = true
		if _, err := e.callTimeout("shutdown", nil, nil, 5*time.Second); err == nil {
			e.Notify("exit", nil)
		}
	}
	if !e.served {
		select {
		case e.serveErr = <-e.serveDone:
			e.served = true
		case <-time.After(e.timeout):
			e.t.Errorf("the server did not stop within %v of exit\n%s", e.timeout, e.Dump())
			e.cancel()
		}
	}
	e.conn.Close()
	e.cancel()
	select {
	case <-e.dispatched:
	case <-time.After(e.timeout):
		e.t.Errorf("the editor's dispatcher did not stop")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, v := range e.violations {
		e.t.Errorf("protocol: %s", v)
	}
}

// violation records something the server did that a real client would
// reject or misread; the test fails at its end.
func (e *Editor) violation(format string, args ...any) {
	e.mu.Lock()
	e.violations = append(e.violations, fmt.Sprintf(format, args...))
	e.mu.Unlock()
}

// --- transport ---

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

// record appends an event and wakes the waiters; it returns its index.
func (e *Editor) record(method string, params json.RawMessage, line string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, Event{Seq: len(e.events), At: time.Now(), Method: method, Params: params, Line: line})
	close(e.changed)
	e.changed = make(chan struct{})
	return len(e.events) - 1
}

// Note adds a line of the test's own to the record, between what the
// server sent (a step, what the user did).
func (e *Editor) Note(format string, args ...any) {
	e.record("", nil, fmt.Sprintf(format, args...))
}

var messageTypes = map[int]string{1: "error", 2: "warning", 3: "info", 4: "log"}

func messageType(params json.RawMessage) int {
	var p struct {
		Type int `json:"type"`
	}
	json.Unmarshal(params, &p)
	return p.Type
}

// describe is the one-line form of a notification the user would see.
func describe(method string, params json.RawMessage) string {
	switch method {
	case "window/showMessage", "window/logMessage":
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		json.Unmarshal(params, &p)
		name := "showMessage"
		if method == "window/logMessage" {
			name = "logMessage"
		}
		return fmt.Sprintf("%s %s: %s", name, messageTypes[p.Type], p.Message)
	case "$/progress":
		var p struct {
			Value struct {
				Kind    string `json:"kind"`
				Title   string `json:"title"`
				Message string `json:"message"`
			} `json:"value"`
		}
		json.Unmarshal(params, &p)
		v := p.Value
		if v.Kind == "begin" {
			return fmt.Sprintf("progress begin %q: %s", v.Title, v.Message)
		}
		return fmt.Sprintf("progress %s: %s", v.Kind, v.Message)
	}
	return ""
}

// --- requests the editor sends ---

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
		e.pmu.Lock()
		delete(e.pending, idKey(id))
		e.pmu.Unlock()
		close(ch)
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

// Shutdown sends shutdown and exit and waits (bounded) for the server to
// stop; it returns what Serve returned (or the process's exit error).
func (e *Editor) Shutdown() error {
	e.t.Helper()
	if _, err := e.Call("shutdown", nil, nil); err != nil {
		e.t.Fatalf("shutdown: %v", err)
	}
	e.shut = true
	e.Notify("exit", nil)
	select {
	case e.serveErr = <-e.serveDone:
		e.served = true
		return e.serveErr
	case <-time.After(e.timeout):
		e.t.Fatalf("the server did not stop within %v of exit\n%s", e.timeout, e.Dump())
	}
	return nil
}

// --- what the server sent ---

// Mark is the index of the next event: wait for what comes after it.
func (e *Editor) Mark() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.events)
}

// Events returns everything recorded so far.
func (e *Editor) Events() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.events...)
}

// Transcript is what the user saw, one line per event, with the test's
// notes.
func (e *Editor) Transcript() []string {
	var out []string
	for _, ev := range e.Events() {
		if ev.Line != "" {
			out = append(out, ev.Line)
		}
	}
	return out
}

// WaitFor waits (bounded) for an event at or after index from for which
// ok is true; on timeout the test fails with everything received.
func (e *Editor) WaitFor(what string, from int, ok func(Event) bool) Event {
	e.t.Helper()
	deadline := time.NewTimer(e.timeout)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		for i := from; i < len(e.events); i++ {
			if ok(e.events[i]) {
				ev := e.events[i]
				e.mu.Unlock()
				return ev
			}
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			e.t.Fatalf("waited %v for %s; received:\n%s", e.timeout, what, e.Dump())
			return Event{}
		}
	}
}

// WaitLine waits for an event whose line matches the regular expression.
func (e *Editor) WaitLine(from int, re string) Event {
	e.t.Helper()
	rx := regexp.MustCompile(re)
	return e.WaitFor(fmt.Sprintf("a line matching /%s/", re), from, func(ev Event) bool {
		return ev.Method != "" && rx.MatchString(ev.Line)
	})
}

// WaitProgress waits for a $/progress of kind ("begin", "report", "end").
func (e *Editor) WaitProgress(from int, kind string) Event {
	e.t.Helper()
	return e.WaitFor("$/progress "+kind, from, func(ev Event) bool {
		return ev.Method == "$/progress" && strings.HasPrefix(ev.Line, "progress "+kind)
	})
}

// runEnd matches the message that closes every run: the answer (one line
// that ends with the chip), "finished" (the answer opened as a document),
// or "stopped".
var runEnd = regexp.MustCompile(`^showMessage \w+: (Reika: .* · ctx [^ ]+ \(\d+% of [^ ]+\)$|Reika finished: |Reika stopped)`)

// WaitRunEnd waits for the message that ends a run.
func (e *Editor) WaitRunEnd(from int) Event {
	e.t.Helper()
	return e.WaitFor("the end of the run (its final showMessage)", from, func(ev Event) bool {
		return ev.Method == "window/showMessage" && runEnd.MatchString(ev.Line)
	})
}

// ProgressToken is the last work-done progress token the server created.
func (e *Editor) ProgressToken() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.tokens) == 0 {
		return ""
	}
	return e.tokens[len(e.tokens)-1]
}

// Shown are the files the server opened with showDocument, in order.
func (e *Editor) Shown() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.shown...)
}

// ServerLog is what the server wrote to its log.
func (e *Editor) ServerLog() string { return e.serverLog.String() }

// Dump describes everything received, for a failure message.
func (e *Editor) Dump() string {
	var b strings.Builder
	b.WriteString("--- from the server ---\n")
	for _, ev := range e.Events() {
		switch {
		case ev.Method == "":
			fmt.Fprintf(&b, "  # %s\n", ev.Line)
		case ev.Line != "":
			fmt.Fprintf(&b, "  %s\n", ev.Line)
		default:
			fmt.Fprintf(&b, "  %s %.300s\n", ev.Method, ev.Params)
		}
	}
	e.mu.Lock()
	for _, v := range e.violations {
		fmt.Fprintf(&b, "  PROTOCOL: %s\n", v)
	}
	e.mu.Unlock()
	b.WriteString("--- the engine ---\n")
	b.WriteString(e.Engine.Describe())
	log := e.serverLog.String()
	if ls := slices.Collect(strings.Lines(log)); len(ls) > 40 {
		log = strings.Join(ls[len(ls)-40:], "")
	}
	if log != "" {
		b.WriteString("--- the server's log ---\n" + strings.TrimSuffix(log, "\n") + "\n")
	}
	return b.String()
}

// --- requests the server sends ---

// OnApply queues answers for the next workspace/applyEdit requests, one
// each; with none queued the editor applies the edit (refusing it only if
// it does not fit the document, as a real editor would).
func (e *Editor) OnApply(answers ...ApplyAnswer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.applyQ = append(e.applyQ, answers...)
}

// OnShowMessageRequest sets how the user answers window/showMessageRequest;
// by default they pick the first action.
func (e *Editor) OnShowMessageRequest(choose func(message string, actions []string) string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.choose = choose
}

// serveRequest answers one request of the server, and says in one line
// what the user saw and did.
func (e *Editor) serveRequest(m *message) (any, *RPCError, string) {
	c := e.cfg.Caps
	if slices.Contains(e.cfg.Ignore, m.Method) {
		return errNoAnswer, nil, m.Method + " → never answered"
	}
	switch m.Method {
	case "window/workDoneProgress/create":
		var p struct {
			Token json.RawMessage `json:"token"`
		}
		json.Unmarshal(m.Params, &p)
		if !c.Progress {
			e.violation("window/workDoneProgress/create sent to a client without window.workDoneProgress")
		}
		e.mu.Lock()
		e.tokens = append(e.tokens, strings.Trim(string(p.Token), `"`))
		e.mu.Unlock()
		return nil, nil, ""
	case "workspace/applyEdit":
		if !c.ApplyEdit {
			e.violation("workspace/applyEdit sent to a client without workspace.applyEdit")
		}
		return e.onApplyEdit(m.Params)
	case "window/showMessageRequest":
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
			Actions []struct {
				Title string `json:"title"`
			} `json:"actions"`
		}
		json.Unmarshal(m.Params, &p)
		var titles []string
		for _, a := range p.Actions {
			titles = append(titles, a.Title)
		}
		e.mu.Lock()
		choose := e.choose
		e.mu.Unlock()
		pick := ""
		if choose != nil {
			pick = choose(p.Message, titles)
		} else if len(titles) > 0 {
			pick = titles[0]
		}
		line := fmt.Sprintf("showMessageRequest %s: %s %q → ", messageTypes[p.Type], p.Message, titles)
		if pick == "" {
			return nil, nil, line + "dismissed"
		}
		return map[string]string{"title": pick}, nil, line + strconv.Quote(pick)
	case "window/showDocument":
		var p struct {
			URI       string `json:"uri"`
			TakeFocus bool   `json:"takeFocus"`
			External  bool   `json:"external"`
		}
		json.Unmarshal(m.Params, &p)
		if !c.ShowDocument {
			e.violation("window/showDocument sent to a client without window.showDocument.support")
		}
		line := fmt.Sprintf("showDocument %s takeFocus=%v", p.URI, p.TakeFocus)
		path, err := URIPath(p.URI)
		if err != nil {
			return map[string]bool{"success": false}, nil, line + " → failed: " + err.Error()
		}
		if err := e.open(path); err != nil {
			return map[string]bool{"success": false}, nil, line + " → failed: " + err.Error()
		}
		e.mu.Lock()
		e.shown = append(e.shown, path)
		e.mu.Unlock()
		return map[string]bool{"success": true}, nil, line
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		json.Unmarshal(m.Params, &p)
		return make([]any, len(p.Items)), nil, ""
	case "client/registerCapability", "client/unregisterCapability":
		return nil, nil, ""
	}
	return nil, &RPCError{Code: -32601, Message: "method not found: " + m.Method}, ""
}

func (e *Editor) onApplyEdit(params json.RawMessage) (any, *RPCError, string) {
	var p struct {
		Label string          `json:"label"`
		Edit  json.RawMessage `json:"edit"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		e.violation("workspace/applyEdit params: %v", err)
		return nil, &RPCError{Code: -32602, Message: err.Error()}, ""
	}
	e.mu.Lock()
	var ans ApplyAnswer
	if len(e.applyQ) > 0 {
		ans, e.applyQ = e.applyQ[0], e.applyQ[1:]
	}
	e.mu.Unlock()
	line := fmt.Sprintf("applyEdit %q", p.Label)
	if ans.Before != nil {
		if err := ans.Before(e); err != nil {
			e.violation("the user's edit before answering applyEdit failed: %v", err)
		}
	}
	if ans.Ignore {
		return errNoAnswer, nil, line + " → never answered"
	}
	if ans.Refuse != "" {
		return map[string]any{"applied": false, "failureReason": ans.Refuse}, nil, line + " → refused by the user: " + ans.Refuse
	}
	e.mu.Lock()
	e.undoing = ans.Undo
	e.mu.Unlock()
	confirmed, err := e.ApplyWorkspaceEdit(p.Edit)
	e.mu.Lock()
	e.undoing = false
	e.mu.Unlock()
	if ans.Revert {
		e.revert()
		line += " (the user reverts the buffer)"
	}
	if e.cfg.Caps.Eglot == "" {
		e.flushPending()
	}
	var stale *eglotStale
	if errors.As(err, &stale) {
		return nil, &RPCError{Code: -32603, Message: stale.Error()}, line + " → error: " + stale.Error()
	}
	if err == nil && e.cfg.SaveAll {
		for _, d := range e.Docs() {
			if werr := os.WriteFile(d.Path, []byte(d.Text), 0o644); werr != nil {
				e.violation("save %s: %v", d.Path, werr)
			}
		}
		line += " (saved)"
	}
	if len(confirmed) > 0 {
		line += fmt.Sprintf(" (the user confirmed %q)", confirmed)
	}
	if err != nil {
		return map[string]any{"applied": false, "failureReason": err.Error()}, nil, line + " → not applied: " + err.Error()
	}
	return map[string]any{"applied": true}, nil, line + " → applied"
}

// eglotStale is eglot's refusal of an edit for a version it has passed,
// answered as an error.
type eglotStale struct {
	name       string
	want, have int32
}

func (e *eglotStale) Error() string {
	return fmt.Sprintf("Edits on `%s' require version %d, you have %d", e.name, e.want, e.have)
}

// revert is the user reverting every open buffer that has unsent changes
// from disk: the changes are dropped, and the buffer closed and opened
// again.
func (e *Editor) revert() {
	e.mu.Lock()
	var paths []string
	for abs, d := range e.docs {
		if len(d.pending) > 0 {
			d.pending = nil
			paths = append(paths, abs)
		}
	}
	e.mu.Unlock()
	for _, abs := range paths {
		e.Close(abs)
		if err := e.open(abs); err != nil {
			e.violation("reopen %s: %v", abs, err)
		}
	}
}

// errNoAnswer, as a request's result, leaves the request unanswered.
var errNoAnswer = &struct{ noAnswer bool }{true}

// --- documents ---

// Abs is the absolute path of a workspace-relative path (an absolute one
// is returned as it is).
func (e *Editor) Abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(e.Root, filepath.FromSlash(path))
}

// Rel is a path relative to the workspace when it is inside it.
func (e *Editor) Rel(abs string) string {
	if rel, err := filepath.Rel(e.Root, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return abs
}

// URI is the file URI of a workspace path.
func (e *Editor) URI(path string) string { return FileURI(e.Abs(path)) }

// Open opens a file in the editor (textDocument/didOpen with its text on
// disk).
func (e *Editor) Open(path string) {
	e.t.Helper()
	if err := e.open(e.Abs(path)); err != nil {
		e.t.Fatalf("open %s: %v", path, err)
	}
}

func (e *Editor) open(abs string) error {
	data, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
	e.mu.Lock()
	if _, ok := e.docs[abs]; ok {
		e.mu.Unlock()
		return nil // already open: the editor shows it
	}
	d := &Document{Path: abs, URI: FileURI(abs), Version: 1, Text: string(data)}
	if e.cfg.Caps.Neovim {
		d.Version = 0 // Neovim opens every buffer at version 0
	}
	d.sent = d.Version
	e.docs[abs] = d
	e.mu.Unlock()
	e.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": d.URI, "languageId": languageID(abs), "version": d.Version, "text": d.Text}})
	return nil
}

func languageID(path string) string {
	switch filepath.Ext(path) {
	case ".go":
		return "go"
	case ".md":
		return "markdown"
	case ".py":
		return "python"
	case ".ts":
		return "typescript"
	case ".js":
		return "javascript"
	}
	return "plaintext"
}

// Doc returns the editor's copy of an open document.
func (e *Editor) Doc(path string) (Document, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.docs[e.Abs(path)]
	if !ok {
		return Document{}, false
	}
	return *d, true
}

// Text is the text of an open document; it fails the test when the
// document is not open.
func (e *Editor) Text(path string) string {
	e.t.Helper()
	d, ok := e.Doc(path)
	if !ok {
		e.t.Fatalf("%s is not open in the editor", path)
	}
	return d.Text
}

// Docs lists the open documents, by path.
func (e *Editor) Docs() []Document {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Document
	for _, d := range e.docs {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Edit is the user replacing the first occurrence of old with new in an
// open document: one incremental didChange in the negotiated encoding.
func (e *Editor) Edit(path, old, new string) {
	e.t.Helper()
	if err := e.TryEdit(path, old, new); err != nil {
		e.t.Fatal(err)
	}
}

// TryEdit is Edit returning its error, for use off the test's goroutine.
func (e *Editor) TryEdit(path, old, new string) error {
	abs := e.Abs(path)
	e.mu.Lock()
	d, ok := e.docs[abs]
	if !ok {
		e.mu.Unlock()
		return fmt.Errorf("edit %s: not open", path)
	}
	i := strings.Index(d.Text, old)
	if i < 0 {
		e.mu.Unlock()
		return fmt.Errorf("edit %s: %q is not in the document", path, old)
	}
	rng := RangeOf(d.Text, i, i+len(old), e.Encoding)
	d.Text = d.Text[:i] + new + d.Text[i+len(old):]
	e.bump(d)
	d.sent = d.Version
	uri, version := d.URI, d.Version
	e.mu.Unlock()
	e.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []any{map[string]any{"range": rng, "text": new}},
	})
	return nil
}

// TypePending replaces old with new in an open document as the user
// typing does in Neovim: the buffer and its version change now, the
// didChange waits for the next one the editor sends (its debounce).
func (e *Editor) TypePending(path, old, new string) error {
	abs := e.Abs(path)
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.docs[abs]
	if !ok {
		return fmt.Errorf("edit %s: not open", path)
	}
	i := strings.Index(d.Text, old)
	if i < 0 {
		return fmt.Errorf("edit %s: %q is not in the document", path, old)
	}
	d.pending = append(d.pending, map[string]any{"range": RangeOf(d.Text, i, i+len(old), e.Encoding), "text": new})
	d.Text = d.Text[:i] + new + d.Text[i+len(old):]
	e.bump(d)
	e.idleLocked()
	return nil
}

// eglotIdle is eglot-send-changes-idle-time.
const eglotIdle = 500 * time.Millisecond

// idleLocked restarts eglot's idle timer, after which it sends the
// pending changes; e.mu is held. It does nothing for other editors.
func (e *Editor) idleLocked() {
	if e.cfg.Caps.Eglot == "" {
		return
	}
	if e.idle != nil {
		e.idle.Stop()
	}
	e.idle = time.AfterFunc(eglotIdle, e.flushPending)
}

// flushPending sends the changes TypePending held back, one didChange a
// document, as Neovim does when its debounce ends.
func (e *Editor) flushPending() {
	type send struct {
		uri     string
		version int32
		changes []map[string]any
	}
	var sends []send
	e.mu.Lock()
	if e.shut {
		e.mu.Unlock()
		return
	}
	for _, d := range e.docs {
		if len(d.pending) > 0 {
			sends = append(sends, send{d.URI, d.Version, d.pending})
			d.pending = nil
			d.sent = d.Version
		}
	}
	e.mu.Unlock()
	for _, s := range sends {
		e.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": s.uri, "version": s.version},
			"contentChanges": s.changes,
		})
	}
}

// Save writes an open document to disk and sends didSave.
func (e *Editor) Save(path string) {
	e.t.Helper()
	d, ok := e.Doc(path)
	if !ok {
		e.t.Fatalf("save %s: not open", path)
	}
	if err := os.WriteFile(d.Path, []byte(d.Text), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": d.URI}})
}

// Close closes an open document.
func (e *Editor) Close(path string) {
	abs := e.Abs(path)
	e.mu.Lock()
	d, ok := e.docs[abs]
	delete(e.docs, abs)
	e.mu.Unlock()
	if ok {
		e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": d.URI}})
	}
}

// Find is the range of the first match of the regular expression re in
// an open document (of its first group, when it has one).
func (e *Editor) Find(path, re string) Range {
	e.t.Helper()
	text := e.Text(path)
	start, end, err := find(text, re)
	if err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
	return RangeOf(text, start, end, e.Encoding)
}

// FindLine is the range of the whole line (line break included, lines
// as LSP counts them) holding the first match of re.
func (e *Editor) FindLine(path, re string) Range {
	e.t.Helper()
	text := e.Text(path)
	start, _, err := find(text, re)
	if err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
	_, l := lineAt(text, start)
	return RangeOf(text, l.start, l.next, e.Encoding)
}

func find(text, re string) (int, int, error) {
	rx, err := regexp.Compile(re)
	if err != nil {
		return 0, 0, err
	}
	m := rx.FindStringSubmatchIndex(text)
	if m == nil {
		return 0, 0, fmt.Errorf("no match for /%s/", re)
	}
	if len(m) >= 4 && m[2] >= 0 {
		return m[2], m[3], nil
	}
	return m[0], m[1], nil
}

// --- code actions ---

// Diagnostic is a problem the editor reports with a code action request.
type Diagnostic struct {
	Range    Range  `json:"range"`
	Severity int    `json:"severity,omitempty"`
	Source   string `json:"source,omitempty"`
	Message  string `json:"message"`
}

// Command is an LSP command.
type Command struct {
	Title     string            `json:"title"`
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments,omitempty"`
}

// CodeAction is a code action or a bare command, as the server offered it.
type CodeAction struct {
	Title       string          `json:"title"`
	Kind        string          `json:"kind,omitempty"`
	IsPreferred bool            `json:"isPreferred,omitempty"`
	Edit        json.RawMessage `json:"edit,omitempty"`
	Command     *Command        `json:"command,omitempty"`
}

// CodeActions asks for the code actions on a range of an open document.
func (e *Editor) CodeActions(path string, rng Range, diags ...Diagnostic) []CodeAction {
	e.t.Helper()
	if diags == nil {
		diags = []Diagnostic{}
	}
	var raw []json.RawMessage
	if _, err := e.Call("textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": e.URI(path)},
		"range":        rng,
		"context":      map[string]any{"diagnostics": diags, "triggerKind": 1},
	}, &raw); err != nil {
		e.t.Fatalf("textDocument/codeAction: %v", err)
	}
	var out []CodeAction
	for _, r := range raw {
		var probe struct {
			Command json.RawMessage `json:"command"`
		}
		json.Unmarshal(r, &probe)
		if len(probe.Command) > 0 && probe.Command[0] == '"' {
			// A bare Command.
			var c Command
			if err := json.Unmarshal(r, &c); err != nil {
				e.t.Fatalf("code action %s: %v", r, err)
			}
			out = append(out, CodeAction{Title: c.Title, Command: &c})
			continue
		}
		if !e.cfg.Caps.CodeActionLiteral {
			e.violation("a CodeAction literal sent to a client without codeActionLiteralSupport: %s", r)
		}
		var ca CodeAction
		if err := json.Unmarshal(r, &ca); err != nil {
			e.t.Fatalf("code action %s: %v", r, err)
		}
		out = append(out, ca)
	}
	return out
}

// PickAction returns the first action whose title contains sub; it fails
// the test, listing the titles, when there is none.
func (e *Editor) PickAction(actions []CodeAction, sub string) CodeAction {
	e.t.Helper()
	var titles []string
	for _, a := range actions {
		if strings.Contains(a.Title, sub) {
			return a
		}
		titles = append(titles, a.Title)
	}
	e.t.Fatalf("no code action titled %q among %q", sub, titles)
	return CodeAction{}
}

// RunAction does what an editor does when the user picks a code action:
// apply its edit, then execute its command. It returns the command's
// result (an edit that does not apply is an error, and the command is
// then not run).
func (e *Editor) RunAction(ca CodeAction) (*Pending, error) {
	e.t.Helper()
	if len(ca.Edit) > 0 {
		if _, err := e.ApplyWorkspaceEdit(ca.Edit); err != nil {
			return nil, fmt.Errorf("the edit of %q: %w", ca.Title, err)
		}
	}
	if ca.Command == nil {
		return nil, nil
	}
	args := make([]any, len(ca.Command.Arguments))
	for i, a := range ca.Command.Arguments {
		args[i] = a
	}
	return e.ExecAsync(ca.Command.Command, args...), nil
}

// --- helpers ---

// FileURI is the file URI of an absolute path, as an editor spells it.
func FileURI(abs string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// URIPath is the absolute path a file URI names.
func URIPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !strings.HasPrefix(u.Path, "/") {
		return "", fmt.Errorf("not a local file URI: %q", uri)
	}
	return filepath.FromSlash(u.Path), nil
}

// LockedBuffer is a text buffer safe for concurrent writes and reads: a
// process's output goroutines write it while the test reads it.
type LockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// bump raises a document's version for a change. Neovim's version is the
// buffer's change count: after the buffer opened at 0, the first change
// brings it well above 1.
func (e *Editor) bump(d *Document) {
	if e.cfg.Caps.Neovim && d.Version == 0 {
		d.Version = 2
	}
	d.Version++
}
