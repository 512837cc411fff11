package langserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// errDied is a request's error when the server's process ended under it.
var errDied = errors.New("the language server exited")

// errHung is a request's error when the server did not answer in time.
var errHung = errors.New("the language server did not answer in time")

// proc is one running language server for one workspace folder: its
// process, the connection, the documents it was given and the
// diagnostics it published. Its methods are safe for concurrent use.
type proc struct {
	srv     Server
	folder  string
	cmd     *exec.Cmd
	conn    jsonrpc2.Conn
	stderr  *tail
	timeout time.Duration
	// life ends when the process exits.
	life context.Context
	// enc is the position encoding initialize agreed on, set before any
	// question.
	enc encoding

	mu   sync.Mutex
	docs map[protocol.DocumentURI]*doc
	// diags are the diagnostics last published per document; changed is
	// closed and replaced at every publish.
	diags   map[protocol.DocumentURI]published
	changed chan struct{}
}

// doc is a document as the server has it.
type doc struct {
	version int32
	text    string
}

// published is one publishDiagnostics: the document version it is of
// (0 when the server did not say) and its place in the order of publishes.
type published struct {
	version int32
	seq     int
	diags   []protocol.Diagnostic
}

// start starts srv for folder and initializes it.
func start(ctx context.Context, srv Server, folder string, env []string, timeout time.Duration) (*proc, error) {
	initOpts, err := initOptions(srv)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", srv.Name, err)
	}
	cmd := exec.Command(srv.Command[0], srv.Command[1:]...)
	cmd.Dir, cmd.Env = folder, env
	detach(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{srv: srv, folder: folder, cmd: cmd, stderr: &tail{}, timeout: timeout,
		docs: map[protocol.DocumentURI]*doc{}, diags: map[protocol.DocumentURI]published{}, changed: make(chan struct{})}
	cmd.Stderr = p.stderr
	life, end := context.WithCancel(context.Background())
	p.life = life
	p.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(pipe{stdout, stdin}))
	started := make(chan error, 1)
	go func() {
		// The parent-death signal (detach) follows the thread that
		// started the process, not Reika's: the thread stays this
		// goroutine's, alive, until the server has exited.
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			_ = cmd.Wait()
		}
		end()
		_ = p.conn.Close()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", srv.Name, srv.Command[0], err)
	}
	p.conn.Go(life, p.handle)
	if err := p.initialize(ctx, initOpts); err != nil {
		p.kill()
		return nil, fmt.Errorf("initializing %s: %w%s", srv.Name, err, p.stderr.said())
	}
	return p, nil
}

// initialize is the handshake: the folder as root and only workspace
// folder, the few capabilities the answers need, and the server's
// initializationOptions (initOpts, nil for none).
func (p *proc) initialize(ctx context.Context, initOpts any) error {
	folderURI := uri.File(p.folder)
	params := initializeParams{
		InitializeParams: protocol.InitializeParams{
			InitializationOptions: initOpts,
			ProcessID:             int32(os.Getpid()),
			ClientInfo:            &protocol.ClientInfo{Name: "reika"},
			RootURI:               folderURI,
			WorkspaceFolders:      []protocol.WorkspaceFolder{{URI: string(folderURI), Name: filepath.Base(p.folder)}},
		},
		Capabilities: clientCapabilities{
			ClientCapabilities: protocol.ClientCapabilities{
				Workspace: &protocol.WorkspaceClientCapabilities{WorkspaceFolders: true},
				TextDocument: &protocol.TextDocumentClientCapabilities{
					Synchronization:    &protocol.TextDocumentSyncClientCapabilities{},
					Hover:              &protocol.HoverTextDocumentClientCapabilities{ContentFormat: []protocol.MarkupKind{protocol.PlainText}},
					DocumentSymbol:     &protocol.DocumentSymbolClientCapabilities{HierarchicalDocumentSymbolSupport: true},
					PublishDiagnostics: &protocol.PublishDiagnosticsClientCapabilities{VersionSupport: true},
				},
			},
			General: &generalCapabilities{PositionEncodings: offeredEncodings},
		},
	}
	var result initializeResult
	if err := p.call(ctx, protocol.MethodInitialize, params, &result); err != nil {
		return err
	}
	p.enc = parseEncoding(result.Capabilities.PositionEncoding)
	return p.notify(ctx, protocol.MethodInitialized, struct{}{})
}

// initializeParams, clientCapabilities and initializeResult are
// go.lsp.dev's with the position encodings of LSP 3.17, which its 3.16
// model lacks (general.positionEncodings, the server's positionEncoding;
// lsp/ reads them the same way). The outer fields shadow the embedded
// ones of the same JSON name.
type initializeParams struct {
	protocol.InitializeParams
	Capabilities clientCapabilities `json:"capabilities"`
}

