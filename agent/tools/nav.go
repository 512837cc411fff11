package tools

import "context"

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
	// Diagnostics are the errors and warnings of the files, as the
	// language servers see them now (the files as the agent left them).
	Diagnostics(ctx context.Context, paths []string) (NavAnswer, error)
}

// NavQuery names a place or a symbol.
type NavQuery struct {
	// Path is the file, as the model gave it (relative to the workspace
	// root, or absolute inside it).
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
	// capped.
	Snippet string
	// Severity and Message are a diagnostic's ("error", "warning").
	Severity, Message string
}
