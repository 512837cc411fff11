package tools

import (
	"context"
	"fmt"
	"strings"
)

// Code intelligence: the answers behind the navigation tools (definition,
// references, symbols, hover, diagnostics). A Navigator gives them from
// the workspace's language servers where the user has them, else from the
// repo map's index, whose answers are approximate (found by name, not by
// type). Their text is untrusted, like any tool result.

// Navigator answers the navigation tools.
type Navigator interface {
	// Definition finds where the symbol at q is defined.
	Definition(ctx context.Context, q NavQuery) (NavAnswer, error)
	// References finds where the symbol at q is used.
	References(ctx context.Context, q NavQuery) (NavAnswer, error)
	// Hover is what a language server says of the symbol at q: its
	// signature and documentation.
	Hover(ctx context.Context, q NavQuery) (NavAnswer, error)
	// Symbols lists a file's declarations (q.Path), or the workspace's
	// that match q.Symbol (q.Path "").
	Symbols(ctx context.Context, q NavQuery) (NavAnswer, error)
	// Diagnostics are the errors and warnings of the files (resolved as
	// NavQuery.Path is), as the language servers see them now (the files
	// as the agent left them).
	Diagnostics(ctx context.Context, paths []string) (NavAnswer, error)
}

// NavQuery names a place or a symbol.
type NavQuery struct {
	// Path is the file, resolved by the tool and confined to the
	// workspace: slash-separated and relative to the first workspace
	// folder, absolute in another folder; "" when the model gave none.
	Path string
	// Line and Column are 1-based; Column 0 means the first occurrence
	// of Symbol on Line.
	Line, Column int
	// Symbol is the identifier asked about: at Line when given, else
	// found by name.
	Symbol string
}

// NavAnswer is a Navigator's answer.
type NavAnswer struct {
	Locations []NavLocation
	// Text is hover's text.
	Text string
	// Approximate marks an answer found by name in the repo map's index,
	// not by a language server.
	Approximate bool
	// Source names what answered: "gopls", "repo map".
	Source string
}

// NavLocation is one place an answer points at.
type NavLocation struct {
	// Path is relative to the workspace root; Line and Column 1-based;
	// End the last line of the range (0: Line).
	Path              string
	Line, Column, End int
	// Snippet is the lines shown for it: the enclosing declaration's,
	// numbered and capped as NavSnippet writes them.
	Snippet string
	// Severity and Message are a diagnostic's ("error", "warning").
	Severity, Message string
}

// NavSnippetLines is the most lines of source a location shows.
const NavSnippetLines = 20

// NavSnippet writes the lines a location shows, numbered like the read
// tool's output: the declaration on lines from to to (1-based, inclusive)
// of text, whole when it has at most NavSnippetLines lines; a longer one
// shows its head and, when at (the line the location points at) lies
// below it, the lines around at, with a line "…" for each gap. Both
// navigators write their snippets with it, so that the model reads one
// shape whatever answered.
func NavSnippet(text string, from, to, at int) string {
	lines := splitLines(text)
	from, to = max(from, 1), min(to, len(lines))
	if to < from {
		return ""
	}
	if at < from || at > to {
		at = from
	}
	var b strings.Builder
	line := func(n int) { fmt.Fprintf(&b, "%6d\t%s\n", n, validUTF8(clipWithCount(lines[n-1], navLineLen))) }
	gap := func() { b.WriteString("     …\n") }
	switch {
	case to-from < NavSnippetLines:
		for n := from; n <= to; n++ {
			line(n)
		}
	case at-from < NavSnippetLines-navAround:
		for n := from; n < from+NavSnippetLines; n++ {
			line(n)
		}
		gap()
	default:
		head := NavSnippetLines - 2*navAround - 1
		for n := from; n < from+head; n++ {
			line(n)
		}
		gap()
		lo, hi := at-navAround, min(at+navAround, to)
		for n := lo; n <= hi; n++ {
			line(n)
		}
		if hi < to {
			gap()
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// NavUseSnippet writes the lines a use shows (a reference): the first
// line of the declaration it is written in (lines from to to), then the
// use's line with one line either side, numbered as NavSnippet numbers
// them, a line "…" for a gap. A use says where it sits in a few lines,
// so that a reference answer lists many of them in its room.
func NavUseSnippet(text string, from, to, at int) string {
	lines := splitLines(text)
	if at < 1 || at > len(lines) {
		return ""
	}
	from, to = max(min(from, at), 1), min(max(to, at), len(lines))
	lo, hi := max(at-1, from), min(at+1, to)
	var b strings.Builder
	line := func(n int) { fmt.Fprintf(&b, "%6d\t%s\n", n, validUTF8(clipWithCount(lines[n-1], navLineLen))) }
	if from < lo {
		line(from)
		if from+1 < lo {
			b.WriteString("     …\n")
		}
	}
	for n := lo; n <= hi; n++ {
		line(n)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Bounds of a snippet: a line is clipped at navLineLen bytes; a use deep
// in a long declaration shows navAround lines either side of it.
const (
	navLineLen = 200
	navAround  = 4
)
