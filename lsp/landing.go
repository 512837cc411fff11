package lsp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reika-lsp/reika/agent/tools"
)

// An editor that answers applied:true has not always put the edit where
// the server planned it. Neovim sends the user's typing only after a pause
// (its didChange debounce), so an edit built on the server's copy may meet
// newer text: unversioned, it lands on the user's line; versioned, Neovim
// skips it and still answers true. So the server checks each applied edit
// of an open document against the text the editor reports next.

// landing is what an edit should make of a document: the text after it,
// and the byte spans of that text the edit wrote.
type landing struct {
	from  int32  // the version the edit was planned against
	old   string // the text then
	want  string // the text the edit should leave
	spans [][2]int
	texts []string // what each hunk wrote
}

func expectLanding(plan EditPlan) landing {
	l := landing{from: plan.Current.Version, old: plan.Current.Text}
	var b strings.Builder
	at := 0
	for _, h := range plan.Hunks {
		b.WriteString(plan.Current.Text[at:h.OldStart])
		start := b.Len()
		b.WriteString(h.Text)
		l.spans = append(l.spans, [2]int{start, b.Len()})
		l.texts = append(l.texts, h.Text)
		at = h.OldEnd
	}
	b.WriteString(plan.Current.Text[at:])
	l.want = b.String()
	return l
}

// verdict is what became of an edit the editor said it applied.
type verdict int

const (
	landed verdict = iota // where planned (the user's other edits aside)
	missed                // the lines it was for are not as planned
	unseen                // no change to the document reached the server
)

// judge compares the document as the editor has it now with the landing.
// Edits of the user elsewhere do not matter; a change that touches the
// lines the edit wrote does. What a miss means depends on the editor: one
// that honours versions skipped the edit (Neovim does, and answers true),
// one that does not put it on the user's newer text, at the positions it
// was sent for.
func (l landing) judge(now string) verdict {
	if now == l.want {
		return landed
	}
	for _, h := range tools.LineHunks(l.want, now) {
		for _, sp := range l.spans {
			if overlaps(l.want, sp, h.OldStart, h.OldEnd) {
				return missed
			}
		}
	}
	return landed
}

// overlaps reports whether a changed region [hs, he) of text (whole lines;
// hs == he for lines inserted there) touches the lines of span.
func overlaps(text string, span [2]int, hs, he int) bool {
	ls := strings.LastIndexByte(text[:span[0]], '\n') + 1
	le := len(text)
	if i := strings.IndexByte(text[span[1]:], '\n'); i >= 0 {
		le = span[1] + i + 1
	}
	if hs == he {
		return ls < hs && hs < le
	}
	return hs < le && ls < he
}

// verifyTimeout bounds the wait for the editor's next didChange after it
// applied an edit (eglot sends changes after half a second idle; Neovim
// after 150 ms); settle is how long later changes are awaited when the
// first did not show the edit where planned.
const (
	verifyTimeout = 3 * time.Second
	settle        = 300 * time.Millisecond
)

// verify waits for the document at abs to pass the version the edit was
// planned against and judges what it holds then.
func (s *Server) verify(ctx context.Context, abs string, l landing) (verdict, Current) {
	deadline := time.NewTimer(s.verifyTimeout())
	defer deadline.Stop()
	var quiet <-chan time.Time
	v := unseen
	var cur Current
	for {
		changed := s.docs.Changed()
		if c := s.current(abs); c.Open && c.Version != l.from {
			cur = c
			if v = l.judge(c.Text); v == landed {
				return v, cur
			}
			if quiet == nil {
				quiet = time.After(settle)
			}
		} else if !c.Open {
			return v, c
		}
		select {
		case <-changed:
		case <-quiet:
			return v, cur
		case <-deadline.C:
			return v, cur
		case <-ctx.Done():
			return v, cur
		}
	}
}

func (s *Server) verifyTimeout() time.Duration {
	if s.opts.VerifyTimeout > 0 {
		return s.opts.VerifyTimeout
	}
	return verifyTimeout
}

// lineOf is the 1-based line of a byte offset.
func lineOf(text string, off int) int { return strings.Count(text[:min(off, len(text))], "\n") + 1 }

// where names the line of the edit's first hunk: where an editor that
// takes no versions put it when the text above it had changed.
func (l landing) where() string {
	if len(l.spans) == 0 {
		return ""
	}
	return fmt.Sprintf("line %d", lineOf(l.want, l.spans[0][0]))
}
