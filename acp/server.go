package acp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent"
)

// Options configure a server.
type Options struct {
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// StateDir is where transcripts go ("" the user's state directory,
	// agent.NoTranscript none).
	StateDir string
	// HTTPClient, when set, carries every request to the engine.
	HTTPClient *http.Client
	// Log receives the connection's diagnostics; nil discards them.
	Log io.Writer
	// Version is the agent's version in initialize.
	Version string
}

// Serve speaks ACP with the client on r and w until the client closes its
// end or ctx ends. Every session it made is closed before it returns.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &Server{opts: opts, ctx: ctx, sessions: map[sdk.SessionId]*session{}}
	// The SDK reads r from its constructor on, and its logger is a plain
	// field (defect 4): r is held shut until the logger is in place.
	open := make(chan struct{})
	s.wire = &wire{w: w}
	s.conn = sdk.NewAgentSideConnection(s, s.wire, &lines{r: bufio.NewReader(r), open: open, wire: s.wire, sniff: s.sniff})
	s.conn.SetLogger(slog.New(slog.NewTextHandler(opts.Log, nil)))
	close(open)
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	s.closeAll()
	return nil
}

// lines is the client's input as the SDK reads it: nothing until open is
// closed, then a line at a time; a line that is not JSON is answered with
// the protocol's parse error (-32700), which the SDK would drop without a
// word, and not passed on.
type lines struct {
	r    *bufio.Reader
	open <-chan struct{}
	wire *wire
	// sniff sees each line before the SDK does.
	sniff func(line []byte)
	buf   []byte
	err   error
}

