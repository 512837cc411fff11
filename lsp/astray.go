package lsp

import (
	"fmt"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// A client that takes no versions (or ignores them over typing it has not
// sent: eglot 1.17) writes an edit at the positions it was sent for, over
// the user's newer text: the text is written, away from where it was
// planned. The user and the model hear that it was written and which line
// to check; the end line names that line as it is when the run ends.

// astray is the account of an edit the editor wrote where the user's
// typing had moved the text it was for: applied, not where planned.
func (s *Server) astray(p tools.Proposal, l landing, cur Current) (tools.Outcome, account, *Current) {
	mark := &lineMark{abs: p.Abs, text: cur.Text, line: l.line()}
	s.showMessage(protocol.MessageTypeWarning, "Reika's change to %s was written while you were typing, not where planned: check line %d, undo reverts it", p.Path, mark.line)
	out := tools.Outcome{Applied: true, Note: fmt.Sprintf("The editor wrote the change while the user was typing in the file, at the positions it was sent for, so it is not where it was planned: check line %d. Read the file again before changing it.", mark.line)}
	return out, account{why: fmt.Sprintf("%s line %d", p.Path, mark.line), fate: overTyping, check: mark}, nil
}

// lineMark is a line of a document's text as it was at one moment.
type lineMark struct {
	abs  string
	text string
	line int // 1-based
}

// in is the mark's line in now: moved by the lines added or removed
// above it, and where the lines replaced around it begin when the change
// since touches it.
func (m lineMark) in(now string) int {
	start := lineStart(m.text, m.line)
	shift := 0
	for _, h := range tools.LineHunks(m.text, now) {
		if h.OldStart > start {
			break // below it
		}
		if h.OldEnd > start {
			return lineOf(m.text, h.OldStart) + shift // lines from it or above it replaced
		}
		// Above it (or inserted right above it).
		shift += strings.Count(h.Text, "\n") - strings.Count(m.text[h.OldStart:h.OldEnd], "\n")
	}
	return m.line + shift
}

// line is the 1-based line of the edit's first hunk in the text it left.
func (l landing) line() int {
	if len(l.spans) == 0 {
		return 1
	}
	return lineOf(l.want, l.spans[0][0])
}

// lineStart is the offset of the 1-based line n of text.
func lineStart(text string, n int) int {
	off := 0
	for ; n > 1; n-- {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	return off
}

// recheckLines names anew, in the documents as they are now, the lines to
// check of the run's changes written away from where they were planned.
func (s *Server) recheckLines(r *activeRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.changes {
		c := &r.changes[i]
		if c.check == nil {
			continue
		}
		if cur := s.current(c.check.abs); cur.Open {
			c.why = fmt.Sprintf("%s line %d", c.path, c.check.in(cur.Text))
		}
	}
}
