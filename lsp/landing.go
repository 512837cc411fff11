package lsp

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
	// was are the spans of old the hunks replaced: an undo puts their
	// text back.
	was [][2]int
}

func expectLanding(plan EditPlan) landing {
	l := landing{from: plan.Current.Version, old: plan.Current.Text, want: plan.Result(), spans: plan.Edits().Written()}
	for _, h := range plan.Hunks {
		l.was = append(l.was, [2]int{h.OldStart, h.OldEnd})
		l.texts = append(l.texts, h.Text)
	}
	return l
}

// verdict is what became of an edit the editor said it applied.
type verdict int

const (
	landed verdict = iota // where planned (the user's other edits aside)
	missed                // the lines it was for are not as planned, and never were
	unseen                // no change to the document reached the server
	undone                // it was where planned, then the user's undo took it out
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
	if touches(l.want, l.spans, now) {
		return missed
	}
	return landed
}

// restored reports whether now has, on the lines the edit wrote, the text
// it replaced: the user undid it (the user's other edits aside).
func (l landing) restored(now string) bool {
	return now == l.old || !touches(l.old, l.was, now)
}

// touches reports whether now differs from text on the lines of a span.
func touches(text string, spans [][2]int, now string) bool {
	for _, h := range tools.LineHunks(text, now) {
		for _, sp := range spans {
			if overlaps(text, sp, h.OldStart, h.OldEnd) {
				return true
			}
		}
	}
	return false
}

// sight is what a landing saw of its document while it waited: every text
// the document passed through since just before the edit was sent
// (Documents.Watch). An edit whose text appeared and then went was undone
// by the user; one that never appeared was skipped (or put elsewhere).
type sight struct {
	l    landing
	stop func()

	mu       sync.Mutex
	appeared bool // some text held the edit where planned
	closed   bool // the document was closed (eglot's revert closes and opens)
	reopened bool // and opened again: its version may be the one planned against
}

// reopened reports whether the document was closed and opened again.
func (w *sight) isReopened() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reopened
}

// watchLanding starts watching the document at abs for the edit's text;
// call it before sending the edit, so that the didChange that carries it
// cannot come first.
func (s *Server) watchLanding(abs string, l landing) *sight {
	w := &sight{l: l}
	w.stop = s.docs.Watch(abs, func(seen Seen) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !seen.Open {
			w.closed = true
			return
		}
		if w.closed {
			w.reopened = true
			return // the text of a reopen is the disk's, not the edit's
		}
		if !w.appeared && seen.Version != l.from && l.judge(seen.Text) == landed {
			w.appeared = true
		}
	})
	return w
}

// of judges the document's text now with what was seen before: an edit
// that appeared is landed unless now has the text it replaced (undone);
// one that never appeared is missed, unless now is exactly the text the
// edit was made for. That text back, byte for byte, is an undo too: an
// editor that sends the whole text at once merges the edit and the undo,
// and a skipped edit leaves the user's typing, which made it stale.
func (w *sight) of(now string) verdict {
	w.mu.Lock()
	appeared := w.appeared
	w.mu.Unlock()
	switch {
	case w.l.judge(now) == landed:
		return landed
	case appeared && w.l.restored(now), now == w.l.old:
		return undone
	case appeared:
		return landed // it landed; the user changed its lines after
	}
	return missed
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
func (s *Server) verify(ctx context.Context, abs string, w *sight) (verdict, Current) {
	l := w.l
	deadline := time.NewTimer(s.verifyTimeout())
	defer deadline.Stop()
	var quiet <-chan time.Time
	v := unseen
	var cur Current
	for {
		changed := s.docs.Changed()
		if c := s.current(abs); c.Open && (c.Version != l.from || w.isReopened()) {
			cur = c
			if v = w.of(c.Text); v == landed {
				return v, cur
			}
			if quiet == nil {
				quiet = time.After(settle)
			}
		} else if !c.Open {
			// A close may be eglot's revert, an open follows.
			cur = c
			if quiet == nil {
				quiet = time.After(settle)
			}
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
