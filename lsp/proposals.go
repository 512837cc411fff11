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
	out, a := s.place(ctx, p)
	s.runs.record(p.Path, out, a)
	return out, nil
}

// says is the end line's account of a change not applied, or not whole,
// in a few words.
func says(why string) account { return account{why: why} }

// planFailed is the account of a change that could not be placed: the
// words of its kind, never a guess.
func (s *Server) planFailed(p tools.Proposal, err error) (tools.Outcome, account) {
	s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s was not applied: %v", p.Path, err)
	if pe, ok := errors.AsType[*PlanError](err); ok {
		return tools.Outcome{Reason: err.Error()}, says(pe.Kind.Short())
	}
	return tools.Outcome{Reason: err.Error()}, says("it no longer fits the file")
}

// place does propose's work, and says what became of the change for the
// end-of-run line. A change the editor refused or skipped because the user
// was typing waits for the typing to stop and is placed again on the
// user's text (retry.go).
func (s *Server) place(ctx context.Context, p tools.Proposal) (tools.Outcome, account) {
	if why, lost := s.docs.Lost(p.Abs); lost {
		// The editor holds a text the server does not know: an edit
		// planned on the disk's copy would land in the user's unsaved
		// text. Refused until the editor sends the text whole again.
		s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s was not applied: Reika lost track of your text there (%s); reopen the file and ask again", p.Path, oneLine(why))
		return tools.Outcome{Reason: "the file is open in the editor with text Reika lost track of, so it cannot tell where the user's unsaved changes are. " +
			"It will take changes to this file again once the user reopens it; do not retry now."}, says("Reika lost track of your text there: reopen the file")
	}
	plan, err := PlanEdit(p, s.current(p.Abs))
	if err != nil {
		return s.planFailed(p, err)
	}
	c := s.caps()
	if !c.applyEdit {
		// An offer is applied only by the user's pick of it.
		out, why := s.offer(ctx, plan)
		return out, says(why)
	}
	pl := &placing{p: p, c: c, asked: s.runs.asked()}
	for {
		out, a, again := s.placeOnce(ctx, pl, plan)
		if again == nil {
			return out, a
		}
		var done bool
		if plan, out, a, done = s.replaceAfterTyping(ctx, pl, plan.Current.Version); done {
			return out, a
		}
	}
}

// placing is what the attempts to place one proposal share.
type placing struct {
	p     tools.Proposal
	c     clientCaps
	asked string // the run's instruction, the edit's label
	// replanned is set once the change was placed again on the user's
	// text: it is not asked about again.
	replanned bool
	// until ends the wait for the user to stop typing before a refused
	// change is placed again (zero before the first refusal); last is set
	// once it ran out: a refusal then is final. tries counts the waits.
	until time.Time
	last  bool
	tries int
	// typing is set when this attempt waited for the user to stop typing.
	typing bool
	// moving is set while a change eglot wrote away from where it was
	// planned is moved where it belongs (astray_fix.go); p is then the
	// move.
	moving *misplacing
}

