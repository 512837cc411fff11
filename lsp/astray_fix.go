package lsp

import (
	"fmt"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// eglot 1.17 (Emacs 30) counts a document's versions only when it sends
// the user's typing, so it takes an edit as current over typing it has not
// sent and writes it at the positions it was sent for: a line typed above
// moves it onto the line above its own. Nothing the server can send makes
// eglot refuse it, and nothing tells the server of that typing before the
// edit is written. What the server sees is the didChange that follows,
// with the typing and the edit in it. When that text is exactly the
// user's text (the lines above the edit typed over, its own lines and all
// below as the server had them) with the edit written at those positions,
// the server knows both: once the typing stops it puts the lines it wrote
// over back and places the change where it belongs, one edit, through the
// wait and the retry of a refused change (retry.go). When it is not, the
// change stays where it was written and the user hears which line to
// check (astray.go).

// misplacing is a change eglot wrote away from where it was planned,
// being moved where it belongs.
type misplacing struct {
	orig tools.Proposal // the agent's change
	user string         // the user's text as it was before eglot wrote it
	// mark is the line it was written on, in the text that showed it.
	mark lineMark
}

// maxShift bounds the ways the lines typed around the edit are tried.
const maxShift = 64

// sentEdit is one text edit as the server sent it.
type sentEdit struct {
	rng  protocol.Range
	text string
}

// sentEdits are the text edits of plan as they were sent, in the
// negotiated encoding.
func (s *Server) sentEdits(plan EditPlan) []sentEdit {
	pos := s.position(s.caps().encoding)
	var out []sentEdit
	for _, h := range plan.Hunks {
		out = append(out, sentEdit{
			rng:  protocol.Range{Start: pos(plan.Current.Text, h.OldStart), End: pos(plan.Current.Text, h.OldEnd)},
			text: h.Text,
		})
	}
	return out
}

// applyAt writes edits into text at their positions as an editor that
// takes them without a version does (a position past a line's end is its
// end); ok is false when a position is past the text or the edits overlap
// there.
func applyAt(text string, edits []sentEdit, enc Encoding) (string, bool) {
	m := NewMapper(text, enc)
	var b strings.Builder
	prev := 0
	for _, e := range edits {
		start, end, err := m.OffsetRange(e.rng)
		if err != nil || start < prev {
			return "", false
		}
		b.WriteString(text[prev:start])
		b.WriteString(e.text)
		prev = end
	}
	b.WriteString(text[prev:])
	return b.String(), true
}

// shifted is edits moved down by n lines.
func shifted(edits []sentEdit, n int) []sentEdit {
	out := make([]sentEdit, len(edits))
	for i, e := range edits {
		e.rng.Start.Line = uint32(int(e.rng.Start.Line) + n)
		e.rng.End.Line = uint32(int(e.rng.End.Line) + n)
		out[i] = e
	}
	return out
}

// misplacedIn finds how now came to be from the plan's text: the user
// typed over lines above the edit, adding before lines before eglot wrote
// it and after lines after, and eglot wrote it at the positions it was
// sent for. It returns the user's text (now without the edit: the lines
// typed above, then the plan's text from the edit's first line on) and
// the 1-based line of now the edit was written on; ok is false when now
// is not so.
func misplacedIn(plan EditPlan, edits []sentEdit, now string, enc Encoding) (user string, line int, ok bool) {
	if len(edits) == 0 {
		return "", 0, false
	}
	old := plan.Current.Text
	k := strings.Count(now, "\n") - strings.Count(plan.Result(), "\n")
	if k == 0 {
		return "", 0, false // no lines moved: the edit is where it was sent
	}
	first := int(edits[0].rng.Start.Line)
	step := 1
	if k < 0 {
		step = -1
	}
	for after, tries := 0, 0; after != k+step && tries < maxShift; after, tries = after+step, tries+1 {
		before := k - after
		if first-before < 0 || first+after < 0 {
			continue
		}
		user = now[:lineStart(now, first+after+1)] + old[lineStart(old, first-before+1):]
		if got, ok := applyAt(user, shifted(edits, after), enc); ok && got == now {
			return user, first + after + 1, true
		}
	}
	return "", 0, false
}

// moveAstray starts moving a change eglot wrote away from where it was
// planned: it reports whether now is that change written over the user's
// typing (misplacedIn), and if so makes pl's proposal the change that puts
// the lines written over back and places the agent's change on the user's
// text. The change is then placed like one the editor refused.
func (s *Server) moveAstray(pl *placing, plan EditPlan, cur Current) bool {
	user, line, ok := misplacedIn(plan, s.sentEdits(plan), cur.Text, s.caps().encoding)
	if !ok {
		return false
	}
	orig := pl.p
	if pl.moving != nil {
		orig = pl.moving.orig
	}
	// pl.p is the agent's change, or the move eglot wrote astray too:
	// either placed on the user's text is the text wanted.
	onUser, err := PlanEdit(pl.p, Current{Text: user, Version: cur.Version, Open: true, Exists: true})
	if err != nil {
		return false
	}
	want := onUser.Result()
	fix := pl.p
	fix.Old, fix.New, fix.Hunks, fix.Diff, fix.Version = cur.Text, want, tools.LineHunks(cur.Text, want), "", cur.Version
	if fix.Hunks.Apply(cur.Text) != want {
		return false
	}
	if pl.moving == nil {
		pl.moving = &misplacing{orig: orig, user: user}
	}
	pl.moving.mark = lineMark{abs: orig.Abs, text: cur.Text, line: line}
	pl.p = fix
	s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s was written on line %d while you were typing, not where it belongs; Reika will move it once you stop typing", orig.Path, line)
	return true
}

// movedBack is the outcome of a change moved where it belongs after eglot
// wrote it away from there: the agent's change, placed on the user's text,
// is what the run wrote (undo-run takes that back).
func (s *Server) movedBack(pl *placing) tools.Outcome {
	m := pl.moving
	where := ""
	if plan, err := PlanEdit(m.orig, Current{Text: m.user, Open: true, Exists: true}); err == nil {
		s.runs.wrote(m.orig, plan)
		where = fmt.Sprintf(", line %d", expectLanding(plan).line())
	}
	// Undo takes back the move first: the text it wrote over, with the
	// change on it, comes back; a second undo takes that out.
	s.showMessage(protocol.MessageTypeInfo, "Reika moved its change to %s where it belongs%s, around your typing (to take it out, undo twice)", m.orig.Path, where)
	return tools.Outcome{Applied: true, Note: "The editor first wrote the change at the wrong place while the user was typing; once the typing stopped it was moved where it was planned, around the user's text. Read the file again before changing it further."}
}

// leftAstray is the outcome of a change eglot wrote away from where it
// was planned that could not be moved (the user's typing changed its
// lines, the user kept typing, the run was cancelled): it is in the file
// where it was written, and the user hears the line as it is now.
func (s *Server) leftAstray(pl *placing, why string) (tools.Outcome, account, *Current) {
	m := pl.moving
	mark := m.mark
	if cur := s.current(mark.abs); cur.Open {
		mark = lineMark{abs: mark.abs, text: cur.Text, line: mark.in(cur.Text)}
	}
	pl.p = m.orig
	s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s stays where it was written while you were typing (%s): check line %d, undo reverts it", m.orig.Path, why, mark.line)
	out := tools.Outcome{Applied: true, Note: fmt.Sprintf("The editor wrote the change while the user was typing in the file, at the positions it was sent for, so it is not where it was planned, and it could not be moved (%s): check line %d. Read the file again before changing it.", why, mark.line)}
	return out, account{why: fmt.Sprintf("%s line %d", m.orig.Path, mark.line), fate: overTyping, check: &mark}, nil
}

// writtenLine is the 1-based line of now where an edit that did not land
// as planned went: where eglot wrote it over typing it had not sent, when
// now says so (misplacedIn), else the line it was planned for, moved by
// the lines added or removed above it since.
func (s *Server) writtenLine(l landing, now string) int {
	plan := EditPlan{Current: Current{Text: l.old, Open: true, Exists: true}}
	for i, sp := range l.was {
		plan.Hunks = append(plan.Hunks, HunkEdit{Index: i, OldStart: sp[0], OldEnd: sp[1], Text: l.texts[i]})
	}
	if _, line, ok := misplacedIn(plan, s.sentEdits(plan), now, s.caps().encoding); ok {
		return line
	}
	return lineMark{text: l.want, line: l.line()}.in(now)
}
