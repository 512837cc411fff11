package lsp

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/reika-lsp/reika/agent"
)

// clientCaps is what the client said it can do, from initialize.
type clientCaps struct {
	name             string
	progress         bool // window.workDoneProgress
	applyEdit        bool // workspace.applyEdit
	documentChanges  bool // workspace.workspaceEdit.documentChanges
	annotations      bool // workspace.workspaceEdit.changeAnnotationSupport
	resourceCreate   bool // workspace.workspaceEdit.resourceOperations has "create"
	showDocument     bool // window.showDocument.support
	messageActions   bool // window.showMessage.messageActionItem (assumed when absent)
	codeActionLit    bool // textDocument.codeAction.codeActionLiteralSupport
	codeActionResolv bool // textDocument.codeAction.resolveSupport
	encoding         Encoding
}

// Message types of window/showMessage and window/logMessage.
const (
	msgError   = 1
	msgWarning = 2
	msgInfo    = 3
	msgLog     = 4
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
func (s *Server) showMessage(typ int, format string, args ...any) {
	s.notify("window/showMessage", map[string]any{"type": typ, "message": fmt.Sprintf(format, args...)})
}

// logMessage writes a line to the editor's log for this server.
func (s *Server) logMessage(typ int, format string, args ...any) {
	s.notify("window/logMessage", map[string]any{"type": typ, "message": fmt.Sprintf(format, args...)})
}

// ask shows a question with buttons and returns the chosen title, or ""
// when the user dismissed it, the client cannot ask, or it timed out.
func (s *Server) ask(ctx context.Context, typ int, message string, actions ...string) string {
	items := make([]map[string]string, len(actions))
	for i, a := range actions {
		items[i] = map[string]string{"title": a}
	}
	var picked *struct {
		Title string `json:"title"`
	}
	err := s.call(ctx, s.opts.ApplyTimeout, "window/showMessageRequest",
		map[string]any{"type": typ, "message": message, "actions": items}, &picked)
	if err != nil || picked == nil {
		return ""
	}
	return picked.Title
}

// sendStatus pushes the ctx chip to status lines (reika/status).
func (s *Server) sendStatus(chip agent.Chip, running bool) {
	s.notify(StatusNotification, map[string]any{
		"text":       chip.String(),
		"size":       chip.Size,
		"window":     chip.Window,
		"shed_point": chip.ShedPoint,
		"percent":    chip.Percent,
		"warn":       chip.Warn,
		"running":    running,
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
func (s *Server) startProgress(ctx context.Context, title, message string) *progress {
	p := &progress{s: s, token: fmt.Sprintf("reika-%d", progressSeq.Add(1))}
	s.mu.Lock()
	supported := s.client.progress
	s.mu.Unlock()
	if !supported {
		return p
	}
	if err := s.call(ctx, s.opts.ClientTimeout, "window/workDoneProgress/create", map[string]any{"token": p.token}, nil); err != nil {
		s.log.Printf("workDoneProgress/create: %v", err)
		return p
	}
	p.ok = true
	s.notify("$/progress", map[string]any{"token": p.token, "value": map[string]any{
		"kind": "begin", "title": title, "message": message, "cancellable": true}})
	return p
}

func (p *progress) report(message string) {
	if p.ok && !p.ended.Load() {
		p.s.notify("$/progress", map[string]any{"token": p.token, "value": map[string]any{"kind": "report", "message": message}})
	}
}

func (p *progress) end(message string) {
	if p.ok && p.ended.CompareAndSwap(false, true) {
		p.s.notify("$/progress", map[string]any{"token": p.token, "value": map[string]any{"kind": "end", "message": message}})
	}
}
