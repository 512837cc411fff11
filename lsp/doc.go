// Package lsp is Reika's language server: it speaks the Language Server
// Protocol over a stream (stdio, when an editor starts reika-lsp), keeps
// the editor's open documents, offers code actions and commands, runs the
// agent in the background with progress and status, and turns the agent's
// proposals into minimal, versioned edits the editor applies.
//
//	err := lsp.Serve(ctx, stdio, lsp.Options{})
//
// It is the only package that imports go.lsp.dev/protocol. Positions are
// converted to byte offsets in one place (Mapper), in the encoding the
// client and server agreed on (UTF-16 unless the client offers UTF-8).
// Handlers return at once; agent work runs in goroutines owned by the
// connection and stopped with it.
package lsp