type clientCapabilities struct {
	protocol.ClientCapabilities
	General *generalCapabilities `json:"general,omitempty"`
}

type generalCapabilities struct {
	PositionEncodings []string `json:"positionEncodings"`
}

type initializeResult struct {
	Capabilities struct {
		PositionEncoding string `json:"positionEncoding"`
	} `json:"capabilities"`
}

// call sends a request and waits for its answer, at most p.timeout
// (bounded); a request its caller gave up on is cancelled
// ($/cancelRequest). Its error is errDied or errHung (wrapped) when the
// server is at fault.
func (p *proc) call(ctx context.Context, method string, params, result any) error {
	var id jsonrpc2.ID
	err := p.bounded(ctx, method, func(ctx context.Context) error {
		var err error
		id, err = p.conn.Call(ctx, method, params, result)
		return err
	})
	switch {
	case err == nil, errors.Is(err, errDied), errors.Is(err, errHung):
		return err
	case ctx.Err() != nil:
		// Fire and forget: the server may not be reading.
		go p.conn.Notify(context.Background(), protocol.MethodCancelRequest, map[string]any{"id": id})
		return ctx.Err()
	}
	return fmt.Errorf("%s: %w", method, err)
}

// notify sends a notification, bounded as call is.
func (p *proc) notify(ctx context.Context, method string, params any) error {
	return p.bounded(ctx, method, func(ctx context.Context) error {
		return p.conn.Notify(ctx, method, params)
	})
}

// bounded runs send (a request or a notification) for at most p.timeout.
// A server that has not taken the message, or answered it, by then is
// killed (jsonrpc2 writes without heeding the context, and a write to a
// server that does not read blocks for good): the error wraps errHung.
// bounded returns only once send has, so send's results are the caller's.
func (p *proc) bounded(ctx context.Context, what string, send func(context.Context) error) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- send(sctx) }()
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-p.life.Done():
		cancel()
		<-done
		return fmt.Errorf("%s: %w%s", what, errDied, p.stderr.said())
	case <-ctx.Done():
		// (sctx is done too: a call that was sent returns at once.)
		select {
		case <-done:
		case <-timer.C:
			kill(p.cmd)
			<-done
		}
		return ctx.Err()
	case <-timer.C:
		// Cancelled first: a call that was sent waits for its answer
		// even when the connection is gone.
		cancel()
		kill(p.cmd)
		<-done
		return fmt.Errorf("%s after %v: %w", what, p.timeout, errHung)
	}
}

// handle answers what the server sends: diagnostics are kept, the
// requests a server may make of a client answered plainly.
func (p *proc) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	switch req.Method() {
	case protocol.MethodTextDocumentPublishDiagnostics:
		var params protocol.PublishDiagnosticsParams
		if json.Unmarshal(req.Params(), &params) == nil {
			p.publish(params)
		}
		return reply(ctx, nil, nil)
	case protocol.MethodWorkspaceConfiguration:
		var params struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(req.Params(), &params)
		return reply(ctx, make([]any, len(params.Items)), nil)
	case protocol.MethodWorkspaceWorkspaceFolders:
		return reply(ctx, []protocol.WorkspaceFolder{{URI: string(uri.File(p.folder)), Name: filepath.Base(p.folder)}}, nil)
	case protocol.MethodWorkspaceApplyEdit:
		return reply(ctx, map[string]any{"applied": false, "failureReason": "reika applies no edits of a language server"}, nil)
	case protocol.MethodWorkDoneProgressCreate, protocol.MethodClientRegisterCapability,
		protocol.MethodClientUnregisterCapability, protocol.MethodWindowShowMessageRequest:
		return reply(ctx, nil, nil)
	}
	if _, ok := req.(*jsonrpc2.Call); ok {
		return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, "reika does not handle "+req.Method()))
	}
	return nil
}

// publish keeps a publishDiagnostics.
func (p *proc) publish(params protocol.PublishDiagnosticsParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	seq := p.diags[params.URI].seq + 1
	p.diags[params.URI] = published{version: int32(params.Version), seq: seq, diags: params.Diagnostics}
	close(p.changed)
	p.changed = make(chan struct{})
}

// fullChange is a whole-document change. protocol's
// TextDocumentContentChangeEvent holds its range as a value, so it would
// send an insertion at 0:0 (lsp/doc.go, defect 3): this type has none.
type fullChange struct {
	Text string `json:"text"`
}

// didChangeParams is protocol.DidChangeTextDocumentParams with fullChange.
type didChangeParams struct {
	TextDocument   protocol.VersionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []fullChange                             `json:"contentChanges"`
}

