package lsp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
)

// maxListed bounds the sessions reika.listSessions answers with, and
// shownListed those its message names.
const (
	maxListed   = 200
	shownListed = 5
)

// listSessions lists the workspace's sessions, both front ends', newest
// first, marking the one in force; the message names the newest few with
// their ids, for reika.resume.
func (s *Server) listSessions() *SessionsResult {
	s.mu.Lock()
	current := ""
	if s.sess != nil {
		current = s.sess.agent.TranscriptPath()
	}
	s.mu.Unlock()
	out := &SessionsResult{Sessions: []SessionInfo{}}
	var lines []string
	for i, t := range agent.Transcripts(s.opts.Getenv, s.opts.StateDir, s.root()) {
		if i == maxListed {
			break
		}
		info := SessionInfo{ID: t.ID, Title: t.Title, Updated: t.Updated.UTC().Format(time.RFC3339), Current: t.Path == current}
		out.Sessions = append(out.Sessions, info)
		if i < shownListed {
			mark := ""
			if info.Current {
				mark = " (in force)"
			}
			lines = append(lines, fmt.Sprintf("%s %q, %s%s", info.ID, info.Title, t.Updated.Local().Format("Jan 2 15:04"), mark))
		}
	}
	if len(out.Sessions) == 0 {
		s.showMessage(protocol.MessageTypeInfo, "Reika has no session of this workspace yet")
		return out
	}
	s.showMessage(protocol.MessageTypeInfo, "Reika: %d session%s of this workspace, newest first (reika.resume {id} resumes one): %s",
		len(out.Sessions), pluralSuffix(len(out.Sessions)), strings.Join(lines, "; "))
	return out
}

// setModel switches the session to model, or, without one, says the
// model and those the engine serves. A switch is a cache event: the
// message says the next request prefills the conversation again.
func (s *Server) setModel(ctx context.Context, model string) (*ModelResult, error) {
	sess, err := s.session(ctx)
	if err != nil {
		s.showMessage(protocol.MessageTypeError, "Reika: %v", err)
		return nil, err
	}
	current, all := sess.agent.Models()
	if model == "" {
		s.showMessage(protocol.MessageTypeInfo, "Reika: the model is %s; the engine serves %s (reika.setModel {model} switches)", current, strings.Join(all, ", "))
		return &ModelResult{Model: current, Models: all}, nil
	}
	told, err := sess.agent.SetModel(ctx, model)
	if err != nil {
		s.showMessage(protocol.MessageTypeError, "Reika: %v", err)
		return nil, err
	}
	s.showMessage(protocol.MessageTypeInfo, "Reika: %s", told)
	s.sendStatus(sess.agent.Chip(), false) // the new model's window
	current, _ = sess.agent.Models()
	return &ModelResult{Model: current, Models: all, Told: told}, nil
}
