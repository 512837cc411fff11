package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/repomap"
)

// Options configure a server.
type Options struct {
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// HTTPClient, when set, carries every request to the engine (tests).
	HTTPClient *http.Client
	// StateDir is where transcripts are kept; "" means the user's state
	// directory.
	StateDir string
	// ClientTimeout bounds a request the server sends to the client;
	// ApplyTimeout bounds workspace/applyEdit and showMessageRequest, which
	// may wait for the user. Zero values take 10s and 5m.
	ClientTimeout, ApplyTimeout time.Duration
	// VerifyTimeout bounds the wait for the didChange that shows where an
	// applied edit landed; zero takes 3s.
	VerifyTimeout time.Duration
	// TypingWait bounds the wait for the user to pause typing before an
	// edit goes to a client that applies stale edits (eglot 1.17); zero
	// takes 3s.
	TypingWait time.Duration
	// RetryQuiet is how long a document must go without a didChange
	// before a change the editor refused for the user's typing is placed
	// again; RetryWait bounds the whole wait. Zero values take 1s and
	// 30s.
	RetryQuiet, RetryWait time.Duration
	// Log receives the server's own log lines; nil means stderr.
	Log io.Writer
}

// ErrExitWithoutShutdown is Serve's error when the client sent exit
// without shutdown before it: LSP asks the server to exit with code 1.
var ErrExitWithoutShutdown = errors.New("the client sent exit without shutdown first")

// Serve speaks LSP on rwc until the client exits or ctx is cancelled.
// Every goroutine it starts is stopped before it returns, except a reader
// or a writer blocked on an rwc whose Close does not interrupt it (stdin,
// stdout), which is left to the process's exit. What the server writes is
// queued (outbox), so that it reads on while the client is not reading.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) error {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.ClientTimeout <= 0 {
		opts.ClientTimeout = 10 * time.Second
	}
	if opts.ApplyTimeout <= 0 {
		opts.ApplyTimeout = 5 * time.Minute
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := newServer(ctx, opts)
	s.goOwned(s.mapWorker)
	s.conn = jsonrpc2.NewConn(newStream(newOutbox(rwc, s.log.Printf), maxMessage, maxRequest, s.log))
	s.conn.Go(ctx, s.handle)
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
		s.closeConn()
	case <-s.exited:
		s.closeConn()
	}
	cancel()
	s.wg.Wait()
	s.closeSession()
	s.repo.Close()
	if s.exitRequested() && serverState(s.state.Load()) != stateShutdown {
		return ErrExitWithoutShutdown
	}
	if err := s.conn.Err(); err != nil && !errors.Is(err, io.EOF) && !isClosed(err) && !s.exitRequested() {
		return err
	}
	return nil
}

// closeConn closes the stream and waits for the connection's reader.
// Closing a pipe or a socket ends it at once; a read on stdin cannot be
// interrupted, and an editor may keep stdin open after "exit" until the
// process is gone, so the wait is bounded: that reader is left to the
// process's exit, which "exit" asks for.
func (s *Server) closeConn() {
	s.conn.Close()
	select {
	case <-s.conn.Done():
	case <-time.After(exitGrace):
		s.log.Printf("the connection's reader did not stop after %v (stdin?); leaving it to the process's exit", exitGrace)
	}
}

// exitGrace bounds the wait for a reader that closing the stream did not
// stop.
const exitGrace = 500 * time.Millisecond

// isClosed reports whether err says the connection's stream was closed,
// at this end (closeConn) or the editor's: a pipe (io.ErrClosedPipe), a
// socket (net.ErrClosed) or a file, stdin among them (os.ErrClosed).
func isClosed(err error) bool {
	return errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed)
}

// Server is one connection's state.
type Server struct {
	opts Options
	ctx  context.Context // the connection's: cancelled when it ends
	conn jsonrpc2.Conn
	log  *log.Logger
	wg   sync.WaitGroup // goroutines the server started

	docs *Documents
	// repo is the repo map of the open documents and the files the agent
	// read; agentRead remembers the latter, which stay when closed.
	repo      *repomap.Map
	agentRead map[string]bool
	// mapq is the open documents whose latest text the map has not seen.
	mapq mapQueue
	// firstOpen is closed when the editor opens its first document.
	firstOpen     chan struct{}
	firstOpenOnce sync.Once

	state    atomic.Int32 // a serverState
	exited   chan struct{}
	exitOnce sync.Once

	// The sub-states, each safe for concurrent use on its own.
	client  atomic.Pointer[clientCaps] // set once, by initialize
	folders folders
	runs    runs
	offers  offers
	// editorDiags are the errors and warnings the editor sent with the
	// last ask that carried them (editor_diagnostics.go).
	editorDiags tools.EditorDiagnostics

	// mu guards the session and what it is built from, and agentRead.
	mu     sync.Mutex
	editor editorSettings // the editor's settings: its startup options and its pushes
	sess   *agentConn     // the agent session, nil until the first need
	// ignoredTold holds the ignored trust-widening values of pushes the
	// user was warned of ("bash_allow=[\"touch\"]"): once each.
	ignoredTold map[string]bool
	sessMu      sync.Mutex // held while a session is being built
	// sessGen counts reika.newSession: a session that was starting
	// meanwhile is not taken, and a new one starts.
	sessGen int
}

type serverState int

const (
	stateNew serverState = iota
	stateInitialized
	stateShutdown
)

