package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// answerProposal takes the user's choice on a proposal offered in code
// actions (reika.applyProposal, reika.applyHunk, reika.rejectProposal).
// "Applied" is never taken on the command's word. A client with code
// action literals applied the action's edit itself before running the
// command: the change must show in the document. A client without them
// got the bare command: the server applies the change itself, on disk,
// when the file is not open in the editor, and says plainly that it
// cannot when it is.
func (s *Server) answerProposal(ctx context.Context, cmd string, a ProposalArgs) (any, error) {
	o := s.offers.get(a.ID)
	if o == nil {
		return nil, fmt.Errorf("the proposal %s is no longer waiting: the run that made it has moved on", a.ID)
	}
	if cmd == CmdRejectProposal {
		return nil, s.answerOffer(a.ID, tools.Outcome{Reason: "the user rejected it"}, "you rejected it")
	}
	p := o.plan.Proposal
	key, done, why := "all", tools.Outcome{Applied: true}, ""
	if cmd == CmdApplyHunk {
		key = fmt.Sprintf("hunk %d", a.Hunk)
		done = tools.Outcome{Partial: true, Reason: fmt.Sprintf("the user applied only hunk %d", a.Hunk)}
		why = fmt.Sprintf("you applied only hunk %d", a.Hunk)
	}
	if s.caps().codeActionLit {
		l, ok := s.offers.expected(a.ID, key)
		if !ok {
			return nil, fmt.Errorf("reika: %s %s was not offered for proposal %s", cmd, key, a.ID)
		}
		if v, _ := s.verifyAnywhere(ctx, p.Abs, l); v != landed {
			s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s is not in the file: the editor ran the command without applying its edit", p.Path)
			return nil, s.answerOffer(a.ID, tools.Outcome{Reason: "The editor ran the apply command, but the change is not in the file; nothing was applied."}, "the editor did not apply its edit")
		}
		return nil, s.answerOffer(a.ID, done, why)
	}
	// The bare command: the client had no edit to apply.
	cur := s.current(p.Abs)
	if cur.Open {
		s.logMessage(protocol.MessageTypeInfo, "Reika's proposed change to %s:\n%s", p.Path, p.New)
		s.showMessage(protocol.MessageTypeWarning, "Reika cannot change %s: this editor takes no edits from a language server and the file is open in it; the proposed text is in the log", p.Path)
		return nil, s.answerOffer(a.ID, tools.Outcome{Reason: "This editor cannot take edits from the server and the file is open in it, so nothing was applied; the user has the proposed text in the log."}, "this editor takes no edits from Reika")
	}
	plan, err := PlanEdit(p, cur)
	if err == nil && cmd == CmdApplyHunk {
		plan, err = onlyHunk(plan, a.Hunk)
	}
	if err != nil {
		_, acc := s.planFailed(p, err)
		return nil, s.answerOffer(a.ID, tools.Outcome{Reason: err.Error()}, acc.why)
	}
	if err := writeFileAtomic(p.Abs, expectLanding(plan).want); err != nil {
		why := "the file could not be written"
		if errors.Is(err, errReadOnly) {
			why = "the file is read-only"
		}
		s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s was not applied: %v", p.Path, err)
		return nil, s.answerOffer(a.ID, tools.Outcome{Reason: err.Error()}, why)
	}
	s.showMessage(protocol.MessageTypeInfo, "Reika wrote its change to %s on disk (the file is not open in the editor)", p.Path)
	done.Note = "The change was written to the file on disk: the file was not open in the editor."
	return nil, s.answerOffer(a.ID, done, why)
}

// onlyHunk keeps one hunk (from 1) of a plan.
func onlyHunk(plan EditPlan, n int) (EditPlan, error) {
	if n < 1 || n > len(plan.Hunks) {
		return plan, fmt.Errorf("there is no hunk %d (the change has %d)", n, len(plan.Hunks))
	}
	plan.Hunks = plan.Hunks[n-1 : n]
	return plan, nil
}

// verifyAnywhere judges a landing in the open document, waiting for the
// editor's change as verify does, or on disk when the file is not open.
func (s *Server) verifyAnywhere(ctx context.Context, abs string, l landing) (verdict, Current) {
	if cur := s.current(abs); !cur.Open {
		if cur.Exists && cur.Text == l.want {
			return landed, cur
		}
		return missed, cur
	}
	if cur := s.current(abs); cur.Text == l.want {
		return landed, cur
	}
	return s.verify(ctx, abs, &sight{l: l})
}

// errReadOnly is a file whose owner may not write it.
var errReadOnly = errors.New("the file is read-only")

// writeFileAtomic replaces a file's contents through a temporary file in
// its directory, keeping its mode; a reader sees the old text or the new,
// never a part.
func writeFileAtomic(path, text string) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
		if mode&0o200 == 0 {
			// A rename would replace it all the same: the user's
			// read-only mark is kept.
			return fmt.Errorf("%w (mode %04o): not changed", errReadOnly, mode)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".reika-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
