package tools

import (
	"context"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// Result is what a tool call gives back to the model, and what the agent
// needs to know about it.
type Result struct {
	// Content is the text the model sees.
	Content string
	// Payload describes the result for contextwin: its kind, the file or
	// pattern it is about, the lines a read shows, a spill file.
	Payload contextwin.Payload
	// Error marks a failed call: Content says why, in a sentence the
	// model can act on. A tool error is a result, never a crash.
	Error bool
	// Proposal is the change an edit or write proposed, with what became
	// of it; nil for other tools.
	Proposal *Proposal
	// Outcome is what the front end did with the Proposal; nil when there
	// was no proposer to ask (the change stays proposed) or asking failed.
	Outcome *Outcome
	// Passed: the command a bash call ran ended with exit status 0.
	Passed bool
	// Read is the file a read call read, whole, as the tool found it (the
	// open buffer, else the disk): what the repo map learns from. Nil for
	// other calls and for failures.
	Read *FileText
}

// FileText is a file's whole text and where it is.
type FileText struct {
	// Path is workspace-relative, with forward slashes; Abs is absolute.
	Path, Abs string
	Text      string
}

// Proposal is a change to one file that the agent proposes and the editor
// (or the user) applies. The agent never writes a file itself.
type Proposal struct {
	// Path is workspace-relative, with forward slashes; Abs is absolute.
	Path, Abs string
	// Old is the text the change was computed against — the open buffer
	// if the editor has the file open, else the file on disk; empty for a
	// new file. New is the text after the change.
	Old, New string
	// Version is the editor buffer's version Old came from, -1 when it
	// came from the disk.
	Version int32
	// Create is set for a new file.
	Create bool
	// Hunks are the changed regions of Old, for the front end to present;
	// Hunks.Apply(Old) is New.
	Hunks Hunks
	// Protected says why the path is protected (see Protection), "" for
	// an ordinary file. A Proposer applies a protected change only after
	// the user said yes to this change, every time; it refuses it where
	// the user cannot be asked.
	Protected string
	// Diff is the change as a unified diff, for a question or a review.
	Diff string
}

// Hunk is one changed region of a proposal, in byte offsets of Old.
type Hunk struct {
	OldStart, OldEnd int    // the replaced bytes of Old
	Text             string // what replaces them
}

// Hunks are the changed regions of one text, in order. They are in place
// in a text of n bytes when each lies within it (0 <= OldStart <= OldEnd
// <= n) and starts at or after the end of the one before (none overlap;
// two insertions at one offset apply in their order). Misplaced checks
// that; Apply and Written assume it.
type Hunks []Hunk

// Misplaced returns the index of the first hunk that is out of order or
// outside a text of n bytes, or -1 when all are in place.
func (hs Hunks) Misplaced(n int) int {
	prev := 0
	for i, h := range hs {
		if h.OldStart < prev || h.OldEnd < h.OldStart || h.OldEnd > n {
			return i
		}
		prev = h.OldEnd
	}
	return -1
}

// Apply returns text with each hunk's bytes [OldStart, OldEnd) replaced by
// its Text; the bytes between hunks are kept. The hunks must be in place
// in text (see Misplaced): Apply panics on hunks that are not.
func (hs Hunks) Apply(text string) string {
	var b strings.Builder
	at := 0
	for _, h := range hs {
		b.WriteString(text[at:h.OldStart])
		b.WriteString(h.Text)
		at = h.OldEnd
	}
	b.WriteString(text[at:])
	return b.String()
}

// Written returns, for each hunk, the byte span [start, end) its Text
// fills in the text Apply returns. It needs no text: a hunk moves by what
// the hunks before it added or removed. The hunks must be in place.
func (hs Hunks) Written() [][2]int {
	spans := make([][2]int, 0, len(hs))
	shift := 0
	for _, h := range hs {
		start := h.OldStart + shift
		spans = append(spans, [2]int{start, start + len(h.Text)})
		shift += len(h.Text) - (h.OldEnd - h.OldStart)
	}
	return spans
}

// Outcome is what the front end did with a proposal.
type Outcome struct {
	Applied bool
	// Partial is set when only part of the change was applied (the user
	// took some of its hunks).
	Partial bool
	// Reason says why it was not applied, or not whole (the user rejected
	// it, the document changed and the change could not be re-anchored, …).
	Reason string
	// Note is what the model should know about an applied change: that
	// the user had changed the file, and the change was placed on their
	// text.
	Note string
}

// Proposer hands a proposal to the front end and waits for its outcome.
// The context carries the run (RunMode says what it may do unasked).
type Proposer func(ctx context.Context, p Proposal) (Outcome, error)

// Buffers gives the text of documents open in the editor, which wins over
// the disk.
type Buffers interface {
	// Open returns the text and version of the open document at the
	// absolute path abs, and false when it is not open.
	Open(abs string) (text string, version int32, ok bool)
}
