package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/tools"
)

// session is one ACP session: an agent session on one workspace, the mode
// its runs take, and the tool calls of the run under way.
type session struct {
	srv  *Server
	id   sdk.SessionId
	root string

	runMu sync.Mutex // one turn at a time

	mu       sync.Mutex // guards the fields below
	agent    *agent.Session
	stopWarm context.CancelFunc
	cancel   context.CancelFunc // the turn under way, nil between turns
	mode     tools.Mode
	notices  []string // Start's warnings, told at the first turn
	// known are the absolute paths the client told of (in a prompt) or
	// the agent changed: only their text is asked of the client, so that
	// a grep over the tree does not open every file in the editor.
	known map[string]bool
	// calls maps the model's tool-call ids in the run under way to the
	// ids the client knows (unique in the session; the model's repeat).
	calls   map[string]string
	running string // the tool call running now, "" between calls
	// usage is the last usage update sent (used, size).
	usage [2]int
	// steps are the subagents' steps shown in their tool calls, by id.
	steps  map[string][]string
	serial int // for the ids of tool calls and status lines

	// mcp are the MCP servers of the client's the session runs (acp/mcp.go),
	// again in a conversation /new starts.
	mcp []agent.MCPServerConfig
	// ready is closed once a session answered before its start (it asks
	// about the client's MCP servers first) has started, or failed to
	// (startErr); nil for one started before its answer.
	ready    chan struct{}
	startErr error
	closed   bool
}

// startAgent starts (or, with resume, resumes) the agent session; id,
// when set, is the new session's.
func (s *session) startAgent(ctx context.Context, resume, id string) error {
	o := s.srv.opts
	s.mu.Lock()
	servers := s.mcp
	s.mu.Unlock()
	var term tools.Terminal
	if s.srv.capabilities().Terminal {
		term = s.terminal
	}
	a, err := agent.Start(ctx, agent.Setup{
		Getenv:     o.Getenv,
		HTTPClient: o.HTTPClient,
		Folders:    []string{s.root},
		Buffers:    buffers{s},
		Proposer:   s.propose,
		Ask:        s.ask,
		Terminal:   term,
		StateDir:   o.StateDir,
		Resume:     resume,
		MCPServers: servers,
		ID:         id,
	})
	if err != nil {
		return err
	}
	var notices []string
	for _, n := range a.Info().Notices {
		if n.Warning {
			notices = append(notices, n.Text)
		}
	}
	if id = a.ID(); id == "" {
		id = randomID()
	}
	warmCtx, stop := context.WithCancel(s.srv.ctx)
	s.mu.Lock()
	stopOld := s.stopWarm // the session /new replaces: its warm-up ends
	s.agent, s.stopWarm, s.notices = a, stop, notices
	for _, m := range modes {
		if resume != "" && string(m.mode) == a.Mode() {
			s.mode = m.mode // as the session last had it
		}
	}
	if s.id == "" {
		s.id = sdk.SessionId(id)
	}
	s.mu.Unlock()
	if stopOld != nil {
		stopOld()
	}
	if a.Info().Settings.Warmup.Value {
		go func() {
			defer stop()
			if err := a.Warmup(warmCtx); err != nil && warmCtx.Err() == nil {
				fmt.Fprintf(s.srv.opts.Log, "reika acp: warm-up: %v\n", err)
			}
		}()
	}
	return nil
}

func (s *session) agentSession() *agent.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agent
}

// close ends the turn under way and the agent session.
func (s *session) close() {
	s.cancelRun()
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.mu.Lock()
	a, stop := s.agent, s.stopWarm
	s.agent, s.closed = nil, true
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	if a != nil {
		a.Close()
	}
}

func (s *session) cancelRun() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// The modes a session offers: the tools' own.
var modes = []struct {
	id   sdk.SessionModeId
	mode tools.Mode
	name string
	desc string
}{
	{"normal", tools.Normal, "Normal", "edits apply (your editor's undo reverts them); protected paths, commands off the allow list and new hosts ask first"},
	{"ask", tools.AskAll, "Ask first", "every edit and every command asks first"},
	{"plan", tools.Plan, "Plan", "read-only: reads, searches and read-only commands; no edits, no other commands; the answer ends in a numbered plan"},
}

func (s *session) modes() *sdk.SessionModeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &sdk.SessionModeState{}
	for _, m := range modes {
		desc := m.desc
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: m.id, Name: m.name, Description: &desc})
		if m.mode == s.mode {
			st.CurrentModeId = m.id
		}
	}
	return st
}

