// Package langserver is Reika's client of the workspace's own language
// servers (gopls, rust-analyzer, pyright, typescript-language-server,
// clangd): the backend of the navigation tools, and what tells the agent
// which errors its edits introduced.
//
//	servers := langserver.New(langserver.Options{Folders: folders, Text: text, Fallback: repoMapNav})
//	defer servers.Close()
//	ans, err := servers.Definition(ctx, tools.NavQuery{Path: "b.go", Line: 4, Symbol: "Add"})
//	errs, err := servers.Introduced(ctx, "b.go", proposal.Old) // after the edit landed
//
// Servers implements tools.Navigator. A server is started on demand, one
// per workspace folder and server, over stdio (go.lsp.dev/jsonrpc2 with
// go.lsp.dev/protocol's types), initialized with the folder as its root
// and the few capabilities the answers need; the files it is asked about
// are given to it (didOpen, then whole-text didChange) with the text the
// agent sees, Options.Text: the editor's buffer when the file is open,
// else the disk. Its diagnostics are kept per file and version.
//
// Which servers run is the user's choice only: Options.Servers (the
// user-level config), else the known ones found on PATH (Defaults). The
// model never names a command. The servers run outside Reika's sandbox,
// as the user's own tools do, but without REIKA_* variables or the
// engine's API key (by its name or its value) in their environment.
//
// Every request is bounded (Options.Timeout); the wait for diagnostics
// too (Options.Settle). A server that exits or hangs is started again
// once; its second failure gives it up for the session, with an error
// that names it and its command, and its files go to the fallback from
// then on. A server unasked for Options.Idle is
// shut down (shutdown, exit, then a kill of its process group), as all
// are at Close; the next question starts it again.
//
// Answers carry workspace-relative paths, 1-based lines and byte columns,
// the server's name as Source, and snippets: a definition's enclosing
// declaration (from documentSymbol) capped at 20 lines, a reference's or
// a diagnostic's line, a symbol's first line. A file whose language no
// server serves goes to Options.Fallback (the repo map's Navigator), so
// the tools always answer.
//
// go.lsp.dev's defects that matter here (lsp/doc.go lists the
// server's): the whole-text change event is Reika's own type
// (fullChange), since the library's holds its range as a value and would
// send an insertion at 0:0; a call whose context ends is not cancelled by
// the library, so proc.call sends $/cancelRequest itself; a connection
// whose stream fails does not fail its pending calls, and its writes do
// not heed a context (a server that stops reading blocks them for good),
// so every message goes through proc.bounded, which cancels the call and
// kills the server at its timeout.
//
// Servers is safe for concurrent use; questions to one server go one at
// a time.
package langserver