// sync gives the server text as the document at u (didOpen the first
// time, a whole-text didChange when it differs) and returns the version
// the server has and the publish count it had before, for waitDiagnostics.
func (p *proc) sync(ctx context.Context, u protocol.DocumentURI, lang, text string) (version int32, seq int, err error) {
	p.mu.Lock()
	d, open := p.docs[u]
	seq = p.diags[u].seq
	if open && d.text == text {
		// Unchanged: what the server published of it already counts.
		p.mu.Unlock()
		return d.version, seq - 1, nil
	}
	if !open {
		d = &doc{}
		p.docs[u] = d
	}
	d.version++
	d.text = text
	version = d.version
	p.mu.Unlock()
	if !open {
		err = p.notify(ctx, protocol.MethodTextDocumentDidOpen, protocol.DidOpenTextDocumentParams{
			TextDocument: protocol.TextDocumentItem{URI: u, LanguageID: protocol.LanguageIdentifier(lang), Version: version, Text: text}})
	} else {
		err = p.notify(ctx, protocol.MethodTextDocumentDidChange, didChangeParams{
			TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: version},
			ContentChanges: []fullChange{{Text: text}}})
	}
	return version, seq, err
}

// refresh gives the server the text the agent sees now (text) of every
// document it holds, so that no question is answered from a copy older
// than the file: a changed one by didChange, one that cannot be read any
// more closed.
func (p *proc) refresh(ctx context.Context, text func(abs string) (string, error)) error {
	p.mu.Lock()
	uris := make([]protocol.DocumentURI, 0, len(p.docs))
	for u := range p.docs {
		uris = append(uris, u)
	}
	p.mu.Unlock()
	for _, u := range uris {
		t, err := text(u.Filename())
		if err != nil {
			p.mu.Lock()
			delete(p.docs, u)
			p.mu.Unlock()
			err = p.notify(ctx, protocol.MethodTextDocumentDidClose, protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}})
		} else {
			_, _, err = p.sync(ctx, u, LanguageOf(u.Filename()), t)
		}
		if errors.Is(err, errDied) || errors.Is(err, errHung) {
			return err
		}
	}
	return nil
}

// waitDiagnostics waits, at most bound, for the server's diagnostics of
// the document at u at version (or, from a server that does not say the
// version, the first published after seq). It reports false when none
// came in time.
func (p *proc) waitDiagnostics(ctx context.Context, u protocol.DocumentURI, version int32, seq int, bound time.Duration) ([]protocol.Diagnostic, bool) {
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		p.mu.Lock()
		got, changed := p.diags[u], p.changed
		p.mu.Unlock()
		if got.seq > 0 && (got.version >= version || got.version == 0 && got.seq > seq) {
			return got.diags, true
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil, false
		case <-ctx.Done():
			return nil, false
		case <-p.life.Done():
			return nil, false
		}
	}
}

// standing returns the diagnostics last published of u when the server
// publishes them without a document version: such a server may leave a
// document's diagnostics unpublished when a change left them as they
// were (typescript-language-server publishes no empty list after an
// empty one), so that silence until the bound means they stand. False
// when it said nothing of u yet, or gives versions.
func (p *proc) standing(u protocol.DocumentURI) ([]protocol.Diagnostic, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last := p.diags[u]
	return last.diags, last.seq > 0 && last.version == 0
}

// published returns a copy of the diagnostics published so far.
func (p *proc) published() map[protocol.DocumentURI]published {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.diags)
}

// quiet waits until the server has published nothing for gap, at most
// bound.
func (p *proc) quiet(ctx context.Context, gap, bound time.Duration) {
	end := time.NewTimer(bound)
	defer end.Stop()
	for {
		p.mu.Lock()
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-time.After(gap):
			return
		case <-end.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// shutdown asks the server to end (shutdown, exit) and kills it after
// two seconds at most.
func (p *proc) shutdown() {
	const grace = 2 * time.Second
	killer := time.AfterFunc(grace, func() { kill(p.cmd) })
	defer killer.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if p.alive() && p.call(ctx, protocol.MethodShutdown, nil, nil) == nil {
		_ = p.notify(ctx, protocol.MethodExit, nil)
	}
	select {
	case <-p.life.Done():
	case <-ctx.Done():
	}
	p.kill()
}

// kill ends the process and waits for it.
func (p *proc) kill() {
	kill(p.cmd)
	<-p.life.Done()
}

// alive reports whether the process still runs.
func (p *proc) alive() bool { return p.life.Err() == nil }

// pipe joins the server's stdout and stdin into the connection's stream.
type pipe struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipe) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p pipe) Close() error {
	werr := p.w.Close()
	if err := p.ReadCloser.Close(); err != nil {
		return err
	}
	return werr
}

// tail keeps the last bytes a server wrote to stderr, for its errors.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 2048

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailMax {
		t.buf = t.buf[len(t.buf)-tailMax:]
	}
	return len(b), nil
}

// said is the server's last line on stderr as ": it said …", or "".
func (t *tail) said() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	return " (it said: " + last + ")"
}
