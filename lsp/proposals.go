package lsp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

var offerSeq atomic.Int64

// current is the file a proposal is about as it is now: the open buffer,
// else the disk.
func (s *Server) current(abs string) Current {
	if d, ok := s.docs.ByPath(abs); ok {
		return Current{Text: d.Text, Version: d.Version, Open: true, Exists: true}
	}
	data, err := os.ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return Current{}
	}
	return Current{Text: string(data), Exists: err == nil}
}

// position is the position function edits are built with, in the
// negotiated encoding.
func (s *Server) position(enc Encoding) func(text string, offset int) protocol.Position {
	var last string
	var m *Mapper
	return func(text string, offset int) protocol.Position {
		if m == nil || text != last {
			m, last = NewMapper(text, enc), text
		}
		p, err := m.Position(offset)
		if err != nil {
			return protocol.Position{}
		}
		return p
	}
}

// propose hands one of the agent's changes to the editor: re-anchored on
// what the user has now, as minimal versioned edits, named by a change
// annotation where the client supports them (one that needs the user's
// confirmation for a protected path or a run that asks before every edit). A change that no longer
// fits the user's text is applied nowhere, and both the model and the user
// hear which hunk and why. An edit the editor says it applied to an open
// document counts only once the editor's next didChange shows it where it
// was planned.
func (s *Server) propose(ctx context.Context, p tools.Proposal) (tools.Outcome, error) {
	out, short := s.place(ctx, p)
	s.runs.record(p.Path, out, short)
	return out, nil
}

// place does propose's work; short says in a few words why the change was
// not applied, for the end-of-run line.
func (s *Server) place(ctx context.Context, p tools.Proposal) (tools.Outcome, string) {
	plan, err := PlanEdit(p, s.current(p.Abs))
	if err != nil {
		s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s was not applied: %v", p.Path, err)
		return tools.Outcome{Reason: err.Error()}, "you had changed those lines"
	}
	c, asked := s.caps(), s.runs.asked()
	if !c.applyEdit {
		// An offer is applied only by the user's pick of it.
		return s.offer(ctx, plan)
	}
	for replanned := false; ; replanned = true {
		edit, err := BuildWorkspaceEdit([]EditPlan{plan}, PathToURI, s.position(c.encoding), EditOptions{
			DocumentChanges: c.versioned, Annotations: c.annotations, ResourceCreate: c.resourceCreate,
			Label: asked, VersionZeroAsOne: c.zeroAsOne, Confirm: tools.RunMode(ctx) == tools.AskAll,
		})
		if err != nil {
			s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s cannot be sent to this editor: %v", p.Path, err)
			return tools.Outcome{Reason: err.Error()}, "the editor cannot take it"
		}
		// The user's yes is asked once the edit is one the editor can
		// take; a change placed again on the user's text is the same
		// change, already allowed.
		if !replanned {
			if out, short := s.confirmChange(ctx, p); out != nil {
				return *out, short
			}
		}
		var res ApplyWorkspaceEditResult
		// A cancel does not drop the answer: the editor may be applying
		// the edit as the user cancels, and what it did must be told.
		answerCtx, stop := graceAfter(ctx, cancelGrace)
		err = s.call(answerCtx, s.opts.ApplyTimeout, "workspace/applyEdit",
			ApplyWorkspaceEditParams{Label: "Reika: " + changeLabel(plan), Edit: edit}, &res)
		stop()
		if err != nil {
			if answerCtx.Err() != nil && ctx.Err() != nil {
				return tools.Outcome{Reason: "the run was cancelled before the editor answered; the editor may still apply the change"}, "cancelled before the editor answered"
			}
			// eglot answers an edit for a version it has passed with an
			// error, not applied:false: placed again below like a refusal.
			if cur := s.current(p.Abs); !replanned && cur.Open && plan.Current.Open && cur.Version != plan.Current.Version {
				if plan, err = s.again(p, cur); err != nil {
					return tools.Outcome{Reason: err.Error()}, "you had changed those lines"
				}
				continue
			}
			s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s was not applied: %v", p.Path, oneLine(err.Error()))
			return tools.Outcome{Reason: err.Error()}, "the editor did not take it"
		}
		if res.Applied {
			if !plan.Current.Open || plan.Empty() {
				return s.applied(p, plan, replanned), ""
			}
			l := expectLanding(plan)
			v, cur := s.verify(ctx, p.Abs, l)
			switch v {
			case landed:
				return s.applied(p, plan, replanned), ""
			case missed:
				if !c.skipsStale {
					s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s did not land as planned (you were typing there): check %s, undo reverts it", p.Path, l.where())
					return tools.Outcome{Reason: fmt.Sprintf("The editor applied the change while the user was typing in the file, and the file now differs from what was planned around %s. Read the file again before changing it.", l.where())}, "it did not land as planned, check " + p.Path + " " + l.where()
				}
				// Neovim skipped an edit for a version its buffer had
				// passed: place it again on the user's text, once.
				if !replanned && cur.Open {
					if plan, err = s.again(p, cur); err != nil {
						return tools.Outcome{Reason: err.Error()}, "you had changed those lines"
					}
					continue
				}
				s.showMessage(protocol.MessageTypeInfo, "Reika's change to %s was not applied: you were editing the file as it arrived", p.Path)
				return tools.Outcome{Reason: "The editor did not apply the change: the user was editing the file as it arrived. Read the file again before changing it."}, "you were editing the file"
			default:
				// eglot sends its changes only after the user paused
				// typing: the edit may well be there. Take the editor's
				// word for now, say it is unconfirmed, and check when
				// the text arrives.
				s.goOwned(func(ctx context.Context) { s.lateCheck(ctx, p, l) })
				out := s.applied(p, plan, replanned)
				out.Note = strings.TrimSpace(out.Note + " The editor reported the change applied, but its text has not reached the server yet: read the file before changing it again.")
				return out, unconfirmed
			}
		}
		// The user typed in the document while the edit was on its way,
		// so the editor refused a version that is gone: place the change
		// again on what the user has now (once), or say which hunk no
		// longer fits. The user's text is never overwritten.
		if cur := s.current(p.Abs); !replanned && cur.Open && plan.Current.Open && cur.Version != plan.Current.Version {
			if plan, err = s.again(p, cur); err != nil {
				return tools.Outcome{Reason: err.Error()}, "you had changed those lines"
			}
			continue
		}
		reason := res.FailureReason
		if reason == "" {
			reason = "the editor or the user declined it"
		}
		s.showMessage(protocol.MessageTypeInfo, "Reika's change to %s was not applied: %s", p.Path, oneLine(reason))
		return tools.Outcome{Reason: reason}, "declined"
	}
}

