package lsp

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
)

// notify sends a notification; a failure is only logged (the client may
// be gone).
func (s *Server) notify(method string, params any) {
	if err := s.conn.Notify(s.ctx, method, params); err != nil && s.ctx.Err() == nil {
		s.log.Printf("%s: %v", method, err)
	}
}

// call sends a request to the client and waits, at most timeout, for the
// answer.
func (s *Server) call(ctx context.Context, timeout time.Duration, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := s.conn.Call(ctx, method, params, result)
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("the editor did not answer %s within %v", method, timeout)
	}
	return err
}

// showMessage shows the user a line.
//
// A message is one line: editors show a message's line breaks badly
// (Helix collapses them, Neovim asks to press ENTER). A text of several
// lines is shown joined, and written whole to the log.
func (s *Server) showMessage(typ protocol.MessageType, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if strings.ContainsAny(text, "\r\n") {
		s.logMessage(typ, "%s", text)
		text = oneLine(text)
	}
	s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: typ, Message: text})
}

// logMessage writes a line to the editor's log for this server.
func (s *Server) logMessage(typ protocol.MessageType, format string, args ...any) {
	s.notify(protocol.MethodWindowLogMessage, &protocol.LogMessageParams{Type: typ, Message: fmt.Sprintf(format, args...)})
}

// ask shows a question with buttons and returns the chosen title, or ""
// when the user dismissed it, the client cannot ask, or it timed out.
func (s *Server) ask(ctx context.Context, typ protocol.MessageType, message string, actions ...string) string {
	items := make([]protocol.MessageActionItem, len(actions))
	for i, a := range actions {
		items[i] = protocol.MessageActionItem{Title: a}
	}
	var picked *protocol.MessageActionItem
	err := s.call(ctx, s.opts.ApplyTimeout, protocol.MethodWindowShowMessageRequest,
		&protocol.ShowMessageRequestParams{Type: typ, Message: message, Actions: items}, &picked)
	if err != nil || picked == nil {
		return ""
	}
	return picked.Title
}

// sendStatus pushes the ctx chip to status lines (reika/status).
func (s *Server) sendStatus(chip agent.Chip, running bool) {
	var breakdown *agent.Breakdown
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess != nil {
		b := sess.agent.Breakdown()
		breakdown = &b
	}
	s.notify(StatusNotification, &StatusParams{
		Breakdown: breakdown,
		Text:      chip.String(),
		Size:      chip.Size,
		Window:    chip.Window,
		ShedPoint: chip.ShedPoint,
		Percent:   chip.Percent,
		Warn:      chip.Warn,
		Running:   running,
	})
}

// progress is one work-done progress the server reports: a $/progress
// token the client created, or nothing when it cannot show progress.
type progress struct {
	s     *Server
	token string
	ok    bool
	ended atomic.Bool
}

var progressSeq atomic.Int64

// startProgress creates a cancellable progress, when the client supports
// it; otherwise the returned progress reports nothing and the caller falls
// back to messages.
// createTimeout bounds the wait for the answer to
// window/workDoneProgress/create.
const createTimeout = 2 * time.Second

func (s *Server) startProgress(ctx context.Context, title, message string) *progress {
	p := &progress{s: s, token: fmt.Sprintf("reika-%d", progressSeq.Add(1))}
	if !s.caps().progress {
		return p
	}
	// The params go by pointer: ProgressToken marshals itself only
	// through a pointer (defect 5 in doc.go).
	create := &protocol.WorkDoneProgressCreateParams{Token: *protocol.NewProgressToken(p.token)}
	// Every client answers a create at once; one that does not must not
	// hold the run for the whole client timeout.
	if err := s.call(ctx, min(s.opts.ClientTimeout, createTimeout), protocol.MethodWorkDoneProgressCreate, create, nil); err != nil {
		s.log.Printf("workDoneProgress/create: %v", err)
		return p
	}
	p.ok = true
	p.notify(&protocol.WorkDoneProgressBegin{
		Kind: protocol.WorkDoneProgressKindBegin, Title: title, Message: message, Cancellable: true})
	return p
}

func (p *progress) report(message string) {
	if p.ok && !p.ended.Load() {
		p.notify(&protocol.WorkDoneProgressReport{Kind: protocol.WorkDoneProgressKindReport, Message: message})
	}
}

func (p *progress) end(message string) {
	if p.ok && p.ended.CompareAndSwap(false, true) {
		p.notify(&protocol.WorkDoneProgressEnd{Kind: protocol.WorkDoneProgressKindEnd, Message: message})
	}
}

// notify sends one $/progress value. ProgressParams goes by pointer, or
// its token marshals as {} (defect 5 in doc.go, pinned by
// TestProgressParamsByValue).
func (p *progress) notify(value any) {
	p.s.notify(protocol.MethodProgress, &protocol.ProgressParams{Token: *protocol.NewProgressToken(p.token), Value: value})
}
