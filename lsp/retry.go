package lsp

import (
	"context"
	"fmt"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// A change the editor refused for a version the user's typing had passed
// (VS Code, Helix, eglot 1.9), or skipped for it (Neovim), is not lost: it
// waits until the user stops typing in that document, is placed again on
// the text as it is then, and is sent again. The wait is bounded (retryWait
// from the first refusal); once it ran out the change is sent once more,
// and only a refusal then drops it. A change whose lines (or the lines next
// to them, its anchor) the user's typing changed cannot be placed again:
// it is dropped at once, and the user hears which lines.

// retryQuiet is how long a document must go without a didChange before a
// refused change is placed again: longer than the pauses within typing,
// and than the clients wait before they send it (Neovim 150 ms, eglot
// 0.5 s). retryWait bounds the whole wait for it.
const (
	retryQuiet = time.Second
	retryWait  = 30 * time.Second
)

func (s *Server) retryQuiet() time.Duration {
	if s.opts.RetryQuiet > 0 {
		return s.opts.RetryQuiet
	}
	return retryQuiet
}

func (s *Server) retryWait() time.Duration {
	if s.opts.RetryWait > 0 {
		return s.opts.RetryWait
	}
	return retryWait
}

// mayRetry reports whether a change refused now may be placed again: not
// once the wait for the typing to stop ran out.
func (pl *placing) mayRetry() bool { return !pl.last }

// awaitTypingStops waits, after the editor refused or skipped the change
// planned on version from, until the user's typing reached the server
// (the document passed from: eglot sends it only after a pause) and then
// stopped (no didChange for retryQuiet), within what is left of the
// change's wait. It returns the document as it is then; ok is false when
// the run was cancelled meanwhile.
func (s *Server) awaitTypingStops(ctx context.Context, pl *placing, from int32) (cur Current, ok bool) {
	if pl.until.IsZero() {
		pl.until = time.Now().Add(s.retryWait())
	}
	pl.tries++
	s.runs.report(fmt.Sprintf("waiting for you to stop typing in %s", pl.p.Path))
	abs, quiet := pl.p.Abs, s.retryQuiet()
	for {
		changed := s.docs.Changed()
		cur = s.current(abs)
		q, open := s.docs.Quiet(abs)
		if !open || (cur.Version != from && q >= quiet) {
			return cur, true
		}
		left := time.Until(pl.until)
		if left <= 0 {
			pl.last = true
			return cur, true
		}
		wait := left
		if cur.Version != from {
			wait = min(quiet-q, left)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-changed:
		case <-ctx.Done():
			t.Stop()
			return s.current(abs), false
		}
		t.Stop()
	}
}

// replaceAfterTyping is place's step after the editor refused or skipped
// the change: wait for the typing to stop, and place the change again on
// the text then. done is set with the outcome when the change cannot be
// placed again (the user's typing changed its lines) or the run was
// cancelled meanwhile.
func (s *Server) replaceAfterTyping(ctx context.Context, pl *placing, from int32) (plan EditPlan, out tools.Outcome, a account, done bool) {
	cur, ok := s.awaitTypingStops(ctx, pl, from)
	if !ok && pl.moving != nil {
		out, a, _ = s.leftAstray(pl, "the run was cancelled")
		return plan, out, a, true
	}
	if !ok {
		s.showMessage(protocol.MessageTypeInfo, "Reika's change to %s was not applied: the run was cancelled while it waited for you to stop typing", pl.p.Path)
		return plan, tools.Outcome{Reason: "the run was cancelled while the change waited for the user to stop typing; it was not applied"}, says("cancelled while you were typing"), true
	}
	plan, err := PlanEdit(pl.p, cur)
	if err != nil && pl.moving != nil {
		out, a, _ = s.leftAstray(pl, "you changed its lines since")
		return plan, out, a, true
	}
	if err != nil {
		// The user's typing changed the lines it was for: told as any
		// change that no longer fits, naming the hunk.
		out, a := s.planFailed(pl.p, err)
		return plan, out, a, true
	}
	pl.replanned = true
	return plan, tools.Outcome{}, account{}, false
}

// keptTyping is the account of a change refused again after the wait for
// the user to stop typing ran out.
func (s *Server) keptTyping(pl *placing) (tools.Outcome, account, *Current) {
	if pl.moving != nil {
		return s.leftAstray(pl, "you kept typing there")
	}
	s.showMessage(protocol.MessageTypeInfo, "Reika's change to %s was not applied: you kept typing there for %v; ask again when you are done", pl.p.Path, s.retryWait().Round(time.Second))
	return tools.Outcome{Reason: fmt.Sprintf("The editor refused the change %d times: the user kept typing in the file for %v. Read the file again before changing it.", pl.tries+1, s.retryWait().Round(time.Second))},
		says("you kept typing there"), nil
}