// placeOnce sends plan to the editor and finds what became of it. It
// returns the outcome, or, when the editor refused or skipped it for the
// user's typing, the document as the server has it now, to place the
// change on again once the typing stops.
func (s *Server) placeOnce(ctx context.Context, pl *placing, plan EditPlan) (tools.Outcome, account, *Current) {
	p, c := pl.p, pl.c
	// eglot 1.17 applies an edit over typing it has not sent: send only
	// once the document has been quiet for longer than eglot waits before
	// it sends.
	pl.typing = false
	if c.appliesStale && plan.Current.Open {
		pl.typing = s.awaitQuiet(ctx, p.Abs)
		if cur := s.current(p.Abs); cur.Open && cur.Version != plan.Current.Version {
			var err error
			if plan, err = PlanEdit(p, cur); err != nil {
				out, a := s.planFailed(p, err)
				return out, a, nil
			}
		}
	}
	edit, out, a := s.allowedEdit(ctx, pl, &plan)
	if out != nil {
		return *out, a, nil
	}
	p = pl.p
	var w *sight
	l := expectLanding(plan)
	if plan.Current.Open && !plan.Empty() {
		// Watched from before it is sent: the didChange that carries it
		// may come before the answer.
		w = s.watchLanding(p.Abs, l)
	}
	res, cancelled, err := s.sendEdit(ctx, pl, plan, edit)
	if err != nil || !res.Applied {
		if w != nil {
			w.stop()
		}
		if cancelled && pl.moving != nil {
			return s.leftAstray(pl, "the run was cancelled")
		}
		if cancelled {
			return tools.Outcome{Reason: "the run was cancelled before the editor answered; the editor may still apply the change"}, says("cancelled before the editor answered"), nil
		}
		return s.notApplied(ctx, pl, plan, res, err)
	}
	if w == nil {
		if pl.moving != nil {
			return s.movedBack(pl), account{}, nil
		}
		return s.applied(p, plan, pl.replanned, pl.typing, l), whileTyping(pl.typing, p, l), nil
	}
	return s.checkLanding(ctx, pl, plan, l, w)
}

// allowedEdit builds the edit of plan and has the user's yes for it when
// it needs one, judging the file again as the file system stands just
// before it is sent (tools.Rejudge): a symbolic link put in place since
// the proposal that makes it protected asks, one that leads out of the
// workspace refuses. A change placed again on the user's text is the same
// change, already allowed, unless the file became protected meanwhile.
func (s *Server) allowedEdit(ctx context.Context, pl *placing, plan *EditPlan) (WorkspaceEdit, *tools.Outcome, account) {
	c := pl.c
	confirmed := pl.replanned
	for range 3 {
		changed, out, a := s.rejudge(pl, plan)
		if out != nil {
			return WorkspaceEdit{}, out, a
		}
		if changed {
			confirmed = false
		}
		edit, err := BuildWorkspaceEdit([]EditPlan{*plan}, PathToURI, s.position(c.encoding), EditOptions{
			DocumentChanges: c.versioned, Annotations: c.annotations, ResourceCreate: c.resourceCreate,
			Label: pl.asked, VersionZeroAsOne: c.zeroAsOne, Confirm: tools.RunMode(ctx) == tools.AskAll,
		})
		if err != nil {
			s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s cannot be sent to this editor: %v", pl.p.Path, err)
			return WorkspaceEdit{}, &tools.Outcome{Reason: err.Error()}, says("the editor cannot take it")
		}
		if confirmed {
			return edit, nil, account{}
		}
		if out, short := s.confirmChange(ctx, pl.p); out != nil {
			return WorkspaceEdit{}, out, says(short)
		}
		// Judged again just before it is sent: the question may have
		// waited long.
		if changed, out, a := s.rejudge(pl, plan); out != nil || !changed {
			return edit, out, a
		}
	}
	s.showMessage(protocol.MessageTypeWarning, "Reika did not change %s: where it leads kept changing while you were asked", pl.p.Path)
	return WorkspaceEdit{}, &tools.Outcome{Reason: fmt.Sprintf("where %s leads (its symbolic links) kept changing while the user was asked; the file is unchanged", pl.p.Path)}, says("its links kept changing")
}

// rejudge judges the proposal's file again as the file system stands
// now, and keeps in pl and plan a protection it has now. changed reports
// that it became protected; out is set when it now leads outside the
// workspace (refused: the editor would write there).
func (s *Server) rejudge(pl *placing, plan *EditPlan) (changed bool, out *tools.Outcome, a account) {
	roots := s.folders.all()
	if len(roots) == 0 {
		return false, nil, account{}
	}
	q, err := tools.Rejudge(roots, pl.p)
	if err != nil {
		s.showMessage(protocol.MessageTypeWarning, "Reika did not change %s: %v", pl.p.Path, err)
		return false, &tools.Outcome{Reason: err.Error() + "; the file is unchanged"}, says("it leads out of the workspace")
	}
	if q.Protected == pl.p.Protected {
		return false, nil, account{}
	}
	pl.p.Protected, plan.Proposal.Protected = q.Protected, q.Protected
	return true, nil, account{}
}