func newServer(ctx context.Context, opts Options) *Server {
	return &Server{
		opts:      opts,
		ctx:       ctx,
		log:       log.New(opts.Log, "reika-lsp: ", log.LstdFlags),
		docs:      NewDocuments(),
		repo:      repomap.New(),
		mapq:      newMapQueue(),
		agentRead: map[string]bool{},
		firstOpen: make(chan struct{}),
		exited:    make(chan struct{}),
	}
}

func (s *Server) exitRequested() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// handle dispatches one message. It returns at once: work that waits on
// the engine or the user runs in goroutines the connection owns, and
// replies when done, so no message ever waits behind another.
func (s *Server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	_, isCall := req.(*jsonrpc2.Call)
	method := req.Method()
	defer func() {
		if r := recover(); r != nil {
			s.log.Printf("internal error in %s: %v", method, r)
			if isCall {
				reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in reika-lsp: %v", r))
			}
		}
	}()

	state := serverState(s.state.Load())
	switch {
	case method == "exit":
		s.exitOnce.Do(func() { close(s.exited) })
		return nil
	case state != stateNew && method == "initialize":
		return reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "the server is already initialized"))
	case state == stateNew && method != "initialize":
		if isCall {
			return reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.ServerNotInitialized, "the server is not initialized"))
		}
		return nil
	case state == stateShutdown && method != "exit":
		if isCall {
			return reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "the server is shutting down"))
		}
		return nil
	}

	h, ok := handlers[method]
	if !ok {
		if isCall {
			return reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "%s", method))
		}
		return nil // an unknown notification is ignored, as the spec asks
	}
	result, err := h(s, ctx, req, reply)
	if errors.Is(err, errLater) {
		return nil // the handler replies from its goroutine
	}
	if isCall {
		return reply(ctx, result, wireError(err))
	}
	if err != nil {
		s.log.Printf("%s: %v", method, err)
	}
	return nil
}

// requestFailed is LSP's error code for a request that was well formed
// but could not be carried out.
const requestFailed jsonrpc2.Code = -32803

// wireError gives an error its JSON-RPC code: go.lsp.dev sends a wrapped
// *jsonrpc2.Error as it is, dropping the message around it, so every
// error leaves here as an *Error with the full message.
func wireError(err error) error {
	if err == nil {
		return nil
	}
	var e *jsonrpc2.Error
	if errors.As(err, &e) && e.Error() == err.Error() {
		return e
	}
	code := requestFailed
	if e != nil {
		code = e.Code
	}
	return jsonrpc2.Errorf(code, "%s", err.Error())
}

// errLater tells handle that a handler will reply itself.
var errLater = errors.New("reply later")

// handler serves one method; it returns errLater when it will reply from
// a goroutine.
type handler func(s *Server, ctx context.Context, req jsonrpc2.Request, reply jsonrpc2.Replier) (any, error)

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		protocol.MethodInitialize:                         (*Server).initialize,
		protocol.MethodInitialized:                        (*Server).initialized,
		protocol.MethodShutdown:                           (*Server).shutdown,
		protocol.MethodCancelRequest:                      (*Server).cancelRequest,
		protocol.MethodWorkDoneProgressCancel:             (*Server).progressCancel,
		protocol.MethodTextDocumentDidOpen:                (*Server).didOpen,
		protocol.MethodTextDocumentDidChange:              (*Server).didChange,
		protocol.MethodTextDocumentDidClose:               (*Server).didClose,
		protocol.MethodTextDocumentDidSave:                (*Server).didSave,
		protocol.MethodTextDocumentCodeAction:             (*Server).codeAction,
		protocol.MethodTextDocumentDocumentSymbol:         (*Server).documentSymbol,
		methodCodeActionResolve:                           (*Server).codeActionResolve,
		protocol.MethodWorkspaceExecuteCommand:            (*Server).executeCommand,
		protocol.MethodWorkspaceDidChangeConfiguration:    (*Server).didChangeConfiguration,
		protocol.MethodWorkspaceDidChangeWorkspaceFolders: (*Server).didChangeWorkspaceFolders,
	}
	for _, m := range ignored {
		handlers[m] = ignore
	}
}

// decode reads a request's params.
func decode(req jsonrpc2.Request, v any) error {
	if len(req.Params()) == 0 {
		return nil
	}
	if err := json.Unmarshal(req.Params(), v); err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", req.Method(), err)
	}
	return nil
}

// later runs f in a goroutine the connection owns, with a context that
// $/cancelRequest for this call cancels; f's result is the reply.
func (s *Server) later(req jsonrpc2.Request, reply jsonrpc2.Replier, f func(ctx context.Context) (any, error)) (any, error) {
	ctx, cancel := context.WithCancel(s.ctx)
	key := callKey(req)
	if key != "" {
		s.runs.track(key, cancel)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		res, err := f(ctx)
		if key != "" {
			s.runs.untrack(key)
		}
		if ctx.Err() != nil && err == nil && s.ctx.Err() == nil {
			err = jsonrpc2.Errorf(requestCancelled, "cancelled")
		}
		reply(s.ctx, res, wireError(err))
	}()
	return nil, errLater
}

// go runs f in a goroutine the connection owns.
func (s *Server) goOwned(f func(ctx context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f(s.ctx)
	}()
}

// requestCancelled is LSP's error code for a request the client cancelled.
const requestCancelled jsonrpc2.Code = -32800
