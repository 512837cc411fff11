package lsp

import (
	"context"
	"fmt"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
)

// An undo of the run's change can reach the server after the run ended:
// VS Code and Helix send each change at once, and the user undoes a moment
// after the change landed, while the end line is on its way. The end line
// said "1 change applied"; the user hears the correction, and the model
// hears of the undo with its next request (agent.Session.Say between runs
// joins the next run), so that it does not make the change again.

// lateUndoWatch bounds how long after a run its changes are watched for
// the user's undo.
const lateUndoWatch = 2 * time.Minute

// watchLateUndos watches, after run r ended, the documents of the changes
// r applied and was seen landing, until each is undone or lateUndoWatch
// passed, or the changes are no longer the last run's (another run
// changed files, or reika.undoRun took them). undone are those the end
// line already told as undone by the user: only the model hears of them.
func (s *Server) watchLateUndos(ctx context.Context, r *activeRun, sess *agent.Session, undone map[int]bool) {
	ctx, cancel := context.WithTimeout(ctx, lateUndoWatch)
	defer cancel()
	for {
		changed := s.docs.Changed()
		edits := s.runs.editsOf(r)
		watching := false
		for i, w := range edits {
			if r.toldOfUndo(i) || !w.seen || w.created {
				continue
			}
			if cur := s.current(w.abs); !cur.Open || !undoneSince(w, cur.Text) {
				watching = watching || cur.Open
				continue
			}
			if len(s.runs.editsOf(r)) == 0 {
				// reika.undoRun took the changes after edits was read, and
				// this text is its undo, not the user's (it takes them
				// before it applies the undo).
				return
			}
			r.tellUndo(i)
			if !undone[i] {
				s.showMessage(protocol.MessageTypeInfo, "Reika: the change to %s was undone by you (%s); it will not be made again unless you ask", w.path, w.land.where())
			}
			sess.Say(undoNote(w))
		}
		if !watching {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// undoNote is what the model hears of the user's undo of w.
func undoNote(w wroteEdit) string {
	return fmt.Sprintf("(From the editor: the user undid your change to %s at %s; the file has its earlier text there again. Do not make that change again unless the user asks for it.)", w.path, w.land.where())
}

// toldOfUndo reports whether the model was told of the undo of the run's
// i-th applied edit.
func (r *activeRun) toldOfUndo(i int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.toldUndo[i]
}

// tellUndo records that the model is told of the undo of the run's i-th
// applied edit.
func (r *activeRun) tellUndo(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.toldUndo == nil {
		r.toldUndo = map[int]bool{}
	}
	r.toldUndo[i] = true
}