func (s *session) setMode(id sdk.SessionModeId) error {
	for _, m := range modes {
		if m.id == id {
			s.mu.Lock()
			s.mode = m.mode
			a := s.agent
			s.mu.Unlock()
			if a != nil {
				// In the transcript: a load of the session, in this
				// process or the next, keeps it.
				a.SetMode(string(m.mode))
			}
			return nil
		}
	}
	return fmt.Errorf("no mode %q: the modes are normal, ask and plan", id)
}

// prompt runs one turn.
func (s *session) prompt(ctx context.Context, blocks []sdk.ContentBlock) (sdk.PromptResponse, error) {
	// The SDK cancelled the turn this prompt supersedes; it ends first.
	if err := s.started(ctx); err != nil {
		return sdk.PromptResponse{}, err
	}
	s.runMu.Lock()
	defer s.runMu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	a, mode, notices := s.agent, s.mode, s.notices
	s.cancel, s.notices = cancel, nil
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
	}()
	if a == nil {
		return sdk.PromptResponse{}, failure(errors.New("the session was closed: start a new one"))
	}
	for _, n := range notices {
		s.status(n)
	}
	takes, why := a.TakesImages()
	text, images, left := s.instruction(blocks, takes, why)
	for _, l := range left {
		s.status(l)
	}
	if strings.TrimSpace(text) == "" && len(images) == 0 {
		return sdk.PromptResponse{}, invalid(errors.New("the prompt holds no text"))
	}
	if c, ok := commandOf(text); ok && len(images) == 0 {
		return s.command(ctx, c)
	}
	res, err := a.RunImages(tools.WithRun(ctx, mode), text, images, s.reporter())
	s.chip(a.Chip())
	switch {
	case res.End == agent.Answered:
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case res.End == agent.Canceled || ctx.Err() != nil:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case res.End == agent.StepLimit:
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests}, nil
	}
	if err == nil {
		err = errors.New(res.End.String())
	}
	return sdk.PromptResponse{}, failure(fmt.Errorf("the run stopped: %s", oneLine(err.Error())))
}

// maxImage bounds an image a prompt attaches, in bytes of base64.
const maxImage = 8 << 20

// instruction is the prompt's blocks as the model reads them, each a
// paragraph of its own: the text, the files the client linked (by path),
// and the selections it embedded (fenced, with their path); and the
// images, where the model takes them (takes). The files become known:
// their text is asked of the client. What the model cannot take (an
// image, why not otherwise; audio, a binary resource) is named in its
// place, and left returns what the user should be told of it.
func (s *session) instruction(blocks []sdk.ContentBlock, takes bool, why string) (text string, images []agent.Image, left []string) {
	var parts []string
	for _, c := range blocks {
		switch {
		case c.Image != nil && takes && c.Image.Data != "" && len(c.Image.Data) <= maxImage:
			images = append(images, agent.Image{MIME: c.Image.MimeType, Data: c.Image.Data})
		case c.Image != nil:
			reason := why
			if takes {
				reason = fmt.Sprintf("only an image's data of up to %d MiB is sent, not a link or a larger one", maxImage>>20)
			}
			parts = append(parts, "(the user attached an image, which Reika cannot pass to this model: it was left out)")
			left = append(left, fmt.Sprintf("an image was left out: %s", reason))
		case c.Text != nil:
			if t := strings.Trim(c.Text.Text, "\n"); strings.TrimSpace(t) != "" {
				parts = append(parts, t)
			}
		case c.ResourceLink != nil:
			parts = append(parts, fmt.Sprintf("(file: %s)", s.mention(c.ResourceLink.Uri)))
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("%s:\n```\n%s\n```", s.mention(r.Uri), strings.TrimRight(r.Text, "\n")))
		default:
			what := blockKind(c)
			parts = append(parts, fmt.Sprintf("(the user attached %s, which Reika cannot pass to this model: it was left out)", what))
			left = append(left, fmt.Sprintf("%s was left out: Reika sends the model text only", what))
		}
	}
	if len(parts) == len(left) && len(images) == 0 {
		return "", nil, left // nothing the model can read
	}
	return strings.Join(parts, "\n\n"), images, left
}

// blockKind names a block the model cannot take.
func blockKind(c sdk.ContentBlock) string {
	switch {
	case c.Image != nil:
		return "an image"
	case c.Audio != nil:
		return "an audio clip"
	case c.Resource != nil:
		return "a binary resource"
	}
	return "a block of an unknown kind"
}

// mention is how a prompt names a file: its workspace path when it is
// in the workspace, else the URI as given; a file in the workspace
// becomes known.
func (s *session) mention(uri string) string {
	abs, ok := pathOf(uri)
	if !ok {
		return uri
	}
	rel, inside := s.relative(abs)
	if !inside {
		return abs
	}
	s.mu.Lock()
	s.known[abs] = true
	s.mu.Unlock()
	return rel
}
