package lsp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/tools"
)

// reika.undoRun reverts what the last run that changed files wrote, as one
// workspace edit. Each applied change is recorded as the text it left and
// the spans it wrote there (its landing); at the undo, the spans are found
// in the text as it is now through the line changes made since, and each
// goes back to the text it replaced. A hunk whose lines changed since is
// left alone, and the user hears which file and line.

// wroteEdit is one applied change: what the document held before, the
// landing it left, and the text each hunk replaced.
type wroteEdit struct {
	path, abs string
	created   bool
	land      landing
	olds      []string // the text each hunk replaced, in order
	oldSpans  [][2]int // where each hunk was in land.old
	// seen: the server saw the edit land in the open document, so a
	// later text without it is the user's undo (not an editor that has
	// not sent its change yet, nor a closed file edited in memory).
	seen bool
}

// sawLanding marks the last recorded edit of abs as seen landed.
func (rs *runs) sawLanding(abs string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for i := len(rs.undo.edits) - 1; i >= 0; i-- {
		if rs.undo.edits[i].abs == abs {
			rs.undo.edits[i].seen = true
			return
		}
	}
}

// undoRecord is what the last run that changed files wrote, in order.
type undoRecord struct {
	run   *activeRun
	edits []wroteEdit
}

// wrote records a change of the run under way that the editor applied:
// it starts a new record when the run is not the one recorded.
func (rs *runs) wrote(p tools.Proposal, plan EditPlan) {
	if plan.Empty() {
		return
	}
	w := wroteEdit{path: p.Path, abs: p.Abs, created: plan.Creates(), land: expectLanding(plan)}
	for _, h := range plan.Hunks {
		w.olds = append(w.olds, plan.Current.Text[h.OldStart:h.OldEnd])
		w.oldSpans = append(w.oldSpans, [2]int{h.OldStart, h.OldEnd})
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.undo.run != rs.run || rs.run == nil {
		rs.undo = undoRecord{run: rs.run}
	}
	rs.undo.edits = append(rs.undo.edits, w)
}

// takeUndo returns the last run's record and forgets it.
func (rs *runs) takeUndo() undoRecord {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	u := rs.undo
	rs.undo = undoRecord{}
	return u
}

// canUndo reports whether the last run changed the document at abs.
func (rs *runs) canUndo(abs string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.ContainsFunc(rs.undo.edits, func(w wroteEdit) bool { return w.abs == abs })
}

// revert undoes edits (one file's, in the order they were applied) on
// now, the file's text as it is: the newest first, each hunk found through
// the changes made since it was written. kept names the hunks whose lines
// changed since, left alone.
func revert(now string, edits []wroteEdit) (text string, reverted int, kept []string) {
	text = now
	for i := len(edits) - 1; i >= 0; i-- {
		w := edits[i]
		since := tools.LineHunks(w.land.want, text)
		for j := len(w.land.spans) - 1; j >= 0; j-- {
			sp := w.land.spans[j]
			delta, changed := 0, false
			for _, h := range since {
				if overlaps(w.land.want, sp, h.OldStart, h.OldEnd) {
					changed = true
					break
				}
				if h.OldEnd <= sp[0] {
					delta += len(h.Text) - (h.OldEnd - h.OldStart)
				}
			}
			s, e := sp[0]+delta, sp[1]+delta
			if changed || s < 0 || e > len(text) || text[s:e] != w.land.texts[j] {
				kept = append(kept, fmt.Sprintf("%s line %d", w.path, lineOf(w.land.want, sp[0])))
				continue
			}
			text = text[:s] + w.olds[j] + text[e:]
			reverted++
		}
	}
	slices.Reverse(kept)
	return text, reverted, kept
}

// undoRun reverts the last run's changes where the text since is
// unchanged, as one workspace edit.
func (s *Server) undoRun(ctx context.Context) (*UndoResult, error) {
	if s.runs.busy() {
		s.showMessage(protocol.MessageTypeWarning, "Reika: a run is under way: wait for it to end, or run reika.cancel, then undo")
		return &UndoResult{Reason: "a run is under way"}, nil
	}
	c := s.caps()
	if !c.applyEdit {
		s.showMessage(protocol.MessageTypeWarning, "Reika cannot undo a run in this editor: it does not take workspace edits from the server; use the editor's undo")
		return &UndoResult{Reason: "the editor does not take workspace edits"}, nil
	}
	u := s.takeUndo()
	if len(u.edits) == 0 {
		s.showMessage(protocol.MessageTypeInfo, "Reika has no run to undo: no run of this session changed a file")
		return &UndoResult{Reason: "no run changed a file"}, nil
	}
	res := &UndoResult{}
	plans, files := s.undoPlans(u.edits, res)
	if len(plans) > 0 {
		edit, err := BuildWorkspaceEdit(plans, PathToURI, s.position(c.encoding), EditOptions{
			DocumentChanges: c.versioned, VersionZeroAsOne: c.zeroAsOne,
		})
		if err != nil {
			return nil, fmt.Errorf("reika.undoRun: %w", err)
		}
		if why := s.applyUndo(ctx, edit); why != "" {
			s.showMessage(protocol.MessageTypeWarning, "Reika did not undo the run: %s", why)
			return &UndoResult{Reason: why}, nil
		}
		res.Undone = true
	}
	s.tellUndone(res, files)
	return res, nil
}

// undoPlans plans the revert of the run's edits, file by file in the
// order the run first changed them, and the files it reverts. What it
// leaves alone (a new file, a file gone, text changed since) goes to
// res.Kept, and res.Reverted counts the changes the plans revert.
func (s *Server) undoPlans(edits []wroteEdit, res *UndoResult) (plans []EditPlan, files []string) {
	var order []string
	byFile := map[string][]wroteEdit{}
	for _, w := range edits {
		if byFile[w.abs] == nil {
			order = append(order, w.abs)
		}
		byFile[w.abs] = append(byFile[w.abs], w)
	}
	for _, abs := range order {
		edits := byFile[abs]
		path := edits[0].path
		if edits[0].created {
			res.Kept = append(res.Kept, path+" (a new file: delete it if you do not want it)")
			continue
		}
		cur := s.current(abs)
		if !cur.Exists {
			res.Kept = append(res.Kept, path+" (it is gone)")
			continue
		}
		text, n, kept := revert(cur.Text, edits)
		res.Kept = append(res.Kept, kept...)
		if n == 0 || text == cur.Text {
			continue
		}
		version := int32(-1)
		if cur.Open {
			version = cur.Version
		}
		p := tools.Proposal{Path: path, Abs: abs, Old: cur.Text, New: text, Version: version, Hunks: tools.LineHunks(cur.Text, text)}
		plan, err := PlanEdit(p, cur)
		if err != nil {
			res.Kept = append(res.Kept, fmt.Sprintf("%s (%v)", path, err))
			continue
		}
		plans = append(plans, plan)
		files = append(files, path)
		res.Reverted += n
	}
	return plans, files
}

// applyUndo sends the undo's edit; it returns why the editor did not
// apply it, "" when it did.
func (s *Server) applyUndo(ctx context.Context, edit WorkspaceEdit) string {
	var ar ApplyWorkspaceEditResult
	err := s.call(ctx, s.opts.ApplyTimeout, "workspace/applyEdit", ApplyWorkspaceEditParams{Label: "Reika: undo this run", Edit: edit}, &ar)
	if err == nil && ar.Applied {
		return ""
	}
	why := ar.FailureReason
	if err != nil {
		why = oneLine(err.Error())
	}
	if why == "" {
		why = "the editor or the user declined it"
	}
	return why
}

// tellUndone tells the user what the undo reverted in files and what it
// left alone.
func (s *Server) tellUndone(res *UndoResult, files []string) {
	line := fmt.Sprintf("Reika undid %d change%s of the last run in %s", res.Reverted, pluralSuffix(res.Reverted), strings.Join(files, ", "))
	if res.Reverted == 0 {
		line = "Reika undid nothing of the last run"
	}
	if len(res.Kept) > 0 {
		line += "; left alone, changed since: " + strings.Join(res.Kept, ", ")
		s.showMessage(protocol.MessageTypeWarning, "%s", line)
	} else {
		s.showMessage(protocol.MessageTypeInfo, "%s", line)
	}
}

// takeUndo is the last run's record, forgotten: one undo per run.
func (s *Server) takeUndo() undoRecord { return s.runs.takeUndo() }

// undoneSince reports whether the user undid w in the text now: every
// place the change wrote holds again what it replaced (the user's other
// edits aside). An undo in a later didChange than the edit's own is seen
// here, at the end of the run, as landing.go sees one in the same change.
func undoneSince(w wroteEdit, now string) bool {
	if !w.seen || w.created || now == w.land.want {
		return false
	}
	since := tools.LineHunks(w.land.old, now)
	for _, sp := range w.oldSpans {
		for _, h := range since {
			if overlaps(w.land.old, sp, h.OldStart, h.OldEnd) {
				return false
			}
		}
	}
	return true
}

// lateUndos marks as undone by the user the applied changes of run r that
// the documents as they are now no longer hold, and returns their indexes
// in the run's undo record.
func (s *Server) lateUndos(r *activeRun) map[int]bool {
	edits := s.runs.editsOf(r)
	undone := map[int]bool{}
	for i, w := range edits {
		if cur := s.current(w.abs); cur.Open && undoneSince(w, cur.Text) {
			r.markUndone(w.path)
			undone[i] = true
		}
	}
	return undone
}

// tellUndos tells the model, through the run's next user message, of the
// run's applied edits the user has undone since (an undo in a didChange
// of its own, after the edit was seen landing): it must not make them
// again unless asked.
func (s *Server) tellUndos(r *activeRun, sess *agent.Session) {
	edits := s.runs.editsOf(r)
	for i, w := range edits {
		if r.toldOfUndo(i) {
			continue
		}
		if cur := s.current(w.abs); cur.Open && undoneSince(w, cur.Text) {
			r.tellUndo(i)
			sess.Say(undoNote(w))
		}
	}
}

// editsOf is what run r applied so far, when r is the run recorded.
func (rs *runs) editsOf(r *activeRun) []wroteEdit {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.undo.run != r {
		return nil
	}
	return append([]wroteEdit(nil), rs.undo.edits...)
}