// sendEdit sends the edit and waits for the editor's answer. A cancel
// does not drop the answer: the editor may be applying the edit as the
// user cancels, and what it did must be told. A change placed again was
// allowed already: its answer is not awaited as long as a first one,
// which may wait for the user. cancelled is set when the call failed
// because the run was cancelled.
func (s *Server) sendEdit(ctx context.Context, pl *placing, plan EditPlan, edit WorkspaceEdit) (res ApplyWorkspaceEditResult, cancelled bool, err error) {
	answerCtx, stop := graceAfter(ctx, cancelGrace)
	timeout := s.opts.ApplyTimeout
	if pl.replanned {
		timeout = min(timeout, againTimeout)
	}
	err = s.call(answerCtx, timeout, "workspace/applyEdit",
		ApplyWorkspaceEditParams{Label: "Reika: " + changeLabel(plan), Edit: edit}, &res)
	stop()
	cancelled = err != nil && answerCtx.Err() != nil && ctx.Err() != nil
	return res, cancelled, err
}

// notApplied is the outcome of an edit the editor refused or failed to
// apply (err set), or the document to place it on again when the editor
// refused a version the user's typing had passed.
func (s *Server) notApplied(ctx context.Context, pl *placing, plan EditPlan, res ApplyWorkspaceEditResult, err error) (tools.Outcome, account, *Current) {
	p := pl.p
	msg, isErr := res.FailureReason, err != nil
	if isErr {
		msg = err.Error()
	}
	kind := refusalOf(msg, isErr, s.current(p.Abs).Version != plan.Current.Version)
	switch kind {
	case refusedStale:
		// The user typed in the document while the edit was on its way,
		// so the editor refused a version that is gone: place the change
		// again on what the user has once the typing stops, or say which
		// hunk no longer fits. The user's text is never overwritten.
		if !plan.Current.Open {
			break
		}
		if pl.mayRetry() {
			cur := s.current(p.Abs)
			return tools.Outcome{}, account{}, &cur
		}
		return s.keptTyping(pl)
	}
	if pl.moving != nil {
		return s.leftAstray(pl, "the editor did not take the move")
	}
	switch kind {
	case refusedByUser:
		reason := msg
		if reason == "" {
			reason = "the user declined it"
		}
		s.showMessage(protocol.MessageTypeInfo, "Reika's change to %s was not applied: %s", p.Path, oneLine(reason))
		return tools.Outcome{Reason: reason}, says("declined"), nil
	}
	why := "the editor did not take it"
	switch {
	case readOnly(p.Abs):
		why = "the file is read-only"
		msg = strings.TrimSpace("the file is read-only. " + msg)
	case writeFailed(strings.ToLower(msg)):
		why = "the editor could not write it"
	}
	s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s was not applied: %s", p.Path, oneLine(msg))
	return tools.Outcome{Reason: msg}, says(why), nil
}

