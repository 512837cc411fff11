package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
)

// executeCommand runs one of Reika's commands. Each replies at once or,
// when it must wait for the engine, from a goroutine the connection owns.
func (s *Server) executeCommand(_ context.Context, req jsonrpc2.Request, reply jsonrpc2.Replier) (any, error) {
	// The arguments stay raw, each decoded into its command's own type.
	var p struct {
		protocol.ExecuteCommandParams
		Arguments []json.RawMessage `json:"arguments"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	arg := func(v any) error {
		if len(p.Arguments) == 0 {
			return nil
		}
		if err := json.Unmarshal(p.Arguments[0], v); err != nil {
			return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", p.Command, err)
		}
		return nil
	}
	key := callKey(req)
	if _, needs := howToGive[p.Command]; needs && len(p.Arguments) == 0 {
		return nil, s.missingArgument(p.Command)
	}

	switch p.Command {
	case CmdAsk:
		var a askArgs
		if err := arg(&a); err != nil {
			return nil, err
		}
		res, err := s.startAsk(key, a)
		if err != nil {
			return nil, err
		}
		return res, nil
	case CmdCancel:
		if s.cancelRun() {
			return CancelResult{Cancelled: true}, nil
		}
		s.showMessage(protocol.MessageTypeInfo, "Reika has no run to cancel")
		return CancelResult{Cancelled: false}, nil
	case CmdStatus:
		return s.later(req, reply, typed(s.status))
	case CmdCompact:
		return s.later(req, reply, typed(s.compact))
	case CmdSave:
		return s.later(req, reply, typed(s.save))
	case CmdUndoRun:
		return s.later(req, reply, typed(s.undoRun))
	case CmdShowRecap:
		return s.later(req, reply, typed(s.showRecap))
	case CmdResume:
		var a ResumeArgs
		if err := arg(&a); err != nil {
			return nil, err
		}
		return s.later(req, reply, typed(func(ctx context.Context) (*ResumeResult, error) { return s.resume(ctx, a.ID) }))
	case CmdListSessions:
		return s.listSessions(), nil
	case CmdSetModel:
		var a ModelArgs
		if err := arg(&a); err != nil {
			return nil, err
		}
		return s.later(req, reply, typed(func(ctx context.Context) (*ModelResult, error) { return s.setModel(ctx, a.Model) }))
	case CmdNewSession:
		s.newSession()
		s.showMessage(protocol.MessageTypeInfo, "Reika: a new session starts with the next request")
		return NewSessionResult{OK: true}, nil
	case CmdApplyProposal, CmdApplyHunk, CmdRejectProposal:
		var a ProposalArgs
		if err := arg(&a); err != nil {
			return nil, err
		}
		if a.ID == "" {
			return nil, s.missingArgument(p.Command)
		}
		return s.later(req, reply, func(ctx context.Context) (any, error) { return s.answerProposal(ctx, p.Command, a) })
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q", p.Command)
}

// typed lets a command that returns its own result type reply from later;
// a failed command replies with its error alone.
func typed[T any](f func(context.Context) (T, error)) func(context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		res, err := f(ctx)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// status returns the chip and the budget, and shows the chip.
func (s *Server) status(ctx context.Context) (*StatusResult, error) {
	sess, err := s.session(ctx)
	if err != nil {
		s.showMessage(protocol.MessageTypeError, "Reika: %v", err)
		return nil, err
	}
	chip, b, parts := sess.agent.Chip(), sess.agent.Budget(), sess.agent.Breakdown()
	running := sess.agent.Running()
	s.sendStatus(chip, running)
	line := chip.String()
	if b.Window == 0 {
		line += " (no known window: set REIKA_CONTEXT_WINDOW)"
	} else {
		line += fmt.Sprintf(" · shed at %d, down to %d; reserve %d", b.ShedPoint, b.ShedTarget, b.Reserve)
	}
	line += " · " + parts.String()
	var slot *int
	if sl := sess.agent.Slot(); sl.ID >= 0 {
		slot = &sl.ID
		switch {
		case sl.Pinned && sl.Saving:
			line += fmt.Sprintf(" · llama.cpp slot %d, saved after each run", sl.ID)
		case sl.Pinned:
			line += fmt.Sprintf(" · llama.cpp slot %d", sl.ID)
		case sl.Saving:
			line += " · the engine's cache is saved after each run"
		}
		if sl.SaveError != "" {
			s.logMessage(protocol.MessageTypeWarning, "Reika: the last save of the engine's slot failed: %s", sl.SaveError)
		}
	}
	// The prompt cache, when it costs: a class that restarts from a
	// checkpoint is named with its advice, the others are in the result
	// (and check).
	cache := sess.agent.PromptCache()
	if cache.Checkpointed {
		line += " · prompt cache " + cache.Text
	}
	overrides := sess.agent.Info().Settings.Overrides
	if len(overrides) > 0 {
		line += fmt.Sprintf(" · %d editor setting%s override%s your config (see the log)", len(overrides), pluralSuffix(len(overrides)), map[bool]string{true: "s"}[len(overrides) == 1])
		for _, o := range overrides {
			s.logMessage(protocol.MessageTypeInfo, "Reika: %s", o)
		}
	}
	// The pushes as they are now: one with nothing but ignored values
	// changed nothing and left the session as it was.
	s.mu.Lock()
	editor := s.editor
	s.mu.Unlock()
	var ignored []string
	now, _, err := editor.setup(s.opts.Getenv).Resolve()
	if err != nil {
		now = sess.agent.Info().Settings
	}
	for _, ig := range now.Ignored {
		ignored = append(ignored, ig.Notice())
		s.logMessage(protocol.MessageTypeWarning, "Reika: %s", ig.Notice())
	}
	if len(ignored) > 0 {
		line += fmt.Sprintf(" · %d setting%s of the editor's settings push ignored: %s widen%s trust (see the log)",
			len(ignored), pluralSuffix(len(ignored)), map[bool]string{true: "it", false: "they"}[len(ignored) == 1], map[bool]string{true: "s"}[len(ignored) == 1])
	}
	sandbox := sess.agent.Info().Sandbox.Line
	model, _ := sess.agent.Models()
	s.logMessage(protocol.MessageTypeInfo, "Reika: commands: %s", sandbox)
	s.showMessage(protocol.MessageTypeInfo, "Reika: %s", line)
	return &StatusResult{
		Sandbox: sandbox,
		Ignored: ignored,
		Chip:    chip.String(), Size: chip.Size, Window: chip.Window, Percent: chip.Percent, Warn: chip.Warn,
		Breakdown: parts, Budget: b, Running: running, Model: model, Endpoint: sess.agent.Info().Connection.Options.BaseURL,
		Transcript: sess.agent.TranscriptPath(), Overrides: overrides, Slot: slot, SlotSaving: sess.agent.Slot().Saving,
		CacheClass: cache.Class, Cache: cache.Text, BashAllow: sess.agent.Info().Settings.BashAllow.Value,
	}, nil
}

// compact writes the note and folds now, and says what it did.
func (s *Server) compact(ctx context.Context) (*CompactResult, error) {
	sess, err := s.session(ctx)
	if err != nil {
		s.showMessage(protocol.MessageTypeError, "Reika: %v", err)
		return nil, err
	}
	before, after, err := sess.agent.Compact(ctx, nil)
	if ctx.Err() != nil {
		s.showMessage(protocol.MessageTypeInfo, "Reika: the compaction was cancelled; nothing was folded")
		return nil, ctx.Err()
	}
	if err != nil {
		s.showMessage(protocol.MessageTypeInfo, "Reika: %v", err)
		return &CompactResult{Compacted: false, Reason: err.Error(), Before: before, After: after}, nil
	}
	r := sess.agent.Recap()
	size := 0
	if r != nil {
		size = len(r.Text)
	}
	s.sendStatus(sess.agent.Chip(), false)
	s.showMessage(protocol.MessageTypeInfo, "Reika folded the conversation: %d → %d tokens, with a recap of %d bytes", before, after, size)
	return &CompactResult{Compacted: true, Before: before, After: after, RecapChars: size}, nil
}

// save writes the whole transcript as Markdown and opens it.
func (s *Server) save(ctx context.Context) (*PathResult, error) {
	sess, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	out, err := sess.agent.SaveMarkdown()
	if err != nil {
		return nil, err
	}
	if !s.canShowDocument() || !s.showDocument(ctx, out, true) {
		s.showMessage(protocol.MessageTypeInfo, "Reika saved the transcript to %s", out)
	}
	return &PathResult{Path: out}, nil
}

// showRecap opens the current recap as a document; when the user saves
// an edit of it, the edit replaces the recap on the next request.
func (s *Server) showRecap(ctx context.Context) (*RecapResult, error) {
	sess, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	r := sess.agent.Recap()
	if r == nil {
		s.showMessage(protocol.MessageTypeInfo, "Reika has no recap yet: nothing has been folded in this session")
		return &RecapResult{Recap: new(bool)}, nil
	}
	path := filepath.Join(sess.agent.Info().StateDir, "recap-"+filepath.Base(strings.TrimSuffix(sess.agent.TranscriptPath(), ".jsonl"))+".md")
	if err := os.WriteFile(path, []byte(r.Text), 0o600); err != nil {
		return nil, fmt.Errorf("write the recap: %w", err)
	}
	s.mu.Lock()
	sess.recapURI = string(PathToURI(path))
	s.mu.Unlock()
	if !s.canShowDocument() || !s.showDocument(ctx, path, true) {
		s.showMessage(protocol.MessageTypeInfo, "Reika wrote the recap to %s: edit and save it to replace the recap", path)
	}
	return &RecapResult{Path: path}, nil
}

// recapSaved takes the user's saved edit of the recap document.
func (s *Server) recapSaved(uri protocol.DocumentURI) {
	s.mu.Lock()
	sess := s.sess
	mine := sess != nil && sess.recapURI != "" && string(uri) == sess.recapURI
	s.mu.Unlock()
	if !mine {
		return
	}
	text := ""
	if d, ok := s.docs.Get(uri); ok {
		text = d.Text
	} else if path, err := URIToPath(uri); err == nil {
		data, err := os.ReadFile(path)
		if err != nil {
			return
		}
		text = string(data)
	}
	if sess.agent.EditRecap(text) {
		s.showMessage(protocol.MessageTypeInfo, "Reika: the edited recap replaces the old one on the next request")
	}
}

// resume continues the workspace's previous session, or the session id:
// the conversation comes back from its transcript (everything, shed or
// folded or not), and the next ask goes on from it. It waits for a
// session that is starting, so that a resume sent at any moment resumes;
// when the transcript cannot be resumed (another server holds it), the
// session in force stays and the message says so.
func (s *Server) resume(ctx context.Context, id string) (*ResumeResult, error) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	s.mu.Lock()
	cur, gen := s.sess, s.sessGen
	s.mu.Unlock()
	current := ""
	if cur != nil {
		current = cur.agent.TranscriptPath()
	}
	path := agent.LatestTranscript(s.opts.Getenv, s.opts.StateDir, s.root(), current)
	if id != "" {
		p, err := agent.TranscriptByID(s.opts.Getenv, s.opts.StateDir, s.root(), id)
		if err != nil {
			s.showMessage(protocol.MessageTypeError, "Reika could not resume %s: %v", id, err)
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%v", err)
		}
		if p == current {
			s.showMessage(protocol.MessageTypeInfo, "Reika: the session %s is the one in force", id)
			return &ResumeResult{Resumed: false, Path: p}, nil
		}
		path = p
	}
	if path == "" {
		s.showMessage(protocol.MessageTypeInfo, "Reika has no earlier session of this workspace to resume")
		return &ResumeResult{Resumed: false}, nil
	}
	s.mu.Lock()
	if s.sess == cur {
		s.sess = nil // the resumed session takes its place
	}
	s.mu.Unlock()
	sess, err := s.startSession(ctx, path)
	s.mu.Lock()
	ended := s.sessGen != gen // reika.newSession came meanwhile, and ended cur
	if err != nil && cur != nil && !ended && s.sess == nil {
		s.sess = cur
	}
	s.mu.Unlock()
	if err != nil {
		inForce := "a new session starts with the next request"
		if cur != nil && !ended {
			inForce = "the current session goes on"
		} else if cur != nil {
			cur.stopWarm()
			cur.agent.Close()
		}
		s.showMessage(protocol.MessageTypeError, "Reika could not resume the session in %s: %v; %s", filepath.Base(path), err, inForce)
		return nil, err
	}
	if cur != nil {
		s.cancelRun()
		cur.stopWarm()
		cur.agent.Close()
		s.logMessage(protocol.MessageTypeLog, "Reika: the previous session ended: reika.resume")
	}
	if sess.agent.TranscriptPath() != path {
		s.showMessage(protocol.MessageTypeInfo, "Reika: a new session was asked for while the session in %s resumed: the new one is in force", filepath.Base(path))
		return &ResumeResult{Resumed: false}, nil
	}
	n := len(sess.agent.Messages())
	s.showMessage(protocol.MessageTypeInfo, "Reika resumed the session in %s: %d messages; the next request goes on from them", filepath.Base(path), n)
	return &ResumeResult{Resumed: true, Path: path, Messages: n}, nil
}
