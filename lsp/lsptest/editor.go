package lsptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
	"github.com/reika-lsp/reika/lsp"
)

// DefaultTimeout bounds every wait of the harness. The harness multiplies
// every bound by REIKA_TEST_SLOW (package internal/testslow).
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
	// Answers: experimental.reikaAnswers, a client that shows reika/answer
	// whole itself (VS Code's panel).
	Answers bool
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
	// Startup, when set, is what the editor sends right after initialized,
	// while the server is still starting its session: Helix opens the
	// document and pushes its config at once. The harness waits for the
	// session after it.
	Startup func(e *Editor)
	// Front, when set, is given the simulated engine's base URL (without
	// /v1) and returns the base URL the server is pointed at instead: a
	// proxy in front of the engine.
	Front func(engineURL string) string
	// Binary, when set, is a built reika-lsp started over stdio instead
	// of lsp.Serve over net.Pipe.
	Binary string
	// Timeout bounds every wait; zero means DefaultTimeout. Either is
	// multiplied by REIKA_TEST_SLOW.
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
	// RetryQuiet and RetryWait are the server's wait for the user's
	// typing to stop before it places a refused change again (in-process
	// only); zero leaves the server's.
	RetryQuiet, RetryWait time.Duration
	// VerifyTimeout is the server's wait for the didChange that shows
	// where an applied edit went (in-process only); zero leaves the
	// server's.
	VerifyTimeout time.Duration
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
	// After runs once the edit is applied, before the answer, on the
	// editor's goroutine: the user typing right after it, which an
	// editor that sends changes late (eglot) sends with the edit's. It
	// must not fail the test (use TryEdit or TypePending).
	After func(e *Editor) error
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

	// typing is held from a document's new version to its didChange on
	// the wire: a user's changes go out in the order they were made, as
	// from a real editor's one thread, whichever goroutine makes them.
	typing sync.Mutex

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
	pid        int // the server's process, when Config.Binary started one
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
	e := newEditor(t, cfg)
	e.layout()
	ecfg := cfg.Engine
	if ecfg.Ctx == 0 {
		ecfg.Ctx = 16384
	}
	if cfg.After != nil && !cfg.NewEngine {
		e.Engine = cfg.After.Engine
	} else {
		e.Engine = StartEngine(t, ecfg, cfg.Timeout)
	}
	env := e.serverEnv()
	var r io.Reader
	if cfg.Binary == "" {
		r = e.connectInProcess(env)
	} else {
		r = e.connectBinary(env)
	}
	go e.readLoop(bufio.NewReader(r))
	go e.dispatchLoop()
	t.Cleanup(e.cleanup)

	e.initialize()
	return e
}

// newEditor is an editor of cfg, not started: no directories, engine or
// server yet.
func newEditor(t testing.TB, cfg Config) *Editor {
	e := &Editor{
		t: t, cfg: cfg, timeout: cfg.Timeout,
		pending: map[string]chan *message{}, rawIDs: map[string]bool{}, docs: map[string]*Document{},
		changed: make(chan struct{}), serverLog: &LockedBuffer{},
		serveDone: make(chan error, 1), dispatched: make(chan struct{}),
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	e.timeout = testslow.Scale(e.timeout)
	e.inbox.cond = sync.NewCond(&e.inbox.mu)
	e.dir = t.TempDir()
	if cfg.After != nil {
		e.dir = cfg.After.dir
	}
	return e
}

// layout makes the workspace (cfg.Files in it) and the state directory.
func (e *Editor) layout() {
	t, cfg := e.t, e.cfg
	e.Root = filepath.Join(e.dir, "ws")
	if cfg.Root != "" {
		e.Root = cfg.Root
	}
	e.StateDir = filepath.Join(e.dir, "xdg-state", "reika", "sessions")
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
}

// serverEnv is the server's environment: the engine's endpoint (through
// cfg.Front), XDG directories under the editor's temporary directory, no
// warm-up, then cfg.Env.
func (e *Editor) serverEnv() map[string]string {
	endpoint := e.Engine.URL
	if e.cfg.Front != nil {
		endpoint = e.cfg.Front(endpoint)
	}
	env := map[string]string{
		"REIKA_ENDPOINT":  endpoint + "/v1",
		"XDG_CONFIG_HOME": filepath.Join(e.dir, "xdg-config"),
		"XDG_STATE_HOME":  filepath.Join(e.dir, "xdg-state"),
		"XDG_CACHE_HOME":  filepath.Join(e.dir, "xdg-cache"),
		"XDG_DATA_HOME":   filepath.Join(e.dir, "xdg-data"),
		"REIKA_WARMUP":    "0",
		// The workspace's language servers (gopls on a Go project) only
		// where a test asks for them (cfg.Env): an editor that quits
		// without waiting for the server leaves one writing its cache.
		"REIKA_LANGUAGE_SERVERS": "off",
	}
	for k, v := range e.cfg.Env {
		env[k] = v
	}
	return env
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
	if c.Answers {
		caps["experimental"] = map[string]any{"reikaAnswers": true}
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
	if e.cfg.Startup != nil {
		e.cfg.Startup(e)
	}
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
		if _, err := e.callTimeout("shutdown", nil, nil, testslow.Scale(5*time.Second)); err == nil {
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