func (l *lines) Read(p []byte) (int, error) {
	<-l.open
	for len(l.buf) == 0 && l.err == nil {
		line, err := l.r.ReadBytes('\n')
		l.err = err
		switch t := bytes.TrimSpace(line); {
		case len(t) == 0:
		case json.Valid(t):
			l.buf = line
			if l.sniff != nil {
				l.sniff(t)
			}
		default:
			// Written beside the reading, as the SDK's answers are: a
			// client that writes before it reads must not stall it.
			go l.wire.send([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not JSON"}}` + "\n"))
		}
	}
	if len(l.buf) == 0 {
		return 0, l.err
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// wire is the connection's output: the SDK writes each message whole, in
// one Write, under its lock. It runs what waits for the answer that gives
// a session's id, once that answer is out.
type wire struct {
	w   io.Writer
	out sync.Mutex // held through one message's write

	mu      sync.Mutex
	waiting map[sdk.SessionId]func()
}

// send writes a message of the server's own, between the SDK's.
func (o *wire) send(p []byte) {
	o.out.Lock()
	defer o.out.Unlock()
	o.w.Write(p)
}

func (o *wire) Write(p []byte) (int, error) {
	o.out.Lock()
	n, err := o.w.Write(p)
	o.out.Unlock()
	o.mu.Lock()
	pending := len(o.waiting) > 0
	o.mu.Unlock()
	if pending {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				SessionID sdk.SessionId `json:"sessionId"`
			} `json:"result"`
		}
		if json.Unmarshal(p, &m) == nil && len(m.ID) > 0 && m.Result.SessionID != "" {
			o.mu.Lock()
			f := o.waiting[m.Result.SessionID]
			delete(o.waiting, m.Result.SessionID)
			o.mu.Unlock()
			if f != nil {
				go f() // the SDK holds its write lock here
			}
		}
	}
	return n, err
}

// afterSession runs f once the answer that gives the session id is out.
func (o *wire) afterSession(id sdk.SessionId, f func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.waiting == nil {
		o.waiting = map[sdk.SessionId]func(){}
	}
	o.waiting[id] = f
}

// Server is one client's connection: its capabilities and sessions. The
// SDK calls its methods, requests each on a goroutine of its own and
// notifications in order.
type Server struct {
	opts Options
	ctx  context.Context // the connection's: updates go out under it
	conn *sdk.AgentSideConnection
	wire *wire

	mu       sync.Mutex // guards caps, compaction, sessions
	caps     sdk.ClientCapabilities
	sessions map[sdk.SessionId]*session
	// compaction is set when the client offers the unstable
	// compaction_update (clientCapabilities.session.compaction), which
	// the SDK does not decode.
	compaction bool
}

// sniff reads what the SDK drops of the client's initialize: whether it
// takes compaction updates. The line is read before the SDK hands the
// request on, so the flag is set before Initialize runs.
func (s *Server) sniff(line []byte) {
	if !bytes.Contains(line, []byte(`"initialize"`)) {
		return
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			ClientCapabilities struct {
				Session struct {
					Compaction json.RawMessage `json:"compaction"`
				} `json:"session"`
			} `json:"clientCapabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "initialize" {
		return
	}
	c := bytes.TrimSpace(m.Params.ClientCapabilities.Session.Compaction)
	s.mu.Lock()
	s.compaction = len(c) > 0 && c[0] == '{'
	s.mu.Unlock()
}

func (s *Server) takesCompaction() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compaction
}

var _ sdk.Agent = (*Server)(nil)
var _ sdk.AgentLoader = (*Server)(nil)

// Initialize answers with what Reika does: loading sessions, prompts with
// embedded context (selections) and images, no authentication (the engine
// is the user's own).
func (s *Server) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	s.mu.Lock()
	s.caps = p.ClientCapabilities
	s.mu.Unlock()
	title := "Reika"
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentInfo:       &sdk.Implementation{Name: "reika", Title: &title, Version: s.opts.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession: true,
			// Images reach a model that takes them, and are told as left
			// out to the user of one that does not.
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List: &sdk.SessionListCapabilities{}, Resume: &sdk.SessionResumeCapabilities{}, Close: &sdk.SessionCloseCapabilities{},
				Delete: &sdk.SessionDeleteCapabilities{},
			},
			// The client's MCP servers over stdio and streamable HTTP
			// start, once the user allows each (acp/mcp.go).
			McpCapabilities: sdk.McpCapabilities{Http: true},
		},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

func (s *Server) capabilities() sdk.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// Authenticate is never needed: initialize offers no method.
func (s *Server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// Logout likewise.
func (s *Server) Logout(context.Context, sdk.LogoutRequest) (sdk.LogoutResponse, error) {
	return sdk.LogoutResponse{}, nil
}

// NewSession starts an agent session on the workspace cwd, as the
// language server does on its folders: the tools are confined to it. When
// the client offers MCP servers the user has to allow, it answers first,
// with the session's id (the question needs it), and the session starts
// once the user answered; a prompt waits for it.
func (s *Server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	offered := s.offeredServers(p.McpServers)
	var sess *session
	var err error
	if len(offered.asked) > 0 {
		sess, err = s.startLater(p.Cwd)
	} else {
		sess, err = s.start(ctx, p.Cwd, "", offered.trusted)
	}
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	// The commands are the session's: the client learns them once it
	// knows the session, after the answer.
	s.wire.afterSession(sess.id, func() {
		sess.sendCommands()
		if sess.ready != nil {
			sess.startAsked(&offered)
			return
		}
		sess.tell(offered.told)
	})
	return sdk.NewSessionResponse{SessionId: sess.id, Modes: sess.modes(), ConfigOptions: sess.configOptions()}, nil
}

// startLater makes a session of cwd that starts after its answer
// (startAsked), under an id chosen now.
func (s *Server) startLater(cwd string) (*session, error) {
	root, err := workspace(cwd)
	if err != nil {
		return nil, invalid(err)
	}
	id := agent.NewSessionID(time.Now())
	if s.opts.StateDir == agent.NoTranscript {
		id = randomID()
	}
	sess := &session{srv: s, root: root, known: map[string]bool{}, calls: map[string]string{}, id: sdk.SessionId(id), ready: make(chan struct{})}
	s.mu.Lock()
	s.sessions[sess.id] = sess
	s.mu.Unlock()
	return sess, nil
}

// clientServers asks the user about the MCP servers a client offered
// with a session it knows (load, resume), before the session starts, and
// returns those to start and what to tell of the others.
func (s *Server) clientServers(ctx context.Context, id sdk.SessionId, list []sdk.McpServer) ([]agent.MCPServerConfig, []string) {
	offered := s.offeredServers(list)
	asker := &session{srv: s, id: id}
	return asker.approve(ctx, &offered), offered.told
}

// LoadSession resumes the session id from its transcript (one written by
// either front end), replays its conversation as updates, and answers when
// the replay is done. The engine's slot is restored as reika.resume does.
func (s *Server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	servers, told := s.clientServers(ctx, p.SessionId, p.McpServers)
	sess, err := s.reopen(ctx, p.Cwd, p.SessionId, servers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	sess.replayHistory()
	sess.sendCommands()
	sess.tell(told)
	return sdk.LoadSessionResponse{Modes: sess.modes(), ConfigOptions: sess.configOptions()}, nil
}

// reopen starts the session id of cwd from its transcript, in place of
// the one of this process by that id, if any.
func (s *Server) reopen(ctx context.Context, cwd string, id sdk.SessionId, servers []agent.MCPServerConfig) (*session, error) {
	root, err := workspace(cwd)
	if err != nil {
		return nil, invalid(err)
	}
	path, err := agent.TranscriptByID(s.opts.Getenv, s.opts.StateDir, root, string(id))
	if err != nil {
		return nil, invalid(err)
	}
	s.mu.Lock()
	old := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	return s.start(ctx, cwd, path, servers)
}

// start makes a session: agent.Start on the workspace cwd, resuming
// the transcript at resume when it is set, with the client's MCP servers
// the user allowed.
func (s *Server) start(ctx context.Context, cwd, resume string, servers []agent.MCPServerConfig) (*session, error) {
	root, err := workspace(cwd)
	if err != nil {
		return nil, invalid(err)
	}
	sess := &session{srv: s, root: root, known: map[string]bool{}, calls: map[string]string{}, mcp: servers}
	if err := sess.startAgent(ctx, resume, ""); err != nil {
		return nil, failure(err)
	}
	s.mu.Lock()
	s.sessions[sess.id] = sess
	s.mu.Unlock()
	return sess, nil
}

// workspace checks the cwd a client gave: an absolute directory, neither
// / nor the home directory (the tools would reach everything).
func workspace(cwd string) (string, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("cwd %q is not an absolute path: give the project's directory", cwd)
	}
	root := filepath.Clean(cwd)
	st, err := os.Stat(root)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("cwd %s is not a directory", root)
	}
	if home, _ := os.UserHomeDir(); root == "/" || root == filepath.Clean(home) {
		return "", fmt.Errorf("cwd %s is too wide a workspace: open a project's directory", root)
	}
	return root, nil
}

// failure is err as the client reads it: its message, not "Internal
// error" with the text hidden in data.
func failure(err error) error {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return re
	}
	return &sdk.RequestError{Code: -32603, Message: err.Error()}
}

// invalid is bad params as the client reads them: the reason is the
// message.
func invalid(err error) *sdk.RequestError {
	return &sdk.RequestError{Code: -32602, Message: err.Error()}
}

func (s *Server) session(id sdk.SessionId) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[id]
	if sess == nil {
		return nil, invalid(fmt.Errorf("no session %s: start one with session/new or session/load", id))
	}
	return sess, nil
}

// Prompt runs one turn: a command (/compact, /status…) or a run of the
// agent, its reply streamed as updates; it answers with why the turn
// ended.
func (s *Server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return sess.prompt(ctx, p.Prompt)
}

// Cancel: the SDK has cancelled the prompt's context already; the run
// closes the engine's stream and answers "cancelled".
func (s *Server) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	if sess, err := s.session(p.SessionId); err == nil {
		sess.cancelRun()
	}
	return nil
}

// SetSessionMode switches between the modes modes() offers.
func (s *Server) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	if err := sess.setMode(p.ModeId); err != nil {
		return sdk.SetSessionModeResponse{}, invalid(err)
	}
	return sdk.SetSessionModeResponse{}, nil
}

// The methods initialize does not offer.

// CloseSession ends a session of this process: its run is cancelled and
// its engine slot saved; its transcript stays, for a later load.
func (s *Server) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s.mu.Lock()
	sess := s.sessions[p.SessionId]
	delete(s.sessions, p.SessionId)
	s.mu.Unlock()
	if sess == nil {
		return sdk.CloseSessionResponse{}, invalid(fmt.Errorf("no open session %s", p.SessionId))
	}
	sess.close()
	return sdk.CloseSessionResponse{}, nil
}

// UnstableDeleteSession deletes a session: it ends in this process, if
// it runs here, and its transcript is removed, so that no list shows it
// and no load finds it.
func (s *Server) UnstableDeleteSession(ctx context.Context, p sdk.UnstableDeleteSessionRequest) (sdk.UnstableDeleteSessionResponse, error) {
	s.mu.Lock()
	sess := s.sessions[p.SessionId]
	delete(s.sessions, p.SessionId)
	s.mu.Unlock()
	if sess != nil {
		sess.close()
	}
	if err := agent.DeleteTranscript(s.opts.Getenv, s.opts.StateDir, string(p.SessionId)); err != nil {
		return sdk.UnstableDeleteSessionResponse{}, invalid(err)
	}
	return sdk.UnstableDeleteSessionResponse{}, nil
}

// maxListed bounds the sessions session/list answers with.
const maxListed = 200

// ListSessions lists the sessions of the cwd (every workspace's without
// one), both front ends', newest first, titled by their first message.
func (s *Server) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	root := ""
	if p.Cwd != nil {
		r, err := workspace(*p.Cwd)
		if err != nil {
			return sdk.ListSessionsResponse{}, invalid(err)
		}
		root = r
	}
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for i, t := range agent.Transcripts(s.opts.Getenv, s.opts.StateDir, root) {
		if i == maxListed {
			break
		}
		title, updated := t.Title, t.Updated.UTC().Format(time.RFC3339)
		out.Sessions = append(out.Sessions, sdk.SessionInfo{SessionId: sdk.SessionId(t.ID), Cwd: t.Workspace, Title: &title, UpdatedAt: &updated})
	}
	return out, nil
}

// ResumeSession continues a session from its transcript, as session/load
// does, without sending its history again.
func (s *Server) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	servers, told := s.clientServers(ctx, p.SessionId, p.McpServers)
	sess, err := s.reopen(ctx, p.Cwd, p.SessionId, servers)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	sess.sendCommands()
	sess.tell(told)
	return sdk.ResumeSessionResponse{Modes: sess.modes(), ConfigOptions: sess.configOptions()}, nil
}

// SetSessionConfigOption sets one of the session's options
// (configOptions): its mode, as set_mode does (clients that know only
// config options, as the spec retires the modes API, select it there), or
// its model.
func (s *Server) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	v := p.ValueId
	if v == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalid(errors.New("the session's options take one of their values, not a boolean"))
	}
	sess, err := s.session(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	if err := sess.setOption(ctx, v.ConfigId, v.Value); err != nil {
		return sdk.SetSessionConfigOptionResponse{}, invalid(err)
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: sess.configOptions()}, nil
}

func (s *Server) closeAll() {
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[sdk.SessionId]*session{}
	s.mu.Unlock()
	for _, sess := range all {
		sess.close()
	}
}

// update sends one session/update; a failure (the client went away) is
// the connection's end, which Serve sees.
func (s *Server) update(id sdk.SessionId, u sdk.SessionUpdate) {
	_ = s.conn.SessionUpdate(s.ctx, sdk.SessionNotification{SessionId: id, Update: u})
}

// randomID names a session that keeps no transcript.
func randomID() string {
	var b [8]byte
	rand.Read(b[:])
	return "acp-" + hex.EncodeToString(b[:])
}

// oneLine is s on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