// checkLanding is the outcome of an edit the editor said it applied to an
// open document, once the document shows where it went; or the document
// to place it on again when an editor that skips stale edits skipped it.
func (s *Server) checkLanding(ctx context.Context, pl *placing, plan EditPlan, l landing, w *sight) (tools.Outcome, account, *Current) {
	p := pl.p
	v, cur := s.verify(ctx, p.Abs, w)
	switch v {
	case landed:
		w.stop()
		if pl.moving != nil {
			out := s.movedBack(pl)
			s.runs.sawLanding(p.Abs)
			return out, account{}, nil
		}
		out := s.applied(p, plan, pl.replanned, pl.typing, l)
		s.runs.sawLanding(p.Abs)
		return out, whileTyping(pl.typing, p, l), nil
	case undone:
		w.stop()
		if pl.moving != nil {
			return s.leftAstray(pl, "you undid the move")
		}
		s.showMessage(protocol.MessageTypeInfo, "Reika's change to %s was undone by you; it will not be made again unless you ask", p.Path)
		return tools.Outcome{Reason: "The change landed, and then the user undid it: the file has its earlier text again. Do not make this change again unless the user asks for it."}, account{why: "undone by you", fate: undoneByYou}, nil
	case missed:
		w.stop()
		if !pl.c.skipsStale {
			// eglot 1.17 wrote it over typing it had not sent: moved
			// where it belongs once the typing stops, if the text says
			// how it came there.
			if pl.c.appliesStale && cur.Open && pl.mayRetry() && s.moveAstray(pl, plan, cur) {
				return tools.Outcome{}, account{}, &cur
			}
			if pl.moving != nil {
				return s.leftAstray(pl, "you were typing there again")
			}
			return s.astray(p, l, cur)
		}
		// Neovim skipped an edit for a version its buffer had passed (it
		// never appeared in the document): place it again on the user's
		// text once the typing stops.
		if cur.Open && pl.mayRetry() {
			return tools.Outcome{}, account{}, &cur
		}
		if cur.Open {
			return s.keptTyping(pl)
		}
		s.showMessage(protocol.MessageTypeInfo, "Reika's change to %s was not applied: you were typing there as it arrived", p.Path)
		return tools.Outcome{Reason: "The editor did not apply the change: the user was editing the file as it arrived. Read the file again before changing it."}, says("you were typing there"), nil
	}
	// eglot sends its changes only after the user paused typing: the edit
	// may well be there. Take the editor's word for now, say it is
	// unconfirmed, and check when the text arrives.
	s.goOwned(func(ctx context.Context) { s.lateCheck(ctx, p, w) })
	if pl.moving != nil {
		return s.movedBack(pl), account{fate: unconfirmed}, nil
	}
	out := s.applied(p, plan, pl.replanned, pl.typing, l)
	out.Note = strings.TrimSpace(out.Note + " The editor reported the change applied, but its text has not reached the server yet: read the file before changing it again.")
	a := whileTyping(pl.typing, p, l)
	if !pl.typing {
		a.fate = unconfirmed
	}
	return out, a, nil
}

// whileTyping is the account of an applied change: what to check when it was
// sent while the user was typing.
func whileTyping(typing bool, p tools.Proposal, l landing) account {
	if !typing {
		return account{}
	}
	// The line is named anew as the document is when the run ends.
	return account{why: p.Path + " " + l.where(), fate: overTyping, check: &lineMark{abs: p.Abs, text: l.want, line: l.line()}}
}

// editorNo is what an editor's "no" to an edit was.
type editorNo int

const (
	refusedByEditor editorNo = iota // it could not take it
	refusedStale                    // the edit was for a version the user had typed past
	refusedByUser                   // the user said no
)

// refusalOf reads an editor's "no": an applied:false's failureReason or
// an error's message (eglot answers with errors), and whether the
// document's version moved since the edit was planned. The clients' own
// words are read here and nowhere else: eglot's "Edits on `f' require
// version 0, you have 55" and "User cancelled server edit", Neovim's
// "Buffer … newer than edits", version mismatches (Helix,
// vscode-languageclient). An applied:false that is neither is the
// user's: the client asked (VS Code's preview, a confirmation) and was
// told no.
func refusalOf(msg string, isErr, moved bool) editorNo {
	m := strings.ToLower(msg)
	switch {
	case moved, strings.Contains(m, "version"), strings.Contains(m, "newer than"), strings.Contains(m, "stale"):
		return refusedStale
	case strings.Contains(m, "user cancel"), strings.Contains(m, "declin"), strings.Contains(m, "reject"):
		return refusedByUser
	case writeFailed(m):
		return refusedByEditor
	case !isErr:
		return refusedByUser
	}
	return refusedByEditor
}