// again places the change once more, on the document as the user has it
// now, after the editor refused or skipped it. When it no longer fits, the
// user is told and the error says why.
func (s *Server) again(p tools.Proposal, cur Current) (EditPlan, error) {
	plan, err := PlanEdit(p, cur)
	if err != nil {
		s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s was not applied: %v", p.Path, err)
	}
	return plan, err
}

// unconfirmed is the "why" of a change the editor said it applied whose
// text has not arrived yet.
const unconfirmed = "unconfirmed"

// lateWait bounds the wait for the text of an unconfirmed change.
const lateWait = time.Minute

// lateCheck judges an unconfirmed change when the editor's text arrives,
// and tells the user if it did not land as planned.
func (s *Server) lateCheck(ctx context.Context, p tools.Proposal, l landing) {
	ctx, cancel := context.WithTimeout(ctx, lateWait)
	defer cancel()
	for {
		changed := s.docs.Changed()
		cur := s.current(p.Abs)
		if !cur.Open {
			return
		}
		if cur.Version != l.from {
			if l.judge(cur.Text) == missed {
				s.showMessage(protocol.MessageTypeWarning, "Reika's earlier change to %s did not land as planned (you were typing there): check %s, undo reverts it", p.Path, l.where())
			}
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// applied is the outcome of a change that landed.
func (s *Server) applied(p tools.Proposal, plan EditPlan, replanned bool) tools.Outcome {
	out := tools.Outcome{Applied: true}
	if replanned || plan.Reanchored {
		s.logMessage(protocol.MessageTypeInfo, "Reika placed its change to %s around your edits made since it read the file", p.Path)
		out.Note = "The user had changed the file since you read it; the change was placed on their text. Read the file again before changing it further."
	}
	return out
}

// cancelGrace is how long the answer to an applyEdit is awaited after the
// run was cancelled.
const cancelGrace = 5 * time.Second

// graceAfter is a context that ends d after ctx does (or when stop is
// called), keeping ctx's values.
func graceAfter(ctx context.Context, d time.Duration) (context.Context, func()) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			select {
			case <-time.After(d):
			case <-stopped:
			}
		case <-stopped:
		}
		cancel()
	}()
	return out, func() { close(stopped) }
}

// changeLabel names a change for the editor's confirmation.
func changeLabel(plan EditPlan) string {
	n := len(plan.Hunks)
	if plan.Proposal.Create {
		return "create " + plan.Proposal.Path
	}
	return fmt.Sprintf("%d change%s to %s", n, plural(n), plan.Proposal.Path)
}

// offer keeps a proposal for the code actions of its file and waits for
// the user's choice, or the apply timeout.
func (s *Server) offer(ctx context.Context, plan EditPlan) (out tools.Outcome, why string) {
	o := &offered{
		id:   strconv.FormatInt(offerSeq.Add(1), 10),
		uri:  PathToURI(plan.Proposal.Abs),
		plan: plan,
		done: make(chan offerAnswer, 1),
	}
	s.offers.add(o)
	defer s.offers.remove(o.id)
	s.showMessage(protocol.MessageTypeInfo, "Reika proposes %s: open the code actions on %s to apply it, one hunk of it, or reject it",
		changeLabel(plan), plan.Proposal.Path)
	select {
	case a := <-o.done:
		return a.out, a.why
	case <-ctx.Done():
		return tools.Outcome{Reason: "the run was cancelled before the user chose"}, "cancelled"
	case <-time.After(s.opts.ApplyTimeout):
		return tools.Outcome{Reason: "the user did not apply it in time"}, "you did not apply it in time"
	}
}

// answerOffer records the user's choice on an offered proposal.
func (s *Server) answerOffer(id string, out tools.Outcome, why string) error {
	o := s.offers.get(id)
	if o == nil {
		return fmt.Errorf("the proposal %s is no longer waiting: the run that made it has moved on", id)
	}
	select {
	case o.done <- offerAnswer{out, why}:
	default:
	}
	return nil
}