// writeFailed reports whether an editor's reason (lower case) says it
// could not write the file, not that anybody said no: VS Code's "Unable
// to write file … (NoPermissions …)", a read-only file or file system.
func writeFailed(m string) bool {
	for _, w := range []string{"unable to write", "could not write", "cannot write", "can't write", "failed to write", "write failed",
		"permission", "eacces", "eperm", "erofs", "read-only", "readonly", "no space", "enospc"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// readOnly reports whether the file at abs exists and its owner may not
// write it.
func readOnly(abs string) bool {
	fi, err := os.Stat(abs)
	return err == nil && fi.Mode().Perm()&0o200 == 0
}

// againTimeout bounds the answer to a change placed again: it was allowed
// already, and an editor that prompts again (eglot) must not hold the run.
const againTimeout = 30 * time.Second

// typingQuiet is how long a document must go without a didChange before
// an edit is sent to a client that applies stale edits: eglot sends the
// user's typing after eglot-send-changes-idle-time (0.5 s) without it, so
// a didChange less than that ago says the user is typing, and typing
// since may not have been sent. typingWait bounds the wait.
const (
	typingQuiet = 750 * time.Millisecond
	typingWait  = 3 * time.Second
)

// awaitQuiet waits until the document at abs has been quiet for
// typingQuiet, at most typingWait; it reports whether the user was still
// typing when the wait ended.
func (s *Server) awaitQuiet(ctx context.Context, abs string) (typing bool) {
	deadline := time.Now().Add(s.typingWait())
	for {
		q, open := s.docs.Quiet(abs)
		if !open || q >= typingQuiet {
			return false
		}
		left := time.Until(deadline)
		if left <= 0 {
			return true
		}
		t := time.NewTimer(min(typingQuiet-q, left))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return true
		}
	}
}

func (s *Server) typingWait() time.Duration {
	if s.opts.TypingWait > 0 {
		return s.opts.TypingWait
	}
	return typingWait
}

// lateWait bounds the wait for the text of an unconfirmed change.
const lateWait = time.Minute

// lateCheck judges an unconfirmed change when the editor's text arrives,
// and tells the user if it did not land as planned.
func (s *Server) lateCheck(ctx context.Context, p tools.Proposal, w *sight) {
	defer w.stop()
	ctx, cancel := context.WithTimeout(ctx, lateWait)
	defer cancel()
	for {
		changed := s.docs.Changed()
		cur := s.current(p.Abs)
		if !cur.Open {
			return
		}
		if cur.Version != w.l.from {
			if w.of(cur.Text) == missed {
				s.showMessage(protocol.MessageTypeWarning, "Reika's earlier change to %s did not land as planned (you were typing there): check line %d, undo reverts it", p.Path, s.writtenLine(w.l, cur.Text))
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

// applied is the outcome of a change that landed; typing says it was
// sent while the user was still typing in the file.
func (s *Server) applied(p tools.Proposal, plan EditPlan, replanned, typing bool, l landing) tools.Outcome {
	out := tools.Outcome{Applied: true}
	s.runs.wrote(p, plan)
	if replanned || plan.Reanchored {
		s.logMessage(protocol.MessageTypeInfo, "Reika placed its change to %s around your edits made since it read the file", p.Path)
		out.Note = "The user had changed the file since you read it; the change was placed on their text. Read the file again before changing it further."
	}
	if typing {
		s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s was applied while you were typing, which this editor may not have sent yet: check %s", p.Path, l.where())
		out.Note = strings.TrimSpace(out.Note + fmt.Sprintf(" The user was typing in the file when the change was sent, and this editor applies a change over typing it has not sent yet: it could not be guaranteed to be where planned. Read the file around %s before changing it further.", l.where()))
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
	return fmt.Sprintf("%d change%s to %s", n, pluralSuffix(n), plan.Proposal.Path)
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
